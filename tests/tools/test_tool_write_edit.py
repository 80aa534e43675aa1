"""Write, Edit and MultiEdit on real temp files."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.mtime import stamp, unchanged
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import (
    default_tools,
    make_edit_tool,
    make_multi_edit_tool,
    make_read_tool,
    make_write_tool,
)
from tests.helpers import call_tool, first_tool_result, text, use

READ, WRITE, EDIT, MULTI = make_read_tool(), make_write_tool(), make_edit_tool(), make_multi_edit_tool()


class Recorder:
    """before_file_change: records each path with the file's content at that moment."""

    def __init__(self) -> None:
        self.calls: list[tuple[Path, bytes | None]] = []

    def __call__(self, path: Path) -> None:
        self.calls.append((path, path.read_bytes() if path.exists() else None))


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(tmp_path, before_file_change=Recorder())


def rec(ctx: ToolContext) -> Recorder:
    assert isinstance(ctx.before_file_change, Recorder)
    return ctx.before_file_change


def bump_mtime(p: Path) -> None:
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_schemas() -> None:
    assert WRITE.input_schema["required"] == ["file_path", "content"]
    assert EDIT.input_schema["required"] == ["file_path", "old_string", "new_string"]
    assert set(EDIT.input_schema["properties"]) == {"file_path", "old_string", "new_string", "replace_all"}
    item = MULTI.input_schema["properties"]["edits"]["items"]
    assert item["required"] == ["old_string", "new_string"]
    for t in (WRITE, EDIT, MULTI):
        assert not t.read_only and t.input_schema["additionalProperties"] is False


# --- Write -----------------------------------------------------------------------------------

def test_write_creates_parents_and_records(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "new" / "dir" / "f.txt"
    out, err = call_tool(WRITE, ctx, file_path=str(p), content="hello\n")
    assert not err and "created" in out
    assert p.read_text() == "hello\n"
    assert rec(ctx).calls == [(p, None)]
    assert unchanged(p, ctx.state.read.stamps[str(p)], stamp(p))
    # written in this session: may be overwritten without a Read
    out, err = call_tool(WRITE, ctx, file_path=str(p), content="again\n")
    assert not err and p.read_text() == "again\n"
    assert rec(ctx).calls[-1] == (p, b"hello\n")


def test_write_existing_requires_fresh_read(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "f.txt"
    p.write_text("orig\n")
    out, err = call_tool(WRITE, ctx, file_path=str(p), content="x")
    assert err and "has not been read" in out and p.read_text() == "orig\n"
    call_tool(READ, ctx, file_path=str(p))
    p.write_text("changed by someone\n")
    bump_mtime(p)
    out, err = call_tool(WRITE, ctx, file_path=str(p), content="x")
    assert err and "modified since" in out and p.read_text() == "changed by someone\n"
    assert rec(ctx).calls == []  # refused writes never reach the checkpoint hook
    call_tool(READ, ctx, file_path=str(p))
    out, err = call_tool(WRITE, ctx, file_path=str(p), content="x")
    assert not err and p.read_text() == "x"


def test_write_keeps_crlf_and_bom(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "w.txt"
    p.write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    call_tool(READ, ctx, file_path=str(p))
    out, err = call_tool(WRITE, ctx, file_path=str(p), content="x\ny\n")
    assert not err
    assert p.read_bytes() == b"\xef\xbb\xbfx\r\ny\r\n"


def test_write_to_directory_is_error(ctx: ToolContext, tmp_path: Path) -> None:
    out, err = call_tool(WRITE, ctx, file_path=str(tmp_path), content="x")
    assert err and "directory" in out


# --- Edit ------------------------------------------------------------------------------------

def read_first(ctx: ToolContext, p: Path) -> None:
    _, err = call_tool(READ, ctx, file_path=str(p))
    assert not err


def test_edit_unique_replacement(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "a.py"
    p.write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    read_first(ctx, p)
    out, err = call_tool(EDIT, ctx, file_path="a.py", old_string="return 1", new_string="return 10")
    assert not err and "Made 1 replacement." in out
    assert "     2\t    return 10" in out  # a numbered snippet of the edited part
    assert p.read_text() == "def f():\n    return 10\n\ndef g():\n    return 2\n"
    assert rec(ctx).calls == [(p, b"def f():\n    return 1\n\ndef g():\n    return 2\n")]
    # the edit refreshed the read record: a second edit needs no new Read
    out, err = call_tool(EDIT, ctx, file_path="a.py", old_string="return 2", new_string="return 20")
    assert not err and "return 20" in p.read_text()


def test_edit_errors_leave_file_unchanged(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_text("x = 1\nx = 1\n")
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="x = 1", new_string="x = 2")
    assert err and "has not been read" in out
    read_first(ctx, p)
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="x = 1", new_string="x = 2")
    assert err and "Found 2 matches" in out and "replace_all" in out
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="y", new_string="z")
    assert err and "not found" in out
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="x = 1", new_string="x = 1")
    assert err and "exactly the same" in out
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="", new_string="z")
    assert err and "already exists" in out
    out, err = call_tool(EDIT, ctx, file_path=str(tmp_path / "nope.txt"), old_string="a", new_string="b")
    assert err and "does not exist" in out
    assert p.read_text() == "x = 1\nx = 1\n" and rec(ctx).calls == []


def test_edit_replace_all(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_text("foo bar foo\nfoo\n")
    read_first(ctx, p)
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="foo", new_string="baz", replace_all=True)
    assert not err and "Made 3 replacements" in out
    assert p.read_text() == "baz bar baz\nbaz\n"


def test_edit_modified_since_read(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_text("one\n")
    read_first(ctx, p)
    p.write_text("two\n")
    bump_mtime(p)
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="two", new_string="three")
    assert err and "modified since" in out and p.read_text() == "two\n"


def test_edit_crlf_file_with_lf_old_string(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "win.txt"
    p.write_bytes(b"line one\r\nline two\r\nline three\r\n")
    read_first(ctx, p)
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="line one\nline two", new_string="first\nsecond\nextra")
    assert not err, out
    assert p.read_bytes() == b"first\r\nsecond\r\nextra\r\nline three\r\n"


def test_edit_keeps_bom_and_latin1(ctx: ToolContext, tmp_path: Path) -> None:
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfna\xc3\xafve\n")
    read_first(ctx, bom)
    _, err = call_tool(EDIT, ctx, file_path=str(bom), old_string="naïve", new_string="naïf")
    assert not err and bom.read_bytes() == b"\xef\xbb\xbfna\xc3\xaff\n"
    l1 = tmp_path / "l1.txt"
    l1.write_bytes("café = 1\n".encode("latin-1"))
    read_first(ctx, l1)
    _, err = call_tool(EDIT, ctx, file_path=str(l1), old_string="= 1", new_string="= 'é'")
    assert not err and l1.read_bytes() == "café = 'é'\n".encode("latin-1")


def test_edit_creates_new_file_with_empty_old_string(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "pkg" / "new.py"
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="", new_string="x = 1\n")
    assert not err and "created" in out
    assert p.read_text() == "x = 1\n" and rec(ctx).calls == [(p, None)]


# --- MultiEdit -------------------------------------------------------------------------------

def test_multi_edit_sequence(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "m.py"
    p.write_text("a = 1\nb = 2\nc = 3\n")
    read_first(ctx, p)
    out, err = call_tool(MULTI, ctx, file_path=str(p), edits=[
        {"old_string": "a = 1", "new_string": "a = 10"},
        {"old_string": "= 2", "new_string": "= 20"},
        {"old_string": "c", "new_string": "d", "replace_all": True},
    ])
    assert not err and "Applied 3 edits" in out
    assert p.read_text() == "a = 10\nb = 20\nd = 3\n"
    assert len(rec(ctx).calls) == 1


def test_multi_edit_all_or_nothing(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "m.py"
    p.write_text("a = 1\nb = 2\n")
    read_first(ctx, p)
    out, err = call_tool(MULTI, ctx, file_path=str(p), edits=[
        {"old_string": "a = 1", "new_string": "a = 10"},
        {"old_string": "zzz", "new_string": "y"},
    ])
    assert err and "edits[1]" in out and "edit 2 of 2" in out and "not found" in out
    assert p.read_text() == "a = 1\nb = 2\n" and rec(ctx).calls == []
    out, err = call_tool(MULTI, ctx, file_path=str(p), edits=[])
    assert err


def test_multi_edit_creates_file(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "n.txt"
    out, err = call_tool(MULTI, ctx, file_path=str(p), edits=[
        {"old_string": "", "new_string": "hello world\n"},
        {"old_string": "world", "new_string": "there"},
    ])
    assert err and "substring" in out  # a later edit would act on an earlier edit's new text
    out, err = call_tool(MULTI, ctx, file_path=str(p), edits=[
        {"old_string": "", "new_string": "hello world\n"},
    ])
    assert not err and p.read_text() == "hello world\n"


def test_a_change_that_keeps_the_mtime_is_still_noticed(ctx: ToolContext, tmp_path: Path) -> None:
    """`cp -p` / `touch -r` restore the old mtime after changing the file: Edit must not
    overwrite the new content it has never read."""
    p = tmp_path / "f.txt"
    p.write_text("x = 1\n")
    call_tool(READ, ctx, file_path=str(p))
    st = p.stat()
    p.write_text("x = 1  # the user's change\n")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime as at the Read
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="x = 1", new_string="x = 2")
    assert err and "modified since it was read" in out
    assert p.read_text() == "x = 1  # the user's change\n"



def test_a_same_size_edit_within_one_timestamp_tick_is_noticed(ctx: ToolContext, tmp_path: Path) -> None:
    """An edit in place that keeps the size, made within the timestamp tick of the file's last
    write, keeps (mtime, size, inode) on a 1 s file system or ext4 before Linux 6.13: Read's record
    keeps the content's digest of a file that young (mtime.stamp), so Edit still refuses. The
    "same tick" is a real second write with its mtime set back (tests/bases/test_file_stamps.py)."""
    p = tmp_path / "f.py"
    p.write_text("x = 1\n")
    call_tool(READ, ctx, file_path=str(p))
    st = p.stat()
    with open(p, "r+") as f:  # same inode, same size
        f.write("x = 7\n")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="x =", new_string="y =")
    assert err and "modified since it was read" in out
    assert p.read_text() == "x = 7\n"


def test_a_mode_change_after_read_is_not_a_modification(ctx: ToolContext, tmp_path: Path) -> None:
    """chmod moves only the ctime: the content Read saw is still the file's, so Edit goes ahead
    (Claude Code compares the mtime and the content, not the ctime)."""
    p = tmp_path / "run.sh"
    p.write_text("echo one\n")
    call_tool(READ, ctx, file_path=str(p))
    p.chmod(0o755)
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="one", new_string="two")
    assert not err, out
    assert p.read_text() == "echo two\n"


# --- atomic writes (issue 9 item 9) ----------------------------------------------------------

def leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.endswith(".tmp"))


def test_write_replaces_by_rename_keeping_mode_and_owner(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "tool.sh"
    p.write_text("echo 1\n")
    p.chmod(0o751)
    if os.geteuid() == 0:
        os.chown(p, 1234, 5678)
    ino = p.stat().st_ino
    read_first(ctx, p)
    _, err = call_tool(EDIT, ctx, file_path=str(p), old_string="1", new_string="2")
    assert not err and p.read_text() == "echo 2\n"
    st = p.stat()
    assert st.st_ino != ino  # a new file renamed over the old one: no reader ever sees half of it
    assert st.st_mode & 0o7777 == 0o751
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == (1234, 5678)
    assert leftovers(tmp_path) == []


def test_write_through_a_symlink_keeps_the_link(ctx: ToolContext, tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("one\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    read_first(ctx, link)
    _, err = call_tool(EDIT, ctx, file_path=str(link), old_string="one", new_string="two")
    assert not err and link.is_symlink() and real.read_text() == "two\n"
    read_first(ctx, link)
    _, err = call_tool(WRITE, ctx, file_path=str(link), content="three\n")
    assert not err and link.is_symlink() and os.readlink(link) == str(real) and real.read_text() == "three\n"


def test_a_hard_linked_file_stays_one_file(ctx: ToolContext, tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("shared\n")
    os.link(a, b)
    read_first(ctx, a)
    _, err = call_tool(EDIT, ctx, file_path=str(a), old_string="shared", new_string="changed")
    assert not err and b.read_text() == "changed\n" and a.stat().st_nlink == 2
    assert a.stat().st_ino == b.stat().st_ino and leftovers(tmp_path) == []


def test_a_read_only_file_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "ro.txt"
    p.write_text("keep\n")
    p.chmod(0o444)
    read_first(ctx, p)
    for tool, inp in ((EDIT, {"old_string": "keep", "new_string": "lose"}), (WRITE, {"content": "lose\n"}),
                      (MULTI, {"edits": [{"old_string": "keep", "new_string": "lose"}]})):
        out, err = call_tool(tool, ctx, file_path=str(p), **inp)
        assert err and "read-only" in out and p.read_text() == "keep\n", out
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("code, cause", [(28, "no space left on device (ENOSPC)"),
                                         (122, "disk quota exceeded (EDQUOT)"),
                                         (27, "file too large")])
def test_a_failed_write_leaves_the_original(ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            code: int, cause: str) -> None:
    """The errors injected at the write(2) level (the real ENOSPC and EFBIG follow below)."""
    p = tmp_path / "f.txt"
    p.write_bytes(b"original\r\n")
    read_first(ctx, p)
    real_write = os.write

    def failing(fd: int, data: Any) -> int:
        if bytes(data[:3]) == b"new":
            raise OSError(code, os.strerror(code))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", failing)
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="original", new_string="new text")
    assert err and cause in out and "not changed" in out, out
    assert p.read_bytes() == b"original\r\n" and leftovers(tmp_path) == []


def test_a_full_file_system_leaves_the_original(ctx: ToolContext, tmp_path: Path) -> None:
    fs = tmp_path / "fs"
    fs.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(fs)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {r.stderr.strip()}")
    try:
        ctx.add_dirs = [str(fs)]
        p, linked, other = fs / "f.txt", fs / "g.txt", fs / "h.txt"
        p.write_bytes(b"small\n" * 100)
        linked.write_bytes(b"also small\n" * 100)
        os.link(linked, other)
        with open(fs / "filler", "wb", buffering=0) as f, contextlib.suppress(OSError):
            while True:
                f.write(b"\0" * 4096)
        before = (p.read_bytes(), linked.read_bytes())
        for path in (p, linked):
            read_first(ctx, path)
            out, err = call_tool(WRITE, ctx, file_path=str(path), content="big\n" * 30_000)
            assert err and "no space left on device (ENOSPC)" in out, out
        assert (p.read_bytes(), linked.read_bytes()) == before and other.read_bytes() == before[1]
        assert leftovers(fs) == []
        (fs / "filler").unlink()
        _, err = call_tool(WRITE, ctx, file_path=str(p), content="big\n" * 3000)
        assert not err and p.read_text() == "big\n" * 3000
    finally:
        subprocess.run(["umount", "-l", str(fs)], capture_output=True)


FSIZE_WRITER = """
import asyncio, resource, sys
from pathlib import Path
from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_read_tool, make_write_tool
p = Path(sys.argv[1])
ctx = ToolContext(p.parent)
asyncio.run(make_read_tool().call({"file_path": str(p)}, ctx))
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
out = asyncio.run(make_write_tool().call({"file_path": str(p), "content": "x" * 100_000}, ctx))
print(out.is_error, out.content)
"""


@pytest.mark.e2e
def test_a_file_size_limit_leaves_the_original(tmp_path: Path) -> None:
    p = tmp_path / "f.txt"
    p.write_bytes(b"original\n")
    r = subprocess.run([sys.executable, "-c", FSIZE_WRITER, str(p)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("True") and "file too large" in r.stdout and "EFBIG" in r.stdout, r.stdout
    assert p.read_bytes() == b"original\n" and leftovers(tmp_path) == []


# --- encodings (issue 9 item 10): untouched bytes stay byte-identical ---------------------------

def edit_bytes(ctx: ToolContext, tmp_path: Path, data: bytes, old: str, new: str) -> tuple[bytes, str, bool]:
    p = tmp_path / "e.txt"
    p.write_bytes(data)
    read_first(ctx, p)
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string=old, new_string=new)
    return p.read_bytes(), out, err


def test_mixed_line_endings_stay_as_they_were(ctx: ToolContext, tmp_path: Path) -> None:
    data = b"a\r\nb\nc\r\n\r\r\nd\re\n"
    got, out, err = edit_bytes(ctx, tmp_path, data, "b", "B\nX")
    assert not err, out
    assert got == b"a\r\nB\nX\nc\r\n\r\r\nd\re\n"  # the new line takes the ending of its own line
    got2, _, err = edit_bytes(ctx, tmp_path, data, "c\n", "C\nC2\n")
    assert not err and got2 == b"a\r\nb\nC\r\nC2\r\n\r\r\nd\re\n"
    got3, _, err = edit_bytes(ctx, tmp_path, data, "d", "D")
    assert not err and got3 == b"a\r\nb\nc\r\n\r\r\nD\re\n"


def test_latin1_is_edited_in_latin1_or_refused(ctx: ToolContext, tmp_path: Path) -> None:
    data = "café = 1\r\nnaïve = 2\r\n".encode("latin-1") + b"\xff\xfe tail\r\n"
    got, out, err = edit_bytes(ctx, tmp_path, data, "naïve = 2", "naïve = 'ü'")
    assert not err and got == data.replace("naïve = 2".encode("latin-1"), "naïve = 'ü'".encode("latin-1"))
    p = tmp_path / "e.txt"
    got, out, err = edit_bytes(ctx, tmp_path, data, "= 1", "= '€'")
    assert err and "latin-1" in out and "U+20AC" in out and got == data
    read_first(ctx, p)
    out, err = call_tool(WRITE, ctx, file_path=str(p), content="price: €\n")
    assert err and "latin-1" in out and p.read_bytes() == data


def test_utf16_keeps_its_byte_order_and_bom(ctx: ToolContext, tmp_path: Path) -> None:
    for codec, bom in (("utf-16-be", b"\xfe\xff"), ("utf-16-le", b"\xff\xfe")):
        data = bom + "x = 1\r\ny = 2\r\n".encode(codec)
        got, out, err = edit_bytes(ctx, tmp_path, data, "y = 2", "y = 3")
        assert not err, out
        assert got == bom + "x = 1\r\ny = 3\r\n".encode(codec)


def test_invalid_utf8_after_a_bom_is_kept_byte_for_byte(ctx: ToolContext, tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfok \xff\xfe bytes\nline two\n"
    got, out, err = edit_bytes(ctx, tmp_path, data, "line two", "line 2")
    assert not err and got == b"\xef\xbb\xbfok \xff\xfe bytes\nline 2\n", out


def test_multi_edit_keeps_untouched_bytes(ctx: ToolContext, tmp_path: Path) -> None:
    p = tmp_path / "m.txt"
    data = b"one\r\ntwo\nthree\r\n\r\r\n"
    p.write_bytes(data)
    read_first(ctx, p)
    out, err = call_tool(MULTI, ctx, file_path=str(p), edits=[{"old_string": "one", "new_string": "1"},
                                                         {"old_string": "three", "new_string": "3\n3b"}])
    assert not err, out
    assert p.read_bytes() == b"1\r\ntwo\n3\r\n3b\r\n\r\r\n"


@pytest.mark.parametrize("refuse", ["temp file", "owner"])
def test_no_temp_file_or_owner_for_the_copy_rewrites_in_place(ctx: ToolContext, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch, refuse: str) -> None:
    """Not root: a directory we cannot add to, or someone else's file in a shared directory.
    The copy would fail or change the owner; the file itself is rewritten instead (same inode).
    (The permission errors are injected: the tests run as root, which the kernel lets through.)"""
    p = tmp_path / "f.txt"
    p.write_text("before\n")
    ino = p.stat().st_ino
    read_first(ctx, p)
    if refuse == "temp file":
        real_open = os.open

        def no_new_files(path: Any, flags: int, *a: Any, **kw: Any) -> int:
            if flags & os.O_CREAT:
                raise PermissionError(13, "Permission denied")
            return real_open(path, flags, *a, **kw)

        monkeypatch.setattr(os, "open", no_new_files)
    else:
        monkeypatch.setattr(os, "geteuid", lambda: 4321)  # the file's owner (root) is someone else now

        def no_chown(*a: Any) -> None:
            raise PermissionError(1, "Operation not permitted")

        monkeypatch.setattr(os, "fchown", no_chown)
    out, err = call_tool(EDIT, ctx, file_path=str(p), old_string="before", new_string="after")
    assert not err, out
    assert p.read_text() == "after\n" and p.stat().st_ino == ino and leftovers(tmp_path) == []
# --- special files --------------------------------------------------------------------------------

@pytest.mark.parametrize("name,x", [
    ("Edit", {"file_path": "pipe", "old_string": "a", "new_string": "b"}),
    ("Edit", {"file_path": "pipe", "old_string": "", "new_string": "b"}),
    ("MultiEdit", {"file_path": "pipe", "edits": [{"old_string": "a", "new_string": "b"}]}),
    ("Write", {"file_path": "pipe", "content": "b"}),
])
def test_edit_tools_refuse_a_fifo_instead_of_blocking_forever(name: str, x: dict[str, Any], tmp_path: Path) -> None:
    # Before: Edit/MultiEdit read the FIFO before any other check, blocking the event loop
    # (and the whole run, beyond any interrupt) until something wrote to the pipe.
    os.mkfifo(tmp_path / "pipe")
    writer = threading.Timer(20, _unblock, (tmp_path / "pipe",))  # so a regression fails, not hangs
    writer.start()
    try:
        r = lw.run("go", lw.AgentOptions(model=lw.ScriptedModel([[use("u1", name, x)], [text("done")]]),
                                         tools=default_tools(), cwd=str(tmp_path),
                                         permission_mode="bypassPermissions"))
    finally:
        writer.cancel()
    block = first_tool_result(r)
    assert block["is_error"] is True and "not a regular file" in block["content"]


def _unblock(pipe: Path) -> None:
    fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
    os.close(fd)

