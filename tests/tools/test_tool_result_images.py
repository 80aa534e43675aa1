"""A Python `@lw.tool`'s image the Messages API cannot process (data not base64, no image, a JPEG
called image/png, over 8000 px a side), returned in MCP's content shape: it takes another path
than an MCP server's result, and kept in the history the API refused every later request of the
session. Against the strict scripted server (it refuses what the API refuses), the run goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.testing import ScriptedServer
from tests.helpers import text, use
from tests.sdkproto.test_sdk_prompt_images import BAD, expect_survived


@pytest.mark.parametrize(("data", "mime", "want"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_image_a_python_tool_returns_does_not_poison_the_session(tmp_path: Path, data: str, mime: str,
                                                                       want: str) -> None:
    @lw.tool
    def shot() -> dict[str, Any]:
        """A screenshot."""
        return {"content": [{"type": "image", "data": data, "mimeType": mime}, {"type": "text", "text": "kept"}]}

    with ScriptedServer([[use("s1", "shot")], [text("seen")]]) as srv:
        r = lw.run("look", lw.AgentOptions(model="claude-sonnet-4-5", base_url=srv.url, api_key="k", cwd=tmp_path,
                                           max_retries=0, tools=[shot]))
        requests = srv.loop_requests
    assert r.subtype == "success" and r.result == "seen", r.errors
    assert len(requests) == 2
    result = requests[1].body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["content"][-1]["text"].startswith("kept"), result
    expect_survived(result["content"], want)
