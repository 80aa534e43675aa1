"""Room: settings (above options). Owns Claude Code's `apiKeyHelper`: a command whose output is the
API key; may import models.base, childout and children.

The command runs when a request needs a key and none is cached: its stdout (stripped) is the key,
kept for CLAUDE_CODE_API_KEY_HELPER_TTL_MS milliseconds (default 5 minutes, as in Claude Code),
then the command runs again; after a 401 it runs again at once and the call is retried with its
new key (models.anthropic). The key is never logged, and an error names the command and its
exit status and stderr only (its stdout is the key, or part of one). Its output is read capped
(childout.py): past 1 MiB it is not a key, and the helper is ended."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping

from .childout import read_sync
from .children import disown, own, signal_group, watch
from .models.base import ModelError

DEFAULT_TTL_MS = 300_000
HELPER_TIMEOUT_S = 60.0
MAX_OUTPUT_BYTES = 1 << 20  # of stdout or stderr: more is not a key (and an endless stream would fill memory)


class ApiKeyHelper:
    """A callable: the current key (running the command when the cached one has expired)."""

    def __init__(self, command: str, cwd: str, env: Mapping[str, str] | None = None) -> None:
        self.command = command
        self.cwd = cwd
        self.env = {**os.environ, **(env or {})}
        raw = self.env.get("CLAUDE_CODE_API_KEY_HELPER_TTL_MS", "")
        self.ttl_s = (int(raw) if raw.strip().isdigit() else DEFAULT_TTL_MS) / 1000
        self._key: str | None = None
        self._expires = 0.0
        self._lock = threading.Lock()
        self.runs = 0  # how many times the command ran (tests read it)

    def __repr__(self) -> str:  # never the key
        return f"ApiKeyHelper({self.command!r}, ttl_s={self.ttl_s:g})"

    def __call__(self) -> str:
        with self._lock:
            now = time.monotonic()
            if self._key is not None and now < self._expires:
                return self._key
            self._key, self._expires = self._run(), time.monotonic() + self.ttl_s
            return self._key

    def expire(self) -> None:
        """Forget the cached key: the next request runs the command again (after a 401)."""
        with self._lock:
            self._expires = 0.0

    def _run(self) -> str:
        self.runs += 1
        watch()
        try:  # its own group, owned while it runs (children.py): loopwright ending, however it ends, ends it
            proc = subprocess.Popen(self.command, shell=True, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as e:
            raise ModelError(f"apiKeyHelper {self.command!r} could not run: {e}") from None
        own(proc.pid, "apiKeyHelper")
        try:
            got = read_sync(proc, MAX_OUTPUT_BYTES, HELPER_TIMEOUT_S)  # (capped while read: a key is short)
        except subprocess.TimeoutExpired:
            _end(proc)
            raise ModelError(f"apiKeyHelper {self.command!r} gave no key within {HELPER_TIMEOUT_S:g} s") from None
        finally:
            disown(proc.pid)
        if got.truncated:
            _end(proc)
            raise ModelError(f"apiKeyHelper {self.command!r} printed over {MAX_OUTPUT_BYTES:,} bytes on "
                             f"{got.truncated}: not a key; it was ended")
        err = got.stderr.decode(errors="replace")
        if proc.returncode != 0:
            raise ModelError(f"apiKeyHelper {self.command!r} failed with exit status {proc.returncode}: "
                             f"{err.strip()[:500] or '(no stderr)'}")
        key = got.stdout.decode(errors="replace").strip()
        if not key:
            raise ModelError(f"apiKeyHelper {self.command!r} printed no key")
        return key


def _end(proc: subprocess.Popen[bytes]) -> None:
    """End a helper with whatever it started (its group, and what left it: children.signal_group)
    and reap it. Its pipes are closed, not read to their end: a daemon it started (`setsid`, a
    double fork) may hold them open for as long as it lives."""
    signal_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)  # (SIGKILLed: at once, unless the kernel is stuck)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
