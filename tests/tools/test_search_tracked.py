"""Issue 44: a hostile repository's ignore files (or a dot directory) cannot hide a git-tracked file
from Grep or Glob (git itself shows tracked files), with either engine; untracked ignored or
hidden files stay hidden from Grep."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from loopwright.tools.base import ToolContext
from loopwright.tools.builtin import make_glob_tool
from loopwright.tools.grep import make_grep_tool
from loopwright.workspace import SearchState, ToolState
from tests.helpers import call_tool

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
ENGINES = [pytest.param("rg", marks=pytest.mark.skipif(
    __import__("loopwright.tools.grep.rg", fromlist=["rg_path"]).rg_path() is None, reason="no rg")), "python"]
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]


def hostile_repo(root: Path) -> Path:
    """A repository whose ignore files name its own tracked files (the backdoor, a vendored
    library, a config), beside an untracked file an ignore file names (that one stays hidden)."""
    files = {
        "app.py": "import backdoor  # needle\n",
        "backdoor.py": "def open_door():  # needle\n    pass\n",
        "lib/evil.js": "const needle = 1;\n",
        "conf/x.cfg": "needle=yes\n",
        ".config/door.py": "needle = 'behind a dot'\n",
        "pkg/.ignore": "inner.py\n",
        "pkg/inner.py": "needle = 'inner'\n",
        ".ignore": "backdoor.py\n",
        ".gitignore": "lib/\n",
        ".rgignore": "*.cfg\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-f", "."], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "x"], cwd=root, check=True)
    (root / "untracked.py").write_text("needle = 'untracked'\n")  # named below: hidden, not tracked
    (root / ".config" / "loose.py").write_text("needle = 'untracked, behind a dot'\n")  # hidden from Grep
    with (root / ".ignore").open("a") as f:
        f.write("untracked.py\n")
    return root


def ctx(root: Path, engine: str) -> ToolContext:
    return ToolContext(root, state=ToolState(search=SearchState(engine=engine)))


TRACKED = [".config/door.py", "app.py", "backdoor.py", "conf/x.cfg", "lib/evil.js", "pkg/inner.py"]


@needs_git
@pytest.mark.parametrize("engine", ENGINES)
def test_grep_searches_tracked_files_an_ignore_file_names(tmp_path: Path, engine: str) -> None:
    root = hostile_repo(tmp_path)
    grep = make_grep_tool()
    out, err = call_tool(grep, ctx(root, engine), {"pattern": "needle"})
    assert not err and out.splitlines() == [f"Found {len(TRACKED)} files", *TRACKED]
    out, _ = call_tool(grep, ctx(root, engine), {"pattern": "needle", "glob": "!*.js"})  # filters still apply
    assert out.splitlines() == ["Found 5 files", ".config/door.py", "app.py", "backdoor.py", "conf/x.cfg",
                                "pkg/inner.py"]
    out, _ = call_tool(grep, ctx(root, engine), {"pattern": "needle", "type": "js", "output_mode": "content"})
    assert out.splitlines() == ["lib/evil.js:1:const needle = 1;"]
    out, _ = call_tool(grep, ctx(root, engine), {"pattern": "needle", "output_mode": "count"})
    assert out.splitlines()[-1] == "Found 6 total occurrences across 6 files."
    out, _ = call_tool(grep, ctx(root, engine), {"pattern": "needle", "path": "pkg"})
    assert out.splitlines() == ["Found 1 file", "pkg/inner.py"]


@needs_git
@pytest.mark.parametrize("engine", ENGINES)
def test_glob_lists_tracked_files_an_ignore_file_names(tmp_path: Path, engine: str) -> None:
    root = hostile_repo(tmp_path)
    glob = make_glob_tool()
    out, err = call_tool(glob, ctx(root, engine), {"pattern": "**/*"})
    listed = set(out.splitlines())
    assert not err and set(TRACKED) <= listed and "untracked.py" not in listed
    out, _ = call_tool(glob, ctx(root, engine), {"pattern": "**/*.py"})  # Glob lists hidden files anyway
    assert sorted(out.splitlines()) == [".config/door.py", ".config/loose.py", "app.py", "backdoor.py",
                                        "pkg/inner.py"]
    out, _ = call_tool(glob, ctx(root, engine), {"pattern": "*.cfg", "path": "conf"})
    assert out.splitlines() == ["conf/x.cfg"]


@needs_git
def test_a_repositorys_fsmonitor_never_runs(tmp_path: Path) -> None:
    """Asking git for the tracked files must not run a command the repository's config names."""
    root = hostile_repo(tmp_path)
    marker = tmp_path.parent / f"{tmp_path.name}-fsmonitor-ran"
    subprocess.run(["git", "config", "core.fsmonitor", f"touch {marker}; false"], cwd=root, check=True)
    out, err = call_tool(make_grep_tool(), ctx(root, "auto"), {"pattern": "needle"})
    assert not err and "backdoor.py" in out.splitlines()
    call_tool(make_glob_tool(), ctx(root, "auto"), {"pattern": "**/*.py"})
    assert not marker.exists()


@needs_git
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_in_the_os_sandbox_too(tmp_path: Path) -> None:
    """With the OS sandbox on, rg and git run in it, and the tracked files are still found."""
    import loopwright as lw
    from loopwright.runconfig import build_run_config

    root = hostile_repo(tmp_path)
    sb = build_run_config(lw.AgentOptions(sandbox={"filesystem": {"denyRead": ["./conf"]}}), root).sandbox
    assert sb is not None
    c = ToolContext(root, sandbox=sb, state=ToolState(search=SearchState(engine="rg")))
    out, err = call_tool(make_grep_tool(), c, {"pattern": "needle"})
    # conf/ is masked in the sandbox: its tracked file is named by git, but rg cannot read it there
    assert not err and out.splitlines() == ["Found 5 files", *(t for t in TRACKED if t != "conf/x.cfg")]
    out, err = call_tool(make_glob_tool(), c, {"pattern": "**/*.py"})
    assert not err and "backdoor.py" in out.splitlines()


@needs_git
@pytest.mark.parametrize("change", ["new .ignore", "edited .gitignore", "newly tracked", "info/exclude"])
def test_what_git_said_is_asked_again_when_it_may_have_changed(tmp_path: Path, change: str) -> None:
    """git's answers are kept while the index and every ignore file git could read are unchanged:
    a change to any of them (a new ignore file, an edited one, a file newly tracked) is seen."""
    root = hostile_repo(tmp_path)
    (root / "pkg" / "later.py").write_text("needle = 'later'\n")
    subprocess.run([*GIT, "add", "pkg/later.py"], cwd=root, check=True)
    (root / "pkg" / ".gitignore").write_text("*.log\n")
    grep = make_grep_tool()
    out, _ = call_tool(grep, ctx(root, "rg"), {"pattern": "needle", "path": "pkg"})
    assert out.splitlines() == ["Found 2 files", "pkg/inner.py", "pkg/later.py"]
    if change == "new .ignore":
        (root / "pkg" / "sub").mkdir()
        (root / "pkg" / "sub" / "deep.py").write_text("needle = 'deep'\n")
        subprocess.run([*GIT, "add", "pkg/sub/deep.py"], cwd=root, check=True)
        call_tool(grep, ctx(root, "rg"), {"pattern": "needle", "path": "pkg"})  # the index changed: asked
        (root / "pkg" / "sub" / ".rgignore").write_text("deep.py\n")  # only an ignore file changes now
        want = ["Found 3 files", "pkg/inner.py", "pkg/later.py", "pkg/sub/deep.py"]
    elif change == "edited .gitignore":
        with (root / ".gitignore").open("a") as f:
            f.write("later.py\n")
        want = ["Found 2 files", "pkg/inner.py", "pkg/later.py"]
    elif change == "newly tracked":
        (root / "pkg" / "new.log").write_text("needle = 'forced'\n")  # only the index changes
        subprocess.run([*GIT, "add", "-f", "pkg/new.log"], cwd=root, check=True)
        want = ["Found 3 files", "pkg/inner.py", "pkg/later.py", "pkg/new.log"]
    else:
        (root / ".git" / "info").mkdir(exist_ok=True)
        (root / ".git" / "info" / "exclude").write_text("later.py\n")
        want = ["Found 2 files", "pkg/inner.py", "pkg/later.py"]
    out, _ = call_tool(grep, ctx(root, "rg"), {"pattern": "needle", "path": "pkg"})
    assert out.splitlines() == want
