"""Sessions: JSONL transcripts, repair on load, resume, fork, continue, `loopwright sessions`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.cli.sessions import sessions_main
from loopwright.hooks import Hooks
from loopwright.invariant import check, holds_final
from loopwright.sessions import (
    INTERRUPTED_RESULT,
    JsonlSessionStore,
    SessionNotFound,
    cwd_slug,
    get_session_messages,
    history_from_lines,
    list_sessions,
    load_transcript,
    read_lines,
    repair_history,
)
from tests.helpers import Recording, cli_env, loopwright_cmd, text, use


def echo(i: str, x: str = "a") -> dict[str, Any]:
    """A call of the ECHO tool."""
    return use(i, "Echo", x=x)


ECHO = lw.Tool("Echo", "echo x", {"type": "object", "properties": {"x": {"type": "string"}}},
               lambda i: "got " + i["x"])


def opts(tmp: Path, model: Any, **kw: Any) -> lw.AgentOptions:
    m = model if isinstance(model, lw.ScriptedModel) else lw.ScriptedModel(model)
    return lw.AgentOptions(model=m, tools=kw.pop("tools", [ECHO]), cwd=tmp, sessions_dir=tmp / "sessions",
                           persist_session=kw.pop("persist_session", True), **kw)


def transcript(tmp: Path, sid: str) -> Path:
    return tmp / "sessions" / cwd_slug(tmp) / f"{sid}.jsonl"


# --- the file ---------------------------------------------------------------------------------

def test_transcript_lines_and_layout(tmp_path: Path) -> None:
    r = lw.run("hi", opts(tmp_path, [[echo("t1")], [text("done")]]))
    p = transcript(tmp_path, r.session_id)
    lines = [json.loads(x) for x in p.read_text().splitlines()]
    assert [(ln["type"], ln.get("subtype")) for ln in lines] == [
        ("system", "init"), ("user", None), ("assistant", None), ("user", None), ("assistant", None), ("result", None)]
    for prev, ln in zip([None, *lines[:-1]], lines, strict=True):
        assert ln["sessionId"] == r.session_id and ln["cwd"] == str(tmp_path.resolve())
        assert ln["timestamp"].endswith("Z") and len(ln["uuid"]) == 36
        assert ln["parentUuid"] == (prev["uuid"] if prev else None)
    assert lines[1]["message"] == {"role": "user", "content": [text("hi")]} and lines[1]["isPrompt"]
    assert lines[2]["message"]["content"] == [echo("t1")] and lines[2]["message"]["usage"]["input_tokens"] > 0
    assert lines[3]["message"]["content"][0]["tool_use_id"] == "t1"
    assert lines[5]["result"]["subtype"] == "success"
    assert get_session_messages(r.session_id, tmp_path / "sessions") == r.messages


def test_cwd_slug_like_claude_code() -> None:
    assert cwd_slug("/home/u/my_proj.v2") == "-home-u-my-proj-v2"


def test_env_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOPWRIGHT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LOOPWRIGHT_SESSIONS_DIR", raising=False)
    o = lw.AgentOptions(model=lw.ScriptedModel([[text("x")]]), cwd=tmp_path, persist_session=True)
    r = lw.run("hi", o)
    assert (tmp_path / "home" / "projects" / cwd_slug(tmp_path) / f"{r.session_id}.jsonl").exists()
    monkeypatch.setenv("LOOPWRIGHT_SESSIONS_DIR", str(tmp_path / "elsewhere"))
    r = lw.run("hi", lw.AgentOptions(model=lw.ScriptedModel([[text("x")]]), cwd=tmp_path, persist_session=True))
    assert (tmp_path / "elsewhere" / cwd_slug(tmp_path) / f"{r.session_id}.jsonl").exists()


def test_library_default_does_not_persist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOPWRIGHT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LOOPWRIGHT_SESSIONS_DIR", raising=False)
    r = lw.run("hi", lw.AgentOptions(model=lw.ScriptedModel([[text("x")]]), cwd=tmp_path))
    assert r.subtype == "success" and not (tmp_path / "home").exists()


@pytest.mark.parametrize("policy", ["none", "turn", "always"])
def test_fsync_policies_write_the_same_transcript(tmp_path: Path, policy: str) -> None:
    r = lw.run("hi", opts(tmp_path, [[echo("t1")], [text("done")]], session_fsync=policy))
    assert load_transcript(transcript(tmp_path, r.session_id)).history == r.messages


def test_bad_fsync_policy_is_a_clean_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="session_fsync"):
        lw.run("hi", opts(tmp_path, [[text("x")]], session_fsync="sometimes"))


# --- repair -----------------------------------------------------------------------------------

def test_repair_interrupted_orphans_and_idempotence() -> None:
    h = [
        {"role": "assistant", "content": [text("stray first")]},
        {"role": "user", "content": [text("go"), {"type": "tool_result", "tool_use_id": "zz", "content": "orphan"}]},
        {"role": "assistant", "content": [echo("a"), echo("b")]},
        {"role": "user", "content": [text("typed"), {"type": "tool_result", "tool_use_id": "b", "content": "B"}]},
        {"role": "assistant", "content": [echo("c")]},
    ]
    notes: list[str] = []
    r = repair_history(h, notes)
    assert r[0] == {"role": "user", "content": [text("go")]}
    assert [b.get("tool_use_id") for b in r[2]["content"]] == ["a", "b", None]
    assert r[2]["content"][0] == {"type": "tool_result", "tool_use_id": "a", "content": INTERRUPTED_RESULT,
                                  "is_error": True}
    assert r[2]["content"][2] == text("typed")
    assert r[-1]["content"][0]["tool_use_id"] == "c" and r[-1]["content"][0]["is_error"]
    check(r)
    assert repair_history(r) == r
    assert notes


def test_every_cut_of_a_transcript_loads_to_a_valid_history(tmp_path: Path) -> None:
    """A crash can stop the file at any byte: every prefix loads, satisfies Inv, is idempotent."""
    r = lw.run("hi", opts(tmp_path, [[echo("t1"), echo("t2")], [text("mid"), echo("t3")], [text("done")]]))
    data = transcript(tmp_path, r.session_id).read_bytes()
    cut = tmp_path / "cut.jsonl"
    seen = set()
    # What a cut leaves depends only on which lines are whole and whether a torn tail follows,
    # so cutting at each line end, one byte either side, and mid-line covers every case.
    ends = [i + 1 for i, c in enumerate(data) if c == ord("\n")]
    cuts = sorted({0, len(data)} | {x for i, e in enumerate(ends) for x in
                                    (e - 1, e, e + 1, (e + ([0, *ends][i])) // 2)} - {-1, len(data) + 1})
    for n in cuts:
        cut.write_bytes(data[:n])
        h = load_transcript(cut).history
        if h:
            check(h if h[-1]["role"] == "user" else [*h, {"role": "user", "content": [text(".")]}])
            assert repair_history(h) == h
        seen.add(len(h))
    assert load_transcript(cut).history == r.messages
    assert seen == {0, 1, 3, 5, 6}  # every stage of the run was seen (a tool_use always comes with results)


def test_torn_last_line_is_ignored_and_healed_by_the_next_write(tmp_path: Path) -> None:
    r = lw.run("hi", opts(tmp_path, [[echo("t1")], [text("done")]]))
    p = transcript(tmp_path, r.session_id)
    with open(p, "a") as f:
        f.write('{"type":"user","message":{"role":"us')  # a crash mid-write
    assert load_transcript(p).history == r.messages
    r2 = lw.run("more", opts(tmp_path, [[text("ok")]], resume=r.session_id))
    assert r2.subtype == "success"
    assert len(read_lines(p)) == 6 + 4  # the torn line is skipped, the new lines are whole
    assert load_transcript(p).history == r2.messages


def test_turn_limit_stop_resumes_from_h_not_h_a(tmp_path: Path) -> None:
    r = lw.run("hi", opts(tmp_path, [[echo("t1")], [echo("t2")]], max_turns=1))
    assert r.subtype == "error_max_turns" and r.messages[-1]["role"] == "user"
    lines = read_lines(transcript(tmp_path, r.session_id))
    assert lines[-2]["type"] == "assistant" and lines[-1]["dropUuid"] == lines[-2]["uuid"]
    assert get_session_messages(r.session_id, tmp_path / "sessions") == r.messages
    model = Recording([[text("resumed")]])
    r2 = lw.run("go on", opts(tmp_path, lw.ScriptedModel(model), resume=r.session_id))
    assert r2.subtype == "success" and model.seen[0] == [*r.messages, {"role": "user", "content": [text("go on")]}]


def test_budget_stop_resumes_from_h(tmp_path: Path) -> None:
    m = lw.ScriptedModel([[echo("t1")], [echo("t2")]], cost_per_call_usd=0.6)
    r = lw.run("hi", opts(tmp_path, m, max_budget_usd=1.0))
    assert r.subtype == "error_max_budget_usd"
    assert get_session_messages(r.session_id, tmp_path / "sessions") == r.messages


def test_duplicate_ids_response_is_not_in_the_resumed_history(tmp_path: Path) -> None:
    r = lw.run("hi", opts(tmp_path, [[echo("d"), echo("d")]]))
    assert r.subtype == "error_during_execution"
    assert get_session_messages(r.session_id, tmp_path / "sessions") == r.messages


def test_compact_boundary_and_rewind_lines_replay(tmp_path: Path) -> None:
    base = {"sessionId": "s", "cwd": "/", "timestamp": "", "parentUuid": None}
    lines = [
        {**base, "type": "user", "uuid": "p1", "isPrompt": True, "message": {"role": "user", "content": [text("one")]}},
        {**base, "type": "assistant", "uuid": "a1", "message": {"role": "assistant", "content": [text("r1")]}},
        {**base, "type": "system", "uuid": "c", "subtype": "compact_boundary",
         "data": {"messages": [{"role": "user", "content": [text("summary")]}]}},
        {**base, "type": "user", "uuid": "p2", "isPrompt": True, "message": {"role": "user", "content": [text("two")]}},
        {**base, "type": "assistant", "uuid": "a2", "message": {"role": "assistant", "content": [text("r2")]}},
    ]
    h, _ = history_from_lines(lines)
    assert [m["content"][0]["text"] for m in h] == ["summary", "two", "r2"]
    h, _ = history_from_lines([*lines, {**base, "type": "rewind", "uuid": "rw", "toUuid": "p2"}])
    assert [m["content"][0]["text"] for m in h] == ["summary"]


def test_stop_hook_message_is_persisted(tmp_path: Path) -> None:
    hooks = Hooks()

    @hooks.on("Stop")
    def once(data: dict[str, Any]) -> dict[str, Any] | None:
        return None if data.get("stop_hook_active") else {"decision": "block", "reason": "also run the tests"}

    r = lw.run("hi", opts(tmp_path, [[text("first")], [text("second")]], hooks=hooks))
    assert r.subtype == "success" and len(r.messages) == 4
    assert get_session_messages(r.session_id, tmp_path / "sessions") == r.messages


# --- resume, fork, continue --------------------------------------------------------------------

def test_resume_appends_to_the_same_session(tmp_path: Path) -> None:
    r1 = lw.run("hi", opts(tmp_path, [[echo("t1")], [text("done")]]))
    p = transcript(tmp_path, r1.session_id)
    before = p.read_bytes()
    model = Recording([[text("again")]])
    r2 = lw.run("next", opts(tmp_path, lw.ScriptedModel(model), resume=r1.session_id))
    assert r2.session_id == r1.session_id
    assert model.seen[0] == [*r1.messages, {"role": "user", "content": [text("next")]}]
    after = p.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert list((tmp_path / "sessions" / cwd_slug(tmp_path)).glob("*.jsonl")) == [p]
    new_lines = read_lines(p)[len(read_lines(p)) - 4:]
    assert new_lines[1]["parentUuid"] == new_lines[0]["uuid"]
    assert get_session_messages(r1.session_id, tmp_path / "sessions") == r2.messages


def test_fork_gets_a_new_id_and_leaves_the_original_byte_identical(tmp_path: Path) -> None:
    r1 = lw.run("hi", opts(tmp_path, [[echo("t1")], [text("done")]]))
    p = transcript(tmp_path, r1.session_id)
    before = p.read_bytes()
    model = Recording([[text("forked")]])
    r2 = lw.run("branch", opts(tmp_path, lw.ScriptedModel(model), resume=r1.session_id, fork_session=True))
    assert r2.session_id != r1.session_id and r2.subtype == "success"
    assert p.read_bytes() == before
    assert model.seen[0] == [*r1.messages, {"role": "user", "content": [text("branch")]}]
    assert get_session_messages(r2.session_id, tmp_path / "sessions") == r2.messages
    assert get_session_messages(r1.session_id, tmp_path / "sessions") == r1.messages
    assert all(ln["sessionId"] == r2.session_id for ln in read_lines(transcript(tmp_path, r2.session_id)))


def test_fork_to_a_chosen_id(tmp_path: Path) -> None:
    r1 = lw.run("hi", opts(tmp_path, [[text("done")]]))
    r2 = lw.run("b", opts(tmp_path, [[text("x")]], resume=r1.session_id, fork_session=True,
                          session_id="11111111-2222-3333-4444-555555555555"))
    assert r2.session_id == "11111111-2222-3333-4444-555555555555"


def test_continue_picks_the_latest_session_of_this_directory(tmp_path: Path) -> None:
    lw.run("old", opts(tmp_path, [[text("o")]]))
    r2 = lw.run("new", opts(tmp_path, [[text("n")]]))
    model = Recording([[text("c")]])
    r3 = lw.run("more", opts(tmp_path, lw.ScriptedModel(model), continue_conversation=True))
    assert r3.session_id == r2.session_id and model.seen[0][0]["content"] == [text("new")]


def test_continue_with_no_session_starts_fresh(tmp_path: Path) -> None:
    r = lw.run("first", opts(tmp_path, [[text("x")]], continue_conversation=True))
    assert r.subtype == "success" and len(r.messages) == 2


def test_resume_unknown_session_raises_a_clear_error(tmp_path: Path) -> None:
    async def go() -> None:
        async for _ in lw.query("x", opts(tmp_path, [[text("x")]], resume="nope")):
            pass

    with pytest.raises(SessionNotFound, match="no session 'nope'"):
        asyncio.run(go())


def test_resume_without_persisting_reads_but_does_not_write(tmp_path: Path) -> None:
    r1 = lw.run("hi", opts(tmp_path, [[text("done")]]))
    p = transcript(tmp_path, r1.session_id)
    before = p.read_bytes()
    model = Recording([[text("x")]])
    r2 = lw.run("q", opts(tmp_path, lw.ScriptedModel(model), resume=r1.session_id, persist_session=False))
    assert r2.subtype == "success" and len(model.seen[0]) == 3 and p.read_bytes() == before


# --- listing ----------------------------------------------------------------------------------

def test_list_sessions_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    m = lw.ScriptedModel([[echo("t1")], [text("done")]], cost_per_call_usd=0.25)
    r = lw.run("first prompt", opts(tmp_path, m))
    lw.run("last prompt here", opts(tmp_path, [[text("ok")]], resume=r.session_id))
    infos = lw.list_sessions(tmp_path, tmp_path / "sessions")
    assert [i.session_id for i in infos] == [r.session_id]
    i = infos[0]
    assert (i.prompts, i.turns, i.calls, i.first_prompt, i.last_prompt) == (2, 1, 3, "first prompt", "last prompt here")
    assert i.cost_usd == pytest.approx(0.5) and i.input_tokens > 0
    assert list_sessions(tmp_path / "other", tmp_path / "sessions") == []
    monkeypatch.setenv("LOOPWRIGHT_SESSIONS_DIR", str(tmp_path / "sessions"))
    monkeypatch.chdir(tmp_path)
    assert sessions_main(["list"]) == 0
    out = capsys.readouterr().out
    assert r.session_id in out and "last prompt here" in out and "$ 0.5000" in out
    assert sessions_main(["show", r.session_id[:8]]) == 0
    out = capsys.readouterr().out
    assert "first prompt" in out and "Echo" in out and "success" in out
    assert sessions_main(["show", r.session_id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == get_session_messages(r.session_id)
    assert sessions_main(["show", "does-not-exist"]) == 1


def test_list_sessions_limit_reads_only_the_newest(tmp_path: Path) -> None:
    """limit=N (/resume's picker): the N newest by their files' times, newest first; the others are
    not summed up (each summary reads a whole transcript)."""
    ids = [lw.run(f"prompt {k}", opts(tmp_path, [[text("ok")]])).session_id for k in range(3)]
    files = {p.stem: p for p in (tmp_path / "sessions").rglob("*.jsonl")}
    for age, sid in enumerate(ids):  # the first run's file the newest: not the order they were written in
        os.utime(files[sid], (1_000_000 - age * 100, 1_000_000 - age * 100))
    every = [i.session_id for i in lw.list_sessions(tmp_path, tmp_path / "sessions")]
    assert every == ids
    assert [i.session_id for i in lw.list_sessions(tmp_path, tmp_path / "sessions", limit=2)] == ids[:2]
    files[ids[2]].write_bytes(b"")  # the oldest one's summary would say 0 prompts: it is not read
    os.utime(files[ids[2]], (1_000_000 - 200, 1_000_000 - 200))
    assert [i.prompts for i in lw.list_sessions(tmp_path, tmp_path / "sessions")] == [1, 1, 0]
    assert [i.prompts for i in lw.list_sessions(tmp_path, tmp_path / "sessions", limit=2)] == [1, 1]


# --- a pluggable store -------------------------------------------------------------------------

@dataclass
class MemoryWriter:
    session_id: str
    lines: list[dict[str, Any]]

    def write(self, line: dict[str, Any], sync: bool = False) -> None:
        self.lines.append(line)

    def close(self) -> None:
        pass


class MemoryStore(JsonlSessionStore):
    """A store that keeps transcripts in memory (SessionStore protocol)."""

    def __init__(self) -> None:
        self.data: dict[str, list[dict[str, Any]]] = {}

    def open_writer(self, session_id: str, cwd: Path, fsync: Any = "none") -> MemoryWriter:  # type: ignore[override]
        return MemoryWriter(session_id, self.data.setdefault(session_id, []))

    def exists(self, session_id: str, cwd: Path | None = None) -> bool:
        return session_id in self.data

    def load(self, session_id: str, cwd: Path | None = None) -> Any:
        from loopwright.sessions import LoadedSession

        lines = self.data[session_id]
        h, notes = history_from_lines(lines)
        return LoadedSession(session_id, None, lines, h, notes, lines[-1]["uuid"])


def test_a_custom_store_plugs_in(tmp_path: Path) -> None:
    store = MemoryStore()
    r = lw.run("hi", opts(tmp_path, [[echo("t1")], [text("done")]], session_store=store))
    assert [ln["type"] for ln in store.data[r.session_id]][-1] == "result"
    r2 = lw.run("more", opts(tmp_path, [[text("x")]], session_store=store, resume=r.session_id))
    assert holds_final(r2.messages) and len(r2.messages) == 6 and not (tmp_path / "sessions").exists()


# --- the CLI flags --------------------------------------------------------------------------------

def cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(LOOPWRIGHT_HOME=str(tmp / "home"))
    return subprocess.run([*loopwright_cmd(), "--output-format", "json", *args], cwd=tmp / "work", env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


@pytest.mark.e2e
def test_cli_resume_fork_continue_and_no_persistence(tmp_path: Path) -> None:
    pytest.importorskip("loopwright.tools.builtin")
    (tmp_path / "work").mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps([[text("reply")]]))
    m = f"scripted:{script}"
    sdir = tmp_path / "home" / "projects" / cwd_slug(tmp_path / "work")

    first = cli(tmp_path, "-p", "one", "--model", m)
    assert first.returncode == 0, first.stderr
    sid = json.loads(first.stdout)["session_id"]
    original = sdir / f"{sid}.jsonl"
    size = len(original.read_bytes())

    resumed = cli(tmp_path, "-p", "two", "--model", m, "--resume", sid)
    assert resumed.returncode == 0 and json.loads(resumed.stdout)["session_id"] == sid
    assert len(original.read_bytes()) > size and [p.name for p in sdir.glob("*.jsonl")] == [original.name]
    snapshot = original.read_bytes()

    forked = cli(tmp_path, "-p", "three", "--model", m, "--resume", sid, "--fork-session")
    fid = json.loads(forked.stdout)["session_id"]
    assert forked.returncode == 0 and fid != sid and original.read_bytes() == snapshot
    assert [ln["message"]["content"][0]["text"] for ln in read_lines(sdir / f"{fid}.jsonl")
            if ln.get("isPrompt")] == ["one", "two", "three"]

    cont = cli(tmp_path, "-p", "four", "--model", m, "--continue")
    assert json.loads(cont.stdout)["session_id"] == fid  # the latest session in this directory

    n = len(list(sdir.glob("*.jsonl")))
    quiet = cli(tmp_path, "-p", "five", "--model", m, "--no-session-persistence")
    assert quiet.returncode == 0 and len(list(sdir.glob("*.jsonl"))) == n

    chosen = "0b7c2a52-55b4-4b8e-9d7e-3c1f2f8d9a10"
    assert cli(tmp_path, "-p", "six", "--model", m, "--session-id", chosen).returncode == 0
    assert (sdir / f"{chosen}.jsonl").exists()
    taken = cli(tmp_path, "-p", "seven", "--model", m, "--session-id", chosen)
    assert taken.returncode == 2 and "already in use" in taken.stderr and "Traceback" not in taken.stderr
    missing = cli(tmp_path, "-p", "x", "--model", m, "--resume", "no-such-session")
    assert missing.returncode == 2 and "no session 'no-such-session'" in missing.stderr


def test_unwritable_sessions_dir_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    o = lw.AgentOptions(model=lw.ScriptedModel([[text("x")]]), cwd=tmp_path, sessions_dir=blocker,
                        persist_session=True)
    with pytest.raises(ValueError, match="cannot write the session transcript"):
        lw.run("hi", o)


def test_a_session_being_written_cannot_be_resumed_by_another_writer(tmp_path: Path) -> None:
    from loopwright.sessions import JsonlWriter, SessionBusy

    r = lw.run("hi", opts(tmp_path, [[text("x")]]))
    p = transcript(tmp_path, r.session_id)
    holder = JsonlWriter(p, r.session_id)  # as if another process were running this session
    try:
        with pytest.raises(SessionBusy, match="in use by another loopwright process"):
            lw.run("more", opts(tmp_path, [[text("y")]], resume=r.session_id))
        fork = lw.run("branch", opts(tmp_path, [[text("y")]], resume=r.session_id, fork_session=True))
        assert fork.subtype == "success"  # forking only reads it
    finally:
        holder.close()
    assert lw.run("more", opts(tmp_path, [[text("y")]], resume=r.session_id)).subtype == "success"


# --- repair on arbitrary input (property) -------------------------------------------------------

def _messages() -> Any:
    from hypothesis import strategies as st

    ids = st.sampled_from(["a", "b", "c", "d"])
    block = st.one_of(
        st.builds(lambda s: text(s), st.sampled_from(["x", "y"])),
        st.builds(lambda i: echo(i), ids),
        st.builds(lambda i, e: {"type": "tool_result", "tool_use_id": i, "content": "r", "is_error": e},
                  ids, st.booleans()),
        st.just({"type": "thinking", "thinking": "t", "signature": "s"}),
    )
    msg = st.builds(lambda r, c: {"role": r, "content": c}, st.sampled_from(["user", "assistant"]),
                    st.lists(block, max_size=4))
    return st.lists(msg, max_size=8)


def test_repair_makes_any_history_valid_and_is_idempotent() -> None:
    from hypothesis import given, settings

    @settings(max_examples=200, deadline=None)
    @given(_messages())
    def prop(h: list[dict[str, Any]]) -> None:
        r = repair_history(h)
        if r:
            check(r if r[-1]["role"] == "user" else [*r, {"role": "user", "content": [text(".")]}])
            assert r[0]["role"] == "user"
        assert repair_history(r) == r
        # repair only removes or fills in: every kept non-result block was in the input, in order
        kept = [b for m in r for b in m["content"] if b.get("type") != "tool_result"]
        orig = [b for m in h for b in m["content"] if b.get("type") != "tool_result"]
        it = iter(orig)
        assert all(any(b == o for o in it) for b in kept)

    prop()


def test_sessions_list_all_projects(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "p1").mkdir()
    (tmp_path / "p2").mkdir()
    monkeypatch.setenv("LOOPWRIGHT_SESSIONS_DIR", str(tmp_path / "s"))
    r1 = lw.run("in p1", lw.AgentOptions(model=lw.ScriptedModel([[text("x")]]), cwd=tmp_path / "p1",
                                         persist_session=True))
    r2 = lw.run("in p2", lw.AgentOptions(model=lw.ScriptedModel([[text("x")]]), cwd=tmp_path / "p2",
                                         persist_session=True))
    monkeypatch.chdir(tmp_path / "p1")
    assert sessions_main(["list"]) == 0
    out = capsys.readouterr().out
    assert r1.session_id in out and r2.session_id not in out
    assert sessions_main(["list", "--all", "--json"]) == 0
    ids = {d["session_id"] for d in json.loads(capsys.readouterr().out)}
    assert {r1.session_id, r2.session_id} <= ids


def test_one_loopwright_home_for_settings_and_sessions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from loopwright.sessions import sessions_root
    from loopwright.settings import loopwright_home

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("LOOPWRIGHT_HOME", "~/x")  # as a user may write it in a shell profile
    assert loopwright_home() == tmp_path / "x"
    assert sessions_root() == tmp_path / "x" / "projects"
