"""Room: batch (a front end, beside cli). Owns batches of runs and `loopwright batch`; may import assemble and below, and cli.

Many agent runs at once: `loopwright batch TASKS.jsonl -o RESULTS.jsonl` and `lw.batch(...)`.

Owns: reading and checking a task list, running each task as one agent run (in place, in a copy
or in a git worktree), the results file (appended atomically line by line, read back tolerating
a torn last line, so a killed batch resumes without losing or repeating a finished task), the
whole-batch budget, retries and time limits, progress, and the Ray executor. A top room: imports
loop, options, usage, sessions; nothing below imports it. Ray is imported only with `--ray`.

The whole-batch budget is seed Prop 5.4 lifted to a batch: one shared spend S, charged as each
response of any task is charged; every model call of every task starts only while S < B (the
loop checks its budget before each call), and no task starts at S >= B. With C tasks in flight
the total stays below B + C * c_max.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .extras import MissingExtra, require
from .messages import ResultMessage
from .options import AgentOptions
from .telemetry import batch_context, end_batch, flush, task_context
from .usage import SharedSpend

Isolation = Literal["none", "copy", "worktree"]
ISOLATIONS: tuple[str, ...] = ("none", "copy", "worktree")
# AgentOptions fields a task line may not set: they are objects, or the batch's own business.
NOT_PER_TASK = frozenset({"tools", "can_use_tool", "hooks", "session_store", "resume", "fork_session",
                          "continue_conversation", "session_id", "persist_session", "agents"})
RETRY_BASE_S = 1.0
# What a Ray worker needs from the driver's environment to reach the same model and keep
# transcripts in the same place.
RAY_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
           "LOOPWRIGHT_HOME", "LOOPWRIGHT_SESSIONS_DIR", "LOOPWRIGHT_MODEL")


class BatchError(ValueError):
    """Bad input to a batch (each problem with its line number); nothing was run."""


# --- the shared spend -----------------------------------------------------------------------------

class LocalSpend:
    """The batch's S against B (usage.SharedSpend) in this process: the tasks run on one event
    loop, so no lock is needed."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit_usd = limit_usd
        self._spent = 0.0

    def add(self, usd: float) -> None:
        self._spent += usd

    @property
    def spent_usd(self) -> float:
        return self._spent

    @property
    def exhausted(self) -> bool:
        return self.limit_usd is not None and self._spent >= self.limit_usd


# --- tasks ----------------------------------------------------------------------------------------

@dataclass
class Task:
    """One line of TASKS.jsonl: `id`, `prompt`, `cwd` and per-task AgentOptions overrides."""

    id: str
    prompt: str
    cwd: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    line: int = 0

    @property
    def fingerprint(self) -> str:
        """Ties a result line to the task it answers (a different task list is detected)."""
        body = json.dumps({"prompt": self.prompt, "cwd": self.cwd, "options": self.options}, sort_keys=True,
                          default=lambda o: type(o).__name__)  # a Model or Tool object given in Python
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], line: int = 0) -> Task:
        rest = {k: v for k, v in obj.items() if k not in ("id", "prompt", "cwd")}
        return cls(id=obj["id"], prompt=obj["prompt"], cwd=obj.get("cwd"), options=rest, line=line)


def _option_names() -> set[str]:
    return {f.name for f in dataclasses.fields(AgentOptions)} - NOT_PER_TASK


def check_tasks(raw: Iterable[tuple[int, Any]], base_cwd: Path | None = None,
                problems: list[str] | None = None) -> list[Task]:
    """Every task checked before anything runs; all problems (with those of `problems`, found
    before) reported at once, by line."""
    problems = list(problems or [])
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    names = _option_names()
    for line, obj in raw:
        where = f"line {line}"
        if not isinstance(obj, dict):
            problems.append(f"{where}: a task must be a JSON object")
            continue
        tid = obj.get("id")
        if not isinstance(tid, str | int) or isinstance(tid, bool) or str(tid) == "":
            problems.append(f"{where}: \"id\" is missing (a non-empty string)")
        elif str(tid) in seen:
            problems.append(f"{where}: duplicate id {str(tid)!r} (first on line {seen[str(tid)]})")
        else:
            seen[str(tid)] = line
        if not isinstance(obj.get("prompt"), str) or not obj["prompt"].strip():
            problems.append(f"{where}: \"prompt\" is missing (a non-empty string)")
        cwd = obj.get("cwd")
        if cwd is not None:
            p = Path(str(cwd)).expanduser()
            p = p if p.is_absolute() or base_cwd is None else base_cwd / p
            if not isinstance(cwd, str) or not p.is_dir():
                problems.append(f"{where}: cwd {cwd!r} is not a directory")
            else:
                obj = {**obj, "cwd": str(p.resolve())}
        unknown = sorted(k for k in obj if k not in ("id", "prompt", "cwd") and k not in names)
        if unknown:
            problems.append(f"{where}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                            "(per-task options are AgentOptions field names in snake_case, e.g. model, max_turns)")
        if not problems or problems[-1].split(":")[0] != where:
            tasks.append(Task.from_json({**obj, "id": str(obj["id"])}, line))
    if problems:
        problems.sort(key=lambda p: int(p.split(":")[0].split()[1]))  # in line order (stable)
        raise BatchError("bad task list, nothing was run:\n  " + "\n  ".join(problems))
    return tasks


def read_tasks(path: str | Path) -> list[Task]:
    """TASKS.jsonl: one JSON object a line (blank lines and `#` comments skipped)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise BatchError(f"{path}: cannot read the task list ({e})") from None
    raw: list[tuple[int, Any]] = []
    bad: list[str] = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            raw.append((i, json.loads(line)))
        except ValueError as e:
            bad.append(f"line {i}: not JSON ({e.args[0] if e.args else e})")
    tasks = check_tasks(raw, p.resolve().parent, bad)
    if not tasks:
        raise BatchError(f"{path}: no tasks")
    return tasks


# --- the results file -----------------------------------------------------------------------------

class ResultsFile:
    """RESULTS.jsonl: one line per finished task, appended with one write each and fsynced, so a
    batch killed at any instant leaves whole lines (at most a torn last one, healed on reopen)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def read(self) -> dict[str, dict[str, Any]]:
        """The last result of each task id; a torn or corrupt line is skipped."""
        out: dict[str, dict[str, Any]] = {}
        if not self.path.exists():
            return out
        for raw in self.path.read_bytes().split(b"\n"):
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("id"), str):
                out[obj["id"]] = obj
        return out

    def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":  # a torn last line: end it so ours starts whole
                    os.write(self._fd, b"\n")

    def append(self, result: Mapping[str, Any]) -> None:
        assert self._fd is not None
        os.write(self._fd, (json.dumps(result, ensure_ascii=False, default=str) + "\n").encode())
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def finished(result: Mapping[str, Any]) -> bool:
    """A result that ends its task for good (a skipped task is run by the next rerun)."""
    return result.get("subtype") != "skipped_budget"


# --- running one task ------------------------------------------------------------------------------

@dataclass
class RunSpec:
    """Everything a worker needs to run one task (picklable, for Ray)."""

    task: Task
    options: AgentOptions
    isolate: Isolation = "none"
    timeout_s: float | None = None
    retries: int = 0
    workdir: Path | None = None  # where copies and patches go (beside RESULTS)
    retry_base_s: float = RETRY_BASE_S
    # Session ids are derived from the results file and the task, so a rerun can find the
    # transcript of an attempt that was killed, and --resume-sessions continues it.
    session_seed: str | None = None
    resume_sessions: bool = False
    own_system_prompt: bool = False  # the CLI's default prompt: it names the cwd, so a workspace gets its own
    trace: dict[str, str] = field(default_factory=dict)  # telemetry: the batch span's context (and OTEL_*)

    def session_id(self, attempt: int) -> str | None:
        if self.session_seed is None:
            return None
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.session_seed}#{self.task.id}#{self.task.fingerprint}#{attempt}"))


def _git(cwd: str | Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=120)


class Workspace:
    """Where a task runs: its own cwd, a copy of it, or a fresh git worktree (removed after,
    its diff kept as a patch)."""

    def __init__(self, spec: RunSpec, attempt: int, reuse: bool = False) -> None:
        self.spec = spec
        self.reuse = reuse
        self.source = Path(spec.options.cwd or os.getcwd())
        self.path = self.source
        base = spec.workdir or Path.cwd()
        self.target = base / "workspaces" / f"{_safe(spec.task.id)}-{attempt}"

    def __enter__(self) -> Workspace:
        mode = self.spec.isolate
        if mode != "none" and self.reuse and self.target.is_dir():  # a resumed session goes on in its files
            self.path = self.target
        elif mode == "copy":
            shutil.rmtree(self.target, ignore_errors=True)
            shutil.copytree(self.source, self.target, symlinks=True)
            self.path = self.target
        elif mode == "worktree":
            shutil.rmtree(self.target, ignore_errors=True)
            _git(self.source, "worktree", "prune")  # a batch killed mid-task left its registration
            r = _git(self.source, "worktree", "add", "--detach", str(self.target), "HEAD")
            if r.returncode != 0:
                raise RuntimeError(f"git worktree add failed in {self.source}: {r.stderr.strip()}")
            self.path = self.target
        return self

    def report(self) -> dict[str, Any]:
        """The workspace, its `git diff --stat`, and (worktree) the patch file."""
        if self.spec.isolate == "none":
            return {}
        out: dict[str, Any] = {"workspace": str(self.path)}
        if _git(self.path, "rev-parse", "--git-dir").returncode == 0:
            _git(self.path, "add", "-A", "--intent-to-add")  # new files show in the diff too
            out["diff_stat"] = _git(self.path, "diff", "--stat").stdout.rstrip()
            if self.spec.isolate == "worktree":
                patch = (self.spec.workdir or Path.cwd()) / "patches" / f"{_safe(self.spec.task.id)}.patch"
                patch.parent.mkdir(parents=True, exist_ok=True)
                patch.write_text(_git(self.path, "diff", "--binary").stdout)
                out["patch"] = str(patch)
        return out

    def __exit__(self, *exc: object) -> None:
        if self.spec.isolate == "worktree":
            _git(self.source, "worktree", "remove", "--force", str(self.target))
            shutil.rmtree(self.target, ignore_errors=True)


def _safe(task_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in task_id)[:80] or "task"


RESUME_PROMPT = "The run was interrupted before it finished. Continue the task from where you left off."


def _resumable(spec: RunSpec, options: AgentOptions) -> str | None:
    """The session of this task's first attempt in an earlier, killed batch, if one was saved."""
    sid = spec.session_id(1)
    if not spec.resume_sessions or sid is None:
        return None
    from .sessions import store_for

    return sid if store_for(options).exists(sid, Path(options.cwd or ".")) else None


async def _attempt(spec: RunSpec, cwd: Path, spend: SharedSpend | None, attempt: int,
                   resume: str | None) -> ResultMessage:
    """One agent run of the task in `cwd`, its budget tied to the batch's spend."""
    from .assemble import build_run
    from .loop import run_query

    sid = None if resume else spec.session_id(attempt)
    if sid is not None:
        from .sessions import store_for

        if store_for(spec.options).exists(sid, cwd):  # an earlier, killed batch's: start afresh
            sid = None
    options = dataclasses.replace(spec.options, cwd=str(cwd), resume=resume, session_id=sid)
    if spec.own_system_prompt and str(cwd) != spec.options.cwd:  # else the agent is told the original's path
        from .prompts import default_system_prompt

        options = dataclasses.replace(options, system_prompt=default_system_prompt(cwd, options.tools))
    prompt = RESUME_PROMPT if resume else spec.task.prompt
    run = build_run(options, prompt, shared_spend=spend)
    result: ResultMessage | None = None
    async with contextlib.aclosing(run_query(run, prompt)) as stream:
        async for msg in stream:
            if isinstance(msg, ResultMessage):
                result = msg
    assert result is not None
    return result


def _error_result(message: str, session_id: str = "") -> dict[str, Any]:
    return {"type": "result", "subtype": "error_during_execution", "is_error": True, "num_turns": 0,
            "model_calls": 0, "result": message, "session_id": session_id, "total_cost_usd": 0.0,
            "errors": [message]}


async def run_task(spec: RunSpec, spend: SharedSpend | None) -> dict[str, Any]:
    """Run one task to its result line: retries of error_during_execution (with backoff),
    a time limit per attempt, and the workspace it asked for."""
    with task_context(spec.task.id, spec.trace):  # telemetry: the task's span, under the batch's
        return await _run_task(spec, spend)


async def _run_task(spec: RunSpec, spend: SharedSpend | None) -> dict[str, Any]:
    started = time.monotonic()
    attempts = 0
    line: dict[str, Any] = {}
    cost = 0.0
    while True:
        attempts += 1
        try:
            resume = _resumable(spec, spec.options) if attempts == 1 else None
            with Workspace(spec, attempts, reuse=resume is not None) as ws:
                if resume is not None and ws.path != Path(spec.options.cwd or "."):
                    resume = _resumable(spec, dataclasses.replace(spec.options, cwd=str(ws.path)))
                try:
                    result = await asyncio.wait_for(_attempt(spec, ws.path, spend, attempts, resume), spec.timeout_s)
                    line = result.to_json()
                except TimeoutError:
                    line = _error_result(f"timed out after {spec.timeout_s:g} s")
                line.update(ws.report())
        except Exception as e:  # a workspace or harness failure is this task's result, not the batch's end
            line = _error_result(f"{type(e).__name__}: {e}")
        cost += float(line.get("total_cost_usd") or 0.0)
        if line.get("subtype") != "error_during_execution" or attempts > spec.retries:
            break
        if spend is not None and spend.exhausted:
            break
        await asyncio.sleep(spec.retry_base_s * 2 ** (attempts - 1))
    return {"id": spec.task.id, **line, "total_cost_usd": cost, "attempts": attempts,
            "duration_ms": int((time.monotonic() - started) * 1000),
            "worker": f"{socket.gethostname()}:{os.getpid()}", "task_sha256": spec.task.fingerprint}


# --- executors ---------------------------------------------------------------------------------------

class LocalExecutor:
    """Tasks as asyncio tasks in this process, at most `concurrency` at once."""

    def __init__(self) -> None:
        self.spend: SharedSpend | None = None

    def make_spend(self, limit_usd: float | None) -> SharedSpend:
        self.spend = LocalSpend(limit_usd)
        return self.spend

    async def run(self, spec: RunSpec) -> dict[str, Any]:
        return await run_task(spec, self.spend)

    async def aclose(self) -> None:
        return None


class RayExecutor:
    """Each task a Ray task on a local Ray (`address=None`) or a running cluster (`"auto"`,
    `"ray://host:10001"`). The spend lives in a Ray actor; results come back to the driver,
    which alone writes RESULTS. A worker that dies has its task rerun by Ray (`retries`)."""

    def __init__(self, address: str | None = None, retries: int = 2, num_cpus: int | None = None) -> None:
        require("loopwright batch --ray", "ray", "ray")
        import ray  # only here: Ray is an optional extra

        self.ray = ray
        self.retries = retries
        if not ray.is_initialized():
            # Workers run where the cluster started them: they get the driver's provider settings.
            env = {k: v for k in RAY_ENV if (v := os.environ.get(k)) is not None}
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "ignore_reinit_error": True, "runtime_env": {"env_vars": env}}
            if address is None:
                kwargs["num_cpus"] = num_cpus or os.cpu_count() or 1
            ray.init(address=address, **kwargs)
            self._own = True
        else:
            self._own = False
        self._remote = ray.remote(max_retries=retries, retry_exceptions=False)(_ray_run_task)
        self.spend: RaySpend | None = None
        self._tally = LocalSpend(None)

    def make_spend(self, limit_usd: float | None) -> SharedSpend:
        if limit_usd is None:  # nothing to hold back: the driver sums the results
            self.spend = None
            self._tally = LocalSpend(None)
            return self._tally
        # One actor per driver holds the S of each of its batches: a batch does not wait for a
        # process to start. It is kept here (Ray ends an actor when its last handle goes) and
        # ends with the driver's Ray job.
        job = self.ray.get_runtime_context().get_job_id()
        if job not in _SPEND_ACTORS:
            _SPEND_ACTORS[job] = self.ray.remote(_SpendActor).options(num_cpus=0).remote()
        self.spend = RaySpend(_SPEND_ACTORS[job], uuid.uuid4().hex, limit_usd)
        return self.spend

    async def run(self, spec: RunSpec) -> dict[str, Any]:
        spend = self.spend
        ref = self._remote.options(num_cpus=0.5).remote(spec, spend.actor if spend else None,
                                                        spend.batch if spend else "", spend.limit_usd if spend else None)
        try:
            out: dict[str, Any] = await ref
        except asyncio.CancelledError:  # the batch stopped: so does the task (else it runs and spends on)
            self.ray.cancel(ref, force=True)
            raise
        except self.ray.exceptions.RayError as e:  # retries exhausted (worker deaths)
            out = {"id": spec.task.id, **_error_result(f"Ray task failed: {type(e).__name__}: {e}"),
                   "task_sha256": spec.task.fingerprint}
        if spend is None:
            self._tally.add(float(out.get("total_cost_usd") or 0.0))
        return out

    async def aclose(self) -> None:
        if self.spend is not None:
            self.spend.actor.drop.remote(self.spend.batch)
            self.spend = None
        if self._own:
            self.ray.shutdown()


_SPEND_ACTORS: dict[str, Any] = {}  # Ray job id -> the spend actor of this driver


class _SpendActor:
    """The spend S of each batch (by batch id) of one driver, held by one Ray actor for every worker."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    def add(self, batch: str, usd: float) -> float:
        self.spent[batch] = self.spent.get(batch, 0.0) + usd
        return self.spent[batch]

    def get(self, batch: str) -> float:
        return self.spent.get(batch, 0.0)

    def drop(self, batch: str) -> None:
        self.spent.pop(batch, None)


class RaySpend:
    """A worker's (or the driver's) view of a batch's S in the actor: each charge and each check
    is a call to the actor."""

    def __init__(self, actor: Any, batch: str, limit_usd: float | None) -> None:
        self.actor = actor
        self.batch = batch
        self.limit_usd = limit_usd

    def add(self, usd: float) -> None:
        import ray

        ray.get(self.actor.add.remote(self.batch, usd))

    @property
    def spent_usd(self) -> float:
        import ray

        return float(ray.get(self.actor.get.remote(self.batch)))

    @property
    def exhausted(self) -> bool:
        return self.limit_usd is not None and self.spent_usd >= self.limit_usd


def _ray_run_task(spec: RunSpec, actor: Any, batch: str, limit_usd: float | None) -> dict[str, Any]:
    """The Ray task: runs in a worker process."""
    try:
        return asyncio.run(run_task(spec, RaySpend(actor, batch, limit_usd) if actor is not None else None))
    finally:
        flush()  # the worker lives on: its spans leave now


Executor = LocalExecutor | RayExecutor


# --- the batch -------------------------------------------------------------------------------------

@dataclass
class BatchConfig:
    """How a batch runs: concurrency, the whole-batch budget, isolation, retries, time limits and
    the results file."""

    concurrency: int = 4
    max_budget_usd: float | None = None
    isolate: Isolation = "none"
    retries: int = 0
    timeout_s: float | None = None
    results: Path | None = None  # RESULTS.jsonl: resumable when given
    force: bool = False
    retry_base_s: float = RETRY_BASE_S
    own_system_prompt: bool = False  # the CLI's default prompt: rebuilt per task cwd
    resume_sessions: bool = False  # a task killed mid-run continues its session instead of restarting


def task_options(base: AgentOptions, task: Task, own_system_prompt: bool = False) -> AgentOptions:
    """The base options with the task's cwd and overrides; its transcript is kept.
    `own_system_prompt`: the CLI's default system prompt names the cwd, so each task gets its own."""
    # Paths are settled here, in the driver: a Ray worker's cwd and environment are not ours.
    cwd = str(Path(task.cwd or base.cwd or os.getcwd()).resolve())
    over = dict(task.options)
    if base.sessions_dir is None and base.session_store is None and "sessions_dir" not in over:
        from .sessions import sessions_root

        over["sessions_dir"] = str(sessions_root())
    if own_system_prompt and "system_prompt" not in over:
        from .prompts import default_system_prompt

        over["system_prompt"] = default_system_prompt(Path(cwd), base.tools)
    return dataclasses.replace(base, cwd=cwd, persist_session=True, session_id=None, resume=None,
                               continue_conversation=False, fork_session=False, **over)


def plan(tasks: Sequence[Task], base: AgentOptions, cfg: BatchConfig) -> list[RunSpec]:
    """Each task's run, built (and so checked) before anything starts."""
    problems = []
    if cfg.isolate not in ISOLATIONS:
        raise BatchError(f"--isolate must be one of {', '.join(ISOLATIONS)}, got {cfg.isolate!r}")
    if cfg.concurrency < 1:
        raise BatchError(f"--concurrency must be 1 or more, got {cfg.concurrency}")
    specs = []
    # copies and patches go beside RESULTS (else in the driver's cwd), an absolute path for Ray workers
    workdir = (cfg.results.resolve().with_suffix(".work") if cfg.results
               else None if cfg.isolate == "none" else Path.cwd().resolve())
    for t in tasks:
        try:
            opts = task_options(base, t, cfg.own_system_prompt)
        except (TypeError, ValueError) as e:
            problems.append(f"line {t.line} (id {t.id}): {e}")
            continue
        specs.append(RunSpec(t, opts, cfg.isolate, cfg.timeout_s, cfg.retries, workdir, cfg.retry_base_s,
                             str(cfg.results.resolve()) if cfg.results else None, cfg.resume_sessions,
                             cfg.own_system_prompt and "system_prompt" not in t.options))
    if cfg.isolate == "none" and cfg.concurrency > 1:
        by_cwd: dict[str, list[str]] = {}
        for s in specs:
            by_cwd.setdefault(str(Path(s.options.cwd or ".").resolve()), []).append(
                f"{s.task.id} (line {s.task.line})" if s.task.line else s.task.id)
        for cwd, ids in by_cwd.items():
            if len(ids) > 1:
                problems.append(f"tasks {', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''} share the cwd {cwd}: "
                                "with --isolate none they would edit the same files at once (use --isolate copy "
                                "or worktree, separate cwds, or --concurrency 1)")
    if cfg.isolate == "worktree":
        for s in specs:
            if _git(s.options.cwd or ".", "rev-parse", "--verify", "HEAD").returncode != 0:
                problems.append(f"line {s.task.line} (id {s.task.id}): --isolate worktree needs a git repository "
                                f"with a commit in {s.options.cwd}")
    if problems:
        raise BatchError("nothing was run:\n  " + "\n  ".join(problems))
    return specs


async def batch(tasks: Iterable[Task | Mapping[str, Any]], options: AgentOptions | None = None, *,
                concurrency: int = 4, executor: Executor | None = None, max_budget_usd: float | None = None,
                isolate: Isolation = "none", retries: int = 0, timeout: float | None = None,
                results: str | Path | None = None, force: bool = False, resume_sessions: bool = False,
                retry_base_s: float = RETRY_BASE_S) -> AsyncIterator[dict[str, Any]]:
    """Run many tasks, yielding each result (a dict: the task `id` and the `-p` JSON result
    fields, plus duration_ms, worker, attempts and, with isolation, the workspace) as it
    finishes. With `results=`, finished tasks are appended there and a rerun skips them."""
    items = list(tasks)
    task_list = [t for t in items if isinstance(t, Task)]
    raw = [(i + 1, dict(t)) for i, t in enumerate(items) if not isinstance(t, Task)]
    if raw:
        task_list += check_tasks(raw)
    cfg = BatchConfig(concurrency, max_budget_usd, isolate, retries, timeout,
                      Path(results) if results is not None else None, force, retry_base_s,
                      resume_sessions=resume_sessions)
    async for r in _batch(task_list, options or AgentOptions(), cfg, executor or LocalExecutor()):
        yield r


def prepare(tasks: list[Task], base: AgentOptions, cfg: BatchConfig) -> tuple[list[RunSpec], dict[str, dict[str, Any]]]:
    """Every check that needs no worker: the runs (plan) and the results file's earlier results
    (refused when they answer a different task list, unless `force`). BatchError if bad."""
    specs = plan(tasks, base, cfg)
    done: dict[str, dict[str, Any]] = ResultsFile(cfg.results).read() if cfg.results else {}
    by_id = {t.id: t for t in tasks}
    if not cfg.force:
        foreign = [i for i, r in done.items() if i not in by_id or r.get("task_sha256") != by_id[i].fingerprint]
        if foreign:
            raise BatchError(f"{cfg.results} holds results of a different task list (ids {', '.join(foreign[:5])}"
                             f"{' ...' if len(foreign) > 5 else ''} are not these tasks); use another -o, or --force")
    return specs, done


async def _batch(tasks: list[Task], base: AgentOptions, cfg: BatchConfig, ex: Executor,
                 progress: Progress | None = None) -> AsyncIterator[dict[str, Any]]:
    try:
        specs, done = prepare(tasks, base, cfg)
    except BatchError:
        await ex.aclose()
        raise
    store = ResultsFile(cfg.results) if cfg.results else None
    earlier = {s.task.id: done[s.task.id] for s in specs if s.task.id in done and finished(done[s.task.id])}
    todo = [s for s in specs if s.task.id not in earlier]
    carrier, batch_span = batch_context(len(todo))  # telemetry: the batch's span (none when off)
    if carrier:
        todo = [dataclasses.replace(s, trace=carrier) for s in todo]
    spend = ex.make_spend(cfg.max_budget_usd)
    if progress is not None:
        progress.start(len(specs), earlier)
    if store is not None:
        store.open()
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    slots = asyncio.Semaphore(cfg.concurrency)
    running: set[asyncio.Task[None]] = set()

    async def one(spec: RunSpec) -> None:
        try:
            if progress is not None:
                progress.started(spec.task.id)
            r = await ex.run(spec)
        except Exception as e:  # noqa: BLE001 - a task's failure is its result
            r = {"id": spec.task.id, **_error_result(f"{type(e).__name__}: {e}"), "task_sha256": spec.task.fingerprint}
        finally:
            slots.release()
        if r.get("subtype") == "error_max_budget_usd" and not r.get("model_calls"):
            r["subtype"] = "skipped_budget"  # S reached B between its start and its first call
        await queue.put(r)

    async def launch() -> None:
        for spec in todo:
            await slots.acquire()
            if spend.exhausted:  # no task starts at S >= B
                slots.release()
                await queue.put({"id": spec.task.id, "subtype": "skipped_budget", "is_error": True,
                                 "num_turns": 0, "model_calls": 0, "total_cost_usd": 0.0,
                                 "result": f"not started: the batch spent ${spend.spent_usd:.4f} of "
                                           f"${cfg.max_budget_usd}", "task_sha256": spec.task.fingerprint})
                continue
            t = asyncio.create_task(one(spec))
            running.add(t)
            t.add_done_callback(running.discard)

    launcher = asyncio.create_task(launch())
    try:
        for _ in range(len(todo)):
            r = await queue.get()
            if store is not None:
                store.append(r)
            if progress is not None:
                progress.finished(r, spend.spent_usd)
            yield r
        await launcher
    finally:
        launcher.cancel()
        for t in list(running):
            t.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(launcher, *running, return_exceptions=True)
        if store is not None:
            store.close()
        await ex.aclose()
        end_batch(batch_span)


# --- progress on stderr -------------------------------------------------------------------------------

class Progress:
    """Progress on stderr: a live rich display (done / running / failed, spend, ETA, a line per
    finished task above it) on a terminal, else one plain line per finished task (CI, pipes, logs);
    then a summary of the whole results file, earlier runs' results included."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self.live = _isatty(self.stream)
        self.total = 0
        self.earlier: dict[str, dict[str, Any]] = {}  # finished results of these tasks from earlier runs
        self.results: list[dict[str, Any]] = []
        self.running: set[str] = set()
        self.spent = 0.0
        self.t0 = time.monotonic()
        self._bar: Any = None  # rich.progress.Progress, on a terminal
        self._bar_task: Any = None

    def start(self, total: int, earlier: Mapping[str, dict[str, Any]]) -> None:
        self.total, self.earlier = total, dict(earlier)
        self.t0 = time.monotonic()
        if self.live:
            import rich.progress as rp
            from rich.console import Console

            self._bar = rp.Progress(rp.SpinnerColumn(), rp.TextColumn("batch"), rp.BarColumn(),
                                    rp.MofNCompleteColumn(), rp.TextColumn("{task.fields[status]}", markup=False),
                                    rp.TimeElapsedColumn(), redirect_stdout=False,
                                    console=Console(file=self.stream, highlight=False))
            self._bar_task = self._bar.add_task("batch", total=total, completed=len(earlier), status=self._status())
            self._bar.start()
        if earlier:
            self._print(f"{len(earlier)} of {total} tasks already in the results file; "
                        f"running the other {total - len(earlier)}")

    def started(self, task_id: str) -> None:
        self.running.add(task_id)
        self._update()

    def finished(self, r: dict[str, Any], spent: float) -> None:
        self.running.discard(str(r.get("id")))
        self.results.append(r)
        self.spent = spent
        cost, secs = float(r.get("total_cost_usd") or 0), float(r.get("duration_ms") or 0) / 1000
        if self._bar is not None:
            from rich.text import Text

            mark = ("✓", "green") if r.get("subtype") == "success" else ("✗", "red")
            self._bar.console.print(Text.assemble(mark, f" {r.get('id')}: {r.get('subtype')} ${cost:.4f} {secs:.1f}s"))
            self._update(advance=1)
        else:
            self._print(f"[{len(self.results) + len(self.earlier)}/{self.total}] {r.get('id')}: {r.get('subtype')} "
                        f"${cost:.4f} {secs:.1f}s · {self._status()}")

    def close(self) -> None:
        """Ends the live display (the terminal is the user's again); idempotent."""
        if self._bar is not None:
            self._update()
            self._bar.stop()
            self._bar = None

    def _failed(self) -> int:  # of the whole batch, as done is
        return sum(1 for x in [*self.earlier.values(), *self.results] if x.get("is_error"))

    def _status(self) -> str:
        left = self.total - len(self.earlier) - len(self.results)
        # the rate of this run's tasks; the earlier ones took no time of this run
        eta = (f"{(time.monotonic() - self.t0) / len(self.results) * left:.0f}s" if self.results and left
               else "0s" if not left else "?")
        return f"running {len(self.running)} · failed {self._failed()} · spent ${self.spent:.4f} · ETA {eta}"

    def _update(self, advance: int = 0) -> None:
        if self._bar is not None:
            self._bar.update(self._bar_task, advance=advance, status=self._status())

    def summary(self) -> str:
        """The whole batch as the results file now has it: this run's results over earlier ones."""
        this = {str(r.get("id")): r for r in self.results}
        rs = list({**self.earlier, **this}.values())
        wall = f"{len(this)} run this time in {time.monotonic() - self.t0:.1f}s" + (
            f", {len(self.earlier)} recorded earlier" if self.earlier else "")
        if not rs:
            return f"nothing to run ({wall})"
        ok = sum(1 for r in rs if r.get("subtype") == "success")
        turns = [int(r.get("num_turns") or 0) for r in rs]
        calls = [int(r.get("model_calls") or 0) for r in rs]
        cost = sum(float(r.get("total_cost_usd") or 0) for r in rs)
        slow = sorted(rs, key=lambda r: -float(r.get("duration_ms") or 0))[:3]
        by: dict[str, int] = {}
        for r in rs:
            by[str(r.get("subtype"))] = by.get(str(r.get("subtype")), 0) + 1
        return "\n".join([
            f"{ok}/{len(rs)} succeeded ({ok / len(rs):.0%}): " + ", ".join(f"{k} {v}" for k, v in sorted(by.items())),
            f"turns: median {statistics.median(turns):g}, max {max(turns)} · model calls: median "
            f"{statistics.median(calls):g}, max {max(calls)} · total cost ${cost:.4f}",
            "slowest: " + ", ".join(f"{r.get('id')} ({float(r.get('duration_ms') or 0) / 1000:.1f}s)" for r in slow),
            wall,
        ])

    def _print(self, s: str) -> None:
        if self._bar is not None:
            self._bar.console.print(s, markup=False, emoji=False)
        else:
            print(s, file=self.stream, flush=True)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or file-less stream
        return False


# --- `loopwright batch` ---------------------------------------------------------------------------------

def batch_main(argv: Sequence[str]) -> int:
    from .cli import build_parser
    from .cli.config import UsageError, build_options

    p = build_parser()
    p.prog = "loopwright batch"
    p.description = ("Run an agent on every task of TASKS.jsonl, resumable, with a whole-batch budget; "
                     "the run flags are every task's defaults.")
    p.add_argument("tasks", help="TASKS.jsonl: {\"id\", \"prompt\", \"cwd\"?, ...AgentOptions overrides} a line")
    p.add_argument("-o", "--output", required=True, help="RESULTS.jsonl (appended; a rerun skips finished tasks)")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="run on Ray: a local Ray, or ADDRESS ('auto', 'ray://host:10001')")
    p.add_argument("--isolate", choices=ISOLATIONS, default="none")
    p.add_argument("--retries", type=int, default=0, help="reruns of a task that ends in error_during_execution")
    p.add_argument("--timeout", type=float, default=None, help="seconds per task attempt")
    p.add_argument("--force", action="store_true", help="use a results file of a different task list anyway")
    p.add_argument("--resume-sessions", action="store_true",
                   help="a task whose batch was killed mid-run continues its saved session (default: rerun it)")
    args = p.parse_args(list(argv))
    budget, args.max_budget_usd = args.max_budget_usd, None  # the batch's B (per-task B: a task option)
    try:
        tasks = read_tasks(args.tasks)
        base = build_options(args)
    except (BatchError, UsageError, ValueError) as e:
        print(f"loopwright batch: {e}", file=sys.stderr)
        return 2
    cfg = BatchConfig(args.concurrency, budget, args.isolate, args.retries, args.timeout, Path(args.output),
                      args.force, own_system_prompt=args.system_prompt is None,
                      resume_sessions=args.resume_sessions)
    try:
        specs, done = prepare(tasks, base, cfg)  # bad input is refused before Ray starts or is reached
    except BatchError as e:
        print(f"loopwright batch: {e}", file=sys.stderr)
        return 2
    left = any(not (s.task.id in done and finished(done[s.task.id])) for s in specs)
    ex: Executor
    try:
        ex = RayExecutor(None if args.ray == "local" else args.ray, retries=max(args.retries, 1)) \
            if args.ray and left else LocalExecutor()  # nothing left to run: no cluster to reach
    except MissingExtra as e:
        print(f"loopwright: {e}", file=sys.stderr)
        return 2
    progress = Progress()

    async def go() -> int:
        failed = 0
        async for r in _batch(tasks, base, cfg, ex, progress):
            failed += bool(r.get("is_error"))
        return failed

    try:
        failed = asyncio.run(go())
    except BatchError as e:
        print(f"loopwright batch: {e}", file=sys.stderr)
        return 2
    finally:
        progress.close()
    print(progress.summary(), file=sys.stderr)
    return 1 if failed else 0
