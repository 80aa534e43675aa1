"""Room: cli. Owns `loopwright batch TASKS.jsonl -o RESULTS.jsonl`: its flags, messages and exit codes."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from ..batching.progress import Progress
from ..batching.ray_executor import RayExecutor
from ..batching.run import BatchConfig, Executor, LocalExecutor, _batch, prepare
from ..batching.tasks import ISOLATIONS, BatchError, finished, read_tasks
from ..extras import MissingExtra


def batch_main(argv: Sequence[str]) -> int:
    from ..cli import build_parser
    from ..cli.config import UsageError, build_options
    from .args import ONE_RUN_ONLY

    p = build_parser()
    p.prog = "loopwright batch"
    p.leave_out(ONE_RUN_ONLY, "loopwright batch (a task line gives its prompt; results are JSON lines)")
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
