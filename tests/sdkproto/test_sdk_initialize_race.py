"""Two initialize requests in flight at once (each waits on the SDK for its in-process MCP server):
the second must not undo the first. It was handled beside the first and, finishing last, wrote
back the options as they were before the first's managedSettings: the session ran without the
host's deny rule (--managed-settings-in-initialize: "no prompt runs without them")."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import bash, cli_env, loopwright_cmd, text, use
from tests.protofuzz import Peer

pytestmark = pytest.mark.e2e
MODEL = "claude-sonnet-4-5"


def control(rid: str, **request: Any) -> bytes:
    return json.dumps({"type": "control_request", "request_id": rid, "request": request}).encode()


def mcp_reply(msg: dict[str, Any]) -> dict[str, Any]:
    inner = msg["request"]["message"]
    result = {"tools": []} if inner.get("method") == "tools/list" else {}
    return {"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"], "response": {
        "mcp_response": {"jsonrpc": "2.0", "id": inner.get("id"), "result": result}}}}


def test_a_second_initialize_in_flight_keeps_the_firsts_managed_settings(tmp_path: Path) -> None:
    held: dict[str, list[dict[str, Any]]] = {"first": [], "second": []}
    release = {"first": threading.Event(), "second": threading.Event()}
    # (one lock over the look at `release` and the hold, and over the release and the taking of what
    # is held: else a message the reader thread looked at just before the release was held after it,
    # and never answered)
    gate = threading.Lock()

    def answer(msg: dict[str, Any]) -> dict[str, Any] | None:  # the SDK's side: its servers' first answers held
        if msg.get("type") != "control_request" or msg["request"].get("subtype") != "mcp_message":
            return None
        server = msg["request"]["server_name"]
        with gate:
            if not release[server].is_set():
                held[server].append(msg)
                return None
        return mcp_reply(msg)

    def let_go(server: str) -> None:
        with gate:
            release[server].set()
            waiting = list(held[server])
        for msg in waiting:
            peer.send(json.dumps(mcp_reply(msg)).encode())

    with ScriptedServer([[bash("echo ran-it")], [text("done")]], model=MODEL) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                     "--model", MODEL, "--allowedTools", "Bash", "--await-initialize",
                     "--managed-settings-in-initialize"], env, str(tmp_path), answer)
        try:
            peer.send(control("r1", subtype="initialize", managedSettings={"permissions": {"deny": ["Bash"]}},
                              sdkMcpServers=["first"]))
            peer.wait_for(lambda m: m.get("request", {}).get("server_name") == "first", timeout=60)
            peer.send(control("r2", subtype="initialize", sdkMcpServers=["second"], managedSettings={}))
            let_go("first")
            peer.wait_for(lambda m: m.get("type") == "control_response" and m["response"]["request_id"] == "r1", timeout=60)
            let_go("second")
            peer.wait_for(lambda m: m.get("type") == "control_response" and m["response"]["request_id"] == "r2", timeout=60)
            peer.send(json.dumps({"type": "user", "message": {"role": "user", "content": "go"},
                                  "parent_tool_use_id": None, "session_id": ""}).encode())
            result = peer.wait_for(lambda m: m.get("type") == "result", timeout=60)
        finally:
            peer.close()
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Bash"], result
    assert "initialize: its managedSettings not applied" in b"".join(peer.err).decode()  # (the second's: said)


def test_a_mode_set_while_initialize_waits_is_not_undone_by_it(tmp_path: Path) -> None:
    """set_permission_mode answered while the first initialize waits on the SDK's MCP server: the
    initialize, finishing, wrote back the options from before it, so the session ran in the mode
    the SDK had just left (acceptEdits: the Write ran), though its answer said default."""
    held: list[dict[str, Any]] = []
    release = threading.Event()
    gate = threading.Lock()  # (as above: no message held after the release)

    def answer(msg: dict[str, Any]) -> dict[str, Any] | None:
        if msg.get("type") != "control_request" or msg["request"].get("subtype") != "mcp_message":
            return None
        with gate:
            if not release.is_set():
                held.append(msg)
                return None
        return mcp_reply(msg)

    target = tmp_path / "made.txt"
    script = [[use("w1", "Write", file_path=str(target), content="x")], [text("done")]]
    with ScriptedServer(script, model=MODEL) as srv:
        env = cli_env(ANTHROPIC_BASE_URL=srv.url, ANTHROPIC_API_KEY="x", HOME=str(tmp_path))
        peer = Peer([*loopwright_cmd(), "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                     "--model", MODEL, "--permission-mode", "acceptEdits", "--await-initialize"], env, str(tmp_path),
                    answer)
        try:
            peer.send(control("r1", subtype="initialize", sdkMcpServers=["first"]))
            peer.wait_for(lambda m: m.get("request", {}).get("server_name") == "first", timeout=60)
            peer.send(control("r2", subtype="set_permission_mode", mode="default"))
            said = peer.wait_for(lambda m: m.get("type") == "control_response" and m["response"]["request_id"] == "r2", timeout=60)
            assert said["response"]["subtype"] == "success", said
            with gate:
                release.set()
                waiting = list(held)
            for msg in waiting:
                peer.send(json.dumps(mcp_reply(msg)).encode())
            peer.wait_for(lambda m: m.get("type") == "control_response" and m["response"]["request_id"] == "r1", timeout=60)
            peer.send(json.dumps({"type": "user", "message": {"role": "user", "content": "go"},
                                  "parent_tool_use_id": None, "session_id": ""}).encode())
            result = peer.wait_for(lambda m: m.get("type") == "result", timeout=60)
        finally:
            peer.close()
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Write"], result
    assert not target.exists()


def with_sdk_server_s(url: str, tmp_path: Path, answer: Any, *args: str) -> tuple[dict[str, Any], Peer]:
    """An SDK session whose initialize declares the in-process MCP server "s" (`answer` plays the
    SDK's side), then one prompt, "go": its result line, and the peer (closed)."""
    env = cli_env(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="x", HOME=str(tmp_path))
    peer = Peer([*loopwright_cmd(), "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                 "--model", MODEL, *args, "--await-initialize"], env, str(tmp_path), answer)
    try:
        peer.send(control("r1", subtype="initialize", sdkMcpServers=["s"]))
        peer.wait_for(lambda m: m.get("type") == "control_response" and m["response"]["request_id"] == "r1", timeout=60)
        peer.send(json.dumps({"type": "user", "message": {"role": "user", "content": "go"},
                              "parent_tool_use_id": None, "session_id": ""}).encode())
        return peer.wait_for(lambda m: m.get("type") == "result", timeout=60), peer
    finally:
        peer.close()


def test_an_sdk_servers_odd_result_is_taken_as_an_mcp_servers(tmp_path: Path) -> None:
    """A tool of an SDK (in-process) MCP server answering with blank text beside its output, and an
    image of a type the model does not take: as from any MCP server (mcp/results), the blank text
    is dropped and the image named, not sent: sent, the Messages API refused every later request
    of the run (a tool that printed nothing lost the session)."""
    def answer(msg: dict[str, Any]) -> dict[str, Any] | None:
        if msg.get("type") != "control_request" or msg["request"].get("subtype") != "mcp_message":
            return None
        inner = msg["request"]["message"]
        if inner.get("method") != "tools/call":
            reply = mcp_reply(msg)
            if inner.get("method") == "tools/list":
                reply["response"]["response"]["mcp_response"]["result"] = {"tools": [
                    {"name": "t", "description": "a tool", "inputSchema": {"type": "object"}}]}
            return reply
        return {"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"],
                "response": {"mcp_response": {"jsonrpc": "2.0", "id": inner.get("id"), "result": {"content": [
                    {"type": "text", "text": ""}, {"type": "text", "text": "out"}, {"type": "text", "text": " \n"},
                    {"type": "image", "data": "PHN2Zz4=", "mimeType": "image/svg+xml"}]}}}}}

    with ScriptedServer([[use("m1", "mcp__s__t")], [text("done")]], model=MODEL) as srv:
        result, _ = with_sdk_server_s(srv.url, tmp_path, answer, "--allowedTools", "mcp__s__t")
        sent = srv.loop_requests[-1].body["messages"][-1]["content"][0]
    assert result["subtype"] == "success" and result["result"] == "done", (result.get("errors"), result.get("result"))
    assert sent["content"][0] == {"type": "text", "text": "out"} and len(sent["content"]) == 2, sent
    assert "image/svg+xml" in sent["content"][1]["text"], sent


def test_an_sdk_servers_tool_list_is_bounded_as_an_mcp_servers(tmp_path: Path) -> None:
    """An SDK (in-process) MCP server's tool whose input schema is no object schema failed the whole
    server's listing (its other tools lost, one line for the server), and a 200,000-character
    description would go into every request whole. As any MCP server's (mcp/client): the odd tool
    is skipped with a line naming it, the others kept, a description cut to 4096 characters."""
    def answer(msg: dict[str, Any]) -> dict[str, Any] | None:
        if msg.get("type") != "control_request" or msg["request"].get("subtype") != "mcp_message":
            return None
        reply = mcp_reply(msg)
        if msg["request"]["message"].get("method") == "tools/list":
            reply["response"]["response"]["mcp_response"]["result"] = {"tools": [
                {"name": "odd", "description": "odd", "inputSchema": {"type": "array"}},
                {"name": "long", "description": "l" * 200_000, "inputSchema": {"type": "object"}}]}
        return reply

    with ScriptedServer([[text("done")]], model=MODEL) as srv:
        result, peer = with_sdk_server_s(srv.url, tmp_path, answer)
        tools = {t["name"]: t for t in srv.loop_requests[-1].body["tools"]}
    assert result["subtype"] == "success", result.get("errors")
    assert "mcp__s__long" in tools, (sorted(tools), b"".join(peer.err)[-600:])
    assert "mcp__s__odd" not in tools and len(tools["mcp__s__long"]["description"]) == 4096
    assert "tool 'odd' skipped" in b"".join(peer.err).decode()


def test_an_sdk_servers_fat_schema_and_a_name_listed_twice_are_skipped_as_an_mcp_servers(tmp_path: Path) -> None:
    """The rest of an MCP server's bounds (mcp/client) for an SDK (in-process) one: a tool whose input
    schema is over 100,000 characters of JSON went into every request whole (bounded for any other
    server), and a name listed twice was offered twice (the Messages API refuses tools whose names
    are not unique: every request of the run). Each is skipped with a line naming it."""
    def answer(msg: dict[str, Any]) -> dict[str, Any] | None:
        if msg.get("type") != "control_request" or msg["request"].get("subtype") != "mcp_message":
            return None
        reply = mcp_reply(msg)
        if msg["request"]["message"].get("method") == "tools/list":
            fat = {"type": "object", "properties": {"x": {"type": "string", "description": "s" * 150_000}}}
            reply["response"]["response"]["mcp_response"]["result"] = {"tools": [
                {"name": "fat", "description": "fat", "inputSchema": fat},
                {"name": "t", "description": "first", "inputSchema": {"type": "object"}},
                {"name": "t", "description": "second", "inputSchema": {"type": "object"}}]}
        return reply

    with ScriptedServer([[text("done")]], model=MODEL) as srv:
        result, peer = with_sdk_server_s(srv.url, tmp_path, answer)
        names = [t["name"] for t in srv.loop_requests[-1].body["tools"]]
    err = b"".join(peer.err).decode()
    assert result["subtype"] == "success", result.get("errors")
    assert "mcp__s__fat" not in names and names.count("mcp__s__t") == 1, (names, err[-600:])
    assert "tool 'fat' skipped" in err and "tool 't' skipped: the server lists that name twice" in err, err[-1000:]
