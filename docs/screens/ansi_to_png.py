"""A `tmux capture-pane -e` text as a PNG: its colors as HTML, shot in headless Chromium.
    .venv/bin/python docs/screens/ansi_to_png.py docs/screens/permission-dialog.txt"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

COLORS = ["#1e1e1e", "#e05561", "#8cc265", "#d18f52", "#4aa5f0", "#c162de", "#42b3c2", "#d7dae0"]
BRIGHT = ["#7f848e", "#ff616e", "#a5e075", "#f0a45d", "#4dc4ff", "#de73ff", "#4cd1e0", "#e6e6e6"]
FG, BG = "#d7dae0", "#1e1e1e"


def to_html(text: str) -> str:
    state: dict[str, str | bool] = {}
    out: list[str] = []
    for part in re.split(r"(\x1b\[[0-9;]*m)", text):
        if not part.startswith("\x1b["):
            fg, bg = str(state.get("fg", FG)), str(state.get("bg", BG))
            if state.get("reverse"):
                fg, bg = bg, fg
            style = f"color:{fg};background:{bg};" + ("font-weight:bold;" if state.get("bold") else "") + (
                "font-style:italic;" if state.get("italic") else "")
            out.append(f'<span style="{style}">{html.escape(part)}</span>' if part else "")
            continue
        codes = [int(c) for c in part[2:-1].split(";") if c] or [0]
        for c in codes:
            if c == 0:
                state = {}
            elif c in (1, 3, 7):
                state[{1: "bold", 3: "italic", 7: "reverse"}[c]] = True
            elif c in (22, 23, 27):
                state.pop({22: "bold", 23: "italic", 27: "reverse"}[c], None)
            elif 30 <= c <= 37 or 90 <= c <= 97:
                state["fg"] = (COLORS if c < 90 else BRIGHT)[c % 10]
            elif 40 <= c <= 47:
                state["bg"] = COLORS[c % 10]
            elif c == 39:
                state.pop("fg", None)
            elif c == 49:
                state.pop("bg", None)
    return (f'<html><body style="margin:0;background:{BG}"><pre style="margin:12px;font:14px/1.3 '
            f'\'DejaVu Sans Mono\',monospace;color:{FG}">{"".join(out)}</pre></body></html>')


def shoot(capture: Path) -> Path:
    tmp = Path(tempfile.mkdtemp())
    page = tmp / "page.html"
    page.write_text(to_html(capture.read_text(encoding="utf-8")), encoding="utf-8")
    lines = capture.read_text(encoding="utf-8").count("\n") + 1
    png = capture.with_suffix(".png")
    subprocess.run([shutil.which("chromium") or "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--no-first-run", f"--user-data-dir={tmp / 'chrome'}",
                    f"--window-size=900,{lines * 19 + 30}", f"--screenshot={png}", page.as_uri()],
                   check=True, capture_output=True, timeout=60)
    return png


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(shoot(Path(arg)))
