"""Room: built-in tools (on tools.base). Owns Grep's ripgrep backend (its command line, its output
read back into FileHits); may import tools.base and the grep package's query.

rg runs with ripgrep's defaults plus `--no-require-git` and `--no-config`, in the search root
(globs are relative to it), inside the OS sandbox when that is on.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ..base import ToolError
from .query import MAX_LINES, FileHits, Query, too_many

MAX_RG_BYTES = 256 * 1024 * 1024


def rg_path() -> str | None:
    return shutil.which("rg")


def rg_args(q: Query) -> tuple[list[str], Path]:
    """The rg command line and the directory to run it in."""
    args = ["--no-config", "--no-require-git", "--color=never", "--no-messages"]
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
        cwd, target = q.root, "."
    else:
        cwd, target = q.root.parent, q.root.name
    return args + ["-e", q.pattern, "--", target], cwd


def _wire_text(d: dict[str, Any]) -> str:
    if "text" in d:
        return str(d["text"])
    return base64.b64decode(d.get("bytes", "")).decode("utf-8", errors="replace")


def parse_rg(q: Query, out: bytes, cwd: Path) -> list[FileHits]:
    def absolute(p: str) -> str:
        return os.path.normpath(os.path.join(cwd, p))

    hits: dict[str, FileHits] = {}
    if q.mode == "files_with_matches":
        return [FileHits(absolute(p), 1) for p in out.decode("utf-8", errors="replace").splitlines() if p]
    if q.mode == "count":
        res = []
        for line in out.decode("utf-8", errors="replace").splitlines():
            p, _, n = line.rpartition(":")
            if p:
                res.append(FileHits(absolute(p), int(n)))
        return res
    n_lines = 0
    for raw in out.splitlines():
        ev = json.loads(raw)
        kind = ev.get("type")
        if kind not in ("match", "context"):
            continue
        data = ev["data"]
        path = absolute(_wire_text(data["path"]))
        fh = hits.setdefault(path, FileHits(path))
        text = _wire_text(data["lines"])
        if text.endswith("\n"):
            text = text[:-1]
        first = int(data["line_number"])
        for i, line in enumerate(text.split("\n")):
            prev = fh.lines.get(first + i)
            fh.lines[first + i] = (line, kind == "match" or (prev is not None and prev[1]))
            n_lines += prev is None
        if kind == "match":
            fh.count += 1
        if n_lines > MAX_LINES:
            raise too_many()
    # rg -U can print context for a file without any match (`^$` on "A\n"): not a hit.
    return [fh for fh in hits.values() if fh.count]



async def run_rg(q: Query, rg: str, sandbox: Any = None) -> list[FileHits]:
    args, cwd = rg_args(q)
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
    return parse_rg(q, b"".join(chunks), cwd)

