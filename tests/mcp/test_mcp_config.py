"""MCP configuration (Claude Code's format, scopes, approval, ${VAR}), tool names, in-process
servers, subagents and hooks: no subprocess needed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest

import loopwright as lw
from loopwright.mcp import naming
from loopwright.mcp.config import (
    McpConfigError,
    collect,
    expand,
    for_run,
    parse_server,
    read_config,
)
from loopwright.settings import load_settings


def test_parse_and_expand() -> None:
    env = {"HOME": "/h", "TOKEN": "s3"}
    cfg = parse_server("fs", {"command": "npx", "args": ["-y", "${HOME}/x", "${MISSING:-dflt}"],
                              "env": {"K": "${TOKEN}"}}, env=env)
    assert (cfg.type, cfg.command, cfg.args, cfg.env, cfg.error) == ("stdio", "npx", ["-y", "/h/x", "dflt"],
                                                                     {"K": "s3"}, None)
    web = parse_server("w", {"type": "http", "url": "https://${HOST:-example.com}/mcp",
                             "headers": {"Authorization": "Bearer ${TOKEN}"}}, env=env)
    assert web.url == "https://example.com/mcp" and web.headers == {"Authorization": "Bearer s3"}
    assert parse_server("s", {"type": "sse", "url": "http://127.0.0.1:1/sse"}, env=env).type == "sse"
    assert parse_server("u", {"url": "http://127.0.0.1:1/mcp"}, env=env).type == "http"
    with pytest.raises(ValueError, match=r"args\[0\]: environment variable \$\{NOPE\} is not set"):
        expand("${NOPE}", {}, "args[0]")


@pytest.mark.parametrize("raw, field", [
    ({"type": "websocket", "url": "ws://x"}, 'unknown transport "type"'),
    ({"args": ["a"]}, '"command" is missing'),
    ({"command": "x", "args": "a b"}, '"args" must be a list of strings'),
    ({"type": "http"}, '"url" is missing'),
    ({"type": "http", "url": "ftp://x"}, '"url" must start with http'),
    ({"command": "x", "env": {"A": 1}}, "env must be an object of strings"),
    ({"command": "${UNSET_VAR_X}"}, "command: environment variable ${UNSET_VAR_X} is not set"),
    ("npx fs", "must be an object"),
])
def test_bad_server_entries_name_the_server_and_field(raw: Any, field: str) -> None:
    cfg = parse_server("myserver", raw, env={})
    assert cfg.error is not None and "'myserver'" in cfg.error and field in cfg.error


def test_config_files(tmp_path: Path) -> None:
    f = tmp_path / "c.json"
    f.write_text('{"mcpServers": {"a": {"command": "x"}}}')
    assert read_config(str(f))[0] == {"a": {"command": "x"}}
    assert read_config('{"mcpServers": {"b": {"command": "y"}}}')[0] == {"b": {"command": "y"}}
    f.write_text("[1, 2")
    with pytest.raises(McpConfigError, match="is not valid JSON"):
        read_config(str(f))
    with pytest.raises(McpConfigError, match="does not exist"):
        read_config(str(tmp_path / "nope.json"))


def test_scopes_priority_and_project_approval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path.home()
    (home / ".loopwright").mkdir(parents=True, exist_ok=True)
    (home / ".loopwright" / "settings.json").write_text(json.dumps(
        {"mcpServers": {"shared": {"command": "user-cmd"}, "u": {"command": "u"}}}))
    (tmp_path / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"shared": {"command": "project-cmd"}, "p1": {"command": "p1"}, "p2": {"command": "p2"}}}))
    (tmp_path / ".loopwright").mkdir()
    (tmp_path / ".loopwright" / "settings.local.json").write_text(json.dumps(
        {"mcpServers": {"l": {"command": "l"}}, "enabledMcpjsonServers": ["p1", "shared"]}))
    settings = load_settings(tmp_path)
    got = {c.name: c for c in collect({"d": {"command": "d"}}, tmp_path, settings=settings)}
    # issue 22: a project's server never takes the user's name (it beat the user's before)
    assert got["shared"].command == "user-cmd" and got["shared"].scope == "user"
    assert (got["u"].scope, got["l"].scope, got["d"].scope) == ("user", "local", "dynamic")
    assert not got["p1"].needs_approval and got["p2"].needs_approval  # untrusted until approved
    strict = collect({"d": {"command": "d"}}, tmp_path, settings=settings, strict=True)
    assert [c.name for c in strict] == ["d"]
    # the library reads no settings unless asked (setting_sources), so no .mcp.json either
    assert for_run(lw.AgentOptions(), tmp_path, None) == []
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    got = {c.name: c for c in collect(None, tmp_path, settings=load_settings(tmp_path))}
    assert not got["p2"].needs_approval
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps({"mcpServers": ["x"]}))
    with pytest.raises(ValueError, match='"mcpServers" must be an object'):
        load_settings(tmp_path)


def test_needs_approval_is_reported_not_started(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {"command": "false"}}}))
    model = lw.ScriptedModel([[{"type": "text", "text": "ok"}]])
    msgs = asyncio.run(_collect(lw.AgentOptions(model=model, cwd=tmp_path, setting_sources=["project"])))
    (s,) = msgs[0].data["mcp_servers"]
    assert s["name"] == "proj" and s["status"] == "needs-approval" and "enabledMcpjsonServers" in s["error"]


def test_tool_names_are_valid_stable_and_distinct() -> None:
    assert naming.server_part("my server.v2") == "my_server_v2"
    assert naming.server_part("a__b") == "a_b"  # `mcp__a__b` must always mean server a, tool b
    assert naming.server_part("...") is None and naming.server_part("") is None
    parts, clashes = naming.unique_server_parts(["a.b", "a_b", "c"])  # issue 22: an error naming both
    assert parts == {"a.b": None, "a_b": None, "c": "c"} and "'a.b' and 'a_b'" in clashes["a_b"]
    long = "x" * 80
    names = naming.tool_names("srv", ["read.file", "read_file", long, long + "y", "ok"])
    assert names["read.file"] == "mcp__srv__read_file" and names["ok"] == "mcp__srv__ok"
    assert len(set(names.values())) == 5
    assert all(lw.tools.base.NAME_CHARS.issuperset(n) and 0 < len(n) <= 64 for n in names.values())
    assert names == naming.tool_names("srv", ["read.file", "read_file", long, long + "y", "ok"])
    big = naming.server_part("s" * 200)
    assert big is not None and all(len(n) <= 64 for n in naming.tool_names(big, [long]).values())


@lw.tool(read_only=True)
def add(a: Annotated[int, "first"], b: Annotated[int, "second"]) -> str:
    """Add two numbers."""
    return str(a + b)


@lw.tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


async def _collect(opts: lw.AgentOptions) -> list[Any]:
    return [m async for m in lw.query("go", opts)]


def _results(msgs: list[Any]) -> dict[str, Any]:
    return {r.tool_use_id: r for m in msgs if isinstance(m, lw.UserMessage) for r in m.tool_results}


def test_in_process_server_and_hooks_see_full_names() -> None:
    calc = lw.create_sdk_mcp_server("calc", "1.0.0", tools=[add, shout])
    seen: list[str] = []

    def pre(data: dict[str, Any]) -> None:
        seen.append(data["tool_name"])

    hooks = lw.Hooks({"PreToolUse": [lw.HookMatcher("mcp__calc__.*", [pre])]})
    model = lw.ScriptedModel([
        [{"type": "tool_use", "id": "a", "name": "mcp__calc__add", "input": {"a": 2, "b": 3}},
         {"type": "tool_use", "id": "b", "name": "mcp__calc__shout", "input": {"text": "hi"}}],
        [{"type": "text", "text": "5"}]])
    opts = lw.AgentOptions(model=model, mcp_servers={"calc": calc}, permission_mode="default",
                           allowed_tools=["mcp__calc__add"], hooks=hooks)
    msgs = asyncio.run(_collect(opts))
    assert msgs[0].data["mcp_servers"] == [{"name": "calc", "status": "connected"}]
    assert "mcp__calc__add" in msgs[0].data["tools"]
    r = _results(msgs)
    assert r["a"].content == "5" and not r["a"].is_error
    assert r["b"].is_error and "allowed_tools=['mcp__calc__shout']" in r["b"].content  # MCP tools need a rule
    assert seen == ["mcp__calc__add", "mcp__calc__shout"]


def test_subagents_get_the_parents_mcp_tools() -> None:
    calc = lw.create_sdk_mcp_server("calc", tools=[add])
    seen_tools: list[list[str]] = []

    def script(h: list[dict[str, Any]]) -> Any:
        first = h[0]["content"][0]["text"]
        if first == "sub task":  # the subagent
            if len(h) == 1:
                return [{"type": "tool_use", "id": "s1", "name": "mcp__calc__add", "input": {"a": 1, "b": 1}}]
            return [{"type": "text", "text": "sub got " + str(h[-1]["content"][0]["content"])}]
        if len(h) == 1:
            return [{"type": "tool_use", "id": "p1", "name": "Agent",
                     "input": {"description": "d", "prompt": "sub task", "subagent_type": "adder"}}]
        return [{"type": "text", "text": "done"}]

    class Model(lw.ScriptedModel):
        async def stream(self, request: Any) -> Any:
            seen_tools.append([t["name"] for t in request.tools])
            async for ev in super().stream(request):
                yield ev

    opts = lw.AgentOptions(model=Model(script), mcp_servers={"calc": calc}, allowed_tools=["mcp__calc"],
                           permission_mode="default",
                           agents={"adder": lw.AgentDefinition("adds", "You add.", tools=["mcp__calc__add"])})
    msgs = asyncio.run(_collect(opts))
    assert msgs[-1].subtype == "success"
    assert _results(msgs)["p1"].content == "sub got 2"
    assert seen_tools[1] == ["mcp__calc__add"]  # the subagent: just the subset its definition lists


@pytest.mark.e2e
def test_import_loopwright_and_version_do_not_import_the_mcp_sdk() -> None:
    code = ("import sys, loopwright as lw; lw.create_sdk_mcp_server('x'); lw.AgentOptions(mcp_servers={});"
            "from loopwright.cli import build_parser; "
            "bad = [m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
    out = subprocess.run([str(Path(sys.executable).parent / "loopwright"), "--version"], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    assert out.returncode == 0 and "loopwright.cli" in out.stderr  # the import log is there
    assert not [ln for ln in out.stderr.splitlines() if ln.split("|")[-1].strip().startswith(("mcp", "loopwright.mcp"))]


def test_gate_read_only_hint_still_needs_a_rule_and_deny_wins() -> None:
    calc = lw.create_sdk_mcp_server("calc", tools=[add, shout])
    model = lw.ScriptedModel([
        [{"type": "tool_use", "id": "a", "name": "mcp__calc__add", "input": {"a": 1, "b": 2}},
         {"type": "tool_use", "id": "b", "name": "mcp__calc__shout", "input": {"text": "x"}}],
        [{"type": "text", "text": "ok"}]])
    opts = lw.AgentOptions(model=model, mcp_servers={"calc": calc}, permission_mode="acceptEdits",
                           allowed_tools=["mcp__calc__*"], disallowed_tools=["mcp__calc__shout"])
    msgs = asyncio.run(_collect(opts))
    r = _results(msgs)
    assert r["a"].content == "3"
    assert r["b"].is_error and "deny rule mcp__calc__shout" in r["b"].content
    model = lw.ScriptedModel([[{"type": "tool_use", "id": "a", "name": "mcp__calc__add", "input": {"a": 1, "b": 2}}],
                              [{"type": "text", "text": "ok"}]])
    msgs = asyncio.run(_collect(lw.AgentOptions(model=model, mcp_servers={"calc": calc}, permission_mode="default")))
    assert _results(msgs)["a"].is_error  # readOnlyHint alone does not approve an MCP tool


def test_interactive_approval_of_project_servers(tmp_path: Path) -> None:
    from loopwright.mcp.config import ask_project_approval

    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}))
    opts = lw.AgentOptions(cwd=tmp_path, setting_sources=["user", "project", "local"])
    questions: list[str] = []
    assert ask_project_approval(opts, lambda q: questions.append(q) or "y") == ["a", "b"]
    assert "a, b" in questions[0]
    local = json.loads((tmp_path / ".loopwright" / "settings.local.json").read_text())
    assert local == {"enabledMcpjsonServers": ["a", "b"]}
    assert ask_project_approval(opts, lambda q: questions.append(q) or "y") == [] and len(questions) == 1  # asked once
    got = {c.name: c for c in collect(None, tmp_path, settings=load_settings(tmp_path))}
    assert not got["a"].needs_approval and not got["b"].needs_approval
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"a": {"command": "x"}, "c": {"command": "z"}}}))
    assert ask_project_approval(opts, lambda q: "n") == []
    assert json.loads((tmp_path / ".loopwright" / "settings.local.json").read_text())["disabledMcpjsonServers"] == ["c"]
    assert {c.name: c.needs_approval for c in collect(None, tmp_path, settings=load_settings(tmp_path))}["c"]


@pytest.mark.parametrize("text", ['{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}", '{"n": 1' + "0" * 5000 + "}"],
                         ids=["nested", "5000-digits"])
def test_a_config_file_python_cannot_read_is_named(tmp_path: Path, text: str) -> None:
    """Nesting past the parser's depth (RecursionError) or a 5000-digit number (ValueError): the
    start ended with a bare 'unexpected error', naming no file; it is the file's own error."""
    f = tmp_path / ".mcp.json"
    f.write_text(text)
    with pytest.raises(McpConfigError, match=f"{f} is not valid JSON"):
        read_config(str(f))
