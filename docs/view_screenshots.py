"""Makes the viewer's screenshots in docs/: a scripted loopwright session (compaction, a subagent,
a refusal, an interrupt; the one tests/view/test_view.py builds) and Claude Code's own transcript of
the fix-the-test task (tests/fixtures), each rendered by `loopwright view` and shot in headless
Chromium.   .venv/bin/python docs/view_screenshots.py"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_view import CC_FIXTURE, make_session  # noqa: E402

from loopwright.view import load_view, render  # noqa: E402


def shoot(transcript: Path, png: Path, tmp: Path) -> None:
    page = tmp / (png.stem + ".html")
    page.write_text(render(load_view(transcript)))
    chromium = shutil.which("chromium") or "chromium"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--disable-background-networking", "--no-first-run", f"--user-data-dir={tmp / 'chrome'}",
                    "--window-size=1240,1500", f"--screenshot={png}", page.as_uri()],
                   check=True, capture_output=True, timeout=60)
    print(png)


if __name__ == "__main__":
    tmp = Path(tempfile.mkdtemp())
    session, _ = make_session(tmp)
    shoot(session, ROOT / "docs" / "view-loopwright.png", tmp)
    shoot(CC_FIXTURE, ROOT / "docs" / "view-claude-code.png", tmp)
