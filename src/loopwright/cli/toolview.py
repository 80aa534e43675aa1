"""Room: cli. Owns what the interactive mode shows of tool results; may import data types and
cli.render.

Each tool result is shown under its call: the one-line outcome, then the first lines of the
output (an Edit: the patch of its result's details; a MultiEdit: its diff; both numbered as in
the file; a Write: the new content), and `… +N lines (ctrl+o to expand · /expand K)`. Counts describe the whole output: a Bash output the
tool cut in the middle counts the lines it cut too.

Expanding happens in place: everything the session printed is kept (`Log`), and Ctrl-O or
`/expand K` redraws the screen with that result (or all of them) in full at its place.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..blocks import TextBlock, ToolResultBlock
from ..messages import SystemMessage, UserMessage
from .render import TraceRenderer, describe_result, rel_path, short, visible

PREVIEW = 3  # lines of output under a call before "… +N lines"
RED, GREEN, DIM, RESET = "\x1b[31m", "\x1b[32m", "\x1b[2m", "\x1b[0m"
CUT = re.compile(r"^\.\.\. \[about \d+ of (\d+) lines, (?:about )?\d+ characters of output truncated\] \.\.\.$", re.M)
EXIT = re.compile(r"^Exit code -?\d+$")


def full_line_count(text: str) -> int:
    """Lines of a tool's whole output: the total a truncation notice gives, else the lines shown."""
    m = CUT.search(text)
    return int(m.group(1)) if m else len(text.splitlines())


def edit_diff(path: Path, edits: list[tuple[str, str]]) -> tuple[list[str], int, int]:
    """The diff lines of edits (old_string -> new_string) of `path`, numbered as in the file now,
    and the counts of added and removed lines."""
    try:
        now = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        now = ""
    out: list[str] = []
    added = removed = 0
    for old, new in edits:
        at = now.find(new) if new else -1
        start = now[:at].count("\n") + 1 if at >= 0 else None
        a, b = old.splitlines(), new.splitlines()

        def num(i: int, start: int | None = start) -> str:
            return f"{start + i:>5}" if start is not None else "     "

        if out:
            out.append(f"{DIM}  ...{RESET}")
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
            if tag == "equal":
                out += [f"{num(j)}   {visible(b[j])}" for j in range(j1, j2)]
                continue
            out += [f"{RED}{num(i)} - {visible(a[i])}{RESET}" for i in range(i1, i2)]
            out += [f"{GREEN}{num(j)} + {visible(b[j])}{RESET}" for j in range(j1, j2)]
            removed += i2 - i1
            added += j2 - j1
    return out, added, removed


def patch_diff(details: Any) -> tuple[list[str], int, int] | None:
    """The diff lines of an Edit's structured patch (its result's details: tools.diffs), a removed
    line numbered as it was, the others as they are now; and the counts of added and removed
    lines. None when the details hold no patch (a file too large to diff, a tool of that name
    that gives other details): edit_diff then reads the file."""
    patch = details.get("structuredPatch") if isinstance(details, dict) else None
    if not patch or not isinstance(patch, list):
        return None
    out: list[str] = []
    added = removed = 0
    try:
        for k, hunk in enumerate(patch):
            if k:
                out.append(f"{DIM}  ...{RESET}")
            old, new = int(hunk["oldStart"]), int(hunk["newStart"])
            for line in hunk["lines"]:
                sign, body = line[:1], visible(line[1:])
                if sign == "-":
                    out.append(f"{RED}{old:>5} - {body}{RESET}")
                    old, removed = old + 1, removed + 1
                elif sign == "+":
                    out.append(f"{GREEN}{new:>5} + {body}{RESET}")
                    new, added = new + 1, added + 1
                elif sign == " ":
                    out.append(f"{new:>5}   {body}")
                    old, new = old + 1, new + 1
    except (KeyError, TypeError, ValueError):
        return None
    return out, added, removed


@dataclass
class OutputView:
    """One tool result as shown: its outcome line and its output lines, collapsed or expanded.

    A result shown as its own lines (Read, Bash, most tools) keeps the output's text, the string
    the history holds too, and splits it when drawn: a list of its lines was one more copy of each
    output for the whole session (a str object per line: ~1.6x the output's size)."""

    n: int
    header: str
    body: list[str] = field(default_factory=list)  # lines made for the view: a diff, a Write's content
    preview: int = PREVIEW
    expanded: bool = False
    output: str = ""  # else the output itself: its first `count` lines (after rstrip) are the body
    count: int = 0

    def lines(self, k: int | None = None) -> list[str]:
        """The body's lines, or its first k."""
        if not self.output:
            return self.body if k is None else self.body[:k]
        if k is not None and k < self.count:  # (lines before the last: rstrip leaves them as they are)
            parts = self.output.split("\n", k)  # (the text to its k-th newline, that newline included)
            head = "\n".join(parts[:k]) + "\n" if len(parts) > k else self.output
            return [visible(ln) for ln in head.splitlines()[:k]]
        return [visible(ln) for ln in self.output.rstrip().splitlines()[: self.count]]

    @property
    def size(self) -> int:
        """The body's line count."""
        return self.count if self.output else len(self.body)

    def render(self) -> str:
        shown = self.lines(None if self.expanded else self.preview)
        lines = [self.header, *(f"      {ln}" for ln in shown)]
        rest = self.size - len(shown)
        if rest:
            lines.append(f"      {DIM}… +{rest} lines (ctrl+o to expand · /expand {self.n}){RESET}")
        elif self.expanded and self.size > self.preview:
            lines.append(f"      {DIM}(ctrl+o or /expand {self.n} to collapse){RESET}")
        return "\n".join(lines) + "\n"


def make_view(n: int, name: str, tool_input: dict[str, Any], r: ToolResultBlock, cwd: Path | None) -> OutputView:
    """The view of result `r` of a `name` call with `tool_input`."""
    mark = "✗" if r.is_error else "✓"
    output = r.text  # (the history's string: kept, not copied)
    lines = [visible(ln) for ln in output.rstrip().splitlines()]  # (counted here, dropped: drawn from `output`)
    summary = describe_result(name, r, cwd)
    body: list[str] = []
    count = 0
    preview = PREVIEW
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if name in ("Edit", "MultiEdit") and not r.is_error and isinstance(path, str):
        raw = tool_input.get("edits") if name == "MultiEdit" else [tool_input]
        edits = [(str(e.get("old_string", "")), str(e.get("new_string", ""))) for e in raw or [] if isinstance(e, dict)]
        # the patch the tool made (not the file read again now: a later call may have changed it)
        body, added, removed = patch_diff(r.details) or edit_diff(Path(path), edits)
        summary = (f"Updated {short(rel_path(path, cwd), 100)} with {added} addition{'s' * (added != 1)} and "
                   f"{removed} removal{'s' * (removed != 1)}")
        preview = 8  # a diff is what one wants to see
    elif name == "Write" and not r.is_error and isinstance(tool_input.get("content"), str):
        body = [f"{i:>5}   {visible(ln)}" for i, ln in enumerate(str(tool_input["content"]).splitlines(), 1)]
    elif name == "Read":
        count, preview = len(lines), 0  # the file itself: only on demand
    else:
        if name == "Bash":
            status = 1 if lines and EXIT.match(lines[-1].strip()) else 0  # "Exit code N": in the summary
            lines = lines[: len(lines) - status]
            summary = re.sub(r"\(\d+ lines\)$", f"({full_line_count(output.rstrip()) - status} lines)", summary)
        count = len(lines) if len([ln for ln in lines if ln.strip()]) > 1 else 0  # one line: the summary says it
    return OutputView(n, f"    ⎿ {mark} {name}: {summary}", body, preview, output=output if count else "", count=count)


class Log:
    """Everything the session printed, in order: text, and the tool result views (which can be
    redrawn expanded)."""

    def __init__(self) -> None:
        self.entries: list[str | OutputView] = []

    def text(self, s: str) -> None:
        self.entries.append(s)

    def render(self) -> str:
        return "".join(e if isinstance(e, str) else e.render() for e in self.entries)


CLEAR = "\x1b[H\x1b[2J\x1b[3J"  # home, clear the screen and the scrollback: the redraw replaces both


class ReplRenderer(TraceRenderer):
    """The live trace of the interactive mode: tool results as views, the session header once
    per session (not once per prompt), and everything kept in a Log for redraws."""

    init_warnings = True

    def __init__(self, out: TextIO, log: Log) -> None:
        super().__init__(out, spinner=False)
        self.log = log
        self.views: list[OutputView] = []
        self.sessions_shown: set[str] = set()

    def _w(self, text: str) -> None:
        super()._w(text)
        self.log.text(visible(text))

    def _view(self, view: OutputView) -> None:
        self.views.append(view)
        self.log.entries.append(view)
        self.spinner.write(view.render())

    def _system(self, msg: SystemMessage) -> None:
        if msg.subtype == "init":
            sid = str(msg.data.get("session_id", ""))
            if sid in self.sessions_shown:
                self.cwd = Path(msg.data["cwd"]) if msg.data.get("cwd") else None
                self._model_running()
                return
            self.sessions_shown.add(sid)
        super()._system(msg)

    def _user(self, msg: UserMessage) -> None:
        if msg.parent_tool_use_id is not None:
            super()._user(msg)
            return
        self.spinner.stop()
        for r in msg.tool_results:
            name, tool_input = self._names.pop(r.tool_use_id, ("?", {}))
            self._view(make_view(len(self.views) + 1, name, tool_input, r, self.cwd))
        for b in () if msg.is_synthetic else msg.content:  # (the loop's own reminder: not the user's)
            if isinstance(b, TextBlock):
                self._w(f"  ✉ queued message: {short(b.text, 100)}\n")
        self._model_running()

    def toggle(self, n: int | None = None) -> str | None:
        """Expand or collapse result n (None: all, as one: expand all unless all are expanded) and
        return the redrawn screen; an error message when there is no such result."""
        if n is None:
            if not self.views:
                return "no tool output yet"
            expand = not all(v.expanded for v in self.views)
            for v in self.views:
                v.expanded = expand
        elif 0 < n <= len(self.views):
            self.views[n - 1].expanded = not self.views[n - 1].expanded
        else:
            return f"no tool result {n} (there {'is' if len(self.views) == 1 else 'are'} {len(self.views)})"
        self.spinner.write(CLEAR + self.log.render())
        return None
