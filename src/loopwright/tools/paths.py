"""Room: built-in tools (on tools.base). Owns the tools' shared path helpers; may import data types
and tools.base.

Shared helpers of the built-in tools: path resolution, the read-before-write record,
and text encodings. (Globs and ignore files: ignore.py, the one matcher.)"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from pathlib import Path

from ..mtime import stamp, unchanged
from .base import ToolContext, ToolError


def resolve(file_path: str, ctx: ToolContext) -> Path:
    """Absolute, normalized path; relative paths resolve against ctx.cwd.

    Symlinks are resolved too, so the read record has one key per file. A path that now names
    another file than the gate judged (a symlink in it swapped after the judgment, or during the
    user's answer) is refused: the gate allowed the file it saw, not this one."""
    if not file_path:
        raise ToolError("file_path is empty.")
    p = Path(os.path.expanduser(file_path))
    if not p.is_absolute():
        p = ctx.cwd / p
    return as_judged(p, file_path, ctx)


def as_judged(p: Path, given: str, ctx: ToolContext) -> Path:
    """`p` (absolute) resolved, refused if it names another file than this tool's judgments of the
    input path `given` ("" for none) said (ctx.state.judged: one a call that runs, each run takes one
    and is held to all that are left: two calls of a path in a turn are judged before either runs)."""
    real = p.resolve()
    key = (ctx.tool_name, given)
    judgments = ctx.state.judged.get(key)
    if not judgments:
        return real
    held = tuple(judgments)
    del judgments[0]  # (one is this run's: the next run of the path is checked against its own)
    if not judgments:
        del ctx.state.judged[key]
    # (only where the gate judged the same name: a gate judging from another directory is not this check's)
    lexical = os.path.normpath(p)
    for seen, judged in held:
        if seen == lexical and judged != str(real):
            raise ToolError(f"{given or p} now names {real}, not {judged} as when its permission was checked "
                            "(a symlink in it changed in between); nothing was done.")
    return real


# --- opening what was resolved, never through a symlink planted since ------------------------

_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
SWAPPED = "a part of its path is not a directory, or is a symlink put there after the path was checked"


def open_dir(real_dir: Path, create: bool = False) -> int:
    """A descriptor of directory `real_dir` (resolved: no symlink in it), opened one component at a
    time without following symlinks: one planted in the path since it was resolved fails the
    open (ELOOP, ENOTDIR) instead of leading elsewhere. `create`: make the missing directories."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in real_dir.parts[1:]:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, dir_fd=fd)
                except FileExistsError:
                    pass
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(real: Path, flags: int = os.O_RDONLY) -> int:
    """A descriptor of the file `real` names (resolved), opened through open_dir and without
    following a symlink at its last component either."""
    d = open_dir(real.parent)
    try:
        return os.open(real.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=d)
    finally:
        os.close(d)


def read_bytes(real: Path) -> bytes:
    """The bytes of the file `real` names (resolved), opened as open_file opens it."""
    with os.fdopen(open_file(real), "rb") as f:
        return f.read()


def project_roots(ctx: ToolContext) -> list[Path]:
    return [ctx.cwd.resolve(), *(Path(d).resolve() for d in ctx.add_dirs)]


def within_project(path: Path, ctx: ToolContext) -> bool:
    return any(path == r or path.is_relative_to(r) for r in project_roots(ctx))


def record_read(ctx: ToolContext, path: Path) -> None:
    """Remember `path` as read now (mtime.stamp: with the content's digest while the file is
    younger than one timestamp tick, so a same-size edit within that tick is still seen)."""
    ctx.state.read.stamps[str(path)] = stamp(path)


def check_fresh(ctx: ToolContext, path: Path) -> None:
    """Raise unless `path` was read in this session and not changed since (Claude Code's rule:
    its mtime and content, so a chmod is no change). (mtime, size, inode) see a rewrite and a
    rename over the file; a copy that restores the old mtime (`cp -p`, `touch -r`) keeps it only
    by coincidence of the nanoseconds, and then within the tick window the digest decides."""
    stamps = ctx.state.read.stamps
    if str(path) not in stamps:
        raise ToolError(f"File has not been read yet: {path}. Read it first before writing to it.")
    if not unchanged(path, stamps[str(path)], stamp(path)):
        raise ToolError(
            f"File has been modified since it was read (by the user, a linter or a command): {path}. "
            "Read it again before attempting to write it."
        )


def before_change(ctx: ToolContext, path: Path) -> None:
    if ctx.before_file_change is not None:
        ctx.before_file_change(path)


def after_change(ctx: ToolContext, path: Path) -> None:
    if ctx.after_file_change is not None:
        ctx.after_file_change(path)


# --- text files: encoding and line endings -------------------------------------------------

@dataclass(slots=True)
class TextFile:
    """A text file decoded without loss: its text with the file's own line endings, and how to
    encode it back so that every character an edit does not touch comes back as the same bytes."""

    raw: str  # the decoded text, line endings as in the file
    encoding: str  # "utf-8", "utf-8-sig" (BOM kept), "utf-16" (BOM, either byte order), or "latin-1"
    codec: str = "utf-8"  # the Python codec of the bytes after the BOM
    bom: bytes = b""
    errors: str = "strict"  # "surrogateescape": invalid bytes after a UTF-8 BOM, kept as they were

    @property
    def text(self) -> str:
        """The text with line endings normalized to LF (what edits match against)."""
        return self.raw.replace("\r\n", "\n")

    @property
    def crlf(self) -> bool:
        """Every newline in the file is CRLF: new text gets CRLF too."""
        n_lf = self.raw.count("\n")
        return n_lf > 0 and self.raw.count("\r\n") == n_lf

    def encode(self, text: str) -> bytes:
        """New whole content (LF line endings) in the file's encoding and line endings."""
        if self.crlf:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        return self.encode_raw(text)

    def encode_raw(self, raw: str) -> bytes:
        """Text with its line endings as they are, in the file's encoding (BOM included). Text the
        encoding cannot hold is refused: re-encoding the file would change bytes nobody edited."""
        try:
            return self.bom + raw.encode(self.codec, self.errors)
        except UnicodeEncodeError as e:
            bad = raw[e.start:e.end]
            raise ToolError(
                f"The file is {self.encoding}, not UTF-8, and {self.encoding} cannot hold {bad[:20]!r} "
                f"(U+{ord(bad[0]):04X}); nothing was written. Use only characters that {self.encoding} "
                f"has, or convert the file to UTF-8 first (`iconv -f {self.codec} -t utf-8`)."
            ) from None


def decode(data: bytes) -> tuple[str, str]:
    """(text, encoding) for display: UTF-8 (BOM noted), UTF-16 with BOM, else latin-1 (never fails)."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", errors="replace"), "utf-8-sig"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def load_text(path: Path) -> TextFile:
    """A file to edit, decoded so that encode_raw(raw) gives back its exact bytes."""
    data = read_bytes(path)
    if data.startswith(codecs.BOM_UTF8):
        return TextFile(data[3:].decode("utf-8", "surrogateescape"), "utf-8-sig", "utf-8", codecs.BOM_UTF8,
                        "surrogateescape")
    for bom, codec in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            try:
                return TextFile(data[2:].decode(codec), "utf-16", codec, bom)
            except UnicodeDecodeError:
                break
    try:
        return TextFile(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        return TextFile(data.decode("latin-1"), "latin-1", "latin-1")  # byte for byte: nothing lost


def looks_binary(data: bytes) -> bool:
    head = data[:8192]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\0" in head
