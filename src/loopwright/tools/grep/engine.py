"""Room: built-in tools (on tools.base). Owns Grep's pure-Python engine (the walk, the block-wise
file search); may import data types, tools.base and the grep package's query, regex and filters.

The walk reads ignore files through the one ignore matcher (ignore.py), as Glob does. Files are
read in blocks, so a 2 GB file costs bounded memory (a multiline pattern needs the whole file:
files over MAX_MULTILINE_BYTES are refused).

Where it differs from rg (documented limits):
- Patterns run on Python `re`, after translating Rust syntax (regex.py).
- Files are decoded as UTF-8 (invalid bytes become U+FFFD), UTF-16 with a BOM is transcoded;
  rg matches invalid bytes differently. A NUL byte anywhere makes a file binary (rg only
  looks at what it has read so far, so it can report matches before a late NUL).
- The global excludes file is `$XDG_CONFIG_HOME/git/ignore` (or ~/.config/git/ignore) or
  `core.excludesFile` from ~/.gitconfig; other git config locations are not read.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from collections import deque

from ...ignore import DirRules, IgnoreFiles
from ..base import ToolError
from .filters import override_matcher, type_matcher
from .query import MAX_COLUMNS, MAX_LINES, FileHits, Query, too_many
from .regex import can_match_newline, compile_pattern

READ_BLOCK = 1 << 20  # the Python engine reads files in blocks of this many bytes ...
MAX_LINE_CHARS = 1 << 24  # ... and searches a line longer than this in pieces (bounded memory)
MAX_MULTILINE_BYTES = 64 << 20  # a multiline pattern needs the whole file: larger ones are refused


def _decode(data: bytes, explicit: bool = False) -> str | None:
    """File text, or None for a binary file (an explicitly named file is searched anyway, as rg does)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            return None
    if b"\0" in data and not explicit:
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace")


def _matched_lines(text: str, rx: re.Pattern[str], q: Query, multi: bool) -> tuple[list[int], int]:
    """The matching lines of a text (1-based, increasing) and the count (line-by-line
    semantics unless `multi`)."""
    n_text = len(text)
    matched: list[int] = []
    count = 0
    if multi:
        line, at = 1, 0
        for mm in rx.finditer(text):
            s, e = mm.start(), mm.end()
            if s == e and s >= n_text and (n_text == 0 or text.endswith("\n")):
                break
            line += text.count("\n", at, s)
            at = s
            last = line + text.count("\n", s, max(e - 1, s))
            count += 1
            for n in range(line, last + 1):
                if not matched or matched[-1] < n:
                    matched.append(n)
            if q.mode == "files_with_matches":
                break
    else:
        pos, line, at = 0, 1, 0
        while pos <= n_text:
            m = rx.search(text, pos)
            if m is None:
                break
            ls = text.rfind("\n", 0, m.start()) + 1
            if ls >= n_text and (n_text == 0 or text.endswith("\n")):
                break  # the empty "line" after a final newline is not a line
            le = text.find("\n", m.start())
            le = n_text if le < 0 else le
            line += text.count("\n", at, ls)
            at = ls
            if rx.search(text[ls:le]):  # the match must hold within the line alone
                matched.append(line)
                count += 1
                if q.mode == "files_with_matches":
                    break
            pos = le + 1
    return matched, count


def _keep(line: str) -> str:
    """A line as stored for the output: the formatter cuts at MAX_COLUMNS anyway."""
    return line if len(line) <= MAX_COLUMNS + 2 else line[:MAX_COLUMNS + 2]


def search_text(text: str, rx: re.Pattern[str], q: Query, multi: bool) -> FileHits | None:
    """Matches in one file's whole text."""
    matched, count = _matched_lines(text, rx, q, multi)
    if not matched:
        return None
    fh = FileHits("", count)
    if q.mode == "content":
        lines = text.split("\n")
        if lines and lines[-1] == "" and text.endswith("\n"):
            lines.pop()
        keep: set[int] = set()
        for n in matched:
            keep.update(range(max(1, n - q.before), min(len(lines), n + q.after) + 1))
        hit = set(matched)
        fh.lines = {n: (_keep(lines[n - 1]), n in hit) for n in sorted(keep)}
    return fh


class _Stream:
    """Line-by-line search of a file read in blocks of whole lines: memory stays bounded by the
    block size (a line longer than MAX_LINE_CHARS is searched in pieces) and the hits kept."""

    def __init__(self, rx: re.Pattern[str], q: Query) -> None:
        self.rx, self.q = rx, q
        self.fh = FileHits("")
        self.next_line = 1  # the number of the next block's first line
        self.recent: deque[tuple[int, str]] = deque(maxlen=q.before or 1)  # before-context carried over
        self.after_left = 0  # after-context lines still owed to the next block
        self.last_counted = 0

    def _add(self, n: int, line: str, is_match: bool) -> None:
        prev = self.fh.lines.get(n)
        if prev is None and len(self.fh.lines) >= MAX_LINES:
            raise too_many()
        self.fh.lines[n] = (prev[0] if prev else _keep(line), is_match or (prev is not None and prev[1]))

    def feed(self, block: str) -> bool:
        """Search one block of whole lines (the last may be cut short). True: done with the file."""
        q, first = self.q, self.next_line
        matched, _ = _matched_lines(block, self.rx, q, False)
        self.next_line = first + block.count("\n")
        for m in matched:
            if first + m - 1 != self.last_counted:  # a line cut in pieces counts once
                self.fh.count += 1
                self.last_counted = first + m - 1
        if matched and q.mode == "files_with_matches":
            return True
        if q.mode != "content":
            return False
        lines = block.split("\n")
        if lines[-1] == "":
            lines.pop()
        for i in range(min(self.after_left, len(lines))):
            self._add(first + i, lines[i], False)
        self.after_left = max(0, self.after_left - len(lines))
        for m in matched:
            i = m - 1
            for n, line in self.recent:
                if first + i - q.before <= n:
                    self._add(n, line, False)
            for k in range(max(0, i - q.before), min(len(lines), i + q.after + 1)):
                self._add(first + k, lines[k], k == i)
            self.after_left = max(self.after_left, i + q.after - (len(lines) - 1))
        if q.before:
            self.recent.extend((first + k, lines[k]) for k in range(max(0, len(lines) - q.before), len(lines)))
        return False


def search_file(path: str, rx: re.Pattern[str], q: Query, multi: bool, explicit: bool = False) -> FileHits | None:
    """One file's hits, or None (no match, binary, unreadable). Not a regular file (a FIFO that
    replaced it since the walk, a device): skipped, never opened for a blocking read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with open(fd, "rb", closefd=True) as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = f.read(READ_BLOCK)
        utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff"))
        if b"\0" in head and not explicit and not utf16:
            return None
        if multi:  # a pattern across lines needs the whole text
            rest = f.read(MAX_MULTILINE_BYTES + 1 - len(head)) if len(head) == READ_BLOCK else b""
            if len(head) + len(rest) > MAX_MULTILINE_BYTES:
                raise ToolError(f"{path} is larger than {MAX_MULTILINE_BYTES >> 20} MiB, too large for a multiline "
                                "search by the Python engine: search it without multiline, or install ripgrep.")
            text = _decode(head + rest, explicit)
            return search_text(text, rx, q, True) if text is not None else None
        decoder = codecs.getincrementaldecoder("utf-16" if utf16 else "utf-8-sig")("strict" if utf16 else "replace")
        stream = _Stream(rx, q)
        pending: list[str] = []  # the start of a line not yet ended (joined once, not per block)
        pending_len = 0
        data = head
        while True:
            final = not data
            if data and b"\0" in data and not explicit and not utf16:
                return None  # binary (the whole file is, as for a NUL in the head)
            try:
                text = decoder.decode(data, final)
            except UnicodeDecodeError:
                return None
            cut = len(text) if final else text.rfind("\n") + 1
            if cut == 0 and pending_len + len(text) > MAX_LINE_CHARS:
                cut = len(text)  # an endless line: search it in pieces
            if cut or final:
                block = "".join([*pending, text[:cut]])
                pending, pending_len = [text[cut:]], len(text) - cut
                if block and stream.feed(block):
                    break
            else:
                pending.append(text)
                pending_len += len(text)
            if final:
                break
            data = f.read(READ_BLOCK)
    fh = stream.fh
    return fh if fh.count else None


def run_python(q: Query) -> list[FileHits]:
    """A Grep call by the Python engine: an explicit file whatever the filters say, else the walk
    of q.root as rg walks it (ignore files, globs, types, hidden files), then q.extra."""
    if q.type:
        type_matcher(q.type)  # unknown types are an error even for a single file
    hits = _Hits(q)
    if not q.root.is_dir():
        hits.search(str(q.root), explicit=True)
        return hits.results
    walker = _Walker(q, hits)  # (its globs are checked even when only q.extra is searched)
    if q.walk:
        walker.walk(str(q.root), "", walker.files.top)
    for path in q.extra:
        hits.search(path)
    return hits.results


class _Hits:
    """The files searched so far and their matches (too many lines in all: too_many())."""

    def __init__(self, q: Query) -> None:
        self.q = q
        self.rx = compile_pattern(q)
        self.multi = q.multiline and can_match_newline(q.pattern, True)
        self.results: list[FileHits] = []
        self.total_lines = 0

    def search(self, path: str, explicit: bool = False) -> None:
        fh = search_file(path, self.rx, self.q, self.multi, explicit)
        if fh is None:
            return
        fh.path = path
        self.results.append(fh)
        self.total_lines += len(fh.lines)
        if self.total_lines > MAX_LINES:
            raise too_many()


class _Walker:
    """The walk of a directory as rg walks it: sorted, no symlinks, the one ignore matcher
    (ignore.py, as Glob uses it), then the call's globs and types, hidden files left out."""

    def __init__(self, q: Query, hits: _Hits) -> None:
        self.hits = hits
        self.overrides = override_matcher(q.globs)
        self.types = type_matcher(q.type)
        self.files = IgnoreFiles(q.root)

    def ignored(self, rel: str, name: str, is_dir: bool, rules: list[DirRules]) -> bool:
        if self.overrides is not None:
            o = self.overrides(rel, is_dir)
            if o is not None:
                return not o
        res = self.files.check(rel, is_dir, rules)
        if res:
            return True
        if self.types is not None and not is_dir:
            return not self.types(name)  # a file of the type is searched, hidden or not
        return res is not False and name.startswith(".")  # (a whitelisted hidden file is searched)

    def walk(self, d: str, rel: str, rules: list[DirRules]) -> None:
        rules = self.files.enter(d, rel, rules)
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            try:
                self._entry(e, rel + e.name, rules)
            except OSError:
                continue

    def _entry(self, e: os.DirEntry[str], r: str, rules: list[DirRules]) -> None:
        if e.is_symlink():
            return
        if e.is_dir():
            if not self.ignored(r, e.name, True, rules):
                self.walk(e.path, r + "/", rules)
        elif e.is_file() and not self.ignored(r, e.name, False, rules):
            self.hits.search(e.path)
