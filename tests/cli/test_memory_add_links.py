"""`/memory add` appends to the project's memory file, never through a link that leads out of the
workspace: a repository's AGENTS.md linked to ~/.bashrc (or, dangling, to ~/.ssh/authorized_keys)
had the user's note appended to, or created as, that file, trusted workspace or not. A link
inside the workspace (CLAUDE.md -> AGENTS.md, a common layout) is still written through. Real
files and links in temp directories."""

from __future__ import annotations

from pathlib import Path

from loopwright.cli.commands.memory import append_memory


class Host:
    """What append_memory asks of the interactive session: its directory, and a line to show."""

    def __init__(self, cwd: Path) -> None:
        self.dir, self.said = cwd, []  # type: ignore[var-annotated]

    def cwd(self) -> str:
        return str(self.dir)

    def say(self, text: str) -> None:
        self.said.append(text)


def layout(tmp_path: Path) -> tuple[Path, Path]:
    work, outside = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    outside.mkdir()
    return work, outside


def test_a_memory_file_linked_out_of_the_workspace_is_not_written(tmp_path: Path) -> None:
    work, outside = layout(tmp_path)
    rc = outside / ".bashrc"
    rc.write_text("export PATH=/usr/bin\n")
    (work / "AGENTS.md").symlink_to(rc)
    host = Host(work)
    append_memory(host, "use pnpm")  # type: ignore[arg-type]
    assert rc.read_text() == "export PATH=/usr/bin\n"
    assert "not remembered" in host.said[-1] and str(rc) in host.said[-1], host.said


def test_a_dangling_link_out_of_the_workspace_is_not_created(tmp_path: Path) -> None:
    work, outside = layout(tmp_path)
    keys = outside / ".ssh" / "authorized_keys"
    keys.parent.mkdir()
    (work / "AGENTS.md").symlink_to(keys)
    host = Host(work)
    append_memory(host, "ssh-ed25519 AAAA attacker")  # type: ignore[arg-type]
    assert not keys.exists()
    assert "not remembered" in host.said[-1], host.said


def test_a_link_inside_the_workspace_is_written_through(tmp_path: Path) -> None:
    work, _ = layout(tmp_path)
    (work / "docs").mkdir()
    (work / "docs" / "AGENTS.md").write_text("# notes\n")
    (work / "CLAUDE.md").symlink_to(work / "docs" / "AGENTS.md")
    host = Host(work)
    append_memory(host, "always run the linter")  # type: ignore[arg-type]
    assert (work / "docs" / "AGENTS.md").read_text() == "# notes\n- always run the linter\n"
    assert (work / "CLAUDE.md").is_symlink() and "remembered" in host.said[-1], host.said


def test_a_named_pipe_at_the_memory_files_name_does_not_hang_the_session(tmp_path: Path) -> None:
    """AGENTS.md made a named pipe (`mkfifo AGENTS.md`: a command of the agent's can) must not hang
    /memory add (run on the session's event loop: the screen and its keys would freeze for good);
    it is refused with one line, as a memory file that is a FIFO is never read. Run in a thread
    with a deadline, so a hang fails the test instead of stopping the suite."""
    import os
    import threading

    work, _ = layout(tmp_path)
    os.mkfifo(work / "AGENTS.md")
    host = Host(work)
    t = threading.Thread(target=append_memory, args=(host, "use pnpm"), daemon=True)
    t.start()
    t.join(30)
    if t.is_alive():  # (end the hang: a writer lets the blocked read return)
        with open(work / "AGENTS.md", "w"):
            pass
        t.join(30)
        raise AssertionError("/memory add hung on a named pipe")
    assert "not remembered" in host.said[-1] and "regular file" in host.said[-1], host.said


def test_a_large_memory_file_gets_the_note_on_a_line_of_its_own(tmp_path: Path) -> None:
    work, _ = layout(tmp_path)
    (work / "AGENTS.md").write_text("x" * 100_000)  # (no newline at its end)
    append_memory(Host(work), "use pnpm")  # type: ignore[arg-type]
    assert (work / "AGENTS.md").read_text().endswith("x\n- use pnpm\n")
