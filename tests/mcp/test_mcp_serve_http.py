"""`loopwright mcp serve --http`: a real subprocess on a loopback port, spoken to by the official
MCP Python SDK's client over streamable HTTP (and by plain HTTP requests for what a client would
not send): its tools, the workspace's files as resources under the gate's read rules, the
project's commands and skills as prompts, path completion, logging and progress notifications;
DNS-rebinding protection (Host/Origin), the bearer token, and the refusals of unsafe settings."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli_env, loopwright_cmd
from tests.mcp.serve_helpers import http_server, private_file

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")
pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore:The logging capability is deprecated")]

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def with_client(url: str, body: Callable[[Any], Awaitable[Any]], token: str | None = None, **kw: Any) -> Any:
    """Run `body(client)` on an SDK client of `url` (initialize handshake)."""
    import anyio
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with create_mcp_http_client(headers=headers) as http, \
                Client(streamable_http_client(url, http_client=http), mode="legacy", **kw) as client:
            return await body(client)

    return anyio.run(main)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "app.py").write_text("print('hello from the workspace')\n")
    (work / "secret.txt").write_text("the deny rule hides this\n")
    (work / "logo.bin").write_bytes(b"\x89PNG\x00\xff\xfe")
    (work / ".loopwright" / "commands").mkdir(parents=True)
    (work / ".loopwright" / "commands" / "review.md").write_text(
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully and list the problems.\n")
    skill = work / ".loopwright" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release-notes\ndescription: Write release notes\n---\n"
                                    "Read the git log and write the release notes.\n")
    (tmp_path / "outside.txt").write_text("outside the working directory\n")
    return work


def test_tools_resources_prompts_and_completion_over_http(project: Path, tmp_path: Path) -> None:
    import mcp_types as types

    async def body(c: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"caps": c.server_capabilities}
        out["tools"] = [t.name for t in (await c.list_tools()).tools]
        out["read"] = await c.call_tool("Read", {"file_path": str(project / "src" / "app.py")})
        out["resources"] = {r.name: r for r in (await c.list_resources()).resources}
        out["templates"] = (await c.list_resource_templates()).resource_templates
        out["text"] = await c.read_resource(f"file://{project}/src/app.py")
        out["binary"] = await c.read_resource(f"file://{project}/logo.bin")
        for name, uri in (("denied", f"file://{project}/secret.txt"), ("outside", f"file://{tmp_path}/outside.txt"),
                          ("missing", f"file://{project}/nope.txt"), ("other", "https://example.com/x")):
            try:
                await c.read_resource(uri)
                out[name] = None
            except Exception as e:  # noqa: BLE001 - the MCPError the test reads
                out[name] = e
        out["prompts"] = {p.name: p for p in (await c.list_prompts()).prompts}
        out["review"] = await c.get_prompt("review", {"arguments": "src/app.py"})
        out["skill"] = await c.get_prompt("skill:release-notes", {})
        try:
            await c.get_prompt("no-such-prompt", {})
        except Exception as e:  # noqa: BLE001
            out["no_prompt"] = e
        out["completion"] = await c.complete(types.ResourceTemplateReference(uri=out["templates"][0].uri_template),
                                             {"name": "path", "value": "sr"})
        return out

    with http_server(project, tmp_path / "home", "--disallowedTools", "Read(./secret.txt)") as url:
        got = with_client(url, body)
    assert {"Read", "Write", "Bash", "Grep", "Glob"} <= set(got["tools"])
    assert "hello from the workspace" in got["read"].content[0].text and not got["read"].is_error
    caps = got["caps"]
    assert caps.resources is not None and caps.prompts is not None and caps.logging is not None
    assert caps.completions is not None
    assert {"src/app.py", "logo.bin", ".loopwright/commands/review.md"} <= set(got["resources"])
    assert "secret.txt" not in got["resources"]  # a denied file is not even listed
    assert got["resources"]["src/app.py"].uri == f"file://{project}/src/app.py"
    assert got["text"].contents[0].text == "print('hello from the workspace')\n"
    assert got["binary"].contents[0].blob  # no UTF-8: base64
    assert "refused" in str(got["denied"]) and "the deny rule hides this" not in str(got["denied"])
    assert "not found" in str(got["outside"]) and "not found" in str(got["missing"])
    assert "file://" in str(got["other"])
    assert got["prompts"]["review"].description == "Review a file"
    assert got["prompts"]["skill:release-notes"].description == "Write release notes"
    assert got["review"].messages[0].content.text == "Review src/app.py carefully and list the problems."
    assert "Read the git log and write the release notes." in got["skill"].messages[0].content.text
    assert "Unknown prompt" in str(got["no_prompt"])
    assert got["completion"].completion.values == ["src/app.py"]


def test_logging_and_progress_notifications(project: Path, tmp_path: Path) -> None:
    logs: list[Any] = []
    progress: list[tuple[float, str | None]] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async def body(c: Any) -> Any:
        await c.set_logging_level("debug")
        slow = await c.call_tool("Bash", {"command": "sleep 2.4; echo done"}, progress_callback=on_progress)
        refused = await c.call_tool("Write", {"file_path": str(tmp_path / "outside.txt"), "content": "x"})
        await c.set_logging_level("error")
        await c.call_tool("Glob", {"pattern": "*.py"})  # a debug message, now under the level
        return slow, refused

    with http_server(project, tmp_path / "home", "--allowedTools", "Bash(sleep:*)") as url:
        slow, refused = with_client(url, body, logging_callback=on_log)
    assert "done" in slow.content[0].text, slow
    assert len(progress) >= 2 and progress[0][0] < progress[-1][0] and "Bash: running for" in str(progress[0][1])
    said = [(m.level, m.data) for m in logs]
    assert ("debug", "Bash called") in said and ("debug", "Write called") in said
    assert any(level == "warning" and "Write refused" in str(data) for level, data in said)
    assert ("debug", "Glob called") not in said
    assert refused.is_error


def _post(url: str, headers: dict[str, str], body: dict[str, Any] = INIT) -> Any:
    import httpx2

    return httpx2.post(url, headers={**ACCEPT, **headers}, content=json.dumps(body), timeout=30)


def test_dns_rebinding_protection(project: Path, tmp_path: Path) -> None:
    with http_server(project, tmp_path / "home") as url:
        port = url.split(":")[2].split("/")[0]
        evil = _post(url, {"Host": "evil.example.com", "Origin": "http://evil.example.com"})
        evil_origin = _post(url, {"Origin": "http://evil.example.com"})
        rebound = _post(url, {"Host": f"attacker.test:{port}"})
        good = _post(url, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"})
    assert 400 <= evil.status_code < 500 and 400 <= evil_origin.status_code < 500
    assert 400 <= rebound.status_code < 500
    assert good.status_code == 200, good.text
    assert good.headers.get("mcp-session-id")  # a session, per the spec


def test_allow_host_admits_a_proxys_name(project: Path, tmp_path: Path) -> None:
    with http_server(project, tmp_path / "home", "--allow-host", "mcp.internal") as url:
        port = url.split(":")[2].split("/")[0]
        ok = _post(url, {"Host": f"mcp.internal:{port}"})
        other = _post(url, {"Host": f"other.internal:{port}"})
    assert ok.status_code == 200 and 400 <= other.status_code < 500


def test_bearer_token_from_a_private_file(project: Path, tmp_path: Path) -> None:
    token = "s3cret-token-for-the-test"
    path = private_file(tmp_path / "token", token + "\n")
    with http_server(project, tmp_path / "home", "--auth-token-file", str(path)) as url:
        none = _post(url, {})
        wrong = _post(url, {"Authorization": "Bearer nope"})
        right = _post(url, {"Authorization": f"Bearer {token}"})
        tools = with_client(url, lambda c: c.list_tools(), token=token)
    assert none.status_code == 401 and "bearer" in none.headers["www-authenticate"].lower()
    assert wrong.status_code == 401
    assert right.status_code == 200
    assert any(t.name == "Read" for t in tools.tools)


def test_bearer_token_from_the_environment(project: Path, tmp_path: Path) -> None:
    with http_server(project, tmp_path / "home", LOOPWRIGHT_MCP_TOKEN="from-env") as url:
        assert _post(url, {}).status_code == 401
        assert _post(url, {"Authorization": "Bearer from-env"}).status_code == 200


def _refused(project: Path, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    return subprocess.run([*loopwright_cmd(), "mcp", "serve", "--cwd", str(project), *flags], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60,
                          env=cli_env(HOME=str(home), LOOPWRIGHT_HOME=str(home / ".loopwright")))


# several CLI runs in a row: 71 s under load (2 cores, -n 3, the shared machine at load ~20), where the
# suite's hang guard is 120 s per test
@pytest.mark.timeout(360)
def test_unsafe_settings_are_refused_with_one_line(project: Path, tmp_path: Path) -> None:
    readable = private_file(tmp_path / "token", "t\n", mode=0o644)
    p = _refused(project, tmp_path, "--http", "0", "--auth-token-file", str(readable))
    assert p.returncode == 2 and "readable by others" in p.stderr and "chmod 600" in p.stderr
    p = _refused(project, tmp_path, "--http", "0.0.0.0:0", "--no-auth")
    assert p.returncode == 2 and "only on a loopback address" in p.stderr
    p = _refused(project, tmp_path, "--http", "0", "--no-auth", "--auth-token-file", str(readable))
    assert p.returncode == 2 and "contradict" in p.stderr
    p = _refused(project, tmp_path, "--http", "localhost:99999")
    assert p.returncode == 2 and "--http localhost:99999" in p.stderr
    p = _refused(project, tmp_path, "--auth-token-file", str(readable))  # an HTTP flag without --http
    assert p.returncode == 2 and "--auth-token-file is for --http" in p.stderr
    p = _refused(project, tmp_path, "--no-auth")
    assert p.returncode == 2 and "--no-auth is for --http" in p.stderr


def test_without_a_token_given_one_is_made_private_and_required(project: Path, tmp_path: Path) -> None:
    """Other local users reach 127.0.0.1 too: with no token given, the server makes one (0600, in
    the loopwright home) and requires it."""
    home = tmp_path / "home"
    with http_server(project, home, auth=True) as url:
        token_file = home / ".loopwright" / "mcp-serve-token"
        token = token_file.read_text().strip()
        none = _post(url, {})
        right = _post(url, {"Authorization": f"Bearer {token}"})
    assert len(token) == 64 and (token_file.stat().st_mode & 0o777) == 0o600
    assert none.status_code == 401 and right.status_code == 200
    with http_server(project, home, auth=True) as url:  # the same token next time
        assert _post(url, {"Authorization": f"Bearer {token}"}).status_code == 200


def test_a_pre_tool_use_hook_refuses_a_resource_read_as_it_refuses_a_read(project: Path, tmp_path: Path) -> None:
    (project / "hooked.txt").write_text("a hook keeps this from clients\n")
    hook = tmp_path / "hook.sh"
    hook.write_text("#!/bin/sh\nif grep -q hooked; then echo 'the hook says no' >&2; exit 2; fi\nexit 0\n")
    hook.chmod(0o755)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [
        {"type": "command", "command": str(hook)}]}]}}))

    async def body(c: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"call": await c.call_tool("Read", {"file_path": str(project / "hooked.txt")})}
        try:
            out["resource"] = await c.read_resource(f"file://{project}/hooked.txt")
        except Exception as e:  # noqa: BLE001 - the MCPError the test reads
            out["resource"] = e
        out["other"] = await c.read_resource(f"file://{project}/src/app.py")
        return out

    with http_server(project, tmp_path / "home", "--settings", str(settings)) as url:
        got = with_client(url, body)
    assert got["call"].is_error and "the hook says no" in got["call"].content[0].text
    assert "refused" in str(got["resource"]) and "the hook says no" in str(got["resource"])
    assert "a hook keeps this" not in str(got["resource"])
    assert "hello from the workspace" in got["other"].contents[0].text


def test_a_bad_body_is_an_error_and_the_server_goes_on(project: Path, tmp_path: Path) -> None:
    import httpx2

    with http_server(project, tmp_path / "home") as url:
        not_json = httpx2.post(url, headers=ACCEPT, content=b"{not json", timeout=30)
        deep = httpx2.post(url, headers=ACCEPT, content=b"[" * 100_000 + b"]" * 100_000, timeout=30)
        no_request = httpx2.post(url, headers=ACCEPT, content=b'{"hello": 1}', timeout=30)
        tools = with_client(url, lambda c: c.list_tools())
    assert not_json.status_code == 400 and not_json.json()["error"]["code"] == -32700
    assert 400 <= deep.status_code < 500
    assert 400 <= no_request.status_code < 500
    assert any(t.name == "Read" for t in tools.tools)


def test_a_body_that_is_no_jsonrpc_message_is_an_invalid_request_as_on_stdio(project: Path, tmp_path: Path) -> None:
    """JSON that is no JSON-RPC message gets -32600 Invalid Request (by its id when it has a usable
    one), as the stdio door answers such a line, not the SDK's -32602; a nested-too-deep body -32700."""
    import httpx2

    def post(body: bytes) -> Any:
        return httpx2.post(url, headers=ACCEPT, content=body, timeout=30)

    with http_server(project, tmp_path / "home") as url:
        no_envelope = post(b'{"hello": 1}')
        old_version = post(b'{"jsonrpc": "1.0", "id": 7, "method": "ping"}')
        bad_id = post(b'{"jsonrpc": "2.0", "id": true, "method": "ping"}')
        types_refuse = post(b'{"jsonrpc": "2.0", "id": 8, "result": 1}')  # an envelope, but no MCP message
        deep = post(b"[" * 100_000 + b"]" * 100_000)
        init = post(json.dumps(INIT).encode())
    for refused in (no_envelope, old_version, bad_id, types_refuse):
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == -32600, refused.text
        assert refused.json()["error"]["message"].startswith("Invalid Request")
    assert old_version.json()["id"] == 7 and bad_id.json()["id"] is None
    assert deep.status_code == 400 and deep.json()["error"]["code"] == -32700
    assert init.status_code == 200 and init.headers.get("mcp-session-id")  # a good body still reaches the SDK
