"""Fixtures shared by the managed-settings tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.managed import ENV, SYSTEM_DIR


@pytest.fixture
def managed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's managed folder (empty), named by the environment variable."""
    if (SYSTEM_DIR / "managed-settings.json").exists() or (SYSTEM_DIR / "managed-settings.d").exists():
        pytest.skip(f"{SYSTEM_DIR} holds managed settings on this machine: they would apply instead")
    folder = tmp_path / "policy"
    folder.mkdir()
    monkeypatch.setenv(ENV, str(folder))
    return folder
