"""While the model thinks (a call unanswered for loop/model_call.THINKING_S), a run that has the
Bash tool loads the Bash parser in the background (bashlex builds its grammar tables at every
process: gate/shell/bashlexload.py), so the first Bash verdict does not wait for it. A quick
answer, or a run without Bash, loads nothing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e  # fresh processes: bashlex is not loaded in them yet

CODE = """
import json, sys, threading
import loopwright as lw
delay, tools = float(sys.argv[1]), json.loads(sys.argv[2])
turns = [{"content": [{"type": "text", "text": "thought about it"}], "delay": delay}]
r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel(turns), tools=tools))
started = [t for t in threading.enumerate() if t.name == "loopwright-bashlex"]
for t in started:
    t.join()
print(json.dumps({"ok": r.subtype == "success", "warmed": bool(started) or "bashlex" in sys.modules,
                  "tables": hasattr(sys.modules.get("bashlex.parser"), "yaccparser")}))
"""


def run(delay: float, tools: list[str]) -> dict[str, bool]:
    p = subprocess.run([sys.executable, "-c", CODE, str(delay), json.dumps(tools)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return dict(json.loads(p.stdout))


def test_a_thinking_model_gets_the_bash_parser_loaded_meanwhile() -> None:
    assert run(0.6, ["Bash", "Read"]) == {"ok": True, "warmed": True, "tables": True}


def test_a_quick_answer_or_a_run_without_bash_loads_nothing() -> None:
    assert run(0.05, ["Bash", "Read"]) == {"ok": True, "warmed": False, "tables": False}
    assert run(0.6, ["Read"]) == {"ok": True, "warmed": False, "tables": False}
