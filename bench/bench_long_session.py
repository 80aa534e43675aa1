"""Long sessions: what a user feels when a session has 2,000 tool turns (or a 50 MB transcript).

    .venv/bin/python bench/bench_long_session.py [--turns 2000] [--before REF] [--quick]

Each figure is measured for this tree and, with `--before REF`, for git revision REF's `src/`
(extracted), side by side in one run, each part in its own child process (bytecode compiled:
the .pyc files are written before the first measurement). The sessions are real: the scripted
model's tool calls run through the loop (LoopwrightClient: one query per prompt, as the
interactive CLI does), each tool output a few KB of distinct text, the transcript written by
the real recorder.

(a) `--resume ID` / `--continue`: the CLI (`-p`) against a loopback socket that only notes when
    the first request arrives; time from spawn to that request, and the child's VmHWM (peak
    RSS, read from /proc while it waits for the answer). A 2,000-turn session (~10 MB) and a
    50 MB one; the 50 MB one again after a compaction at its end (`/compact` then one prompt:
    what a long session with Claude looks like, compacted many times); a fresh copy of the
    transcript for each run.
(b) per-turn wall time of the loop at turns 2-201 vs the last 200 (time between the model's
    calls within a prompt: the tools, the transcript lines, Inv, the compaction check, the
    history), and per prompt the time from query() to its first model call (a new run on the
    whole history); the request body the Anthropic provider encodes (build_params + its
    BodyEncoder, warm) at 10 vs `--turns` turns.
(c) the session list (`loopwright sessions list`, what /resume's picker reads through
    list_sessions) with 500 sessions in one project directory.
(d) memory held by the conversation: tracemalloc's traced memory of the history a client
    keeps after the session, and of the provider's encoded-message cache, per tool-output byte;
    and what the interactive mode's trace (cli/toolview.ReplRenderer: what `/expand` redraws)
    keeps of the same messages shown to it (the memory freed when it goes).
(e) a transcript line's write: JsonlWriter.write of a turn's lines on an empty file vs on the
    50 MB one (one O_APPEND write, no fsync by default).
(f) a prompt's start in a long conversation: LoopwrightClient continuing a history of `--turns`
    tool turns held in memory (as after `--resume`), query() to its first model call, with the
    model's window known (as a catalog model's is: the run forecasts its first call's input) and
    not; the median of prompts 2-11 (the first pays for taking the history in).

Writes a markdown table to bench/results/long_session.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from io import BytesIO
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SRC = str(ROOT / "src")
CWD_NAME = "proj"


# --- the child parts (run with PYTHONPATH = one tree's src) ---------------------------------------

def output_text(turn: int, kb: int) -> str:
    """A tool output of about `kb` KB, distinct per turn (file listings and code-like lines)."""
    line = f"{turn:6d} src/module_{turn % 97}/file_{turn % 13}.py:  def handler_{turn}(request, *args): return 42\n"
    return (line * (kb * 1024 // len(line) + 1))[: kb * 1024]


def build(dirs: dict[str, str], turns: int, per_prompt: int, kb: int, traced: bool = False,
          view: bool = False) -> dict[str, Any]:
    """A session of `turns` tool turns, `per_prompt` per prompt, through LoopwrightClient.
    `traced`: under tracemalloc (no timings), what the client holds once the session is built;
    with `view`, only what the interactive trace shown its messages holds."""
    import tracemalloc

    import loopwright as lw

    shown: Any = None
    if traced:
        tracemalloc.start()
    if view:
        from loopwright.cli.toolview import Log, ReplRenderer

        shown = ReplRenderer(open(os.devnull, "w"), Log())  # noqa: SIM115 - the bench child's life

    calls: list[float] = []
    state = {"k": 0}

    def model(h: list[Any]) -> dict[str, Any]:
        calls.append(time.perf_counter())
        k = state["k"]
        last = h[-1]["content"]
        # (usage given: the scripted model would count a new run's whole history itself, a cost of
        # the test double that is no part of loopwright's loop)
        usage = {"input_tokens": 1000 + k, "output_tokens": 20}
        if isinstance(last, list) and last and last[0].get("type") == "tool_result" and k % per_prompt == 0:
            return {"content": [{"type": "text", "text": f"done with step {k}"}], "usage": usage}
        state["k"] = k + 1
        return {"content": [{"type": "text", "text": f"looking at part {k}"},
                            {"type": "tool_use", "id": f"toolu_{k:08d}", "name": "Read",
                             "input": {"file_path": f"/src/f{k}.py"}}], "usage": usage}

    read = lw.Tool("Read", "read a file", {"type": "object", "properties": {"file_path": {"type": "string"}}},
                   lambda i: output_text(int(i["file_path"][6:-3]), kb), read_only=True)
    cwd = Path(dirs["cwd"])
    options = lw.AgentOptions(model=lw.ScriptedModel(model), tools=[read], cwd=cwd, sessions_dir=dirs["sessions"],
                              persist_session=True, max_turns=per_prompt + 2)
    prompt_first: list[float] = []  # query() -> its first model call, per prompt
    turn_gaps: list[float] = []  # between two model calls of one prompt: one turn of the loop

    async def go() -> tuple[Any, str]:
        async with lw.LoopwrightClient(options) as c:
            p = 0
            while state["k"] < turns:
                before = len(calls)
                t0 = time.perf_counter()
                await c.query(f"prompt {p}: go on")
                async for m in c.receive_response():
                    if shown is not None:
                        shown.show(m)
                    if isinstance(m, lw.ResultMessage) and m.subtype != "success":
                        raise SystemExit(f"prompt {p}: {m.subtype} {m.errors}")
                prompt_first.append(calls[before] - t0)
                turn_gaps.extend(b - a for a, b in zip(calls[before:-1], calls[before + 1:], strict=False))
                p += 1
                if traced:
                    held.append((state["k"], tracemalloc.get_traced_memory()[0]))  # what the client keeps
            return c.history, str(c.session_id)

    held: list[tuple[int, int]] = []  # (turns so far, traced memory) after each prompt
    t0 = time.perf_counter()
    history, sid = asyncio.run(go())
    total = time.perf_counter() - t0
    if view:  # the memory freed when the trace goes: what it alone held
        import gc

        with_view = tracemalloc.get_traced_memory()[0]
        shown = None
        gc.collect()
        view_bytes = with_view - tracemalloc.get_traced_memory()[0]
        return {"view_per_output_byte": view_bytes / (state["k"] * kb * 1024), "view_mb": view_bytes / 1e6}
    if traced:  # the growth from a tenth of the session to its end, per tool-output byte appended
        enc = encode_figures(history)
        tracemalloc.stop()
        (k0, m0), (k1, m1) = held[len(held) // 10], held[-1]
        return {"held_per_output_byte": (m1 - m0) / ((k1 - k0) * kb * 1024), "held_mb": m1 / 1e6,
                "encoder_cache_mb": enc["encoder_cache_mb"]}
    n = len(turn_gaps)
    return {"sid": sid, "total_s": total, "turns": turns, "messages": len(history),
            "turn_early_us": statistics.median(turn_gaps[1:201]) * 1e6,
            "turn_late_us": statistics.median(turn_gaps[n - 200:]) * 1e6,
            "prompt_early_ms": statistics.median(prompt_first[1:11]) * 1e3,
            "prompt_late_ms": statistics.median(prompt_first[-10:]) * 1e3, **encode_figures(history)}


def encode_figures(h: Any) -> dict[str, Any]:
    """The Anthropic provider's request body (build_params + its BodyEncoder) after each of the
    last few appends, warm, at 10 turns and at the whole history; and what its cache holds."""
    import tracemalloc

    from loopwright.history import History
    from loopwright.models.anthropic import AnthropicModel
    from loopwright.models.base import ModelRequest

    def per_call(msgs: list[Any], rounds: int = 9) -> float:
        m = AnthropicModel("claude-sonnet-4-6", api_key="x", base_url="http://127.0.0.1:9")
        hist = History(msgs[: len(msgs) - 2 * rounds])
        enc = m._encoder
        enc.encode({**m.build_params(ModelRequest("sys", [], hist, 1000)), "stream": True})  # warm: the turns before
        times = []
        for k in range(rounds, 0, -1):  # a turn's two new messages, then the next request (as the loop does)
            hist.extend(msgs[len(msgs) - 2 * k: len(msgs) - 2 * k + 2])
            t0 = time.perf_counter()
            enc.encode({**m.build_params(ModelRequest("sys", [], hist, 1000)), "stream": True})
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    early = per_call(list(h[:39]))
    late = per_call(list(h))
    m = AnthropicModel("claude-sonnet-4-6", api_key="x", base_url="http://127.0.0.1:9")
    before = tracemalloc.get_traced_memory()[0]
    body = m._encoder.encode({**m.build_params(ModelRequest("sys", [], h, 1000)), "stream": True})
    cache = tracemalloc.get_traced_memory()[0] - before - len(body)
    return {"encode_early_us": early * 1e6, "encode_late_us": late * 1e6, "body_mb": len(body) / 1e6,
            "encoder_cache_mb": cache / 1e6}


def writes(path: str, kb: int) -> dict[str, Any]:
    """(e) one turn's two transcript lines (the assistant's, the tool result's), appended."""
    from loopwright.sessions import JsonlWriter, SessionRecorder

    def per_turn(p: Path) -> float:
        w = JsonlWriter(p, p.stem)
        rec = SessionRecorder(w, p.stem, p.parent)
        times = []
        for k in range(200):
            t0 = time.perf_counter()
            rec.user({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k}",
                                                   "content": output_text(k, kb)}]}, sync=False)
            times.append(time.perf_counter() - t0)
        w.close()
        return statistics.median(times)

    tmp = Path(tempfile.mkdtemp())
    empty = per_turn(tmp / "empty.jsonl")
    big = tmp / "big.jsonl"
    shutil.copyfile(path, big)
    large = per_turn(big)
    shutil.rmtree(tmp)
    return {"write_empty_us": empty * 1e6, "write_big_us": large * 1e6}


def listing(root: str, cwd: str) -> dict[str, Any]:
    from loopwright.sessions import list_sessions

    def picker() -> list[Any]:  # /resume's list: the 15 newest (a tree before `limit` summed up all of them)
        try:
            return list_sessions(cwd, sessions_dir=root, limit=15)  # type: ignore[call-arg,unused-ignore]
        except TypeError:
            return list_sessions(cwd, sessions_dir=root)[:15]

    out: dict[str, Any] = {}
    for name, fn in (("list_s", lambda: list_sessions(cwd, sessions_dir=root)), ("picker_s", picker)):
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            out[name.replace("_s", "_n")] = len(fn())
            times.append(time.perf_counter() - t0)
        out[name] = min(times)
    return out


def compacted(dirs: dict[str, str], sid: str) -> dict[str, Any]:
    """The session `sid` resumed, compacted (LoopwrightClient.compact: its compact_boundary line)
    and given one more prompt (the scripted model answers each call with text)."""
    import loopwright as lw

    answer = {"content": [{"type": "text", "text": "a summary of what was done"}],
              "usage": {"input_tokens": 1000, "output_tokens": 20}}
    options = lw.AgentOptions(model=lw.ScriptedModel(lambda h: answer), cwd=Path(dirs["cwd"]),
                              sessions_dir=dirs["sessions"], persist_session=True, resume=sid)

    async def go() -> None:
        async with lw.LoopwrightClient(options) as c:
            for prompt in ("one more", None, "after the compaction"):
                if prompt is None:
                    await c.compact(keep_last_turns=2)
                    continue
                await c.query(prompt)
                async for _ in c.receive_response():
                    pass

    asyncio.run(go())
    return {}


def prompts(turns: int, kb: int, window: int | None) -> dict[str, Any]:
    """(f) query() -> the first model call of prompts 2-11 of a conversation of `turns` tool turns."""
    import loopwright as lw

    h: list[Any] = [{"role": "user", "content": "start"}]
    for k in range(turns):
        h += [{"role": "assistant", "content": [{"type": "text", "text": f"looking at part {k}"},
                                                {"type": "tool_use", "id": f"toolu_{k:08d}", "name": "Read",
                                                 "input": {"file_path": f"/src/f{k}.py"}}]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k:08d}",
                                            "content": output_text(k, kb)}]}]
    h.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    calls: list[float] = []

    def model(_: list[Any]) -> dict[str, Any]:
        calls.append(time.perf_counter())
        return {"content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 1000, "output_tokens": 20}}

    d = tempfile.mkdtemp()
    options = lw.AgentOptions(model=lw.ScriptedModel(model), cwd=d, sessions_dir=d + "/s", persist_session=True,
                              context_window=window)
    firsts: list[float] = []

    async def go() -> None:
        async with lw.LoopwrightClient(options) as c:
            c.history = h
            for p in range(11):
                n, t0 = len(calls), time.perf_counter()
                await c.query(f"prompt {p}")
                async for _ in c.receive_response():
                    pass
                firsts.append(calls[n] - t0)

    asyncio.run(go())
    shutil.rmtree(d, ignore_errors=True)
    return {"first_ms": firsts[0] * 1e3, "next_ms": statistics.median(firsts[1:]) * 1e3}


def child_main(argv: list[str]) -> int:
    part, args = argv[0], json.loads(argv[1])
    fn = {"build": build, "writes": writes, "listing": listing, "compacted": compacted, "prompts": prompts}[part]
    print(json.dumps(fn(**args)))
    return 0


# --- the parent: series, the CLI's resume, the table -----------------------------------------------

def extract_src(ref: str, into: Path) -> Path:
    """The src/ directory of git revision `ref`, extracted under `into`."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def child(src: str, part: str, **kw: Any) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": src}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    p = subprocess.run([sys.executable, __file__, "--child", part, json.dumps(kw)], env=env, capture_output=True,
                       text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"child {part} ({src}) failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


class FirstRequest:
    """A loopback socket that notes when the first request's headers arrive (and the client's
    VmHWM then), and answers nothing: the client is ended by the bench."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.arrived: float | None = None
        self.pid = 0
        self.hwm_kib = 0
        self.got = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            data = conn.recv(65536)
            if b"POST" in data[:8] and b"/messages" in data[:200] and self.arrived is None:
                self.arrived = time.monotonic()
                self.hwm_kib = vm_hwm(self.pid)
                self.got.set()
            self._conns = [*getattr(self, "_conns", []), conn]  # held open: the client waits for its answer

    def close(self) -> None:
        self.sock.close()
        for c in getattr(self, "_conns", []):
            c.close()


def vm_hwm(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for ln in f:
                if ln.startswith("VmHWM:"):
                    return int(ln.split()[1])
    except OSError:
        pass
    return 0


def resume_once(src: str, dirs: dict[str, str], flag: list[str]) -> tuple[float, int]:
    srv = FirstRequest()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "LOOPWRIGHT_"))}
    env.update(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{srv.port}", ANTHROPIC_API_KEY="any", HOME=dirs["home"],
               LOOPWRIGHT_HOME=dirs["home"] + "/.loopwright", LOOPWRIGHT_SESSIONS_DIR=dirs["sessions"],
               NO_PROXY="127.0.0.1,localhost", PYTHONPATH=src)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, "-c", "import sys; from loopwright.cli import main; sys.exit(main())",
           "-p", "one more thing", "--model", "claude-sonnet-4-6", "--max-turns", "1",
           "--context-window", "100000000", *flag]  # (W: the history is sent as it is, not compacted first)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=dirs["cwd"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    srv.pid = p.pid
    ok = srv.got.wait(300)
    p.kill()
    _, err = p.communicate()
    srv.close()
    if not ok or srv.arrived is None:
        raise SystemExit(f"no request from {cmd}:\n{err.decode(errors='replace')[-3000:]}")
    return srv.arrived - t0, srv.hwm_kib


def make_listing(root: Path, cwd: Path, sample: Path, n: int) -> None:
    """n sessions in cwd's project directory: copies of the first ~60 lines of `sample` (a session
    of ~15 tool turns with its 4 KB outputs), each under its own id."""
    from loopwright.sessions.store import cwd_slug

    lines = sample.read_bytes().split(b"\n")[:60]
    d = root / cwd_slug(cwd)
    d.mkdir(parents=True, exist_ok=True)
    sid = json.loads(lines[0])["sessionId"].encode()
    for i in range(n):
        new = f"00000000-0000-4000-8000-{i:012d}"
        (d / f"{new}.jsonl").write_bytes(b"\n".join(ln.replace(sid, new.encode()) for ln in lines) + b"\n")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child_main(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--per-prompt", type=int, default=4, help="tool turns per prompt")
    ap.add_argument("--kb", type=int, default=4, help="KB of each tool output")
    ap.add_argument("--big-kb", type=int, default=24, help="KB of each tool output of the ~50 MB session")
    ap.add_argument("--big-per-prompt", type=int, default=20,
                    help="tool turns per prompt of the ~50 MB session (the scripted model counts a run's whole "
                         "history once per prompt: fewer prompts keep its build short)")
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3, help="CLI resumes per series and session")
    ap.add_argument("--before", metavar="REF", help="also measure git revision REF's src/, side by side")
    ap.add_argument("--after", metavar="REF", help="measure REF's src/ instead of this checkout's (edits meanwhile "
                                                   "do not reach the run)")
    ap.add_argument("--out", default=str(HERE / "results" / "long_session.md"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lw-long-"))
    series = [(f"after {args.after}", str(extract_src(args.after, tmp / "after"))) if args.after else ("this tree", SRC)]
    if args.before:
        series.insert(0, (f"before {args.before}", str(extract_src(args.before, tmp / "before"))))
    for _, src in series:
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True)
    res: dict[str, dict[str, Any]] = {label: {} for label, _ in series}
    built: dict[str, dict[str, Any]] = {}
    for name, kb, pp in (("small", args.kb, args.per_prompt), ("big", args.big_kb, args.big_per_prompt)):
        for label, src in series:  # (b), (d): each tree builds the same session, one after the other
            d = tmp / f"{name}-{len(built)}"
            dirs = {"cwd": str(d / CWD_NAME), "sessions": str(d / "s"), "home": str(d / "home")}
            for p in dirs.values():
                Path(p).mkdir(parents=True, exist_ok=True)
            r = child(src, "build", dirs=dirs, turns=args.turns, per_prompt=pp, kb=kb)
            print(label, name, json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}),
                  flush=True)
            res[label][name] = {**r, **child(src, "build", dirs={**dirs, "sessions": str(d / "s-traced")},
                                             turns=args.turns, per_prompt=pp, kb=kb, traced=True),
                                **child(src, "build", dirs={**dirs, "sessions": str(d / "s-view")},
                                        turns=args.turns, per_prompt=pp, kb=kb, traced=True, view=True)}
            built.setdefault(name, {**r, "dirs": dirs})
    for name in ("small", "big"):
        b = built[name]
        from loopwright.sessions.store import cwd_slug

        f = Path(b["dirs"]["sessions"]) / cwd_slug(b["dirs"]["cwd"]) / f"{b['sid']}.jsonl"
        b["file"], b["mb"] = f, f.stat().st_size / 1e6
    # the big session compacted at its end (a copy; by the last series' tree: the same file for all)
    big = built["big"]
    cdirs = {**big["dirs"], "sessions": str(tmp / "compacted-s")}
    shutil.copytree(big["dirs"]["sessions"], cdirs["sessions"])
    child(series[-1][1], "compacted", dirs=cdirs, sid=big["sid"])
    cfile = Path(cdirs["sessions"]) / cwd_slug(cdirs["cwd"]) / f"{big['sid']}.jsonl"
    built["compacted"] = {**big, "dirs": cdirs, "file": cfile, "mb": cfile.stat().st_size / 1e6}
    # (a) the CLI's resume and continue, each series on the same transcripts, interleaved
    for name in ("small", "big", "compacted"):
        b = built[name]
        keep = b["file"].read_bytes()
        for flag in (["--resume", b["sid"]], ["--continue"])[: 1 if name == "compacted" else 2]:
            key = f"{name} {flag[0]}"
            for _ in range(args.runs):
                for label, src in series:
                    b["file"].write_bytes(keep)  # the run before appended its prompt
                    first, hwm = resume_once(src, b["dirs"], flag)
                    res[label].setdefault(key, []).append((first, hwm))
                    print(label, key, f"{first * 1e3:.0f} ms, {hwm / 1024:.0f} MiB", flush=True)
        b["file"].write_bytes(keep)
    # (c) 500 sessions; (e) a turn's transcript write
    lst = tmp / "list"
    make_listing(lst / "s", lst / CWD_NAME, built["small"]["file"], args.sessions)
    (lst / CWD_NAME).mkdir(parents=True, exist_ok=True)
    for label, src in series:
        res[label]["list"] = child(src, "listing", root=str(lst / "s"), cwd=str(lst / CWD_NAME))
        res[label]["writes"] = child(src, "writes", path=str(built["big"]["file"]), kb=args.kb)
        print(label, res[label]["list"], res[label]["writes"], flush=True)
    for label, src in series:  # (f)
        for window in (None, 10**9):
            res[label][f"prompts {window}"] = child(src, "prompts", turns=args.turns, kb=args.kb, window=window)
            print(label, window, res[label][f"prompts {window}"], flush=True)
    text = table(series, res, built, args)
    Path(args.out).write_text(text)
    print(text)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def table(series: list[tuple[str, str]], res: dict[str, dict[str, Any]], built: dict[str, Any],
          args: argparse.Namespace) -> str:
    import platform

    labels = [label for label, _ in series]
    small, big = built["small"], built["big"]
    rows: list[tuple[str, list[str]]] = []

    def row(name: str, fn: Any) -> None:
        rows.append((name, [fn(res[label]) for label in labels]))

    def med(xs: list[tuple[float, int]], i: int) -> float:
        return statistics.median(x[i] for x in xs)

    for name, b in (("small", small), ("big", big), ("compacted", built["compacted"])):
        what = f"{b['turns']:,} turns, {b['mb']:.0f} MB transcript" + (", compacted at its end" if name == "compacted" else "")
        for flag in ("--resume", "--continue")[: 1 if name == "compacted" else 2]:
            row(f"(a) `-p {flag}` start → first request ({what})", lambda r, k=f"{name} {flag}": f"{med(r[k], 0) * 1e3:.0f} ms")
            row(f"(a) `-p {flag}` peak RSS at first request ({what})",
                lambda r, k=f"{name} {flag}": f"{med(r[k], 1) / 1024:.0f} MiB")
    for name, b in (("small", small), ("big", big)):
        what = (f"{args.kb} KB outputs, {args.per_prompt} turns a prompt" if name == "small"
                else f"{args.big_kb} KB outputs, {args.big_per_prompt} turns a prompt")
        row(f"(b) loop turn, median of turns 2-201 → of the last 200 ({what})",
            lambda r, n=name: f"{r[n]['turn_early_us']:.0f} → {r[n]['turn_late_us']:.0f} µs")
        row(f"(b) query() → first model call, prompts 2-11 → last 10 ({what})",
            lambda r, n=name: f"{r[n]['prompt_early_ms']:.2f} → {r[n]['prompt_late_ms']:.2f} ms")
        row(f"(b) request body encode (Anthropic, warm), 10 turns → {b['turns']:,} ({what}, body {b['body_mb']:.1f} MB)",
            lambda r, n=name: f"{r[n]['encode_early_us']:.0f} → {r[n]['encode_late_us']:.0f} µs")
        row(f"(b) the whole {b['turns']:,}-turn session built ({what})", lambda r, n=name: f"{r[n]['total_s']:.1f} s")
        row(f"(d) memory kept per tool-output byte as the session grows (traced in all; {what})",
            lambda r, n=name: f"{r[n]['held_per_output_byte']:.2f} B ({r[n]['held_mb']:.0f} MB at the end)")
        row(f"(d) the Anthropic provider's encoded-message cache, whole session ({what})", lambda r, n=name: f"{r[n]['encoder_cache_mb']:.0f} MB")
        row(f"(d) the interactive trace (`/expand`'s views), per tool-output byte ({what})",
            lambda r, n=name: f"{r[n]['view_per_output_byte']:.2f} B ({r[n]['view_mb']:.0f} MB)")
    row(f"(c) `loopwright sessions list` (list_sessions), {args.sessions} sessions of ~15 turns",
        lambda r: f"{r['list']['list_s'] * 1e3:.0f} ms")
    row("(c) `/resume` picker's list (the 15 newest) of the same", lambda r: f"{r['list']['picker_s'] * 1e3:.0f} ms")
    row(f"(e) a tool result's transcript line ({args.kb} KB): empty file → {big['mb']:.0f} MB file",
        lambda r: f"{r['writes']['write_empty_us']:.0f} → {r['writes']['write_big_us']:.0f} µs")
    for window, said in ((10**9, "the model's window known"), (None, "no window known")):
        row(f"(f) a prompt's start (query() → first model call), {args.turns:,} turns held ({args.kb} KB outputs; "
            f"{said}): the first → prompts 2-11",
            lambda r, w=window: f"{r[f'prompts {w}']['first_ms']:.1f} → {r[f'prompts {w}']['next_ms']:.2f} ms")
    head = "| measurement | " + " | ".join(labels) + " |\n|---|" + "---:|" * len(labels) + "\n"
    body = "".join(f"| {n} | " + " | ".join(v) + " |\n" for n, v in rows)
    cmd = "bench/bench_long_session.py" + (f" --before {args.before}" if args.before else "") + (
        f" --after {args.after}" if args.after else "")
    return (f"# Long sessions\n\nPython {platform.python_version()} on {platform.machine()}, {platform.system()}; "
            f"`{cmd}` ({args.turns:,} tool turns, {args.per_prompt} per prompt; CLI runs: median of {args.runs}).\n\n"
            + head + body)


if __name__ == "__main__":
    sys.exit(main())
