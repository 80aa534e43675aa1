"""bashlex's grammar tables, cached (bashparse._bashlex): bashlex builds them at every import,
which cost more than the rest of a one-command `loopwright -p` run. The first process writes
them to $LOOPWRIGHT_HOME/cache, later ones read them and parse exactly the same; a broken
cache file is rebuilt, never trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # fresh processes: the tables are built (or read) at bashlex's import

COMMANDS = ["ls -la", "git diff | head -5 && echo ok", "for i in 1 2; do echo $i; done", "(cd x; make) > o 2>&1",
            "echo $(date) `whoami`", "cat <<EOF\nhi\nEOF", "a=1 env", "sh -c 'rm -rf /tmp/x'",
            "find . -name '*.py' -exec grep -l x {} +", "if [ -f x ]; then echo y; fi", "x || y; z &",
            "echo \"$(ls | wc -l)\"", "diff <(ls a) <(ls b)", "time make", "case x in a) echo;; esac",
            "echo ${x:-$(rm -rf /)}", "echo 'unterminated"]

CODE = """
import json, sys
from loopwright.gate.shell import bashparse
out = [repr(bashparse.parse(c)) for c in json.loads(sys.argv[1])]
p = sys.modules["bashlex.parser"].yaccparser
tables = repr(([(s, sorted(p.action[s].items())) for s in sorted(p.action)], [(s, sorted(p.goto[s].items())) for s in sorted(p.goto)],
               [(x.name, x.len, x.func, x.str, getattr(x.callable, "__name__", None)) for x in p.productions],
               sorted(p.defaulted_states.items())))
print(json.dumps({"parsed": out, "tables": tables, "from_cache": type(p.productions[1]).__name__ == "_Production"}))
"""


def parse_in_a_process(home: Path) -> dict[str, object]:
    env = {**os.environ, "LOOPWRIGHT_HOME": str(home)}
    p = subprocess.run([sys.executable, "-c", CODE, json.dumps(COMMANDS)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return dict(json.loads(p.stdout))


def test_the_tables_are_built_once_then_read_and_parse_the_same(tmp_path: Path) -> None:
    cold = parse_in_a_process(tmp_path)
    [cache] = (tmp_path / "cache").glob("bashlex-tables-*")
    warm = parse_in_a_process(tmp_path)
    assert (cold["from_cache"], warm["from_cache"]) == (False, True)
    assert warm["parsed"] == cold["parsed"]
    assert warm["tables"] == cold["tables"]  # the same parser for every input, not only these
    assert "error=None" in str(cold["parsed"][1]) and "error=None" not in str(cold["parsed"][-1])  # real parses


def test_a_broken_cache_file_is_rebuilt_not_trusted(tmp_path: Path) -> None:
    good = parse_in_a_process(tmp_path)
    [cache] = (tmp_path / "cache").glob("bashlex-tables-*")
    for junk in (b"", b"\x00garbage", cache.read_bytes()[: cache.stat().st_size // 2]):
        cache.write_bytes(junk)
        again = parse_in_a_process(tmp_path)
        assert again == {**good, "from_cache": False}
        assert parse_in_a_process(tmp_path) == {**good, "from_cache": True}  # and written whole again
