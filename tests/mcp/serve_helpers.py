"""`loopwright mcp serve --http` in a subprocess, for the tests of tests/mcp: started on a free
loopback port, its URL read from its first stderr line, stopped at the end."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import cli_env, loopwright_cmd


@contextmanager
def http_server(cwd: Path, home: Path, *flags: str, auth: bool = False, **env: str) -> Iterator[str]:
    """Yields the server's URL (http://127.0.0.1:PORT/mcp). Without a token (--auth-token-file,
    $LOOPWRIGHT_MCP_TOKEN) or `auth`, the server runs with --no-auth."""
    e = cli_env(HOME=str(home), LOOPWRIGHT_HOME=str(home / ".loopwright"), **env)
    if not (auth or "--auth-token-file" in flags or "LOOPWRIGHT_MCP_TOKEN" in env):
        flags = (*flags, "--no-auth")
    p = subprocess.Popen([*loopwright_cmd(), "mcp", "serve", "--cwd", str(cwd), "--http", "0", *flags],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env=e, cwd=cwd)
    try:
        assert p.stderr is not None
        first = p.stderr.readline()
        assert "listening on http://" in first, (first, p.stderr.read() if p.poll() is not None else "")
        threading.Thread(target=lambda: sys.stderr.write(p.stderr.read() if p.stderr else ""), daemon=True).start()
        yield first.split("listening on ", 1)[1].split()[0]
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def private_file(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text)
    os.chmod(path, mode)
    return path
