"""The `loopwright` command run in this process by conftest's `cli` fixture (issue 23): the same
main() a console script calls, its exit code and output, without starting a program."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers import text, use, write_script


def test_version_and_a_usage_error(cli: Any) -> None:
    r = cli(["--version"])
    assert r.code == 0 and r.out.startswith("loopwright ")
    r = cli(["--no-such-flag"])
    assert r.code == 2 and "unrecognized arguments: --no-such-flag" in r.err


def test_a_headless_run_then_its_session_listed(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    model = write_script(tmp_path, [[use("r1", "Read", file_path=str(tmp_path / "a.txt"))], [text("read it")]])
    r = cli(["-p", "read a.txt", "--model", model, "--output-format", "json"], cwd=tmp_path)
    assert r.code == 0, r.err
    result = json.loads(r.out)
    assert result["subtype"] == "success" and result["result"] == "read it"
    listed = cli(["sessions", "list", "--json"], cwd=tmp_path)
    assert listed.code == 0 and [s["session_id"] for s in json.loads(listed.out)] == [result["session_id"]]
    shown = cli(["sessions", "show", result["session_id"], "--json"], cwd=tmp_path)
    assert shown.code == 0 and "alpha" in shown.out  # the Read's result is in the saved history


def test_stdin_is_the_prompt(cli: Any, tmp_path: Path) -> None:
    model = write_script(tmp_path, [[text("from stdin")]])
    r = cli(["-p", "--model", model, "--output-format", "json"], stdin="the prompt\n", cwd=tmp_path)
    assert r.code == 0, r.err
    assert json.loads(r.out)["result"] == "from stdin"
