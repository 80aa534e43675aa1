"""Room: built-in tools (on tools.base). Owns running ripgrep (which `rg`, one process under the
OS sandbox) and Grep's rg backend (its command line, its output read back into FileHits); may
import tools.base and the grep package's query.

Which rg: the one the `ripgrep` package installed beside loopwright (a base dependency: its wheels
carry the binary), else one on PATH; without either, Grep and Glob fall back to their Python
engines (search.py says so once). rg runs with ripgrep's defaults plus `--no-config` (and
`--no-require-git` outside a git repository: require_git_args), in the search root (globs are relative to it), inside the OS sandbox when that is on.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import functools
import importlib.metadata
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..base import ToolError
from .query import MAX_LINES, FileHits, Query, too_many
from .tracked import in_git_repo

MAX_RG_BYTES = 256 * 1024 * 1024
MAX_ARG_CHARS = 64 * 1024  # paths on one rg command line


@functools.cache
def bundled_rg() -> str | None:
    """The `rg` of the installed `ripgrep` distribution (its wheel puts it among the scripts of
    the environment loopwright is installed in, a venv or the user's), or None."""
    try:
        dist = importlib.metadata.distribution("ripgrep")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if f.name in ("rg", "rg.exe"):
            path = Path(str(dist.locate_file(f))).resolve()
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
    return None


def rg_path() -> str | None:
    """The rg to run: the bundled one first (a known version), else the first on PATH."""
    return bundled_rg() or shutil.which("rg")


def require_git_args(root: Path) -> list[str]:
    """`--no-require-git` (.gitignore files apply outside a git repository too) only outside one:
    inside, ripgrep 14 would also apply the .gitignore files above the repository's root, which
    git does not."""
    return [] if in_git_repo(root if root.is_dir() else root.parent) else ["--no-require-git"]


def rg_args(q: Query, extra: list[str] | None = None) -> tuple[list[str], Path]:
    """The rg command line and the directory to run it in: the walk of q.root (when q.walk)
    and the `extra` files (absolute, under a directory root)."""
    args = ["--no-config", *require_git_args(q.root), "--color=never", "--no-messages"]
    if q.ignore_case:
        args.append("-i")
    if q.multiline:
        args += ["-U", "--multiline-dotall"]
    for g in q.globs:
        args += ["--glob", g]
    if q.type:
        args += ["--type", q.type]
    if q.mode == "files_with_matches":
        args.append("-l")
    elif q.mode == "count":
        args += ["-c", "--with-filename"]
    else:
        args.append("--json")
        if q.before:
            args += ["-B", str(q.before)]
        if q.after:
            args += ["-A", str(q.after)]
    # Globs are matched relative to rg's working directory: run it in the search root.
    if q.root.is_dir():
        cwd, targets = q.root, ["."] if q.walk else []
        targets += [os.path.relpath(p, q.root) for p in extra or ()]
    else:
        cwd, targets = q.root.parent, [q.root.name]
    return [*args, "-e", q.pattern, "--", *targets], cwd


def _wire_text(d: dict[str, Any]) -> str:
    if "text" in d:
        return str(d["text"])
    return base64.b64decode(d.get("bytes", "")).decode("utf-8", errors="replace")


def parse_rg(q: Query, out: bytes, cwd: Path) -> list[FileHits]:
    """rg's output as hits, by absolute path (a tracked file a glob whitelists is walked and
    named: one hit): a path a line (files_with_matches), `path:count` lines, or rg's JSON events."""
    absolute = _absolute_in(cwd)
    if q.mode == "files_with_matches":
        listed = ((p, 1) for p in out.decode("utf-8", errors="replace").splitlines() if p)
    elif q.mode == "count":
        counted = (line.rpartition(":") for line in out.decode("utf-8", errors="replace").splitlines())
        listed = ((p, int(n)) for p, _, n in counted if p)
    else:
        return _json_hits(out, absolute)
    hits: dict[str, FileHits] = {}
    for p, n in listed:
        a = absolute(p)
        hits.setdefault(a, FileHits(a, n))
    return list(hits.values())


def _absolute_in(cwd: Path) -> Callable[[str], str]:
    here = os.path.join(str(cwd), "")

    def absolute(p: str) -> str:
        if p.startswith("./") and "/." not in p:  # the walk's paths: no normpath needed
            return here + p[2:]
        return os.path.normpath(os.path.join(cwd, p))

    return absolute


def _json_hits(out: bytes, absolute: Callable[[str], str]) -> list[FileHits]:
    """rg --json's match and context events as hits (too many lines in all: too_many())."""
    hits: dict[str, FileHits] = {}
    n_lines = 0
    for raw in out.splitlines():
        ev = json.loads(raw)
        kind = ev.get("type")
        if kind not in ("match", "context"):
            continue
        data = ev["data"]
        path = absolute(_wire_text(data["path"]))
        fh = hits.setdefault(path, FileHits(path))
        n_lines += _add_lines(fh, _wire_text(data["lines"]).removesuffix("\n"), int(data["line_number"]),
                              kind == "match")
        if kind == "match":
            fh.count += 1
        if n_lines > MAX_LINES:
            raise too_many()
    # rg -U can print context for a file without any match (`^$` on "A\n"): not a hit.
    return [fh for fh in hits.values() if fh.count]


def _add_lines(fh: FileHits, text: str, first: int, match: bool) -> int:
    """An event's lines into fh (a line once a match stays one); how many were new."""
    new = 0
    for i, line in enumerate(text.split("\n")):
        prev = fh.lines.get(first + i)
        fh.lines[first + i] = (line, match or (prev is not None and prev[1]))
        new += prev is None
    return new


async def rg_output(rg: str, args: list[str], cwd: Path, sandbox: Any = None) -> bytes:
    """Run `rg args` in `cwd` (in the OS sandbox when it is on) and return its stdout; an rg
    error (exit 2 with nothing printed) is a ToolError. More than MAX_RG_BYTES is too many."""
    argv, env = [rg, *args], None
    fds: tuple[int, ...] = ()
    if sandbox is not None:  # the OS sandbox is on (sandbox.py): rg sees what Bash would see
        w = sandbox.wrap(argv, cwd, None, network=False)  # rg needs no proxy bridge
        argv, env, fds = w.argv, w.env, w.pass_fds
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, pass_fds=fds,
        )
    finally:
        for fd in fds:
            os.close(fd)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        chunks: list[bytes] = []
        size = 0
        err_task = asyncio.ensure_future(proc.stderr.read())
        while chunk := await proc.stdout.read(1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RG_BYTES:
                raise too_many()
        err = await err_task
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if code == 2 and not chunks:
        msg = err.decode("utf-8", errors="replace").strip()
        raise ToolError(f"rg error: {msg}" if msg else "rg failed")
    return b"".join(chunks)


async def run_rg(q: Query, rg: str, sandbox: Any = None) -> list[FileHits]:
    """The walk of q.root (when q.walk) and q.extra's files, in more than one rg when they are
    many (each command line stays well under the OS's limit)."""
    batches: list[list[str]] = [[]]
    size = 0
    for p in q.extra:
        if size > MAX_ARG_CHARS:
            batches.append([])
            size = 0
        batches[-1].append(p)
        size += len(p) + 1
    hits: dict[str, FileHits] = {}
    for batch in batches:
        args, cwd = rg_args(q, batch)
        for h in parse_rg(q, await rg_output(rg, args, cwd, sandbox), cwd):
            hits.setdefault(h.path, h)
        q = dataclasses.replace(q, walk=False) if q.walk else q
    return list(hits.values())
