"""Start-up toward the floor (issue 29 item 3): the first request of `loopwright -p` loads
neither importlib.metadata nor the email package (the retry policy wants the second only to
parse a Retry-After date), nor httpcore2, anyio or sniffio: the transport is h11 on asyncio's
streams (models/wire.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.test_startup_imports import modules_of_one_call, modules_of_sdk_call

pytestmark = pytest.mark.e2e  # subprocesses: a fresh interpreter each

SLOW_STDLIB = ("importlib.metadata", "email", "csv", "zipfile")
NOT_NEEDED = ("httpcore2", "anyio", "sniffio", "typing_extensions")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_first_request_loads_no_importlib_metadata_and_no_email(provider: str, tmp_path: Path) -> None:
    loaded, requests = modules_of_one_call(provider, tmp_path)
    assert requests == 1 and "loopwright.models.wire" in loaded and "h11" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in SLOW_STDLIB or m.startswith("importlib.metadata")) == []
    assert sorted(m for m in loaded if m.split(".")[0] in NOT_NEEDED) == []


def test_the_sdk_protocol_path_to_the_first_request_loads_neither(tmp_path: Path) -> None:
    # loopwright as the Agent SDKs' CLI (--input-format stream-json) starts a process per session
    loaded, requests = modules_of_sdk_call(tmp_path)
    assert requests == 1
    assert "loopwright.models.wire" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in SLOW_STDLIB or m.startswith("importlib.metadata")) == []
    assert sorted(m for m in loaded if m.split(".")[0] in NOT_NEEDED) == []
