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
import os
import socket
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..messages import ResultMessage
from ..options import AgentOptions
from ..telemetry import batch_context, end_batch, task_context
from ..usage import SharedSpend
from .isolation import Workspace, _git
from .progress import Progress
from .tasks import (
    ISOLATIONS,
    RETRY_BASE_S,
    BatchError,
    BatchResult,
    Isolation,
    ResultsFile,
    RunSpec,
    Task,
    check_tasks,
    finished,
    result_line,
)

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


# --- running one task ------------------------------------------------------------------------------

RESUME_PROMPT = "The run was interrupted before it finished. Continue the task from where you left off."


def _resumable(spec: RunSpec, options: AgentOptions) -> str | None:
    """The session of this task's first attempt in an earlier, killed batch, if one was saved."""
    sid = spec.session_id(1)
    if not spec.resume_sessions or sid is None:
        return None
    from ..sessions import store_for

    return sid if store_for(options).exists(sid, Path(options.cwd or ".")) else None


async def _attempt(spec: RunSpec, cwd: Path, spend: SharedSpend | None, attempt: int,
                   resume: str | None) -> ResultMessage:
    """One agent run of the task in `cwd`, its budget tied to the batch's spend."""
    from ..assemble import build_run
    from ..loop import run_query

    sid = None if resume else spec.session_id(attempt)
    if sid is not None:
        from ..sessions import store_for

        if store_for(spec.options).exists(sid, cwd):  # an earlier, killed batch's: start afresh
            sid = None
    options = dataclasses.replace(spec.options, cwd=str(cwd), resume=resume, session_id=sid)
    if spec.own_system_prompt and str(cwd) != spec.options.cwd:  # else the agent is told the original's path
        from ..prompts import default_system_prompt

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


def _settings_env(options: AgentOptions) -> dict[str, str]:
    """The `env` the batch's runs get from the settings and the options (telemetry may be turned
    on there, as in Claude Code); a settings file that cannot be read is each task's error."""
    env = dict(options.env or {})
    from ..runconfig import uses_settings
    from ..settings import SETTING_SOURCES, SettingsError, load_settings
    from ..trust import trusted_for

    if not uses_settings(options):
        return env
    cwd = Path(options.cwd or ".").resolve()
    sources = SETTING_SOURCES if options.setting_sources is None else options.setting_sources
    try:
        settings = load_settings(cwd, sources, claude=options.claude_settings, extra=options.settings,
                                 trusted=trusted_for(options, cwd))
    except (SettingsError, OSError):
        return env
    return {**settings.env, **env}


def _error_result(message: str, session_id: str = "") -> dict[str, Any]:
    return {"type": "result", "subtype": "error_during_execution", "is_error": True, "num_turns": 0,
            "model_calls": 0, "result": message, "session_id": session_id, "total_cost_usd": 0.0,
            "errors": [message]}


async def run_task(spec: RunSpec, spend: SharedSpend | None) -> BatchResult:
    """Run one task to its result line: retries of error_during_execution (with backoff),
    a time limit per attempt, and the workspace it asked for."""
    with task_context(spec.task.id, spec.trace):  # telemetry: the task's span, under the batch's
        return await _run_task(spec, spend)


async def _run_task(spec: RunSpec, spend: SharedSpend | None) -> BatchResult:
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
    return result_line(spec.task.id, line, total_cost_usd=cost, attempts=attempts,
                       duration_ms=int((time.monotonic() - started) * 1000),
                       worker=f"{socket.gethostname()}:{os.getpid()}", task_sha256=spec.task.fingerprint)


class Executor(Protocol):
    """Where tasks run: this process (LocalExecutor) or Ray (ray_executor.RayExecutor)."""

    def make_spend(self, limit_usd: float | None) -> SharedSpend: ...
    async def run(self, spec: RunSpec) -> BatchResult: ...
    async def aclose(self) -> None: ...


# --- executors ---------------------------------------------------------------------------------------

class LocalExecutor:
    """Tasks as asyncio tasks in this process, at most `concurrency` at once."""

    def __init__(self) -> None:
        self.spend: SharedSpend | None = None

    def make_spend(self, limit_usd: float | None) -> SharedSpend:
        self.spend = LocalSpend(limit_usd)
        return self.spend

    async def run(self, spec: RunSpec) -> BatchResult:
        return await run_task(spec, self.spend)

    async def aclose(self) -> None:
        return None




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
        from ..sessions import sessions_root

        over["sessions_dir"] = str(sessions_root())
    if own_system_prompt and "system_prompt" not in over:
        from ..prompts import default_system_prompt

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
                             cfg.own_system_prompt and "system_prompt" not in t.options,
                             results=cfg.results.resolve() if cfg.results else None))
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
                retry_base_s: float = RETRY_BASE_S) -> AsyncIterator[BatchResult]:
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


def prepare(tasks: list[Task], base: AgentOptions, cfg: BatchConfig) -> tuple[list[RunSpec], dict[str, BatchResult]]:
    """Every check that needs no worker: the runs (plan) and the results file's earlier results
    (refused when they answer a different task list, unless `force`). BatchError if bad."""
    specs = plan(tasks, base, cfg)
    done: dict[str, BatchResult] = ResultsFile(cfg.results).read() if cfg.results else {}
    by_id = {t.id: t for t in tasks}
    if not cfg.force:
        foreign = [i for i, r in done.items() if i not in by_id or r.get("task_sha256") != by_id[i].fingerprint]
        if foreign:
            raise BatchError(f"{cfg.results} holds results of a different task list (ids {', '.join(foreign[:5])}"
                             f"{' ...' if len(foreign) > 5 else ''} are not these tasks); use another -o, or --force")
    return specs, done


class _Launcher:
    """Starts a batch's tasks, at most `concurrency` at once and none once the batch's spend
    reached its budget; each result (or skip) goes to `queue` as it comes."""

    def __init__(self, ex: Executor, cfg: BatchConfig, spend: SharedSpend, progress: Progress | None) -> None:
        self.ex, self.cfg, self.spend, self.progress = ex, cfg, spend, progress
        self.queue: asyncio.Queue[BatchResult] = asyncio.Queue()
        self.slots = asyncio.Semaphore(cfg.concurrency)
        self.running: set[asyncio.Task[None]] = set()

    async def launch(self, todo: list[RunSpec]) -> None:
        for spec in todo:
            await self.slots.acquire()
            if self.spend.exhausted:  # no task starts at S >= B
                self.slots.release()
                await self.queue.put({"id": spec.task.id, "subtype": "skipped_budget", "is_error": True,
                                      "num_turns": 0, "model_calls": 0, "total_cost_usd": 0.0,
                                      "result": f"not started: the batch spent ${self.spend.spent_usd:.4f} of "
                                                f"${self.cfg.max_budget_usd}", "task_sha256": spec.task.fingerprint})
                continue
            t = asyncio.create_task(self.one(spec))
            self.running.add(t)
            t.add_done_callback(self.running.discard)

    async def one(self, spec: RunSpec) -> None:
        try:
            if self.progress is not None:
                self.progress.started(spec.task.id)
            r = await self.ex.run(spec)
        except Exception as e:  # noqa: BLE001 - a task's failure is its result
            r = result_line(spec.task.id, _error_result(f"{type(e).__name__}: {e}"), task_sha256=spec.task.fingerprint)
        finally:
            self.slots.release()
        if r.get("subtype") == "error_max_budget_usd" and not r.get("model_calls"):
            r["subtype"] = "skipped_budget"  # S reached B between its start and its first call
        await self.queue.put(r)


async def _batch(tasks: list[Task], base: AgentOptions, cfg: BatchConfig, ex: Executor,
                 progress: Progress | None = None) -> AsyncIterator[BatchResult]:
    try:
        specs, done = prepare(tasks, base, cfg)
    except BatchError:
        await ex.aclose()
        raise
    store = ResultsFile(cfg.results) if cfg.results else None
    earlier = {s.task.id: done[s.task.id] for s in specs if s.task.id in done and finished(done[s.task.id])}
    todo = [s for s in specs if s.task.id not in earlier]
    carrier, batch_span = batch_context(len(todo), _settings_env(base))  # telemetry: the batch's span (none when off)
    if carrier:
        todo = [dataclasses.replace(s, trace=carrier) for s in todo]
    spend = ex.make_spend(cfg.max_budget_usd)
    if progress is not None:
        progress.start(len(specs), earlier)
    if store is not None:
        store.open()
    starter = _Launcher(ex, cfg, spend, progress)
    launcher = asyncio.create_task(starter.launch(todo))
    running = starter.running
    try:
        for _ in range(len(todo)):
            r = await starter.queue.get()
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


