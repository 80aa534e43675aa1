"""bashlex is imported as it is (issue 41: no import hook, no table cache of ours): a fresh
process parses every kind of command for real and writes nothing under $LOOPWRIGHT_HOME.
bashlexload.warm() builds its tables in a background thread; a parse meanwhile waits for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # a fresh process: bashlex is imported at the first parse

COMMANDS = ["ls -la", "git diff | head -5 && echo ok", "for i in 1 2; do echo $i; done", "(cd x; make) > o 2>&1",
            "echo $(date) `whoami`", "cat <<EOF\nhi\nEOF", "sh -c 'rm -rf /tmp/x'", "echo 'unterminated"]

CODE = """
import json, sys
from loopwright.gate.shell import bashparse
print(json.dumps([[c.plain for c in p.commands] + [p.error] for p in map(bashparse.parse, json.loads(sys.argv[1]))]))
"""


def test_a_fresh_process_parses_for_real_and_writes_no_cache(tmp_path: Path) -> None:
    env = {**os.environ, "LOOPWRIGHT_HOME": str(tmp_path / "home")}
    p = subprocess.run([sys.executable, "-c", CODE, json.dumps(COMMANDS)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    parsed = json.loads(p.stdout)
    assert parsed[1] == ["git diff", "head -5", "echo ok", None]
    assert parsed[2] == ["echo $i", None]
    assert parsed[4] == ["date", "whoami", "echo $(date) `whoami`", None]  # substitutions run first
    assert parsed[6] == ["rm -rf /tmp/x", None]  # sh -c's body
    assert parsed[-1][-1] is not None  # an unterminated quote is an error, never a guess
    assert not (tmp_path / "home").exists()


WARM = """
import json, sys, threading
from loopwright.gate.shell import bashlexload, bashparse
bashlexload.warm()
[t] = [t for t in threading.enumerate() if t.name == "loopwright-bashlex"]
out = [[c.plain for c in p.commands] + [p.error] for p in map(bashparse.parse, json.loads(sys.argv[1]))]
t.join()
bashlexload.warm()  # loaded: no second thread
print(json.dumps({"parsed": out, "threads": [t.name for t in threading.enumerate()]}))
"""


def test_warm_loads_bashlex_in_a_thread_and_a_parse_meanwhile_gets_the_same_answers(tmp_path: Path) -> None:
    env = {**os.environ, "LOOPWRIGHT_HOME": str(tmp_path / "home")}
    cold, warm = (subprocess.run([sys.executable, "-c", code, json.dumps(COMMANDS)], env=env, capture_output=True,
                                 text=True, timeout=120) for code in (CODE, WARM))
    assert cold.returncode == 0 and warm.returncode == 0, cold.stderr + warm.stderr
    got = json.loads(warm.stdout)
    assert got["parsed"] == json.loads(cold.stdout)
    assert got["threads"] == ["MainThread"]
