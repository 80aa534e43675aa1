"""The input schemas Claude Code itself sends for Read, NotebookEdit and AskUserQuestion are ours
(Claude Code in its SDK mode, where AskUserQuestion exists; tool search off, so that the first
request carries every schema). ExitPlanMode is not compared: Claude Code 2.1's takes no input (it
reads a plan file); ours keeps the `{plan}` of the issue and of earlier Claude Codes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing.server import ScriptedServer
from loopwright.tools.builtin import default_tools
from tests.helpers import TESTS, text

CLAUDE = TESTS / "node" / "node_modules" / ".bin" / "claude"


def _shape(schema: dict[str, Any]) -> Any:
    """Properties with their types (and items' shape, recursively), required, additionalProperties."""
    if schema.get("type") == "array":
        return ("array", _shape(schema["items"]), schema.get("minItems"), schema.get("maxItems"))
    if schema.get("type") != "object" or "properties" not in schema:
        return (schema.get("type"), tuple(schema.get("enum", ())))
    return ({k: _shape(v) for k, v in schema["properties"].items()}, sorted(schema.get("required", [])),
            bool(schema.get("additionalProperties", True)))


@pytest.mark.e2e
@pytest.mark.skipif(not CLAUDE.exists(), reason="Claude Code not installed (cd tests/node && npm install)")
def test_schemas_are_claude_codes(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    msg = {"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": None, "session_id": ""}
    with ScriptedServer([[text("hi")]]) as srv:
        env = {**os.environ, "HOME": str(tmp_path / "home"), "ANTHROPIC_BASE_URL": srv.url,
               "ANTHROPIC_API_KEY": "test", "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "ENABLE_TOOL_SEARCH": "false"}
        out = subprocess.run([str(CLAUDE), "-p", "--input-format", "stream-json", "--output-format", "stream-json",
                              "--verbose", "--permission-prompt-tool", "stdio"], input=json.dumps(msg) + "\n",
                             env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180)
        assert srv.loop_requests, out.stderr[-2000:]
        theirs = {t["name"]: t["input_schema"] for t in srv.loop_requests[0].body["tools"]}
    ours = {t.name: t.input_schema for t in default_tools()}
    for name in ("NotebookEdit", "AskUserQuestion"):
        assert _shape(ours[name]) == _shape(theirs[name]), name
    cc_read = dict(theirs["Read"], properties={k: v for k, v in theirs["Read"]["properties"].items()
                                               if k != "allow_large"})  # Claude Code's own escape hatch
    props = {k: v.get("type") for k, v in ours["Read"]["properties"].items()}
    assert props == {k: v.get("type") for k, v in cc_read["properties"].items()}
    assert ours["Read"]["properties"]["pages"]["description"] == theirs["Read"]["properties"]["pages"]["description"]
    for k, v in theirs["NotebookEdit"]["properties"].items():
        assert ours["NotebookEdit"]["properties"][k]["description"] == v["description"], k
