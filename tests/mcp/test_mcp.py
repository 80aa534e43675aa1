"""MCP servers' tools through the loop: real servers written with the `mcp` SDK
(tests/mcp/mcp_test_server.py) over stdio and streamable HTTP on loopback."""

from __future__ import annotations

import asyncio
import copy
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.invariant import holds
from tests.helpers import TESTS, cli_env, loopwright_cmd, still_alive

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install -e '.[dev]')")

SERVER = str(TESTS / "mcp" / "mcp_test_server.py")


def server(tmp: Path, *extra: str, name: str = "t") -> dict[str, Any]:
    return {"command": sys.executable,
            "args": [SERVER, "--log", str(tmp / f"{name}.log"), "--pid-file", str(tmp / "pids"), *extra]}


def use(name: str, i: int, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"c{i}", "name": name, "input": inp}


class Recording(lw.ScriptedModel):
    """A scripted model that keeps every request (tools and a copy of the messages)."""

    def __init__(self, turns: Any) -> None:
        super().__init__(turns)
        self.requests: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    async def stream(self, request: Any) -> Any:
        self.requests.append((copy.deepcopy(request.tools), copy.deepcopy(request.messages)))
        async for ev in super().stream(request):
            yield ev


def pids(tmp: Path) -> list[int]:
    f = tmp / "pids"
    return [int(x) for x in f.read_text().split()] if f.exists() else []


def assert_no_server_left(tmp: Path, expected: int) -> None:
    found = pids(tmp)
    assert len(found) == expected, found
    assert not still_alive(found), "an MCP server process outlived its run"


async def collect(prompt: str, options: lw.AgentOptions) -> list[Any]:
    return [m async for m in lw.query(prompt, options)]


def results_by_id(messages: list[Any]) -> dict[str, Any]:
    out = {}
    for m in messages:
        if isinstance(m, lw.UserMessage):
            for r in m.tool_results:
                out[r.tool_use_id] = r
    return out


def text_of(r: Any) -> str:
    c = r.content
    return c if isinstance(c, str) else "\n".join(getattr(b, "text", "") for b in c)


@pytest.mark.e2e
def test_stdio_server_through_the_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_MCP_OUTPUT_TOKENS", "50")
    model = Recording([
        [use("mcp__t__slow_read", 1, tag="a", seconds=0.6), use("mcp__t__slow_read", 2, tag="b", seconds=0.6)],
        [use("mcp__t__echo", 3, text="hi"), use("mcp__t__image", 4), use("mcp__t__structured", 5),
         use("mcp__t__fail", 6), use("mcp__t__weird_name", 7), use("mcp__t__echo", 8, text=5),
         use("mcp__t__big", 9, n=1000), use("ListMcpResources", 10),
         use("ReadMcpResource", 11, server="t", uri="note://readme"), use("mcp__t__write_note", 12, text="no")],
        [{"type": "text", "text": "done"}],
    ])
    opts = lw.AgentOptions(model=model, cwd=tmp_path, permission_mode="default", allowed_tools=["mcp__t"],
                           disallowed_tools=["mcp__t__write_note"],
                           mcp_servers={"t": server(tmp_path, "--mode", "broken-schema")},
                           persist_session=True, sessions_dir=tmp_path / "sessions")
    msgs = asyncio.run(collect("go", opts))
    result = msgs[-1]
    assert result.subtype == "success", result
    init = msgs[0]
    assert init.subtype == "init" and init.data["mcp_servers"] == [{"name": "t", "status": "connected"}]
    # offered with the right names and schemas; the broken-schema tool is skipped
    tools0 = model.requests[0][0]
    names = [t["name"] for t in tools0]
    assert "mcp__t__echo" in names and "mcp__t__weird_name" in names and "ListMcpResources" in names
    assert "mcp__t__broken" not in names
    echo = next(t for t in tools0 if t["name"] == "mcp__t__echo")
    assert echo == {"name": "mcp__t__echo", "description": "Echo the text back.",
                    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
    # byte-stable across calls (prompt caching)
    assert len({json.dumps(t, sort_keys=False) for t, _ in model.requests}) == 1
    # Inv on every request
    assert all(holds(m) for _, m in model.requests)
    # read-only calls overlapped
    log = (tmp_path / "t.log").read_text().split("\n")
    times = {(w[0], w[1]): float(w[2]) for w in (ln.split() for ln in log) if len(w) == 3}
    assert times[("start", "b")] < times[("end", "a")] and times[("start", "a")] < times[("end", "b")]
    r = results_by_id(msgs)
    assert text_of(r["c1"]) == "read a" and not r["c1"].is_error
    assert text_of(r["c3"]) == "echo: hi"
    img = r["c4"].content
    assert img[0].text == "a pixel:" and img[1].source["media_type"] == "image/png"
    assert json.loads(text_of(r["c5"])) == {"temperature": 21.5, "unit": "C"}
    assert r["c6"].is_error and text_of(r["c6"]) == "it went wrong"
    assert "embedded text" in text_of(r["c7"])
    assert r["c8"].is_error and "Invalid input" in text_of(r["c8"])
    big = text_of(r["c9"])
    assert big.startswith("x" * 200) and "x" * 201 not in big and "MAX_MCP_OUTPUT_TOKENS" in big
    saved = Path(big.split("saved in ")[1].split(" (read")[0])
    assert saved.read_text() == "x" * 1000
    assert json.loads(text_of(r["c10"])) == [{"server": "t", "uri": "note://readme", "name": "readme",
                                              "mimeType": "text/plain"}]
    assert "the readme text" in text_of(r["c11"])
    assert r["c12"].is_error and "deny rule mcp__t__write_note" in text_of(r["c12"])  # refused, never sent
    assert "note no" not in (tmp_path / "t.log").read_text()
    assert [d["tool_name"] for d in result.permission_denials] == ["mcp__t__write_note"]
    assert_no_server_left(tmp_path, 1)


@pytest.mark.e2e
@pytest.mark.parametrize("transport", ["http", "sse"])
def test_http_and_sse_servers(tmp_path: Path, transport: str) -> None:
    # the server listens on a port of its own and says which (a port found free here and handed over
    # could be taken by another process before the server binds it)
    proc = subprocess.Popen([sys.executable, SERVER, f"--{transport}", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        model = Recording([[use("mcp__web__echo", 1, text="over http")], [{"type": "text", "text": "ok"}]])
        opts = lw.AgentOptions(model=model, cwd=tmp_path, allowed_tools=["mcp__web__echo"], permission_mode="default",
                               mcp_servers={"mcpServers": {"web": {"type": transport,
                                                                   "url": f"http://127.0.0.1:{port}/{transport.replace('http', 'mcp')}",
                                                                   "headers": {"X-Test": "${MCP_TEST_HEADER:-yes}"}}}})
        msgs = asyncio.run(collect("go", opts))
        assert msgs[0].data["mcp_servers"] == [{"name": "web", "status": "connected"}]
        assert text_of(results_by_id(msgs)["c1"]) == "echo: over http"
        assert msgs[-1].subtype == "success"
    finally:
        proc.terminate()
        proc.wait(10)


def test_gate_rule_forms() -> None:
    from loopwright.gate import Permissions

    def verdict(rules: list[str], name: str) -> str:
        return Permissions("default", rules, cwd="/tmp").evaluate(name, {}, read_only=True).kind

    assert verdict(["mcp__fs"], "mcp__fs__read_file") == "allow"
    assert verdict(["mcp__fs__*"], "mcp__fs__read_file") == "allow"
    assert verdict(["mcp__fs__read_file"], "mcp__fs__read_file") == "allow"
    assert verdict(["mcp__fs__read_file"], "mcp__fs__write_file") == "ask"
    assert verdict(["mcp__fs"], "mcp__fsx__read_file") == "ask"
    assert verdict([], "mcp__fs__read_file") == "ask"
    deny = Permissions("bypassPermissions", [], ["mcp__fs"], cwd="/tmp")
    assert deny.evaluate("mcp__fs__read_file", {}).kind == "deny"


@lw.tool(read_only=True)
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@pytest.mark.e2e
def test_failing_servers_do_not_stop_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exits at start, bad config, crashes mid-call, hangs mid-call (MCP_TOOL_TIMEOUT)."""
    monkeypatch.setenv("MCP_TOOL_TIMEOUT", "1500")
    model = Recording([
        [use("mcp__crashy__crash", 1)],
        [use("mcp__crashy__echo", 2, text="again"), use("mcp__hangs__hang", 3)],
        [use("mcp__hangs__echo", 4, text="after"), use("mcp__ok__echo", 5, text="still here")],
        [{"type": "text", "text": "done"}],
    ])
    servers = {"gone": server(tmp_path, "--mode", "exit", name="gone"),
               "crashy": server(tmp_path, name="crashy"), "hangs": server(tmp_path, name="hangs"),
               "ok": lw.create_sdk_mcp_server("ok", tools=[echo]),
               "typo": {"type": "websocket", "url": "ws://127.0.0.1:1"}, "nocmd": {"args": ["x"]}}
    opts = lw.AgentOptions(model=model, cwd=tmp_path, permission_mode="bypassPermissions", mcp_servers=servers)
    t0 = time.monotonic()
    msgs = asyncio.run(collect("go", opts))
    assert msgs[-1].subtype == "success"
    status = {s["name"]: s for s in msgs[0].data["mcp_servers"]}
    assert status["gone"]["status"] == "failed" and "refusing to start" in status["gone"]["error"]
    assert "unknown transport" in status["typo"]["error"] and "'typo'" in status["typo"]["error"]
    assert '"command" is missing' in status["nocmd"]["error"] and "'nocmd'" in status["nocmd"]["error"]
    assert {status[n]["status"] for n in ("crashy", "hangs", "ok")} == {"connected"}
    r = results_by_id(msgs)
    assert r["c1"].is_error and "closed the connection" in text_of(r["c1"])
    assert r["c2"].is_error and "not connected" in text_of(r["c2"])
    assert r["c3"].is_error and "MCP_TOOL_TIMEOUT" in text_of(r["c3"])
    assert r["c4"].is_error and "not connected" in text_of(r["c4"])
    assert text_of(r["c5"]) == "echo: still here"
    assert all(holds(m) for _, m in model.requests)
    assert time.monotonic() - t0 < 60
    assert_no_server_left(tmp_path, 3)


def test_server_that_never_answers_times_out_at_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_TIMEOUT", "1000")
    silent = {"command": "sh", "args": ["-c", f"echo $$ >> {tmp_path / 'pids'}; exec sleep 60"]}
    model = Recording([[{"type": "text", "text": "ok"}]])
    opts = lw.AgentOptions(model=model, cwd=tmp_path, mcp_servers={"silent": silent})
    t0 = time.monotonic()
    msgs = asyncio.run(collect("go", opts))
    assert msgs[-1].subtype == "success"
    (s,) = msgs[0].data["mcp_servers"]
    assert s["status"] == "failed" and "did not start within 1 s (MCP_TIMEOUT)" in s["error"], s
    assert time.monotonic() - t0 < 15
    assert_no_server_left(tmp_path, 1)


@pytest.mark.e2e
def test_interrupt_cancels_the_mcp_call(tmp_path: Path) -> None:
    model = Recording([[use("mcp__t__hang", 1)], [{"type": "text", "text": "ok"}]])
    opts = lw.AgentOptions(model=model, cwd=tmp_path, permission_mode="bypassPermissions",
                           mcp_servers={"t": server(tmp_path)})

    async def go() -> list[Any]:
        out: list[Any] = []
        async with lw.LoopwrightClient(opts) as client:
            await client.query("go")
            async for m in client.receive_response():
                out.append(m)
                if isinstance(m, lw.AssistantMessage) and m.content and isinstance(m.content[0], lw.ToolUseBlock):
                    log = tmp_path / "t.log"
                    for _ in range(600):  # until the call is running in the server
                        if log.exists() and "hang started" in log.read_text():
                            break
                        await asyncio.sleep(0.05)
                    client.interrupt()
        return out

    msgs = asyncio.run(go())
    r = results_by_id(msgs)
    assert r["c1"].is_error and "Interrupted" in text_of(r["c1"])
    assert msgs[-1].subtype == "error_during_execution"
    assert holds(msgs[-1].messages)
    assert "cancelled" in (tmp_path / "t.log").read_text()  # the server got notifications/cancelled
    assert_no_server_left(tmp_path, 1)


@pytest.mark.e2e
def test_servers_end_when_the_model_raises(tmp_path: Path) -> None:
    model = Recording([[use("mcp__t__echo", 1, text="x")], RuntimeError("the model broke")])
    opts = lw.AgentOptions(model=model, cwd=tmp_path, permission_mode="bypassPermissions",
                           mcp_servers={"t": server(tmp_path, "--mode", "plain")})
    msgs = asyncio.run(collect("go", opts))
    assert msgs[-1].subtype == "error_during_execution" and "the model broke" in msgs[-1].result
    assert text_of(results_by_id(msgs)["c1"]) == "echo: x"
    assert_no_server_left(tmp_path, 1)


@pytest.mark.e2e
@pytest.mark.parametrize("signum, code", [(15, 143), (2, 130)])
def test_cli_signal_ends_the_servers(tmp_path: Path, signum: int, code: int) -> None:
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps([[use("mcp__t__hang", 1)], [{"type": "text", "text": "ok"}]]))
    config = json.dumps({"mcpServers": {"t": server(tmp_path, "--mode", "plain")}})
    env = cli_env(LOOPWRIGHT_HOME=str(tmp_path / "home"))
    # SIGINT at its default, as a terminal's foreground job has it: a runner started in the
    # background of a script (`pytest &`) passes SIGINT on ignored, and loopwright keeps it so.
    p = subprocess.Popen([*loopwright_cmd(), "-p", "go", "--model", f"scripted:{turns}",
                          "--mcp-config", config, "--permission-mode", "bypassPermissions"],
                         cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    log = tmp_path / "t.log"
    deadline = time.monotonic() + 60
    while not (log.exists() and "hang started" in log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert p.poll() is None, p.communicate()
    p.send_signal(signum)
    _, err = p.communicate(timeout=30)
    assert p.returncode == code, err
    assert_no_server_left(tmp_path, 1)
