"""`loopwright batch` and `lw.batch` (batching.py): many runs on the loopback server, resumable after
SIGKILL at any instant, the whole-batch budget (seed Prop 5.4 lifted to a batch), isolation,
bad task lists; and the same on a local Ray, including a worker killed mid-task."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopwright as lw
from loopwright.batching import BatchError, LocalExecutor, Task, batch, read_tasks
from loopwright.testing import ScriptedServer

LW = [sys.executable, "-c", "import sys; from loopwright.cli import main; sys.exit(main())"]
MODEL = "claude-sonnet-4-5"
TASK_RE = re.compile(r"task (\S+):")


def use(uid: str, name: str, **x: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": uid, "name": name, "input": x}


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


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


def test_twenty_tasks_at_concurrency_four(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path, 20)
    out = tmp_path / "results.jsonl"
    with ScriptedServer(WriteAgent(delay=0.02)) as srv:
        r = subprocess.run([*LW, "batch", str(tasks), "-o", str(out), "--concurrency", "4", *BATCH_FLAGS],
                           env=env_for(srv, tmp_path), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        calls = len(srv.loop_requests)
    results = read_results(out)
    assert sorted(x["id"] for x in results) == sorted(f"t{i}" for i in range(20))
    assert all(x["subtype"] == "success" and x["num_turns"] == 1 and x["model_calls"] == 2 for x in results)
    assert calls == 40
    for i in range(20):
        assert (tmp_path / f"repo{i}" / "out.txt").read_text() == f"done t{i}\n"
    first = results[0]
    assert {"session_id", "total_cost_usd", "usage", "duration_ms", "worker", "result"} <= set(first)
    # each task's transcript is kept (so `loopwright view` works on it)
    for x in results:
        assert len(list((tmp_path / "lwhome" / "projects").glob(f"*/{x['session_id']}.jsonl"))) == 1
    assert "20/20 succeeded" in r.stderr and "[20/20]" in r.stderr
    # a rerun with the same -o runs nothing
    with ScriptedServer(WriteAgent()) as srv:
        r = subprocess.run([*LW, "batch", str(tasks), "-o", str(out), *BATCH_FLAGS], env=env_for(srv, tmp_path),
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and not srv.loop_requests and "20 of 20 tasks already" in r.stderr


def test_sigkill_at_random_points_then_rerun_finishes_each_task_once(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path, 12)
    out = tmp_path / "results.jsonl"
    rng = random.Random(7)
    with ScriptedServer(WriteAgent(delay=0.05)) as srv:
        env = env_for(srv, tmp_path)
        recorded_before: set[str] = set()
        for _ in range(3):  # killed mid-batch, three times
            start = len(srv.requests)
            p = subprocess.Popen([*LW, "batch", str(tasks), "-o", str(out), "--concurrency", "3", *BATCH_FLAGS],
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
            started = {task_id_of(q) for q in srv.requests[start:] if q.loop_call and len(q.body["messages"]) == 1}
            assert not (started & recorded_before)
            recorded_before = {x["id"] for x in read_results(out)}
        start = len(srv.requests)
        r = subprocess.run([*LW, "batch", str(tasks), "-o", str(out), "--concurrency", "3", *BATCH_FLAGS],
                           env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        started = {task_id_of(q) for q in srv.requests[start:] if q.loop_call and len(q.body["messages"]) == 1}
        assert not (started & recorded_before)
    ids = [x["id"] for x in read_results(out)]
    assert sorted(ids) == sorted(f"t{i}" for i in range(12)), "each task recorded exactly once"
    assert all(x["subtype"] == "success" for x in read_results(out))


def test_bad_task_lists_are_reported_by_line_and_nothing_runs(tmp_path: Path) -> None:
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
    with ScriptedServer(WriteAgent()) as srv:
        r = subprocess.run([*LW, "batch", str(tasks), "-o", str(tmp_path / "r.jsonl"), *BATCH_FLAGS],
                           env=env_for(srv, tmp_path), capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "line 6: unknown option max_turnz" in r.stderr and not srv.requests
    assert not (tmp_path / "r.jsonl").exists()
    # tasks sharing a cwd with --isolate none run concurrently: refused up front
    (tmp_path / "s").mkdir()
    shared = write_tasks(tmp_path / "s", 3, shared_cwd=tmp_path / "a")
    with ScriptedServer(WriteAgent()) as srv:
        r = subprocess.run([*LW, "batch", str(shared), "-o", str(tmp_path / "r.jsonl"), *BATCH_FLAGS],
                           env=env_for(srv, tmp_path), capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "share the cwd" in r.stderr and not srv.requests


def test_a_results_file_of_another_task_list_is_refused(tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path, 2)
    out = tmp_path / "results.jsonl"
    out.write_text(json.dumps({"id": "other", "subtype": "success"}) + "\n")
    with ScriptedServer(WriteAgent()) as srv:
        r = subprocess.run([*LW, "batch", str(tasks), "-o", str(out), *BATCH_FLAGS], env=env_for(srv, tmp_path),
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "different task list" in r.stderr and not srv.requests
        r = subprocess.run([*LW, "batch", str(tasks), "-o", str(out), "--force", *BATCH_FLAGS],
                           env=env_for(srv, tmp_path), capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false",
                           *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("mode", ["copy", "worktree"])
def test_isolation_leaves_the_originals_untouched(tmp_path: Path, mode: str) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("original\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "init")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(json.dumps({"id": f"t{i}", "prompt": f"task t{i}: write", "cwd": str(repo)})
                               for i in range(3)) + "\n")
    out = tmp_path / "results.jsonl"
    with ScriptedServer(WriteAgent()) as srv:
        r = subprocess.run([*LW, "batch", str(tasks), "-o", str(out), "--isolate", mode, "--concurrency", "3",
                            *BATCH_FLAGS], env=env_for(srv, tmp_path), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
    assert _git(repo, "status", "--porcelain") == "" and not (repo / "out.txt").exists()
    results = read_results(out)
    assert len(results) == 3
    for x in results:
        assert "out.txt" in x["diff_stat"], x
        if mode == "copy":
            assert (Path(x["workspace"]) / "out.txt").read_text() == f"done {x['id']}\n"
        else:
            assert not Path(x["workspace"]).exists(), "the worktree is removed after the task"
            patch = Path(x["patch"]).read_text()
            assert f"+done {x['id']}" in patch
    if mode == "worktree":
        assert _git(repo, "worktree", "list").count("\n") == 1


# --- the whole-batch budget ------------------------------------------------------------------------------

def _echo() -> lw.Tool:
    return lw.Tool("echo", "echo", {"type": "object"}, lambda x: "ok", read_only=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(costs=st.lists(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=5), min_size=1, max_size=8),
       budget=st.floats(0.05, 4.0), concurrency=st.integers(1, 4))
def test_whole_batch_budget_bound(tmp_path: Path, costs: list[list[float]], budget: float, concurrency: int) -> None:
    """No call starts at S >= B, and the total stays below B + C * c_max."""
    ex = LocalExecutor()
    started_at: list[float] = []

    def model_for(task_costs: list[float]) -> lw.ScriptedModel:
        def fn(h: list[dict[str, Any]]) -> Any:
            assert ex.spend is not None
            started_at.append(ex.spend.spent_usd)
            k = sum(1 for m in h if m["role"] == "assistant")
            if k + 1 < len(task_costs):
                return {"content": [use(f"e{k}", "echo")], "delay": 0.001}
            return {"content": [text("done")], "delay": 0.001}
        return lw.ScriptedModel(fn, cost_per_call_usd=lambda k: task_costs[k - 1])

    tasks = []
    for i, c in enumerate(costs):
        d = tempfile.mkdtemp(dir=tmp_path)  # a cwd of its own (hypothesis reuses tmp_path)
        tasks.append(Task(f"t{i}", f"task t{i}: go", d, {"model": model_for(c)}))

    async def go() -> list[dict[str, Any]]:
        base = lw.AgentOptions(tools=[_echo()], sessions_dir=tmp_path / "sessions")
        return [r async for r in batch(tasks, base, concurrency=concurrency, executor=ex, max_budget_usd=budget)]

    results = asyncio.run(go())
    assert sorted(r["id"] for r in results) == sorted(t.id for t in tasks)
    total = sum(float(r["total_cost_usd"]) for r in results)
    c_max = max(max(c) for c in costs)
    assert all(s < budget for s in started_at), "a model call started at S >= B"
    assert total < budget + concurrency * c_max + 1e-9
    assert ex.spend is not None and abs(ex.spend.spent_usd - total) < 1e-9
    for r in results:
        if r["subtype"] == "skipped_budget":
            assert r["model_calls"] == 0 and r["total_cost_usd"] == 0
    if total < budget:
        assert all(r["subtype"] == "success" for r in results)


def test_retries_only_error_during_execution(tmp_path: Path) -> None:
    from loopwright.models.base import ModelError

    attempts: dict[str, int] = {}

    def model_for(tid: str, fail_times: int) -> lw.ScriptedModel:
        def fn(h: list[dict[str, Any]]) -> Any:
            attempts[tid] = attempts.get(tid, 0) + 1
            if attempts[tid] <= fail_times:
                raise ModelError("the API is down")
            return [text("ok")]
        return lw.ScriptedModel(fn)

    dirs = [tmp_path / f"d{i}" for i in range(2)]
    for d in dirs:
        d.mkdir()
    tasks = [Task("flaky", "task flaky: go", str(dirs[0]), {"model": model_for("flaky", 2), "max_retries": 0}),
             Task("down", "task down: go", str(dirs[1]), {"model": model_for("down", 99), "max_retries": 0})]

    async def go() -> dict[str, dict[str, Any]]:
        return {r["id"]: r async for r in batch(tasks, lw.AgentOptions(), retries=2, retry_base_s=0.01)}

    rs = asyncio.run(go())
    assert rs["flaky"]["subtype"] == "success" and rs["flaky"]["attempts"] == 3
    assert rs["down"]["subtype"] == "error_during_execution" and rs["down"]["attempts"] == 3


# --- Ray -----------------------------------------------------------------------------------------------

try:
    import ray
except ImportError:  # an optional extra
    ray = None


@pytest.fixture(scope="module")
def local_ray() -> Any:
    if ray is None:
        pytest.skip("Ray is not installed (pip install 'loopwright[ray]')")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_the_same_tasks_on_ray_give_the_same_results(tmp_path: Path, local_ray: Any) -> None:
    tasks = write_tasks(tmp_path, 20)
    out = tmp_path / "results.jsonl"
    with ScriptedServer(WriteAgent(delay=0.02)) as srv:
        # --ray auto: the local Ray the fixture started
        r = subprocess.run([*LW, "batch", str(tasks), "-o", str(out), "--concurrency", "4", "--ray", "auto",
                            *BATCH_FLAGS], env=env_for(srv, tmp_path), capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        assert len(srv.loop_requests) == 40
    results = read_results(out)
    assert sorted(x["id"] for x in results) == sorted(f"t{i}" for i in range(20))
    assert all(x["subtype"] == "success" and x["model_calls"] == 2 for x in results)
    assert len({x["worker"] for x in results}) >= 2, "tasks ran in Ray's worker processes"
    assert all(x["worker"].split(":")[1] != str(os.getpid()) for x in results)
    for i in range(20):
        assert (tmp_path / f"repo{i}" / "out.txt").read_text() == f"done t{i}\n"


def test_a_ray_worker_killed_mid_task_has_its_task_rerun(tmp_path: Path, local_ray: Any) -> None:
    work = tmp_path / "w"
    work.mkdir()
    seen: list[int] = []

    def agent(h: list[dict[str, Any]]) -> Any:
        if len(h) == 1:
            seen.append(1)
            if len(seen) == 1:  # first attempt: a long command, during which the worker is killed
                return [use("b1", "Bash", command="echo $PPID > worker.pid; sleep 60")]
            return [use("b2", "Bash", command="echo second > out.txt")]
        return [text("done")]

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "k", "prompt": "task k: go", "cwd": str(work)}) + "\n")
    out = tmp_path / "results.jsonl"
    with ScriptedServer(agent) as srv:
        p = subprocess.Popen([*LW, "batch", str(tasks), "-o", str(out), "--ray", "auto", "--retries", "2",
                              "--permission-mode", "bypassPermissions", "--model", MODEL, "--setting-sources", ""],
                             env=env_for(srv, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (work / "worker.pid").exists() or not (work / "worker.pid").read_text().strip():
            assert time.monotonic() < deadline and p.poll() is None, "the task never started"
            time.sleep(0.1)
        pid = int((work / "worker.pid").read_text())
        assert pid != p.pid
        os.kill(pid, signal.SIGKILL)
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
    results = read_results(out)
    assert [x["id"] for x in results] == ["k"] and results[0]["subtype"] == "success"
    assert (work / "out.txt").read_text() == "second\n" and len(seen) == 2


def test_resume_sessions_continues_a_task_killed_mid_run(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    histories: list[list[dict[str, Any]]] = []

    def agent(h: list[dict[str, Any]]) -> Any:
        histories.append(h)
        if len(h) == 1:  # the first attempt: a long command, during which the batch is killed
            return [use("b1", "Bash", command="touch started; sleep 60")]
        return [text("finished after resuming")]

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "r", "prompt": "task r: go", "cwd": str(work)}) + "\n")
    out = tmp_path / "results.jsonl"
    flags = ["--permission-mode", "bypassPermissions", "--model", MODEL, "--setting-sources", ""]
    with ScriptedServer(agent) as srv:
        env = env_for(srv, tmp_path)
        p = subprocess.Popen([*LW, "batch", str(tasks), "-o", str(out), "--resume-sessions", *flags], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 120
        while not (work / "started").exists():
            assert time.monotonic() < deadline and p.poll() is None
            time.sleep(0.05)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        assert read_results(out) == []
        r = subprocess.run([*LW, "batch", str(tasks), "-o", str(out), "--resume-sessions", *flags], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
    res = read_results(out)
    assert [x["id"] for x in res] == ["r"] and res[0]["result"] == "finished after resuming"
    resumed = histories[-1]
    # the resumed conversation: the first prompt, the Bash call (interrupted by the kill), the nudge
    assert first_text(resumed) == "task r: go" and resumed[1]["content"][0]["name"] == "Bash"
    assert "interrupted" in json.dumps(resumed[2]).lower() and "Continue the task" in json.dumps(resumed[-1])
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
