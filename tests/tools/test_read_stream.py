"""Issue 44: Read streams a file (what it sends, and the memory it takes, are bounded by the page,
never the file) and says the same as reading the whole text would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopwright.tools.read as read_mod
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_read_tool
from loopwright.tools.paths import decode
from loopwright.tools.read import MAX_OUTPUT_CHARS, window
from tests.helpers import call_tool

READ = make_read_tool()
SRC = Path(read_mod.__file__).resolve().parents[2]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="ab\r\n\u00e9\u4e2d", max_size=60), offset=st.integers(0, 12),
       limit=st.integers(0, 12), block=st.integers(1, 9), bom=st.booleans())
def test_streaming_says_what_the_whole_text_says(tmp_path_factory: pytest.TempPathFactory, text: str, offset: int,
                                                 limit: int, block: int, bom: bool) -> None:
    """Blocks of a few bytes (lines and characters cut across blocks) give the page of the whole text."""
    f = tmp_path_factory.mktemp("r") / "f.txt"
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    f.write_bytes(raw)
    inp = {"file_path": str(f), **({"offset": offset} if offset else {}), **({"limit": limit} if limit else {})}
    mp = pytest.MonkeyPatch()
    mp.setattr(read_mod, "READ_BLOCK", block)
    try:
        out, err = call_tool(READ, ToolContext(f.parent), inp)
    finally:
        mp.undo()
    assert not err
    whole, enc = decode(raw)
    assert out == window(whole, inp, f, "utf-8" if enc == "utf-8-sig" else enc)


def test_latin1_found_late_decodes_the_page_as_latin1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "late.txt"
    f.write_bytes(b"caf\xc3\xa9\n" + b"x\n" * 50 + b"\xff\n")  # valid UTF-8 until the last line
    monkeypatch.setattr(read_mod, "READ_BLOCK", 16)
    out, err = call_tool(READ, ToolContext(tmp_path), {"file_path": str(f), "limit": 1})
    assert not err and out.startswith("     1\tcaf\u00c3\u00a9") and "latin-1" in out and "of 52" in out


PROBE = """
import json, sys, tracemalloc
sys.path.insert(0, sys.argv[1])
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_read_tool
from tests.helpers import call_tool
read = make_read_tool()
out = {}
for name in sys.argv[2:]:
    tracemalloc.start()
    text, err = call_tool(read, ToolContext("/"), {"file_path": name})
    out[name] = [tracemalloc.get_traced_memory()[1], len(text), err, text[-400:]]
    tracemalloc.stop()
print(json.dumps(out))
"""


@pytest.mark.e2e
def test_a_50mb_read_sends_a_page_and_takes_memory_for_a_page(tmp_path: Path) -> None:
    """Many lines or one line: at most MAX_OUTPUT_CHARS sent, a notice naming offset, and a peak
    (tracemalloc, in a fresh interpreter) at most 64 MiB above a trivial Read's."""
    small = tmp_path / "small.txt"
    small.write_text("one line\n")
    lines = tmp_path / "lines.txt"
    with lines.open("w") as f:
        row = "x" * 99 + "\n"
        for _ in range(50 * 1024 * 1024 // len(row)):
            f.write(row)
    one = tmp_path / "one.txt"
    with one.open("w") as f:
        for _ in range(50):
            f.write("y" * (1 << 20))
    p = subprocess.run([sys.executable, "-c", PROBE, str(SRC), str(small), str(lines), str(one)],
                       capture_output=True, text=True, timeout=120, cwd=SRC.parent)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)
    base = got[str(small)][0]
    for name in (lines, one):
        peak, sent, err, tail = got[str(name)]
        assert not err and sent <= MAX_OUTPUT_CHARS, (name, sent)
        assert peak - base <= 64 * 1024 * 1024, (name, peak, base)
    assert "Use offset=" in got[str(lines)][3] and "of 524288" in got[str(lines)][3]
    assert "1 line(s) longer than 2000" in got[str(one)][3]
