"""Room: loop. Owns Run, RunDeps, RunState and run_query(); may import options and every room
below it, never assemble, client, workflows or cli.

The agent loop: seed Def 3.1, one step with four cases, and `run_query(run, prompt)`, which
drives a Run the assembler (assemble.py: `build_run`, `query()`, `run()`) built.

State is (h, e, t): the history `h`, the environment (the tools' world), and the
tool-use turns done `t`. Everything around the step (accounting, results,
sessions) lives in `Run`: its fixed dependencies in `Run.deps`, what the steps change in
`Run.state`; the step itself is `_loop` below. No other module touches Run's private
attributes: the assembler's ports (assemble.py) use `messages`, `post` and `absorb`.

May import everything below it (options, execute, context, hooks); tools never see a Run,
only the ports of their ToolContext.
"""

from .run import Run
from .state import (
    MAX_OUTPUT_CONTINUATIONS,
    MAX_OVERFLOW_RETRIES,
    MAX_STOP_CONTINUATIONS,
    NO_OUTPUT_REMINDER,
    OUTPUT_REMINDER,
    McpServers,
    RunControl,
    RunDeps,
    RunError,
    RunState,
)
from .steps import run_query

__all__ = ["MAX_OUTPUT_CONTINUATIONS", "MAX_OVERFLOW_RETRIES", "MAX_STOP_CONTINUATIONS", "NO_OUTPUT_REMINDER",
           "OUTPUT_REMINDER", "McpServers", "Run", "RunControl", "RunDeps", "RunError", "RunState", "run_query"]
