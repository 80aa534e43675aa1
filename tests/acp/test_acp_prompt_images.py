"""An ACP `session/prompt` image block the Messages API cannot process (data not base64, no
image, a JPEG called image/png, over 8000 px a side): kept in the history as the editor sent it,
the API refused every later request of the session. The strict scripted server refuses what the
API refuses; the session must survive: the next prompt is answered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.acp.test_acp import MODEL, Editor, connected, run
from tests.helpers import text
from tests.sdkproto.test_sdk_prompt_images import BAD, expect_survived

pytestmark = pytest.mark.e2e
acp = pytest.importorskip("acp", reason="the ACP library (pip install 'loopwright[acp]')")


@pytest.mark.parametrize(("data", "mime", "want"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_image_in_a_prompt_does_not_poison_the_session(tmp_path: Path, data: str, mime: str,
                                                             want: str) -> None:
    work = tmp_path / "work"
    work.mkdir()

    async def go() -> Any:
        with ScriptedServer([[text("a cat")], [text("still here")]], model=MODEL) as srv:
            async with connected(Editor(), srv, tmp_path) as (conn, _):
                new = await conn.new_session(cwd=str(work), mcp_servers=[])
                first = await conn.prompt(session_id=new.session_id,
                                          prompt=[acp.text_block("what is it?"), acp.image_block(data, mime)])
                second = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("and now?")])
                return first, second, srv.loop_requests

    first, second, requests = run(go())
    assert (first.stop_reason, second.stop_reason) == ("end_turn", "end_turn")
    assert len(requests) == 2, [r.body["messages"] for r in requests]
    expect_survived(requests[0].body["messages"][0]["content"], want)
