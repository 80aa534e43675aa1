"""`loopwright batch` and `lw.batch` (batching.py): many runs on the loopback server, resumable after
SIGKILL at any instant, the whole-batch budget (seed Prop 5.4 lifted to a batch), isolation,
retries, bad task lists. Each runs on both executors, locally and on one local Ray for the module
(`executor` fixture), and one test compares the two executors' results for the same tasks.

Locally the CLI runs as a subprocess. On Ray most tests run the same command line in this process
(`batch_main`), a driver on the module's Ray: a new driver process gets new Ray workers, seconds
each. The killed-worker test runs the CLI with `--ray auto` as a subprocess."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.batching import (
    BatchConfig,
    BatchError,
    Executor,
    LocalExecutor,
    RayExecutor,
    Task,
    batch,
    read_tasks,
)
from loopwright.batching.run import _batch
from loopwright.cli.batch import batch_main
from loopwright.testing import ScriptedServer
from tests.cli.test_interactive import Term
from tests.helpers import bash, loopwright_cmd, text, until, use

MODEL = "claude-sonnet-4-5"
TASK_RE = re.compile(r"task (\S+):")
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

try:
    import ray
except ImportError:  # an optional extra
    ray = None


# --- one local Ray for the module, and the executor parameter --------------------------------------------

@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A local Ray, started once (1 CPU: a task takes 0.5, so 2 run at once, and few workers start);
    its GCS address.
    Its workers get an API key for the loopback server; the URL comes with each batch (--base-url)."""
    if ray is None:
        pytest.skip("Ray is not installed (pip install 'loopwright[ray]'): the Ray executor is not tested")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ctx = ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
                   runtime_env={"env_vars": {"ANTHROPIC_API_KEY": "test"}})
    yield str(ctx.address_info["gcs_address"])
    ray.shutdown()


# The tests on the module's Ray run on one xdist worker, in turn: one Ray is started, as in a serial
# run (conftest groups a module fixture's users by itself, but `executor` asks for it at run time);
# the telemetry tests that start a Ray of their own join the group: one Ray at a time on 2 cores.
ON_RAY = pytest.mark.xdist_group("ray")


# a local Ray starts its own processes (gcs_server, raylet, python workers): the ray runs are e2e
@pytest.fixture(params=["local", pytest.param("ray", marks=[pytest.mark.e2e, ON_RAY])])
def executor(request: pytest.FixtureRequest) -> str:
    if request.param == "ray":
        request.getfixturevalue("ray_cluster")
    return str(request.param)


def make_executor(kind: str) -> Executor:
    return RayExecutor() if kind == "ray" else LocalExecutor()


# --- the scripted agent and tasks --------------------------------------------------------------------------

def first_text(h: list[dict[str, Any]]) -> str:
    c = h[0]["content"]
    return c if isinstance(c, str) else " ".join(str(b.get("text", "")) for b in c if b.get("type") == "text")


class WriteAgent:
    """Each task: write out.txt with its id, then answer. `delay`: seconds per response."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    def __call__(self, h: list[dict[str, Any]]) -> Any:
        m = TASK_RE.search(first_text(h))
        tid = m.group(1) if m else "?"
        if len(h) == 1:
            return {"content": [use(f"w-{tid}", "Write", file_path="out.txt", content=f"done {tid}\n")],
                    "delay": self.delay}
        return {"content": [text(f"wrote {tid}")], "delay": self.delay}


def task_id_of(req: Any) -> str | None:
    m = TASK_RE.search(first_text(req.body.get("messages") or [{"content": ""}]))
    return m.group(1) if m else None


def first_calls(srv: ScriptedServer, start: int = 0) -> list[str | None]:
    """The task of each first model call (a task started) since request `start`."""
    return [task_id_of(q) for q in srv.requests[start:] if q.loop_call and len(q.body["messages"]) == 1]


def write_tasks(tmp: Path, n: int, shared_cwd: Path | None = None) -> Path:
    lines = []
    for i in range(n):
        cwd = shared_cwd or tmp / f"repo{i}"
        cwd.mkdir(exist_ok=True)
        lines.append(json.dumps({"id": f"t{i}", "prompt": f"task t{i}: write out.txt", "cwd": str(cwd)}))
    p = tmp / "tasks.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def env_for(srv: ScriptedServer, tmp: Path) -> dict[str, str]:
    return {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "test",
            "LOOPWRIGHT_HOME": str(tmp / "lwhome")}


BATCH_FLAGS = ["--model", MODEL, "--permission-mode", "acceptEdits", "--setting-sources", ""]


def read_results(p: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for raw in (p.read_text().splitlines() if p.exists() else []):
        try:
            out.append(json.loads(raw))
        except ValueError:
            pass
    return out


# --- running `loopwright batch` on either executor -----------------------------------------------------------

def use_server(mp: pytest.MonkeyPatch, srv: ScriptedServer, tmp: Path) -> None:
    """This process's environment as env_for gives a subprocess's."""
    for k in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "LOOPWRIGHT_HOME"):
        mp.setenv(k, env_for(srv, tmp)[k])


class BatchRun:
    """`loopwright batch ARGS` started on an executor: locally a subprocess (`kill` SIGKILLs it); on
    Ray the same command line with `--ray auto` in a thread of this process, on the module's Ray."""

    def __init__(self, kind: str, srv: ScriptedServer, tmp: Path, mp: pytest.MonkeyPatch, args: list[str]) -> None:
        self.kind = kind
        self.rc: int | None = None
        self.err = ""
        if kind == "local":
            self.proc: subprocess.Popen[str] | None = subprocess.Popen(
                [*loopwright_cmd(), "batch", *args], env=env_for(srv, tmp), stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True, start_new_session=True)
            return
        self.proc = None
        use_server(mp, srv, tmp)
        buf = io.StringIO()

        def go() -> None:
            with contextlib.redirect_stderr(buf):
                self.rc = batch_main([*args, "--ray", "auto", "--base-url", srv.url])
            self.err = buf.getvalue()

        self.thread = threading.Thread(target=go, daemon=True)
        self.thread.start()

    def running(self) -> bool:
        return self.proc.poll() is None if self.proc is not None else self.thread.is_alive()

    def kill(self) -> None:
        assert self.proc is not None, "only the subprocess batch is killed (on Ray a worker is)"
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def wait(self, timeout: float = 300) -> tuple[int, str]:
        if self.proc is not None:
            _, self.err = self.proc.communicate(timeout=timeout)
            self.rc = self.proc.returncode
        else:
            self.thread.join(timeout)
            assert not self.thread.is_alive(), "the batch did not end"
        assert self.rc is not None
        return self.rc, self.err


def run_batch(kind: str, srv: ScriptedServer, tmp: Path, mp: pytest.MonkeyPatch, *args: str,
              flags: list[str] = BATCH_FLAGS) -> tuple[int, str]:
    return BatchRun(kind, srv, tmp, mp, [*args, *flags]).wait()


def wait_for(cond: Callable[[], bool], what: str, run: BatchRun | None = None, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline and (run is None or run.running()), what
        time.sleep(0.02)


# --- many tasks, and the same results on both executors --------------------------------------------------------

@pytest.mark.e2e
def test_twenty_tasks_at_concurrency_four(tmp_path: Path, executor: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = write_tasks(tmp_path, 20)
    out = tmp_path / "results.jsonl"
    with ScriptedServer(WriteAgent(delay=0.02)) as srv:
        rc, err = run_batch(executor, srv, tmp_path, monkeypatch, str(tasks), "-o", str(out), "--concurrency", "4")
        assert rc == 0, err[-3000:]
        calls = len(srv.loop_requests)
    results = read_results(out)
    assert sorted(x["id"] for x in results) == sorted(f"t{i}" for i in range(20))
    assert all(x["subtype"] == "success" and x["num_turns"] == 1 and x["model_calls"] == 2 for x in results)
    assert calls == 40
    for i in range(20):
        assert (tmp_path / f"repo{i}" / "out.txt").read_text() == f"done t{i}\n"
    first = results[0]
    assert {"session_id", "total_cost_usd", "usage", "duration_ms", "worker", "result"} <= set(first)
    # each task's transcript is kept where the driver keeps sessions (so `loopwright view` works on it)
    for x in results:
        assert len(list((tmp_path / "lwhome" / "projects").glob(f"*/{x['session_id']}.jsonl"))) == 1
    # progress on stderr, not a terminal here: plain lines (done / running / failed, spend, ETA), then the summary
    assert "\x1b[" not in err, "no terminal codes in a pipe"
    assert re.search(r"\[20/20\] t\d+: success \$[\d.]+ .*running \d+ · failed 0 · spent \$[\d.]+ · ETA \d+s", err)
    assert "20/20 succeeded (100%)" in err and "turns: median 1, max 1" in err
    assert "model calls: median 2, max 2" in err and "slowest: " in err
    assert f"total cost ${sum(x['total_cost_usd'] for x in results):.4f}" in err
    if executor == "ray":
        assert len({x["worker"] for x in results}) >= 2, "tasks ran in Ray's worker processes"
        assert all(x["worker"].split(":")[1] != str(os.getpid()) for x in results)
    # a rerun with the same -o runs nothing
    with ScriptedServer(WriteAgent()) as srv:
        rc, err = run_batch(executor, srv, tmp_path, monkeypatch, str(tasks), "-o", str(out))
        assert rc == 0 and not srv.loop_requests and "20 of 20 tasks already" in err, err


def mixed_agent(h: list[dict[str, Any]], failures: dict[str, int]) -> Any:
    """Per task: "loop" calls tools forever, "flaky" fails once (HTTP 500), the others write and answer."""
    m = TASK_RE.search(first_text(h))
    tid = m.group(1) if m else "?"
    if tid == "flaky" and not failures.get(tid):
        failures[tid] = 1
        raise RuntimeError("the API is down")
    if tid == "loop" or len(h) == 1:
        k = sum(1 for m in h if m["role"] == "assistant")
        return [use(f"w{k}", "Write", file_path="out.txt", content=f"{tid} {k}\n")]
    return [text(f"wrote {tid}")]


@pytest.mark.e2e
@ON_RAY
def test_the_same_tasks_give_the_same_results_locally_and_on_ray(tmp_path: Path, ray_cluster: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """One task list of mixed outcomes (success, error_max_turns, a retried error_during_execution,
    a per-task error_max_budget_usd), run in copies of the same sources: every field of every result
    is the same on both executors but those that name a process, a time, a session or a path."""
    lines = []
    for tid, over in [("a", {}), ("b", {}), ("loop", {"max_turns": 2}), ("flaky", {"max_retries": 0}),
                      ("poor", {"max_budget_usd": 0.000001})]:
        (tmp_path / tid).mkdir()
        (tmp_path / tid / "keep.txt").write_text("original\n")
        _git(tmp_path / tid, "init", "-q")
        _git(tmp_path / tid, "add", ".")
        _git(tmp_path / tid, "commit", "-q", "-m", "init")
        lines.append(json.dumps({"id": tid, "prompt": f"task {tid}: go", "cwd": tid, **over}))
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(lines) + "\n")
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for kind in ("local", "ray"):
        failures: dict[str, int] = {}
        # no simulated prompt cache: a response's tokens then do not depend on the order of the calls
        with ScriptedServer(lambda h, f=failures: mixed_agent(h, f), min_cache_tokens=10**9) as srv:
            # the same length of path for both (the workspace path is in the model's context)
            out = tmp_path / f"{kind[0]}" / "results.jsonl"
            rc, err = run_batch(kind, srv, tmp_path, monkeypatch, str(tasks), "-o", str(out), "--isolate", "copy",
                                "--retries", "2", "--concurrency", "3")
            assert rc == 1, err[-3000:]  # some tasks failed, as scripted
        results[kind] = {x["id"]: x for x in read_results(out)}
    local, on_ray = results["local"], results["ray"]
    assert {k: v["subtype"] for k, v in local.items()} == {
        "a": "success", "b": "success", "loop": "error_max_turns", "flaky": "success", "poor": "error_max_budget_usd"}
    assert local["flaky"]["attempts"] == 2 and "out.txt" in local["a"]["diff_stat"]
    varying = {"session_id", "duration_ms", "duration_api_ms", "worker", "workspace", "uuid"}
    for tid in local:
        assert {k: v for k, v in local[tid].items() if k not in varying} == \
            {k: v for k, v in on_ray[tid].items() if k not in varying}, tid
    local_workers = {x["worker"] for x in local.values()}
    assert len(local_workers) == 1, "locally every task runs in the batch's process"
    assert not local_workers & {x["worker"] for x in on_ray.values()}
    assert all(x["worker"].split(":")[1] != str(os.getpid()) for x in on_ray.values()), "on Ray: in its workers"
    for tid in local:  # the sources are untouched: each run wrote in its copies
        assert _git(tmp_path / tid, "status", "--porcelain") == ""


# --- resumable --------------------------------------------------------------------------------------------------

@pytest.mark.e2e
def test_sigkill_at_random_points_then_rerun_finishes_each_task_once(tmp_path: Path) -> None:
    """The batch process SIGKILLed at random instants. (The driver's code is the same on Ray; a rerun
    after a kill is tested on both executors below, and Ray workers are killed in the Ray tests.)"""
    tasks = write_tasks(tmp_path, 12)
    out = tmp_path / "results.jsonl"
    rng = random.Random(7)
    with ScriptedServer(WriteAgent(delay=0.05)) as srv:
        env = env_for(srv, tmp_path)
        recorded_before: set[str] = set()
        for _ in range(3):  # killed mid-batch, three times
            start = len(srv.requests)
            p = subprocess.Popen([*loopwright_cmd(), "batch", str(tasks), "-o", str(out), "--concurrency", "3", *BATCH_FLAGS],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            # a random instant mid-batch: after some model calls of this round, whatever the machine's speed
            until = start + rng.randint(2, 8)
            deadline = time.monotonic() + 120
            while len(srv.requests) < until and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0, 0.2))
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            # no task already recorded was started again in this round
            assert not (set(first_calls(srv, start)) & recorded_before)
            recorded_before = {x["id"] for x in read_results(out)}
        start = len(srv.requests)
        r = subprocess.run([*loopwright_cmd(), "batch", str(tasks), "-o", str(out), "--concurrency", "3", *BATCH_FLAGS],
                           env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        assert not (set(first_calls(srv, start)) & recorded_before)
    ids = [x["id"] for x in read_results(out)]
    assert sorted(ids) == sorted(f"t{i}" for i in range(12)), "each task recorded exactly once"
    assert all(x["subtype"] == "success" for x in read_results(out))


@pytest.mark.e2e
def test_a_rerun_runs_only_the_tasks_not_recorded(tmp_path: Path, executor: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """RESULTS as a kill leaves it: the lines of the last tasks missing, one of them torn mid-write.
    The rerun runs exactly those tasks (the torn one too), and each task is recorded once."""
    tasks = write_tasks(tmp_path, 8)
    out = tmp_path / "results.jsonl"
    with ScriptedServer(WriteAgent()) as srv:
        rc, err = run_batch(executor, srv, tmp_path, monkeypatch, str(tasks), "-o", str(out), "--concurrency", "4")
        assert rc == 0, err[-2000:]
        lines = out.read_text().splitlines(keepends=True)
        kept, lost = lines[:5], [json.loads(x)["id"] for x in lines[5:]]
        out.write_text("".join(kept) + lines[5][:len(lines[5]) // 2])  # killed mid-write of the 6th
        start = len(srv.requests)
        rc, err = run_batch(executor, srv, tmp_path, monkeypatch, str(tasks), "-o", str(out), "--concurrency", "4")
        assert rc == 0, err[-2000:]
        assert sorted(first_calls(srv, start)) == sorted(lost), "exactly the tasks not recorded ran again"
        assert "5 of 8 tasks already in the results file; running the other 3" in err
    results = read_results(out)
    assert sorted(x["id"] for x in results) == sorted(f"t{i}" for i in range(8)), "each task recorded once"
    assert all(x["subtype"] == "success" for x in results) and out.read_bytes().endswith(b"\n")


def progress_agent(h: list[dict[str, Any]]) -> Any:
    """Per task: "bad" calls Write on every turn (it ends in error_max_turns at max_turns 1), "wait"
    runs Bash until the file `go` exists in its cwd, the others write out.txt and answer."""
    m = TASK_RE.search(first_text(h))
    tid = m.group(1) if m else "?"
    if tid == "bad" or len(h) == 1:
        cmd = "while [ ! -e go ]; do sleep 0.05; done; echo went"
        return [bash(cmd, "b1") if tid == "wait" else use(f"w{len(h)}", "Write", file_path="out.txt", content=tid)]
    return [text(f"done {tid}")]


def progress_tasks(tmp: Path, ids: list[str]) -> Path:
    lines = []
    for tid in ids:
        (tmp / tid).mkdir()
        lines.append(json.dumps({"id": tid, "prompt": f"task {tid}: go", "cwd": tid,
                                 **({"max_turns": 1} if tid == "bad" else {})}))
    p = tmp / "tasks.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


PROGRESS_FLAGS = ["--model", MODEL, "--permission-mode", "bypassPermissions", "--setting-sources", ""]


@pytest.mark.e2e
def test_a_rerun_summary_describes_the_whole_results_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The summary after a rerun covers every task of the batch, those recorded earlier (a failure
    among them) included, and says how many ran this time."""
    tasks = progress_tasks(tmp_path, ["t0", "t1", "t2", "bad"])
    out = tmp_path / "results.jsonl"
    with ScriptedServer(progress_agent) as srv:
        rc, err = run_batch("local", srv, tmp_path, monkeypatch, str(tasks), "-o", str(out), "--concurrency", "4",
                            flags=PROGRESS_FLAGS)
        assert rc == 1 and "3/4 succeeded (75%): error_max_turns 1, success 3" in err, err
        first = {x["id"]: x for x in read_results(out)}
        # two successes lost (as a kill leaves them): the rerun runs those two only
        out.write_text("".join(json.dumps(x) + "\n" for x in first.values() if x["id"] not in ("t0", "t1")))
        rc, err = run_batch("local", srv, tmp_path, monkeypatch, str(tasks), "-o", str(out), "--concurrency", "4",
                            flags=PROGRESS_FLAGS)
    assert rc == 0, err  # this run's tasks all succeeded
    whole = read_results(out)
    assert sorted(x["id"] for x in whole) == ["bad", "t0", "t1", "t2"]
    assert "2 of 4 tasks already in the results file; running the other 2" in err
    assert "3/4 succeeded (75%): error_max_turns 1, success 3" in err, err  # not "2/2 succeeded"
    assert "2 run this time in " in err and ", 2 recorded earlier" in err
    assert re.search(r"^\[4/4\] t[01]: success .* failed 1 · ", err, re.M), "failed counts the earlier failure"
    assert f"total cost ${sum(x['total_cost_usd'] for x in whole):.4f}" in err
    assert f"model calls: median 2, max {first['bad']['model_calls']}" in err
    slowest = sorted(whole, key=lambda x: -x["duration_ms"])[:3]
    assert "slowest: " + ", ".join(f"{x['id']} ({x['duration_ms'] / 1000:.1f}s)" for x in slowest) in err


@pytest.mark.e2e
@needs_tmux
def test_progress_on_a_terminal_is_a_live_display(tmp_path: Path) -> None:
    """stderr a terminal (tmux): a live display of done / running / failed, spend and ETA, a line per
    finished task above it, then the summary; no plain progress lines."""
    tasks = progress_tasks(tmp_path, ["t0", "t1", "bad", "wait"])
    out, status = tmp_path / "results.jsonl", tmp_path / "exit_status"
    name = f"lw-batch-{uuid.uuid4().hex[:8]}"
    t = Term(name)
    with ScriptedServer(progress_agent) as srv:
        env = (f"env -u LOOPWRIGHT_SESSIONS_DIR -u LOOPWRIGHT_MODEL ANTHROPIC_BASE_URL={srv.url} "
               f"ANTHROPIC_API_KEY=test LOOPWRIGHT_HOME={tmp_path / 'lwhome'}")
        cmd = shlex.join([*loopwright_cmd(), "batch", str(tasks), "-o", str(out), "--concurrency", "4", *PROGRESS_FLAGS])
        t.tmux("new-session", "-d", "-s", name, "-x", "150", "-y", "30", "-c", str(tmp_path),
               f"{env} {cmd}; echo $? > {status}")
        t.tmux("set-option", "-t", name, "remain-on-exit", "on")
        try:
            # three tasks done (one failed), "wait" still running: its Bash waits for us
            live = re.compile(r"batch .* 3/4 running 1 · failed 1 · spent \$(\d+\.\d{4}) · ETA \d+s")
            screen = ""

            def shows_live() -> bool:
                nonlocal screen
                screen = t.screen()
                return live.search(screen) is not None

            assert until(shows_live, 60), screen
            m = live.search(screen)
            assert m
            spent = float(m.group(1))
            # the finished tasks' cost, and the running one's calls so far: charged as each response is
            assert spent > round(sum(x["total_cost_usd"] for x in read_results(out)), 4) > 0
            assert re.search(r"✓ t0: success \$\d+\.\d{4} \d+\.\ds", screen)
            assert "✗ bad: error_max_turns" in screen and "wait:" not in screen
            (tmp_path / "wait" / "go").touch()
            assert until(lambda: status.exists() and status.read_text().strip() != "", 60), t.screen()
            screen = t.screen()
        finally:
            t.tmux("kill-session", "-t", name)
    assert status.read_text().strip() == "1"  # a task failed
    m = re.search(r"batch .* 4/4 running 0 · failed 1 · spent \$(\d+\.\d{4}) · ETA 0s", screen)
    assert m and float(m.group(1)) == pytest.approx(sum(x["total_cost_usd"] for x in read_results(out)), abs=1e-4)
    assert "✓ wait: success" in screen
    assert "3/4 succeeded (75%): error_max_turns 1, success 3" in screen and "4 run this time" in screen
    assert "total cost $" in screen and "slowest: " in screen
    assert not re.search(r"^\[\d+/4\]", screen, re.M), "no plain progress lines on a terminal"
    assert screen.count(" 4/4 ") == 1, "the live display is redrawn in place, not repeated"


def stop_batch_when(kind: str, tasks: list[Task], base: lw.AgentOptions, cfg: BatchConfig,
                    cond: Callable[[], bool]) -> None:
    """Run a batch in this process and stop it (cancel its asyncio task) once `cond()` holds."""
    async def go() -> None:
        async def consume() -> None:
            async for _ in _batch(tasks, base, cfg, make_executor(kind)):
                pass
        run = asyncio.create_task(consume())
        deadline = time.monotonic() + 120
        while not cond():
            assert not run.done() and time.monotonic() < deadline, "the batch ended before it was stopped"
            await asyncio.sleep(0.02)
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
    asyncio.run(go())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.e2e
def test_resume_sessions_continues_a_task_killed_mid_run(tmp_path: Path, executor: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch dies mid-task: locally its process is SIGKILLed; on Ray the driver stops, which
    kills the task's worker. The rerun with --resume-sessions continues the task's session."""
    from loopwright.cli import build_parser
    from loopwright.cli.config import build_options

    work = tmp_path / "w"
    work.mkdir()
    histories: list[list[dict[str, Any]]] = []

    def agent(h: list[dict[str, Any]]) -> Any:
        histories.append(h)
        if len(h) == 1:  # the first attempt: a long command, during which the process is killed
            return [use("b1", "Bash", command="echo $PPID > worker.pid; echo $$ > shell.pid; touch started; exec sleep 30")]
        return [text("finished after resuming")]

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "r", "prompt": "task r: go", "cwd": str(work)}) + "\n")
    out = tmp_path / "results.jsonl"
    flags = ["--permission-mode", "bypassPermissions", "--model", MODEL, "--setting-sources", ""]
    args = [str(tasks), "-o", str(out), "--resume-sessions", *flags]
    started = work / "started"
    with ScriptedServer(agent) as srv:
        if executor == "local":
            run = BatchRun(executor, srv, tmp_path, monkeypatch, args)
            wait_for(started.exists, "the task never started", run)
            run.kill()
        else:
            use_server(monkeypatch, srv, tmp_path)
            base = build_options(build_parser().parse_args([*flags, "--base-url", srv.url]))
            cfg = BatchConfig(results=out, own_system_prompt=True, resume_sessions=True)
            stop_batch_when(executor, read_tasks(tasks), base, cfg, started.exists)
            worker = int((work / "worker.pid").read_text())
            assert worker != os.getpid()
            wait_for(lambda: not alive(worker), "the stopped batch left its Ray task running")
            with contextlib.suppress(ProcessLookupError):
                os.kill(int((work / "shell.pid").read_text()), signal.SIGKILL)  # orphaned by the kill
        assert read_results(out) == []
        rc, err = run_batch(executor, srv, tmp_path, monkeypatch, *args, flags=[])
        assert rc == 0, err[-2000:]
    res = read_results(out)
    assert [x["id"] for x in res] == ["r"] and res[0]["result"] == "finished after resuming"
    # The first attempt, and the resumed one. Where Ray kills the worker's children before the
    # worker itself (see below), the dying worker may send the command's exit to the model once
    # more before it goes (seen under load): that call, and no other, may come in between.
    assert len(histories[0]) == 1 and "Continue the task" in json.dumps(histories[-1][-1]), histories
    between = histories[1:-1]
    assert between == [] or (executor == "ray" and len(between) == 1 and len(between[0]) == 3
                             and between[0][2]["content"][0]["type"] == "tool_result"), histories
    resumed = histories[-1]
    # the resumed conversation: the first prompt, the Bash call, its error result, the nudge
    assert first_text(resumed) == "task r: go" and resumed[1]["content"][0]["name"] == "Bash"
    (result,) = resumed[2]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "b1" and result["is_error"]
    # Either the worker died first (the resume pairs the call with an "interrupted" result), or
    # Ray killed the worker's children first and the worker saved the command's real exit.
    said = json.dumps(result["content"]).lower()
    assert "interrupted" in said or "exit code -9" in said, said
    assert "Continue the task" in json.dumps(resumed[-1])
    transcripts = list((tmp_path / "lwhome" / "projects").glob("*/*.jsonl"))
    assert [t.stem for t in transcripts] == [res[0]["session_id"]], "one session, continued in place"


def test_results_file_heals_a_torn_last_line(tmp_path: Path) -> None:
    from loopwright.batching import ResultsFile

    p = tmp_path / "r.jsonl"
    p.write_bytes(b'{"id": "a", "subtype": "success"}\n{"id": "b", "subty')  # killed mid-write
    f = ResultsFile(p)
    assert list(f.read()) == ["a"]
    f.open()
    f.append({"id": "b", "subtype": "success"})
    f.close()
    lines = p.read_text().splitlines()
    assert lines[-1] == '{"id": "b", "subtype": "success"}' and sorted(f.read()) == ["a", "b"]


# --- bad input ----------------------------------------------------------------------------------------------------

def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false",
                           *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.mark.e2e
def test_bad_task_lists_are_reported_by_line_and_nothing_runs(tmp_path: Path, executor: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").mkdir()
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join([
        json.dumps({"id": "x", "prompt": "p", "cwd": str(tmp_path / "a")}),
        "{not json",
        json.dumps({"id": "y"}),
        json.dumps({"id": "x", "prompt": "again", "cwd": str(tmp_path / "a")}),
        json.dumps({"id": "z", "prompt": "p", "cwd": str(tmp_path / "missing")}),
        json.dumps({"id": "w", "prompt": "p", "max_turnz": 3}),
    ]) + "\n")
    with pytest.raises(BatchError) as e:
        read_tasks(tasks)
    msg = str(e.value)
    for expected in ("line 2: not JSON", "line 3: \"prompt\" is missing", "line 4: duplicate id 'x' (first on line 1)",
                     "line 5: cwd", "line 6: unknown option max_turnz"):
        assert expected in msg, msg
    assert msg.index("line 2:") < msg.index("line 3:"), "in line order"

    def refused(tasks_file: Path, *flags: str) -> str:
        with ScriptedServer(WriteAgent()) as srv:
            rc, err = run_batch(executor, srv, tmp_path, monkeypatch, str(tasks_file), "-o", str(tmp_path / "r.jsonl"),
                                *flags, *BATCH_FLAGS)
            assert rc == 2 and not srv.requests, err
        assert not (tmp_path / "r.jsonl").exists()
        return err

    if executor == "ray":  # the CLI as a subprocess: the input is refused before Ray is started or reached
        r = subprocess.run([*loopwright_cmd(), "batch", str(tasks), "-o", str(tmp_path / "r.jsonl"), "--ray",
                            *BATCH_FLAGS], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "line 6: unknown option max_turnz" in r.stderr, r.stderr
        assert "Ray" not in r.stderr
    assert "line 6: unknown option max_turnz" in refused(tasks)
    # a bad option value: its line
    bad_value = tmp_path / "bad_value.jsonl"
    bad_value.write_text(json.dumps({"id": "v", "prompt": "p", "cwd": "a", "max_turns": "three"}) + "\n")
    assert "line 1 (id v): max_turns must be a non-negative integer" in refused(bad_value)
    # tasks sharing a cwd with --isolate none would run at once in it: refused up front
    (tmp_path / "s").mkdir()
    shared = write_tasks(tmp_path / "s", 3, shared_cwd=tmp_path / "a")
    err = refused(shared)
    assert "t0 (line 1), t1 (line 2), t2 (line 3) share the cwd" in err
    # --isolate worktree needs a git repository
    assert "line 1 (id t0): --isolate worktree needs a git repository" in refused(shared, "--isolate", "worktree")


@pytest.mark.e2e
def test_a_results_file_of_another_task_list_is_refused(tmp_path: Path, executor: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = write_tasks(tmp_path, 2)
    out = tmp_path / "results.jsonl"
    out.write_text(json.dumps({"id": "other", "subtype": "success"}) + "\n")
    with ScriptedServer(WriteAgent()) as srv:
        rc, err = run_batch(executor, srv, tmp_path, monkeypatch, str(tasks), "-o", str(out))
        assert rc == 2 and "different task list" in err and "ids other" in err and not srv.requests
        rc, err = run_batch(executor, srv, tmp_path, monkeypatch, str(tasks), "-o", str(out), "--force")
        assert rc == 0, err
    assert sorted(x["id"] for x in read_results(out)) == ["other", "t0", "t1"]


# --- isolation ----------------------------------------------------------------------------------------------------

@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["copy", "worktree"])
def test_isolation_leaves_the_originals_untouched(tmp_path: Path, mode: str, executor: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("original\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "init")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(json.dumps({"id": f"t{i}", "prompt": f"task t{i}: write", "cwd": "repo"})
                               for i in range(3)) + "\n")
    monkeypatch.chdir(tmp_path)
    with ScriptedServer(WriteAgent()) as srv:
        # -o relative: copies and patches go beside it, wherever the worker runs
        rc, err = run_batch(executor, srv, tmp_path, monkeypatch, "tasks.jsonl", "-o", "out/results.jsonl",
                            "--isolate", mode, "--concurrency", "3")
        assert rc == 0, err[-2000:]
    assert _git(repo, "status", "--porcelain") == "" and not (repo / "out.txt").exists()
    results = read_results(tmp_path / "out" / "results.jsonl")
    assert len(results) == 3
    work = tmp_path / "out" / "results.work"
    for x in results:
        assert x["diff_stat"].splitlines()[0].strip().startswith("out.txt |"), x
        assert Path(x["workspace"]).parent == work / "workspaces"
        if mode == "copy":
            assert (Path(x["workspace"]) / "out.txt").read_text() == f"done {x['id']}\n"
            assert (Path(x["workspace"]) / "a.txt").read_text() == "original\n"
        else:
            assert not Path(x["workspace"]).exists(), "the worktree is removed after the task"
            assert Path(x["patch"]) == work / "patches" / f"{x['id']}.patch"
            patch = Path(x["patch"]).read_text()
            assert f"+done {x['id']}" in patch
            # the patch applies to the original
            subprocess.run(["git", "apply", "--check", x["patch"]], cwd=repo, check=True)
    if mode == "worktree":
        assert _git(repo, "worktree", "list").count("\n") == 1


# --- the whole-batch budget ------------------------------------------------------------------------------

def _echo() -> lw.Tool:
    return lw.Tool("echo", "echo", {"type": "object"}, lambda x: "ok", read_only=True)  # a lambda: Ray pickles it


def test_whole_batch_budget_bound(tmp_path: Path, executor: str) -> None:
    """No call starts at S >= B, and the total stays below B + C * c_max. Locally the model sees S
    at each call; on Ray (S in an actor, the models in workers) the bound and the accounting are
    checked, on fewer examples (each a Ray batch)."""

    def model_for(task_costs: list[float], seen: list[float] | None, ex: LocalExecutor | None) -> lw.ScriptedModel:
        # no test helpers in here: on Ray this function is pickled to the workers by value
        def fn(h: list[dict[str, Any]]) -> Any:
            if seen is not None and ex is not None and ex.spend is not None:
                seen.append(ex.spend.spent_usd)
            k = sum(1 for m in h if m["role"] == "assistant")
            if k + 1 < len(task_costs):
                return {"content": [{"type": "tool_use", "id": f"e{k}", "name": "echo", "input": {}}], "delay": 0.001}
            return {"content": [{"type": "text", "text": "done"}], "delay": 0.001}
        return lw.ScriptedModel(fn, cost_per_call_usd=lambda k: task_costs[k - 1])

    @settings(max_examples=25 if executor == "local" else 4, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(costs=st.lists(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=5), min_size=1, max_size=8),
           budget=st.floats(0.05, 4.0), concurrency=st.integers(1, 4))
    def check(costs: list[list[float]], budget: float, concurrency: int) -> None:
        ex = make_executor(executor)
        local = ex if isinstance(ex, LocalExecutor) else None
        started_at: list[float] = []
        tasks = []
        for i, c in enumerate(costs):
            d = tempfile.mkdtemp(dir=tmp_path)  # a cwd of its own (hypothesis reuses tmp_path)
            tasks.append(Task(f"t{i}", f"task t{i}: go", d, {"model": model_for(c, started_at, local)}))

        async def go() -> list[dict[str, Any]]:
            base = lw.AgentOptions(tools=[_echo()], sessions_dir=tmp_path / "sessions")
            return [r async for r in batch(tasks, base, concurrency=concurrency, executor=ex, max_budget_usd=budget)]

        results = asyncio.run(go())
        assert sorted(r["id"] for r in results) == sorted(t.id for t in tasks)
        total = sum(float(r["total_cost_usd"]) for r in results)
        c_max = max(max(c) for c in costs)
        assert total < budget + concurrency * c_max + 1e-9
        for r in results:
            assert r["subtype"] in ("success", "skipped_budget", "error_max_budget_usd"), r
            if r["subtype"] == "skipped_budget":
                assert r["model_calls"] == 0 and r["total_cost_usd"] == 0
            else:  # each call charged its scripted cost, wherever it ran
                assert abs(r["total_cost_usd"] - sum(costs[int(r["id"][1:])][:r["model_calls"]])) < 1e-9
        if total < budget:
            assert all(r["subtype"] == "success" for r in results)
        if local is not None:
            assert all(s < budget for s in started_at), "a model call started at S >= B"
            assert local.spend is not None and abs(local.spend.spent_usd - total) < 1e-9

    check()


def test_retries_only_error_during_execution(tmp_path: Path, executor: str) -> None:
    """error_during_execution is retried up to K times, after a backoff that doubles; other subtypes
    are final. (The attempts of a task run in one process, so the model's count holds on Ray too.)"""
    from loopwright.models.base import ModelError

    def model_for(fail_times: int, turns: int = 0) -> lw.ScriptedModel:
        attempts = [0]

        def fn(h: list[dict[str, Any]]) -> Any:
            if len(h) == 1:
                attempts[0] += 1
            if attempts[0] <= fail_times:
                raise ModelError("the API is down")
            if len(h) < 2 * turns + 1:
                return [{"type": "tool_use", "id": f"e{len(h)}", "name": "echo", "input": {}}]
            return [{"type": "text", "text": "ok"}]
        return lw.ScriptedModel(fn)

    dirs = [tmp_path / f"d{i}" for i in range(3)]
    for d in dirs:
        d.mkdir()
    tasks = [Task("flaky", "task flaky: go", str(dirs[0]), {"model": model_for(2), "max_retries": 0}),
             Task("down", "task down: go", str(dirs[1]), {"model": model_for(99), "max_retries": 0}),
             Task("long", "task long: go", str(dirs[2]), {"model": model_for(0, turns=3), "max_turns": 1})]

    async def go() -> dict[str, dict[str, Any]]:
        return {r["id"]: r async for r in batch(tasks, lw.AgentOptions(tools=[_echo()]), retries=2,
                                                retry_base_s=0.1, executor=make_executor(executor))}

    rs = asyncio.run(go())
    assert rs["flaky"]["subtype"] == "success" and rs["flaky"]["attempts"] == 3
    assert rs["down"]["subtype"] == "error_during_execution" and rs["down"]["attempts"] == 3
    assert "the API is down" in json.dumps(rs["down"]["errors"])
    assert rs["long"]["subtype"] == "error_max_turns" and rs["long"]["attempts"] == 1, "other subtypes are final"
    # the backoff waited 0.1 s, then 0.2 s, between the three attempts (a lower bound: no machine is that fast)
    assert rs["down"]["duration_ms"] >= 300


# --- Ray only: a worker killed mid-task ----------------------------------------------------------------------

@pytest.mark.e2e
@ON_RAY
def test_a_ray_worker_killed_mid_task_has_its_task_rerun(tmp_path: Path, ray_cluster: str) -> None:
    """The CLI as a subprocess with `--ray auto` (a running cluster, found by RAY_ADDRESS)."""
    work = tmp_path / "w"
    work.mkdir()
    seen: list[int] = []

    def agent(h: list[dict[str, Any]]) -> Any:
        if len(h) == 1:
            seen.append(1)
            if len(seen) == 1:  # first attempt: a long command, during which the worker is killed
                return [use("b1", "Bash", command="echo $PPID > worker.pid; exec sleep 30")]
            return [use("b2", "Bash", command="echo second > out.txt")]
        return [text("done")]

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "k", "prompt": "task k: go", "cwd": str(work)}) + "\n")
    out = tmp_path / "results.jsonl"
    argv = [*loopwright_cmd(), "batch", str(tasks), "-o", str(out), "--ray", "auto", "--retries", "2",
            "--permission-mode", "bypassPermissions", "--model", MODEL, "--setting-sources", ""]
    with ScriptedServer(agent) as srv:
        env = {**env_for(srv, tmp_path), "RAY_ADDRESS": ray_cluster}
        p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (work / "worker.pid").exists() or not (work / "worker.pid").read_text().strip():
            assert time.monotonic() < deadline and p.poll() is None, "the task never started"
            time.sleep(0.1)
        pid = int((work / "worker.pid").read_text())
        assert pid not in (p.pid, os.getpid())
        os.kill(pid, signal.SIGKILL)
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        assert "Connected to Ray cluster" in err
        # a rerun with nothing left to run does not reach the cluster
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "1 of 1 tasks already" in r.stderr and "Ray" not in r.stderr, r.stderr
    results = read_results(out)
    assert [x["id"] for x in results] == ["k"] and results[0]["subtype"] == "success"
    assert (work / "out.txt").read_text() == "second\n" and len(seen) == 2
    assert results[0]["worker"].split(":")[1] not in (str(pid), str(os.getpid()))
