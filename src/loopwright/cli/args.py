"""Room: cli. Owns how every loopwright command reads its arguments: `Parser`; may import nothing of loopwright.

`Parser` is argparse's parser with two differences a newcomer meets first:
- a mistake is one line and a pointer to `--help` (argparse prints the whole usage first,
  ~23 lines for the run flags, and the line that matters last); a mistyped flag names the flag
  it looks like, as Claude Code does ("(did you mean --model?)"), and an abbreviated one (which
  Claude Code refuses) is refused too, naming the flag it abbreviates;
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


_UNRECOGNIZED = "unrecognized arguments: "


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and a pointer to `--help` (exit 2), and that
    takes no abbreviated long flag (`--outp` for `--output-format`): Claude Code 2.1.332 refuses
    them ("unknown option '--outp'"), and a script that works on loopwright must work there too."""

    _left_out: dict[str, str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)  # (its subcommands' parsers are Parsers too)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """`PROG: error: MESSAGE` and where the options are listed; exit code 2 (bad usage)."""
        if message.startswith(_UNRECOGNIZED):
            message += self._did_you_mean(message.removeprefix(_UNRECOGNIZED).split())
        self.exit(2, f"{self.prog}: error: {message}\nTry '{self.prog} --help' for the options.\n")

    def _did_you_mean(self, unknown: list[str]) -> str:
        """" (did you mean --model?)" for the first unknown flag that is close to one of this parser's
        or its subcommands' long flags; "" when none is (a guess far off misleads more than none)."""
        import difflib  # (only on this error's way)

        known: list[str] = []
        parsers: list[argparse.ArgumentParser] = [self]
        while parsers:
            parser = parsers.pop()
            for action in parser._actions:
                known += [o for o in action.option_strings if o.startswith("--")]
                if isinstance(action, argparse._SubParsersAction):
                    parsers += list(action.choices.values())
        for arg in unknown:
            if arg.startswith("--"):
                name = arg.partition("=")[0]
                close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
                if not close:  # an abbreviation (not taken: allow_abbrev) of one flag only
                    close = [k for k in known if k.startswith(name)][:2]
                if len(close) == 1:
                    return f" (did you mean {close[0]}?)"
        return ""

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
