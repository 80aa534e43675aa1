"""Room: cli. Owns how every loopwright command reads its arguments: `Parser`; may import nothing of loopwright.

`Parser` is argparse's parser with two differences a newcomer meets first:
- a mistake is one line and a pointer to `--help` (argparse prints the whole usage first,
  ~23 lines for the run flags, and the line that matters last);
- a subcommand built on the run flags (`batch`, `acp`) leaves out of its `--help` the flags that
  mean nothing there, and refuses them by name when given (never silently ignored).
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Sequence
from typing import Any, NoReturn

# The run flags that mean nothing outside one run of `loopwright [-p]`: its prompt and output, and
# which session it continues (a batch's tasks and an editor's sessions say that themselves).
ONE_RUN_ONLY = ("prompt", "prompt_arg", "output_format", "include_partial_messages", "input_format",
                "continue_conversation", "resume", "fork_session", "session_id")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and a pointer to `--help` (exit 2)."""

    _left_out: dict[str, str]

    def error(self, message: str) -> NoReturn:
        """`PROG: error: MESSAGE` and where the options are listed; exit code 2 (bad usage)."""
        self.exit(2, f"{self.prog}: error: {message}\nTry '{self.prog} --help' for the options.\n")

    def leave_out(self, dests: Collection[str], where: str) -> None:
        """Hide the options of these destinations from `--help`, and refuse them when given: they
        belong to a run of `loopwright [-p]`, not to `where` (e.g. "loopwright batch")."""
        self._left_out = {}
        for action in self._actions:
            if action.dest in dests:
                action.help = argparse.SUPPRESS
                name = action.option_strings[-1] if action.option_strings else str(action.metavar or action.dest)
                self._left_out[action.dest] = name
        self._left_out_where = where

    def parse_known_args(  # type: ignore[override]  # (one signature for argparse's overloads)
            self, args: Sequence[str] | None = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        ns, rest = super().parse_known_args(args, namespace)
        for dest, flag in getattr(self, "_left_out", {}).items():
            if getattr(ns, dest, None) != self.get_default(dest):
                self.error(f"{flag} does not apply to {self._left_out_where}")
        return ns, rest
