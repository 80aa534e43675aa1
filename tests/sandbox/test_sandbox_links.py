"""The sandbox's read rules see where a link leads (issue 40, finding 5): a command in the box
that follows a committed symlink (`keys -> ~/.ssh`, `rg -L`, `grep -R`, `cat link`) reads
nothing a Read deny rule or `denyRead` covers. Real bwrap, real symlinks in a temp dir."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright import sandbox as sbx
from tests.sandbox.test_sandbox import SECRET, needs_bwrap, results, run_script, use


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory on the real root file system (/var/tmp: the box's /tmp is its own)."""
    d = Path(tempfile.mkdtemp(prefix="loopwright-links-", dir="/var/tmp"))
    try:
        yield d
    finally:
        shutil.rmtree(d)


def _tree(tmp: Path, outside: Path) -> Path:
    """proj/keys -> outside/keys (a directory link), proj/notes.txt -> outside/keys/id_rsa; the
    key holds the secret."""
    proj, keys = tmp / "proj", outside / "keys"
    proj.mkdir()
    keys.mkdir(parents=True)
    (keys / "id_rsa").write_text(f"{SECRET}\n")
    (proj / "keys").symlink_to(keys)
    (proj / "notes.txt").symlink_to(keys / "id_rsa")
    (proj / "readme.txt").write_text("hello\n")
    return proj


@needs_bwrap
@pytest.mark.parametrize("command", ["grep -R TOPSECRET .", "cat notes.txt", "cat keys/*"])
def test_a_read_deny_rule_covers_what_a_link_leads_to_in_the_box(command: str, tmp_path: Path, outside: Path) -> None:
    proj = _tree(tmp_path, outside)
    plain = results(run_script([use("a", command)], proj, permission_mode="bypassPermissions"))
    assert SECRET in plain["a"][0]  # the control: unboxed, the link is followed to the key
    out = results(run_script([use("a", command)], proj, permission_mode="bypassPermissions",
                             disallowed_tools=["Read(**/id_rsa)"], sandbox={}))
    assert SECRET not in out["a"][0], out


@needs_bwrap
def test_deny_read_masks_the_target_of_a_link_to_a_denied_path(tmp_path: Path, outside: Path) -> None:
    proj = _tree(tmp_path, outside)
    out = results(run_script([use("a", "cat notes.txt readme.txt; grep -R TOPSECRET . ; echo end")], proj,
                             permission_mode="bypassPermissions",
                             sandbox={"filesystem": {"denyRead": ["/" + str(outside / "keys")]}}))  # //abs
    assert SECRET not in out["a"][0] and "hello" in out["a"][0] and "end" in out["a"][0]


def test_the_mask_list_holds_the_real_path_behind_a_followed_link(tmp_path: Path, outside: Path) -> None:
    """Without running bwrap: the paths the sandbox hides for a glob rule include the real file
    a directory link leads to, and a link cycle ends the walk."""
    from loopwright.gate import Permissions

    proj = _tree(tmp_path, outside)
    (proj / "loop").symlink_to(proj)
    perms = Permissions("default", disallowed_tools=["Read(**/id_rsa)"], cwd=proj)
    box = sbx.Sandbox(sbx.SandboxConfig(), proj, [], perms)
    hide, _ = box._mask_lists()
    assert (outside / "keys" / "id_rsa").resolve() in hide
