"""`loopwright -p --input-format stream-json < lines.jsonl`: stdin a regular file (a script feeding
saved lines, as Claude Code takes them) is read as a pipe is, not a traceback ('Pipe transport is
for pipes/sockets only'). The real CLI, a real file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import cli_env, loopwright_cmd, text, write_script


@pytest.mark.e2e
def test_stream_json_lines_from_a_regular_file_on_stdin(tmp_path: Path) -> None:
    model = write_script(tmp_path, [[text("first answer")], [text("second answer")]])
    lines = tmp_path / "lines.jsonl"
    lines.write_text("".join(json.dumps({"type": "user", "message": {"role": "user", "content": t}}) + "\n"
                             for t in ("one", "two")))
    with lines.open("rb") as stdin:
        p = subprocess.run([*loopwright_cmd(), "-p", "--model", model, "--input-format", "stream-json",
                            "--output-format", "stream-json", "--verbose"], stdin=stdin, capture_output=True,
                           text=True, cwd=tmp_path, env=cli_env(), timeout=120)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    results = [json.loads(ln) for ln in p.stdout.splitlines() if '"type": "result"' in ln]
    assert [r["result"] for r in results] == ["first answer", "second answer"], p.stdout
