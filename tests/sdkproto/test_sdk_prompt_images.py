"""An image in the SDK's own user line (`-p --input-format stream-json`) that the Messages API
cannot process (data not base64, no image, a JPEG called image/png, over 8000 px a side): kept in
the history as given, the API refused every later request of the session. The strict scripted
server refuses what the API refuses; the session must survive."""

from __future__ import annotations

import base64
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, loopwright_cmd, text

pytestmark = pytest.mark.e2e
HEAD = ["--output-format", "stream-json", "--verbose"]
TAIL = ["--input-format", "stream-json"]


def encoded(fmt: str, size: tuple[int, int]) -> str:
    """An image of `size` px in Pillow's format `fmt`, as base64."""
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buf, fmt)
    return base64.b64encode(buf.getvalue()).decode()


def cut_png() -> str:
    """A noisy PNG cut in half (a broken download): its head reads, its data does not decode."""
    import os

    from PIL import Image

    buf = io.BytesIO()
    Image.frombytes("RGB", (64, 64), os.urandom(64 * 64 * 3)).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()[:buf.tell() // 2]).decode()


PNG = encoded("PNG", (1, 1))
# (name, data, media type, what the model gets instead: a notice's words or the sent media type)
BAD = [("not-base64", "not base64 at all!", "image/png", "not shown"),
       ("png-head-only", "iVBORw0KGgo=", "image/png", "not shown"),
       ("cut-png", cut_png(), "image/png", "not shown"),
       ("jpeg-called-png", encoded("JPEG", (4, 4)), "image/png", "image/jpeg"),
       ("over-8000-px", encoded("PNG", (9000, 4)), "image/png", "scaled down")]


def image(data: str, mime: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


def expect_survived(sent: list[dict[str, Any]], want: str) -> None:
    """The first request's image blocks decode as their type (the strict server took it) and the
    bad image became what `want` names."""
    from loopwright.testing.api_rules import messages_problem

    assert messages_problem([{"role": "user", "content": sent}]) is None, sent
    if want.startswith("image/"):
        assert [b["source"]["media_type"] for b in sent if b["type"] == "image"] == [want], sent
    else:
        assert any(b["type"] == "text" and want in b["text"] for b in sent), sent


@pytest.mark.parametrize(("data", "mime", "want"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_image_in_a_user_line_does_not_poison_the_session(tmp_path: Path, data: str, mime: str,
                                                                  want: str) -> None:
    lines = [{"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "what is it?"},
                                                                     image(data, mime)]},
              "parent_tool_use_id": None, "session_id": ""},
             {"type": "user", "message": {"role": "user", "content": "and now?"},
              "parent_tool_use_id": None, "session_id": ""}]
    stdin = "".join(json.dumps(x) + "\n" for x in lines)
    with ScriptedServer([[text("a cat")], [text("still here")]]) as srv:
        p = subprocess.run([*loopwright_cmd(), "-p", *HEAD, "--model", "claude-sonnet-4-6", *TAIL], input=stdin,
                           capture_output=True, text=True, cwd=tmp_path, timeout=90,
                           env=cli_env(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=srv.url,
                                       LOOPWRIGHT_HOME=str(tmp_path / "home")))
        requests = srv.loop_requests
    results = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{") and json.loads(x)["type"] == "result"]
    assert [r["subtype"] for r in results] == ["success", "success"], (p.stdout[-2000:], p.stderr)
    assert [r["result"] for r in results] == ["a cat", "still here"]
    assert len(requests) == 2
    expect_survived(requests[0].body["messages"][0]["content"], want)


def test_an_image_that_decodes_is_sent_as_given(tmp_path: Path) -> None:
    stdin = json.dumps({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "what is it?"}, image(PNG, "image/png")]}, "parent_tool_use_id": None,
        "session_id": ""}) + "\n"
    with ScriptedServer([[text("a dot")]]) as srv:
        p = subprocess.run([*loopwright_cmd(), "-p", *HEAD, "--model", "claude-sonnet-4-6", *TAIL], input=stdin,
                           capture_output=True, text=True, cwd=tmp_path, timeout=90,
                           env=cli_env(ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=srv.url,
                                       LOOPWRIGHT_HOME=str(tmp_path / "home")))
        sent = srv.loop_requests[0].body["messages"][0]["content"]
    assert p.returncode == 0, p.stderr
    assert image(PNG, "image/png") in [{k: v for k, v in b.items() if k != "cache_control"} for b in sent]
