"""Bad input on `loopwright mcp serve`'s stdio is an error, never an exit (issue 40, item 11): a line
that is no JSON gets -32700, a line that is no request -32600 (by its id when it has one), JSON
nested 100,000 deep and a line over the 32 MiB limit are answered and skipped; random and mutated
lines of MCP's messages (hypothesis) never stop the server, every request among them is answered,
and a well-formed request after them still is. `initialize` is answered before the SDK is loaded,
and that early answer says what the SDK itself would (the server notes on stderr when not)."""

from __future__ import annotations

import itertools
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import cli_env, loopwright_cmd
from tests.protofuzz import Peer, lines

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")
pytestmark = pytest.mark.e2e
_ids = itertools.count(1000)
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}


def start(work: Path, home: Path, *flags: str) -> Peer:
    env = cli_env(HOME=str(home), LOOPWRIGHT_HOME=str(home / ".loopwright"))
    return Peer([*loopwright_cmd(), "mcp", "serve", "--cwd", str(work), *flags], env, str(work), lambda m: None)


def call(peer: Peer, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> dict[str, Any]:
    rid = next(_ids)
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    peer.send(json.dumps(msg).encode())
    return peer.wait_for(lambda m: m.get("id") == rid and "method" not in m, timeout)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("mcpfuzz")
    work = home / "work"
    work.mkdir()
    (work / "note.txt").write_text("a note in the workspace\n")
    peer = start(work, home)
    try:
        assert "result" in call(peer, "initialize", INIT)
        peer.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        yield {"peer": peer, "work": work}
    finally:
        if peer.p.poll() is None:
            peer.p.kill()
            peer.p.wait()


def templates(work: Path) -> list[dict[str, Any]]:
    def req(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 7, "method": method, **({"params": params} if params is not None else {})}

    return [req("initialize", INIT), req("ping"), req("tools/list", {}),
            req("tools/call", {"name": "Read", "arguments": {"file_path": str(work / "note.txt")}}),
            req("tools/call", {"name": "Glob", "arguments": {"pattern": "*.txt"}}),
            req("resources/list", {}), req("prompts/list", {}), req("logging/setLevel", {"level": "debug"}),
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}},
            {"jsonrpc": "2.0", "id": 3, "result": {}},
            {"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "x"}}]


def still_answers(peer: Peer) -> None:
    assert call(peer, "ping")["result"] == {}
    assert any(t["name"] == "Read" for t in call(peer, "tools/list", {})["result"]["tools"])
    assert peer.p.poll() is None


def expected_id(line: bytes) -> Any:
    """The id a line must be answered by: a JSON object with a method and a usable id (None: no
    answer is owed by that id — a notification, a response, or a line whose id cannot be read,
    which is answered with id null)."""
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(msg, dict) and "method" in msg and "id" in msg:
        id_ = msg["id"]
        if isinstance(id_, (str, int)) and not isinstance(id_, bool):
            return id_
    return None


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_bad_lines_never_stop_the_server_and_every_request_is_answered(server: dict[str, Any],
                                                                        data: st.DataObject) -> None:
    peer = server["peer"]
    bad = data.draw(st.lists(lines(templates(server["work"])), min_size=1, max_size=3))
    owed = set()
    for line in bad:
        peer.send(line)
        if (id_ := expected_id(line)) is not None:
            owed.add(json.dumps(id_))
    end = time.monotonic() + 30
    while owed:
        assert time.monotonic() < end, f"no answer to {owed}"
        got = peer.wait_for(lambda m: "method" not in m and json.dumps(m.get("id")) in owed, end - time.monotonic())
        owed.discard(json.dumps(got["id"]))
    still_answers(peer)


def test_malformed_lines_get_json_rpc_errors(server: dict[str, Any]) -> None:
    peer = server["peer"]
    peer.send(b"not json at all")
    assert peer.wait_for(lambda m: "error" in m and m.get("id") is None)["error"]["code"] == -32700
    peer.send(b'{"jsonrpc": "2.0", "id": 5, "method": ')  # torn: a parse error, id null
    assert peer.wait_for(lambda m: "error" in m and m.get("id") is None)["error"]["code"] == -32700
    peer.send(b'{"hello": "world"}')  # an object, no request
    assert peer.wait_for(lambda m: "error" in m and m.get("id") is None)["error"]["code"] == -32600
    peer.send(b'{"jsonrpc": "2.0", "id": "m1", "method": 7}')  # its id is usable: answered by it
    err = peer.wait_for(lambda m: m.get("id") == "m1")["error"]
    assert err["code"] == -32600 and err["message"].startswith("Invalid Request")
    peer.send(b'{"jsonrpc": "1.0", "id": "v1", "method": "ping"}')
    assert peer.wait_for(lambda m: m.get("id") == "v1")["error"]["code"] == -32600
    peer.send(b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}')  # an id that is no id
    assert peer.wait_for(lambda m: "error" in m and m.get("id") is None)["error"]["code"] == -32600
    peer.send(b"[" * 100_000 + b"]" * 100_000)
    err = peer.wait_for(lambda m: "error" in m and m.get("id") is None)["error"]
    assert err["code"] == -32700 and "nested" in err["message"]
    peer.send(b'{"jsonrpc": "2.0", "id": "u1", "method": "no/such/method"}')  # well-formed: the SDK's -32601
    assert peer.wait_for(lambda m: m.get("id") == "u1")["error"]["code"] == -32601
    peer.send(b'{"jsonrpc": "2.0", "id": "p1", "method": "tools/call", "params": {"name": 5}}')  # bad params
    assert peer.wait_for(lambda m: m.get("id") == "p1")["error"]["code"] == -32602
    still_answers(peer)


def test_a_line_over_the_limit_is_skipped_and_answered(server: dict[str, Any]) -> None:
    peer = server["peer"]
    big = json.dumps({"jsonrpc": "2.0", "id": "huge", "method": "tools/call",
                      "params": {"name": "Write", "arguments": {"file_path": str(server["work"] / "big.txt"),
                                                                "content": "x" * (33 << 20)}}}).encode()
    peer.send(big)
    err = peer.wait_for(lambda m: m.get("id") == "huge", timeout=60)["error"]
    assert err["code"] == -32600 and "over the limit" in err["message"]
    assert not (server["work"] / "big.txt").exists()
    still_answers(peer)


def test_zz_the_server_still_works_and_ends_with_stdin(server: dict[str, Any]) -> None:
    """(Named to run last in this module: it closes the server the others shared.)"""
    peer = server["peer"]
    r = call(peer, "tools/call", {"name": "Read", "arguments": {"file_path": str(server["work"] / "note.txt")}})
    assert "a note in the workspace" in r["result"]["content"][0]["text"]
    assert peer.close() == 0
    assert b"differs" not in b"".join(peer.err)


@pytest.mark.parametrize(("version", "flags"), [(v, ()) for v in ("2024-11-05", "2025-03-26", "2025-06-18",
                                                                   "2025-11-25", "1999-01-01")]
                         + [("2025-11-25", ("--conformance-fixtures",))])
def test_initialize_is_answered_early_and_as_the_sdk_would(tmp_path: Path, version: str,
                                                           flags: tuple[str, ...]) -> None:
    """The answer comes before the SDK is loaded (well under the ~0.5 s its import takes, on an idle
    machine); the SDK's own answer, which the server drops, says the same, or stderr would say
    `differs`; an unknown version is answered with the newest one."""
    peer = start(tmp_path, tmp_path, *flags)
    try:
        rid = next(_ids)
        peer.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize",
                              "params": {**INIT, "protocolVersion": version}}).encode())
        result = peer.wait_for(lambda m: m.get("id") == rid)["result"]
        assert result["protocolVersion"] == (version if version != "1999-01-01" else "2025-11-25")
        assert result["serverInfo"]["name"] == "loopwright"
        assert {"tools", "resources", "prompts", "logging", "completions"} <= set(result["capabilities"])
        peer.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        still_answers(peer)  # (the SDK is loaded by now and has answered the initialize too)
        assert not [m for m in list(peer.out.queue) if m and m.get("id") == rid]  # answered once
        assert peer.close() == 0
    finally:
        if peer.p.poll() is None:
            peer.p.kill()
    assert b"differs" not in b"".join(peer.err), b"".join(peer.err)[-2000:]


@pytest.mark.parametrize("flags", [(), ("--conformance-fixtures",)])
def test_claude_codes_first_requests_are_answered_early_and_as_the_sdk_would(tmp_path: Path,
                                                                            flags: tuple[str, ...]) -> None:
    """Claude Code speaks the 2026-07-28 protocol: `server/discover`, then prompts, resources and
    tools listed at once, and its first model call does not wait long for them. They are answered
    before the SDK is loaded, in the SDK's own shape (the SDK's answers, dropped, say the same, or
    stderr would say `differs`)."""
    (tmp_path / "a.txt").write_text("a file\n")
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
            "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}}}
    peer = start(tmp_path, tmp_path / "home", *flags)
    try:
        methods = ["server/discover", "prompts/list", "resources/list", "tools/list"]
        for i, m in enumerate(methods):
            peer.send(json.dumps({"jsonrpc": "2.0", "id": f"r{i}", "method": m, "params": {"_meta": meta}}).encode())
        got = {m: peer.wait_for(lambda x, i=i: x.get("id") == f"r{i}")["result"] for i, m in enumerate(methods)}
        assert got["server/discover"]["supportedVersions"] == ["2026-07-28"]
        assert got["server/discover"]["capabilities"]["tools"] == {"listChanged": False}
        assert all(r["resultType"] == "complete" for r in got.values())
        assert any(t["name"] == "Read" for t in got["tools/list"]["tools"])
        assert any(r["uri"] == f"file://{tmp_path}/a.txt" for r in got["resources/list"]["resources"])
        peer.send(json.dumps({"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": {
            "name": "Read", "arguments": {"file_path": str(tmp_path / "a.txt")}, "_meta": meta}}).encode())
        assert "a file" in peer.wait_for(lambda x: x.get("id") == "call")["result"]["content"][0]["text"]
        assert peer.close() == 0
    finally:
        if peer.p.poll() is None:
            peer.p.kill()
    err = b"".join(peer.err)
    assert b"differs" not in err, err[-3000:]


def test_a_probe_the_client_gave_up_on_does_not_set_the_protocol_era(tmp_path: Path) -> None:
    """Claude Code probes with `server/discover` and, on stdio, goes on with `initialize` when the
    answer is late (a server slow to start on a loaded machine: seen as every tools/call of
    tests/mcp/test_mcp_interop.py refused "params._meta is missing the required envelope key(s)").
    Both lines are read before the SDK is loaded and answered early; the SDK must then serve the
    handshake era the client chose, not the 2026-07-28 era of the probe it gave up on."""
    (tmp_path / "a.txt").write_text("a file\n")
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    peer = start(tmp_path, tmp_path / "home")
    try:
        peer.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta}}).encode())
        assert "result" in call(peer, "initialize", INIT)  # (the probe's answer, not waited for)
        peer.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        got = call(peer, "tools/call", {"name": "Read", "arguments": {"file_path": str(tmp_path / "a.txt")}})
        assert "a file" in got["result"]["content"][0]["text"], got
        assert peer.close() == 0
    finally:
        if peer.p.poll() is None:
            peer.p.kill()


def test_a_change_right_after_the_subscribe_answer_is_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch's first look at the file is taken before `resources/subscribe` is answered, not
    when its task first runs: on a busy server that can be after the client's next write, which
    was then the first look and never told (the subscription test once waited 0.3 s for it)."""
    import asyncio

    from loopwright.mcp.serve_core import Core
    from loopwright.mcp.serve_resources import Watches, file_uri
    from loopwright.options import AgentOptions

    work = tmp_path / "work"
    work.mkdir()
    watched = work / "watched.txt"
    watched.write_text("one\n")
    uri = file_uri(watched)
    monkeypatch.setattr(Watches, "POLL", 0.01)

    async def go() -> str:
        watches = Watches(Core(AgentOptions(cwd=work), fixtures=False).files)
        told: asyncio.Queue[str] = asyncio.Queue()
        await watches.subscribe(1, uri, told.put)
        watched.write_text("two, longer\n")  # the loop has not turned: the watch's task has not run yet
        try:
            return await asyncio.wait_for(told.get(), 30)
        finally:
            watches.unsubscribe(1, uri)

    assert asyncio.run(go()) == uri


def test_a_subscribed_file_tells_its_changes_until_unsubscribed(tmp_path: Path) -> None:
    """resources/subscribe on a workspace file: a change is told as notifications/resources/updated
    (within the watch's poll of 1 s), none after resources/unsubscribe; a denied file or one outside
    the working directories cannot be watched."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "watched.txt").write_text("one\n")
    (work / "secret.txt").write_text("no\n")
    (tmp_path / "outside.txt").write_text("no\n")
    env = cli_env(HOME=str(tmp_path), LOOPWRIGHT_HOME=str(tmp_path / ".loopwright"))
    peer = Peer([*loopwright_cmd(), "mcp", "serve", "--cwd", str(work), "--disallowedTools", "Read(./secret.txt)"],
                env, str(work), lambda m: None)
    uri = f"file://{work}/watched.txt"
    try:
        init = call(peer, "initialize", INIT)["result"]
        assert init["capabilities"]["resources"]["subscribe"] is True
        peer.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        assert call(peer, "resources/subscribe", {"uri": uri})["result"] == {}
        denied = call(peer, "resources/subscribe", {"uri": f"file://{work}/secret.txt"})["error"]
        outside = call(peer, "resources/subscribe", {"uri": f"file://{tmp_path}/outside.txt"})["error"]
        (work / "watched.txt").write_text("two, longer\n")
        told = peer.wait_for(lambda m: m.get("method") == "notifications/resources/updated", timeout=10)
        assert told["params"]["uri"] == uri
        assert call(peer, "resources/unsubscribe", {"uri": uri})["result"] == {}
        (work / "watched.txt").write_text("three, longer still\n")
        time.sleep(2.5)
        ping = next(_ids)
        peer.send(json.dumps({"jsonrpc": "2.0", "id": ping, "method": "ping"}).encode())
        seen: list[dict[str, Any]] = []
        peer.wait_for(lambda m: seen.append(m) is None and m.get("id") == ping)  # (everything on the way)
        assert not [m for m in seen if m.get("method") == "notifications/resources/updated"], seen
        assert peer.close() == 0
    finally:
        if peer.p.poll() is None:
            peer.p.kill()
    assert denied["code"] == -32602 and "refused" in denied["message"]
    assert outside["code"] == -32602 and "not found" in outside["message"]


def test_settings_the_server_cannot_run_with_end_it_with_one_line(tmp_path: Path) -> None:
    """The settings are read while the first requests are answered; a bad file ends the server with
    exit 2 and one stderr line naming it (the client sees the server gone, never a hang)."""
    bad = tmp_path / "bad.json"
    bad.write_text('{"permissions": {"allow": 5}}')
    init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}) + "\n"
    p = subprocess.run([*loopwright_cmd(), "mcp", "serve", "--cwd", str(tmp_path), "--settings", str(bad)],
                       input=init, capture_output=True, text=True, timeout=60,
                       env=cli_env(HOME=str(tmp_path), LOOPWRIGHT_HOME=str(tmp_path / ".loopwright")))
    assert p.returncode == 2
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and str(bad) in lines[0] and "permissions.allow" in lines[0], p.stderr


def test_listing_and_reading_resources_keeps_no_path_judgments(tmp_path: Path) -> None:
    """resources/list decides a Read of every file it lists, resources/read one of the file it
    reads; neither runs the Read tool, which is what takes a kept judgment. Each request kept
    one per file for the server's life (and a later Read tool call was held to all of them)."""
    import asyncio

    from loopwright.mcp.serve_core import Core
    from loopwright.mcp.serve_resources import file_uri
    from loopwright.options import AgentOptions

    work = tmp_path / "work"
    work.mkdir()
    for i in range(3):
        (work / f"f{i}.txt").write_text(f"{i}\n")

    async def go() -> dict[Any, Any]:
        files = Core(AgentOptions(cwd=work), fixtures=False).files
        for _ in range(3):
            listed, _ = await files.page(None)
            assert len(listed) == 3
            assert (await files.read(file_uri(work / "f0.txt")))["text"] == "0\n"
        return files.executor.ctx.state.judged

    assert asyncio.run(go()) == {}
