"""While the model thinks (a read from its server waits idle.IDLE_S), a run that may call Bash
loads the Bash parser in the background (bashlex builds its grammar tables at every process:
gate/shell/bashlexload.py), so that its first Bash verdict does not wait for it. A quick
answer, or a run without Bash, loads nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopwright.idle import IDLE_S
from loopwright.testing import ScriptedServer

pytestmark = pytest.mark.e2e  # fresh `loopwright -p` processes: bashlex is not loaded in them yet

THINKING = IDLE_S + 0.4  # the model's time to its answer
MARK = "BASHLEX:"
CODE = f"""
import atexit, json, sys, threading

def report():
    started = [t for t in threading.enumerate() if t.name == "loopwright-bashlex"]
    for t in started:
        t.join()
    print({MARK!r} + json.dumps({{"warmed": bool(started) or "bashlex" in sys.modules,
                                 "tables": hasattr(sys.modules.get("bashlex.parser"), "yaccparser")}}), file=sys.stderr)

atexit.register(report)
from loopwright.cli import main
sys.exit(main())
"""


def one_call(tmp_path: Path, thinking: float, *flags: str) -> dict[str, bool]:
    with ScriptedServer([{"content": [{"type": "text", "text": "thought about it"}], "delay": thinking}]) as srv:
        env = {**os.environ, "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "k",
               "LOOPWRIGHT_HOME": str(tmp_path / ".lw")}
        p = subprocess.run([sys.executable, "-c", CODE, "-p", "hi", "--model", "claude-sonnet-4-5",
                            "--no-session-persistence", *flags], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    [line] = [x for x in p.stderr.splitlines() if x.startswith(MARK)]
    return dict(json.loads(line.removeprefix(MARK)))


def test_a_thinking_model_gets_the_bash_parser_loaded_meanwhile(tmp_path: Path) -> None:
    assert one_call(tmp_path, THINKING) == {"warmed": True, "tables": True}


def test_a_quick_answer_or_a_run_without_bash_loads_nothing(tmp_path: Path) -> None:
    assert one_call(tmp_path, 0.0) == {"warmed": False, "tables": False}
    assert one_call(tmp_path, THINKING, "--disallowedTools", "Bash") == {"warmed": False, "tables": False}


def test_the_parser_is_wanted_only_while_the_model_call_lasts() -> None:
    """Only a wait on the model's answer is its thinking: a later read (a slow web page in a tool)
    does not build the parser."""
    code = ("import loopwright as lw\nfrom loopwright import idle\n"
            "r = lw.run('go', lw.AgentOptions(model=lw.ScriptedModel([[{'type': 'text', 'text': 'hi'}]]), tools=['Bash']))\n"
            "print(r.subtype, idle.pending())")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stdout.split()) == (0, ["success", "False"]), p.stderr
