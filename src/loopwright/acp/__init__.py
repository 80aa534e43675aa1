"""Room: acp (a front end, beside cli). Owns `loopwright acp`, the Agent Client Protocol agent over
stdio for editors (Zed, JetBrains, Neovim); may import every room below the front ends and the
cli's option building (cli.config), never cli's interactive or headless modes.

The editor starts `loopwright acp [run options]` as a subprocess and speaks JSON-RPC 2.0 on its
stdin/stdout through the official `agent-client-protocol` library (the optional extra
`loopwright[acp]`). Each ACP session is a loopwright session: the same JSONL transcript the
CLI writes, so `loopwright -r ID` and the editor see the same conversations.

    agent.py       the ACP Agent: initialize, sessions, prompt, cancel, modes, models
    updates.py     what the loop yields -> session/update notifications (tool kinds, diffs, plans)
    permission.py  the gate's "ask a person" point as session/request_permission
    client_tools.py  Read/Write/Edit through the editor's fs, Bash through its terminals

Kept light: nothing is imported until `acp_main` runs (one process per editor session, and
the editor waits for the initialize answer).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any


def acp_main(argv: Sequence[str]) -> int:
    """`loopwright acp [run options]`: serve ACP on stdin/stdout until the editor closes it."""
    from ..cli.config import pause_gc, resume_gc
    from ..extras import require

    require("loopwright acp", "acp", "acp")  # MissingExtra: cli.main says so in one line
    pause_gc()  # the library's ~270 schema classes: no collector passes over them while they load
    try:
        load_library()  # before the editor's first message is read
    finally:
        resume_gc()
    from ..cli import build_parser
    from ..cli.args import ONE_RUN_ONLY
    from ..cli.config import EXIT_USAGE, UsageError

    parser = build_parser()
    parser.prog = "loopwright acp"
    parser.leave_out([*ONE_RUN_ONLY, "permission_prompts"],
                     "loopwright acp (the editor sends the prompts, picks the sessions and answers permissions)")
    parser.description = "An Agent Client Protocol agent on stdin/stdout: editors (Zed, JetBrains, Neovim) start it."
    args = parser.parse_args(list(argv))
    from .agent import serve

    try:
        return serve(args)
    except UsageError as e:
        print(f"loopwright acp: {e}", file=sys.stderr)
        return EXIT_USAGE


def load_library() -> None:
    """Import the official ACP library as an agent process needs it. Its schema declares ~270
    pydantic models, each reading its fields' docstrings from the source at import (for JSON
    Schema descriptions, which an agent never generates: ~190 ms) and each built at once (~100
    ms): both are the editor's wait at every session's start. So while it loads, its
    `ConfigDict(...)`s say `use_attribute_docstrings=False, defer_build=True`: a model is built
    at its first use (a session uses a few dozen, ~0.1 ms each) and validates and serializes
    as before. Nothing else changes: `pydantic.ConfigDict` is the library's own again at once,
    and a library already imported is left as it is."""
    if "acp" in sys.modules:
        return
    import pydantic

    declared: Any = pydantic.ConfigDict

    def config(**settings: Any) -> Any:
        return declared(**{**settings, "use_attribute_docstrings": False, "defer_build": True})

    module: Any = pydantic
    module.ConfigDict = config
    try:
        import acp  # noqa: F401
    finally:
        module.ConfigDict = declared
