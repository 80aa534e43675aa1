"""Bash, BashOutput and KillShell with real subprocesses: process groups die, output is bounded."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from loopwright.tools.base import ToolContext
from loopwright.tools.bash import MAX_OUTPUT_CHARS, CappedBuffer
from loopwright.tools.builtin import make_bash_tools
from tests.helpers import call_tool, cut_short, still_alive, until

BASH, OUTPUT, KILL = make_bash_tools()


def written(p: Path) -> bool:
    return p.exists() and bool(p.read_text().strip())


def wait_for_file(p: Path, timeout: float = 30.0) -> str:
    assert until(lambda: written(p), timeout), f"{p} never appeared"
    return p.read_text().strip()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(tmp_path)


def test_schema() -> None:
    s = BASH.input_schema
    assert BASH.name == "Bash" and not BASH.read_only
    assert s["required"] == ["command"]
    assert set(s["properties"]) == {"command", "timeout", "description", "run_in_background", "dangerouslyDisableSandbox"}
    assert all(p["description"] for p in s["properties"].values())
    assert OUTPUT.name == "BashOutput" and OUTPUT.read_only and OUTPUT.input_schema["required"] == ["bash_id"]
    assert KILL.name == "KillShell" and not KILL.read_only and KILL.input_schema["required"] == ["shell_id"]


def test_output_exit_code_and_stderr(ctx: ToolContext) -> None:
    out, err = call_tool(BASH, ctx, command="echo hello; echo oops >&2", description="greet")
    assert not err and out == "hello\noops"
    out, err = call_tool(BASH, ctx, command="echo partial; exit 3")
    assert err and out == "partial\nExit code 3"
    out, err = call_tool(BASH, ctx, command="true")
    assert not err and out == "(no output)"


def test_stdin_is_dev_null_and_positional_args_are_clean(ctx: ToolContext) -> None:
    out, err = call_tool(BASH, ctx, command="cat; echo \"[$#]\"")
    assert not err and out == "[0]"


def test_syntax_error_is_a_clean_failure(ctx: ToolContext) -> None:
    out, err = call_tool(BASH, ctx, command="if then fi (")
    assert err and "syntax error" in out and "Exit code 2" in out


def test_cd_persists_inside_project(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    out, err = call_tool(BASH, ctx, command="cd sub && pwd")
    assert not err and out == str(tmp_path / "sub")
    out, _ = call_tool(BASH, ctx, command="pwd")
    assert out == str(tmp_path / "sub")
    out, _ = call_tool(BASH, ctx, command="cd /")
    assert "reset" in out and str(tmp_path) in out
    out, _ = call_tool(BASH, ctx, command="pwd")
    assert out == str(tmp_path)


def test_add_dirs_count_as_project(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    proj = tmp_path / "proj"
    proj.mkdir()
    ctx = ToolContext(proj, add_dirs=[other])
    call_tool(BASH, ctx, command=f"cd {other}")
    out, _ = call_tool(BASH, ctx, command="pwd")
    assert out == str(other)


def test_timeout_kills_the_whole_group(ctx: ToolContext, tmp_path: Path) -> None:
    pidfile = tmp_path / "gc.pid"
    cmd = f"bash -c 'sleep 300 & echo $! > {pidfile}; wait'; echo never"
    out, err = cut_short(lambda s: call_tool(BASH, ctx, command=cmd, timeout=int(s * 1000)), lambda: written(pidfile))
    assert err and "timed out" in out and "never" not in out
    gc = int(wait_for_file(pidfile))
    assert not still_alive([gc]), "grandchild sleep survived the timeout"


def test_term_ignoring_process_gets_sigkill(ctx: ToolContext, tmp_path: Path) -> None:
    pidfile = tmp_path / "stub.pid"
    cmd = f"bash -c 'trap \"\" TERM; echo $$ > {pidfile}; while :; do sleep 0.05; done'"
    out, err = cut_short(lambda s: call_tool(BASH, ctx, command=cmd, timeout=int(s * 1000)), lambda: written(pidfile))
    assert err and "timed out" in out
    assert not still_alive([int(wait_for_file(pidfile))])


def test_leftover_background_process_is_stopped(ctx: ToolContext, tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    out, err = call_tool(BASH, ctx, command=f"sleep 300 & echo $! > {pidfile}; echo started")
    assert not err and out == "started"
    assert not still_alive([int(wait_for_file(pidfile))])


def test_cancellation_kills_the_group(ctx: ToolContext, tmp_path: Path) -> None:
    pidfile = tmp_path / "c.pid"

    async def go() -> None:
        task = asyncio.ensure_future(BASH.call({"command": f"sleep 300 & echo $! > {pidfile}; wait"}, ctx))
        while not (pidfile.exists() and pidfile.read_text().strip()):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert not still_alive([int(pidfile.read_text())])


def test_big_output_is_truncated_head_and_tail(ctx: ToolContext) -> None:
    out, err = call_tool(BASH, ctx, command="echo FIRST; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo LAST")
    assert not err
    assert len(out) < MAX_OUTPUT_CHARS + 200
    assert out.startswith("FIRST") and out.endswith("LAST") and "characters of output truncated" in out


def test_capped_buffer_bounds_memory() -> None:
    buf = CappedBuffer(keep=100)
    for i in range(10_000):
        buf.write(b"%05d\n" % i)
    assert len(buf.head) == 100 and len(buf.tail) == 100
    assert buf.size == 60_000 and buf.dropped == 59_800
    text = buf.render(max_chars=40)
    assert text.startswith("00000") and text.endswith("09999") and "about" in text
    small = CappedBuffer(keep=100)
    small.write(b"abc\n")
    assert small.render() == "abc"


def test_timeout_is_clamped_and_validated(ctx: ToolContext) -> None:
    out, err = call_tool(BASH, ctx, command="echo ok", timeout=10_000_000)
    assert not err and out == "ok"
    out, err = call_tool(BASH, ctx, command="echo ok", timeout="soon")
    assert err and "timeout" in out
    out, err = call_tool(BASH, ctx, command="   ")
    assert err and "empty" in out


# --- background shells -------------------------------------------------------------------

def test_background_output_and_status(ctx: ToolContext) -> None:
    out, err = call_tool(BASH, ctx, command="echo one; sleep 0.3; echo two", run_in_background=True)
    assert not err and "bash_1" in out
    first, _ = call_tool(OUTPUT, ctx, bash_id="bash_1")
    assert "<status>running</status>" in first or "<status>completed</status>" in first
    deadline = time.monotonic() + 30
    seen = first
    while "<status>completed</status>" not in seen and time.monotonic() < deadline:
        time.sleep(0.05)
        part, _ = call_tool(OUTPUT, ctx, bash_id="bash_1")
        seen += part
    assert "<status>completed</status>" in seen and "<exit_code>0</exit_code>" in seen
    assert seen.count("one") == 1 and seen.count("two") == 1  # each line is delivered once
    again, _ = call_tool(OUTPUT, ctx, bash_id="bash_1")
    assert "(no new output)" in again
    out, err = call_tool(OUTPUT, ctx, bash_id="bash_9")
    assert err and "bash_1" in out


def test_background_filter(ctx: ToolContext) -> None:
    call_tool(BASH, ctx, command="printf 'keep 1\\ndrop\\nkeep 2\\n'", run_in_background=True)
    deadline = time.monotonic() + 30
    out = ""
    while "completed" not in out and time.monotonic() < deadline:
        time.sleep(0.05)
        out, _ = call_tool(OUTPUT, ctx, bash_id="bash_1", filter="^keep")
    assert "keep 1\nkeep 2" in out and "drop" not in out


def test_kill_shell_kills_group(ctx: ToolContext, tmp_path: Path) -> None:
    pidfile = tmp_path / "k.pid"
    call_tool(BASH, ctx, command=f"sleep 300 & echo $! > {pidfile}; wait", run_in_background=True)
    gc = int(wait_for_file(pidfile))
    out, err = call_tool(KILL, ctx, shell_id="bash_1")
    assert not err and "killed" in out
    assert not still_alive([gc])
    status, _ = call_tool(OUTPUT, ctx, bash_id="bash_1")
    assert "<status>killed</status>" in status
    out, err = call_tool(KILL, ctx, shell_id="bash_1")
    assert err and "not running" in out
    out, err = call_tool(KILL, ctx, shell_id="nope")
    assert err


@pytest.mark.e2e
def test_background_shell_dies_with_python(tmp_path: Path) -> None:
    """A background shell must not outlive the interpreter that started it (atexit)."""
    import subprocess
    import sys

    pidfile = tmp_path / "child.pid"
    code = (
        "import asyncio, pathlib\n"
        "from loopwright.tools.base import ToolContext\n"
        "from loopwright.tools.builtin import make_bash_tools\n"
        "bash = make_bash_tools()[0]\n"
        f"ctx = ToolContext(pathlib.Path({str(tmp_path)!r}))\n"
        f"print(asyncio.run(bash.call({{'command': 'echo $$ > {pidfile}; sleep 300', "
        "'run_in_background': True}, ctx)).content)\n"
        # (its pid written, not only the file made: the shell is killed when this process exits)
        f"import time\np = pathlib.Path({str(pidfile)!r})\n"
        "while not (p.exists() and p.read_text().strip()): time.sleep(0.01)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert not still_alive([int(wait_for_file(pidfile))])


def test_background_leftovers_stop_when_the_command_exits(ctx: ToolContext, tmp_path: Path) -> None:
    from loopwright.tools.bash import _ALL_SHELLS

    pidfile = tmp_path / "left.pid"
    call_tool(BASH, ctx, command=f"sleep 300 & echo $! > {pidfile}; echo bye", run_in_background=True)
    assert not still_alive([int(wait_for_file(pidfile))])
    shell = ctx.state.bash.shells["bash_1"]
    assert until(lambda: shell.popen.pid not in _ALL_SHELLS)  # nothing left for atexit to signal
    out, _ = call_tool(OUTPUT, ctx, bash_id="bash_1")
    assert "<status>completed</status>" in out and "bye" in out


@pytest.mark.parametrize("yields", [0, 1, 2, 3, 5, 8])
def test_cancellation_at_any_point_of_startup_leaves_nothing(ctx: ToolContext, tmp_path: Path, yields: int) -> None:
    pidfile = tmp_path / f"early{yields}.pid"

    async def go() -> None:
        task = asyncio.ensure_future(BASH.call({"command": f"sleep 300 & echo $! > {pidfile}; wait"}, ctx))
        for _ in range(yields):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    time.sleep(0.2)  # a sleep that escaped would have written its pid by now
    if pidfile.exists() and pidfile.read_text().strip():
        assert not still_alive([int(pidfile.read_text())])


def test_command_removing_the_cwd_file_is_harmless(ctx: ToolContext) -> None:
    out, err = call_tool(BASH, ctx, command='rm -f "$__lw_pwd"; echo fine; exit 0')  # exit: no trailer
    assert not err and out == "fine"
