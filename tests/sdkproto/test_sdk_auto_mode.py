"""The Agent SDK's `permission_mode="auto"` against loopwright's CLI (issue 43): the SDK passes
`--permission-mode auto`; the run's classifier calls (to the same loopback server) allow the
benign edit and mark `rm -rf` risky, which a headless run (no can_use_tool) refuses.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import bash, classifier_action, text, use, verdict
from tests.sdkproto.test_sdk_protocol import collect, options, result_of

pytest.importorskip("claude_agent_sdk")
pytestmark = pytest.mark.e2e


def test_sdk_permission_mode_auto(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    note = tmp_path / "note.txt"
    agent = iter([[use("w1", "Write", file_path=str(note), content="hi\n"), bash("rm -rf build", "b1")],
                  [text("done")]])
    judged: list[str] = []

    def answer(history: list[dict[str, Any]]) -> Any:
        action = classifier_action(history)
        if action is not None:
            judged.append(action.strip().split(":")[0])
            return verdict("ask" if "rm -rf" in action else "allow", "s")
        return next(agent)

    with ScriptedServer(answer) as srv:
        msgs = asyncio.run(collect("write the note, clean up", options("loopwright", srv, tmp_path,
                                                                         permission_mode="auto")))
    result = result_of(msgs)
    assert result.subtype == "success", result
    assert note.read_text() == "hi\n" and (tmp_path / "build").is_dir()
    assert judged == ["Write", "Bash"]
    assert [d["tool_name"] for d in result.permission_denials or []] == ["Bash"]
