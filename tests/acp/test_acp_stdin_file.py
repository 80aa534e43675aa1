"""`loopwright acp < lines.jsonl`: stdin a regular file (a script feeding saved lines) is read as a
pipe is (protolines.fd_reader), not 'unexpected error: ValueError: Pipe transport is for
pipes/sockets only' before a line was read; stdout a file is refused in one line that says how
(asyncio's pipe transport writes to no file). The real CLI, a real file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import loopwright_cmd

pytest.importorskip("acp", reason="the ACP library (pip install 'loopwright[acp]')")
from tests.acp.test_acp import MODEL, agent_env  # noqa: E402

pytestmark = pytest.mark.e2e


def _lines(tmp_path: Path) -> Path:
    f = tmp_path / "lines.jsonl"
    f.write_text('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\nnot json\n')
    return f


def test_acp_reads_its_lines_from_a_regular_file_on_stdin(tmp_path: Path) -> None:
    with _lines(tmp_path).open("rb") as stdin:
        p = subprocess.run([*loopwright_cmd(), "acp", "--model", MODEL, "--base-url", "http://127.0.0.1:9"],
                           stdin=stdin, capture_output=True, env=agent_env(tmp_path), timeout=120)
    assert p.returncode == 0 and b"Pipe transport" not in p.stderr, p.stderr
    answers = {m["id"]: m for m in map(json.loads, p.stdout.splitlines())}
    assert answers[1]["result"]["protocolVersion"] == 1, answers
    assert answers[None]["error"]["code"] == -32700, answers  # the line that is not JSON, answered


def test_acp_refuses_a_file_for_stdout_in_one_line(tmp_path: Path) -> None:
    with _lines(tmp_path).open("rb") as stdin, (tmp_path / "out.jsonl").open("wb") as stdout:
        p = subprocess.run([*loopwright_cmd(), "acp", "--model", MODEL, "--base-url", "http://127.0.0.1:9"],
                           stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=agent_env(tmp_path), timeout=120)
    err = p.stderr.decode()
    assert p.returncode == 2 and len(err.strip().splitlines()) == 1, err
    assert "not a file" in err and "tee" in err, err
