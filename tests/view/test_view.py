"""The session viewer (view/): pages and stats from real transcripts — a scripted loopwright
session with compaction, a subagent, a denial and an interrupt, and Claude Code's own
transcript (a checked-in one made offline on the loopback server, and a fresh one when Claude
Code is installed) — checked in headless Chromium where it can be had."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.cli.view import stats_json
from loopwright.tools.builtin import default_tools
from loopwright.view import load_view, render
from tests.helpers import TESTS, loopwright_cmd, text, use

CC_FIXTURE = TESTS / "fixtures" / "claude_code_fix_the_test.jsonl"
CC_SUBAGENT = TESTS / "fixtures" / "claude_code_subagent.jsonl"  # + its subagents/ folder, as Claude Code keeps it
CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BIG = "x" * 2000  # ~500 tokens a result: a window of 6000 forces compaction
W = 6000


def first_text(h: list[dict[str, Any]]) -> str:
    c = h[0]["content"]
    return c if isinstance(c, str) else str(c[0].get("text", ""))


class Agent:
    """Parent: a denied Write, a subagent, then enough look-ups to compact; the subagent answers
    once; summarizing requests get a summary."""

    def __init__(self) -> None:
        self.parent_calls = 0

    def __call__(self, h: list[dict[str, Any]]) -> Any:
        first = first_text(h)
        if first.startswith("<transcript>"):
            return [text("Summary: looked things up.")]
        if first == "count the files":
            return [text("sub done: 3 files")]
        self.parent_calls += 1
        k = self.parent_calls
        if k == 1:
            return [text("Starting."), use("w1", "Write", file_path="/etc/loopwright-view-test", content="x")]
        if k == 2:
            return [use("a1", "Agent", description="count", prompt="count the files")]
        if k == 3:  # output long enough for Bash to cut it
            return [use("b1", "Bash", command="python3 -c \"print('z' * 200000)\"")]
        if k <= 10:
            return [use(f"l{k}", "look", n=k)]
        return [text("all done")]


def look_tool() -> lw.Tool:
    return lw.Tool("look", "look something up", {"type": "object", "properties": {"n": {"type": "integer"}}},
                   lambda x: f"result {x.get('n')}: {BIG}", read_only=True)


def make_session(tmp: Path) -> tuple[Path, list[lw.ResultMessage]]:
    """A persisted session: run 1 (denial, subagent, compaction), run 2 resumed and interrupted."""
    sessions = tmp / "sessions"
    work = tmp / "work"
    work.mkdir()
    tools = [*default_tools(), look_tool()]
    opts = lw.AgentOptions(model=lw.ScriptedModel(Agent(), cost_per_call_usd=lambda k: 0.001 * k),
                           tools=tools, cwd=work, persist_session=True, sessions_dir=sessions,
                           context_window=W, agents={"general-purpose": {"description": "d", "prompt": "p"}},
                           can_use_tool=lambda name, _x: lw.Deny("no writes here") if name == "Write" else True)
    r1 = lw.run("look up things", opts)
    assert r1.subtype == "success", r1

    async def interrupted() -> lw.ResultMessage:
        async def wait(_x: dict[str, Any]) -> str:
            await asyncio.sleep(30)
            return "never"

        started = asyncio.Event()

        def model(h: list[dict[str, Any]]) -> Any:
            started.set()
            return [use("s1", "Sleep")] if h[-1]["role"] == "user" and first_text(h[-1:]) == "sleep" else [text("ok")]

        o = lw.AgentOptions(model=lw.ScriptedModel(model), tools=[lw.Tool("Sleep", "sleep", {"type": "object"}, wait)],
                            cwd=work, persist_session=True, sessions_dir=sessions, resume=r1.session_id)
        async with lw.LoopwrightClient(o) as c:
            await c.query("sleep")
            await started.wait()
            await asyncio.sleep(0.2)
            await c.interrupt()
            return [m async for m in c.receive_response()][-1]  # type: ignore[return-value]

    r2 = asyncio.run(interrupted())
    path = next(sessions.rglob(f"{r1.session_id}.jsonl"))
    return path, [r1, r2]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[lw.ResultMessage]]:
    return make_session(tmp_path_factory.mktemp("view"))


def test_calls_match_the_runs_exactly(session: tuple[Path, list[lw.ResultMessage]]) -> None:
    path, results = session
    v = load_view(path)
    assert v.source == "loopwright" and not v.warnings
    expected = [c for r in results for c in r.call_usage]
    assert len(v.calls) == sum(r.model_calls for r in results) == len(expected)
    # the exact n_k and cost of every call, as the loop recorded them
    assert [c.n for c in v.calls] == [c.input_tokens + c.cache_creation_input_tokens + c.cache_read_input_tokens
                                      for c in expected]
    assert [c.cost_usd for c in v.calls] == pytest.approx([c.cost_usd for c in expected])
    assert v.tool_use_turns == sum(r.num_turns for r in results)
    assert v.window == W
    assert any(c.after_compaction for c in v.calls), "the compaction boundary is marked on the next call"
    kinds = {e.kind for e in v.events}
    assert {"prompt", "tool_use", "tool_result", "compact", "result"} <= kinds
    results_ = [e for e in v.events if e.kind == "tool_result"]
    assert any("denied" in e.flags for e in results_), "the refused Write is marked"
    assert any("interrupted" in e.flags for e in results_), "the interrupted Sleep is marked"
    assert [e.title for e in results_ if "cut off" in e.flags] == ["Bash"], "the cut Bash output is marked"
    agent = next(e for e in v.events if e.kind == "tool_use" and e.title == "Agent")
    assert len(agent.children) == 1 and agent.children[0].calls, "the subagent's transcript is nested"
    assert any(e.kind == "text" and "sub done" in e.text for e in agent.children[0].events)


def test_page_shows_each_call_once_with_its_exact_figures(session: tuple[Path, list[lw.ResultMessage]]) -> None:
    path, _ = session
    v = load_view(path)
    page = render(v)
    assert len(re.findall(r"<g class=bar data-k=", page)) == len(v.calls)
    for c in v.calls:
        assert f"<tr id=call-{c.k}><td><a class=k href='#call-{c.k}'>{c.k}</a></td><td>{c.n:,}</td>" in page
        assert f"call {c.k}: n_k = {c.n:,}" in page  # the bar's tooltip
    assert "http://" not in page and "https://" not in page, "nothing is loaded from the network"
    assert "subagent" in page and "denied" in page and "compaction" in page


def test_claude_code_transcript_counts_each_api_call_once() -> None:
    v = load_view(CC_FIXTURE)
    assert v.source == "claude-code" and not v.warnings
    lines = [json.loads(x) for x in CC_FIXTURE.read_text().splitlines()]
    ids = list(dict.fromkeys(ln["message"]["id"] for ln in lines if ln.get("type") == "assistant"))
    assistant_lines = sum(1 for ln in lines if ln.get("type") == "assistant")
    assert assistant_lines > len(ids) == len(v.calls) == 4  # Claude Code splits responses into lines
    first = next(ln["message"]["usage"] for ln in lines if ln.get("type") == "assistant")
    assert v.calls[0].n == first["input_tokens"] + first["cache_read_input_tokens"] + first["cache_creation_input_tokens"]
    assert [c.tools for c in v.calls] == [["Bash"], ["Read", "Read"], ["Edit", "Bash"], []]
    assert v.window == 200_000 and v.cost == pytest.approx(0.1085, abs=5e-4)  # Claude Code's own total_cost_usd
    # unknown entry types are kept, shown raw
    assert any(e.kind == "raw" and e.title == "queue-operation" for e in v.events)
    assert "queue-operation ×2" in render(v)


def test_claude_code_subagent_is_nested_under_its_agent_call() -> None:
    v = load_view(CC_SUBAGENT)
    assert not v.warnings
    agent = next(e for e in v.events if e.kind == "tool_use" and e.title == "Agent")
    assert len(agent.children) == 1
    sub = agent.children[0]
    assert sub.source == "claude-code" and len(sub.calls) == 1 and sub.calls[0].n > 0
    assert next(e.text for e in sub.events if e.kind == "prompt") == "Count the files in this directory."
    # the page's total is Claude Code's: the main calls and the subagent's
    assert v.cost == pytest.approx(sum(c.cost_usd or 0 for c in v.calls) + sum(c.cost_usd or 0 for c in sub.calls))
    assert sub.cost > 0 and "subagent " + sub.session_id in render(v)


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code is not installed (npm install in tests/node)")
def test_a_fresh_claude_code_transcript(tmp_path: Path) -> None:
    from loopwright.testing import ScriptedServer

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("hello\n")
    turns = [[text("Reading."), use("toolu_1", "Read", file_path=str(repo / "a.txt"))], [text("It says hello.")]]
    home = tmp_path / "home"
    with ScriptedServer(turns) as srv:
        env = {**os.environ, "HOME": str(home), "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "any",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        p = subprocess.run([str(CLAUDE), "-p", "read a.txt", "--model", "claude-sonnet-4-5", "--output-format", "json",
                            "--permission-mode", "acceptEdits", "--allowedTools", "Read"],
                           cwd=repo, env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        calls = len(srv.loop_requests)
    out = json.loads(p.stdout)
    transcript = next(home.rglob(f"{out['session_id']}.jsonl"))
    v = load_view(transcript)
    assert len(v.calls) == calls == 2
    assert v.cost == pytest.approx(out["total_cost_usd"], rel=1e-6)
    assert sum(c.output_tokens for c in v.calls) == out["usage"]["output_tokens"]


@pytest.mark.e2e
def test_bad_input_is_named_and_what_can_be_read_is_shown(tmp_path: Path, session: tuple[Path, list[lw.ResultMessage]]
                                                          ) -> None:
    path, _ = session
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(path.read_bytes() + b'{"type":"assistant","mess')
    v = load_view(torn)
    assert v.calls and v.warnings and "torn last line" in v.warnings[-1]
    cli = loopwright_cmd()
    r = subprocess.run([*cli, "view", str(torn), "-o", str(tmp_path / "p.html")], capture_output=True, text=True)
    assert r.returncode == 0 and "torn last line" in r.stderr and (tmp_path / "p.html").exists()
    junk = tmp_path / "junk.jsonl"
    junk.write_text("hello\nworld\n")
    r = subprocess.run([*cli, "view", str(junk)], capture_output=True, text=True)
    assert r.returncode == 1 and "not a loopwright or Claude Code transcript" in r.stderr and "line 1" in r.stderr
    r = subprocess.run([*cli, "stats", "no-such-session-id"], capture_output=True, text=True)
    assert r.returncode == 1 and "no session 'no-such-session-id'" in r.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    r = subprocess.run([*cli, "view", str(empty)], capture_output=True, text=True)
    assert r.returncode == 1 and "no transcript lines" in r.stderr


@pytest.mark.e2e
def test_stats_json_and_latest_session(tmp_path: Path, session: tuple[Path, list[lw.ResultMessage]]) -> None:
    path, results = session
    data = stats_json(load_view(path))
    assert data["model_calls"] == len(data["calls"]) == sum(r.model_calls for r in results)  # type: ignore[arg-type]
    assert data["total_cost_usd"] == pytest.approx(sum(r.total_cost_usd for r in results))
    # no argument: the latest session of the current directory
    env = {**os.environ, "LOOPWRIGHT_SESSIONS_DIR": str(path.parent.parent)}
    cwd = json.loads(path.read_text().splitlines()[0])["cwd"]
    r = subprocess.run([*loopwright_cmd(), "stats", "--json"], cwd=cwd, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["session_id"] == path.stem
    r = subprocess.run([*loopwright_cmd(), "stats"], cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "n_k" in r.stdout and f"{load_view(path).calls[0].n:,}" in r.stdout


def test_a_large_session_renders_linearly(tmp_path: Path) -> None:
    """10,000 messages: one bar per call, long results cut with an expander."""
    lines = []
    for k in range(1, 5001):
        lines.append({"type": "assistant", "sessionId": "big", "message": {
            "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "tool_use",
            "content": [use(f"t{k}", "Read", file_path="x")],
            "usage": {"input_tokens": 10 * k, "output_tokens": 5, "cache_read_input_tokens": 0,
                      "cache_creation_input_tokens": 0, "cost_usd": 0.0001}}})
        lines.append({"type": "user", "sessionId": "big", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{k}", "content": "y" * (5000 if k % 100 == 0 else 20)}]}})
    p = tmp_path / "big.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    v = load_view(p)
    page = render(v)
    assert len(v.calls) == 5000 and page.count("<g class=bar") == 5000
    assert page.count("show all 5,000 characters") == 50


def _chromium(url: str, *extra: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                           "--no-first-run", "--disable-background-networking", "--disable-component-update",
                           "--disable-sync", "--user-data-dir=" + str(Path(url.split("#")[0][7:]).parent / "chrome"),
                           "--enable-logging=stderr", "--v=0", *extra, url],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.e2e
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize(("which", "term"), [("loopwright", "sub done"), ("claude-code", "grades.py")])
def test_page_in_headless_chromium(tmp_path: Path, session: tuple[Path, list[lw.ResultMessage]], which: str,
                                   term: str) -> None:
    v = load_view(session[0] if which == "loopwright" else CC_FIXTURE)
    page = tmp_path / "page.html"
    page.write_text(render(v))
    r = _chromium(page.as_uri() + "#search=" + term.replace(" ", "%20"), "--dump-dom")
    dom = r.stdout
    assert 'data-ready="1"' in dom, "the page's script ran to its end (no error before it)"
    assert "Uncaught" not in r.stderr, r.stderr[-2000:]
    assert len(re.findall(r'<g class="bar" data-k="', dom)) == len(v.calls)
    for c in v.calls:
        assert f'data-n="{c.n}"' in dom and f"{c.n:,}" in dom
    hidden = len(re.findall(r'class="ev [a-z_]+( err)? hide"', dom))
    shown = re.search(r'<span id="qn" class="mut">(\d+) match', dom)
    assert shown and int(shown.group(1)) > 0 and hidden > 0, "the search from the link filtered the timeline"


@pytest.mark.e2e
def test_sessions_list_shows_calls_cost_and_peak_n_k(session: tuple[Path, list[lw.ResultMessage]]) -> None:
    path, results = session
    env = {**os.environ, "LOOPWRIGHT_SESSIONS_DIR": str(path.parent.parent)}
    r = subprocess.run([*loopwright_cmd(), "sessions", "list", "--all"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0 and "peak n_k" in r.stdout.splitlines()[0]
    row = next(x for x in r.stdout.splitlines() if x.startswith(path.stem))
    v = load_view(path)
    assert f" {len(v.calls)} " in row and f" {v.peak_n} " in row
    assert f"${sum(x.total_cost_usd for x in results):7.4f}" in row


def test_text_sent_while_tools_ran_is_marked_queued(tmp_path: Path) -> None:
    lines = [
        {"type": "user", "sessionId": "q", "isPrompt": True, "message": {"role": "user", "content": [text("go")]}},
        {"type": "assistant", "sessionId": "q", "message": {"role": "assistant", "model": "m", "content": [
            use("t1", "Bash", command="sleep 1")], "usage": {"input_tokens": 10, "output_tokens": 2}}},
        {"type": "user", "sessionId": "q", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}, text("keep the public names")]}},
    ]
    p = tmp_path / "q.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    v = load_view(p)
    assert [(e.kind, e.text) for e in v.events if e.kind in ("prompt", "queued")] == [
        ("prompt", "go"), ("queued", "keep the public names")]
    assert "queued message" in render(v)
