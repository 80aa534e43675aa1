"""Issue 40, findings 3 and 4: which Bash calls the gate approves as read-only.

Finding 3: a read-only command is approved only with options its table knows to be read-only
(an allow-list per command); an unknown option may run a program (ripgrep >= 14 runs
`--hostname-bin`), so it is asked about. Finding 4: a command that prints the environment (the
API key is in it) or another process's environment is asked about, never approved unasked.
Each row is one call through the real gate, in default mode, with no rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.gate import Permissions
from loopwright.gate.shell import bashcheck, bashparse

# finding 3: (command, verdict)
FLAGS = [
    ("rg --hostname-bin=./tools/host.sh --hyperlink-format=default TODO .", "ask"),
    ("rg --hostname-bin ./tools/host.sh TODO .", "ask"),
    ("rg --pre ./tools/x.sh TODO", "ask"),
    ("rg --pre=./tools/x.sh TODO", "ask"),
    ("rg -z TODO", "ask"),  # --search-zip runs decompression programs
    ("rg --some-future-flag TODO", "ask"),
    ("grep --some-future-flag TODO .", "ask"),
    ("grep -rnQ foo .", "ask"),  # one unknown letter in a combined word is enough
    ("rg -n TODO src", "allow"),
    ("rg -i --type py foo", "allow"),
    ("rg -uu --hidden -g '*.py' -C 2 foo", "allow"),
    ("grep -rn foo .", "allow"),
    ("grep -E 'a|b' -i --include=*.py -r .", "allow"),
    ("grep -5 x f", "allow"),
    ("find . -name '*.py' -print", "allow"),
    ("find . -delete", "ask"),
    ("find . -exec cat {} +", "ask"),
    ("find . -fprint out", "ask"),
    ("find . -print0 -delete", "ask"),  # -print0 takes no value: -delete is not its value
    ("find . -some-future-test", "ask"),
    ("find -L /etc -name passwd", "ask"),  # a global option does not hide the starting point
    ("find . -type f -print0", "allow"),
    ("find . \\( -name a -o -name b \\) -prune", "allow"),
    # every read-only command has an allow-list: dangerous or unknown flags are asked
    ("git log --output=notes.txt", "ask"),  # writes a file
    ("git log --outp=notes.txt", "ask"),  # an abbreviation of --output
    ("git diff --ext-diff", "ask"),  # runs diff.external
    ("git diff --textconv HEAD", "ask"),  # runs textconv filters
    ("git -c core.pager=./x.sh log", "ask"),
    ("git -p log", "ask"),  # pages through core.pager
    ("git log --show-signature", "ask"),  # runs gpg.program
    ("git log --format=%G?", "ask"),  # so does a %G format
    ("git grep -O foo", "ask"),  # opens the files in a pager
    ("git cat-file --filters HEAD:a", "ask"),  # runs the configured filters
    ("git status --some-future-flag", "ask"),
    ("git log --some-future-flag", "ask"),
    ("git --some-future-flag status", "ask"),
    ("sort -o out.txt in.txt", "ask"),
    ("sort --compress-program=./x.sh in.txt", "ask"),
    ("sort --compress=./x.sh in.txt", "ask"),  # an abbreviation of --compress-program
    ("file -z a.gz", "ask"),  # runs decompressors
    ("diff -l a b", "ask"),  # --paginate runs pr
    ("tree -R", "ask"),  # reruns tree writing 00Tree.html files
    ("ls --some-future-flag", "ask"),
    ("cat -Q f", "ask"),
    ("head --some-future-flag f", "ask"),
    ("tail --some-future-flag f", "ask"),
    ("wc -Q f", "ask"),
    ("date -s 2020-01-01", "ask"),
    ("ls -la", "allow"),
    ("ls --color=auto -1 src", "allow"),
    ("cat -n f", "allow"),
    ("head -20 f", "allow"),
    ("head -n 5 -q f", "allow"),
    ("tail -n 3 f", "allow"),
    ("tail -f --pid=123 f", "allow"),  # --pid only watches a process
    ("wc -l f", "allow"),
    ("sort -rn -k2,2 -t, f", "allow"),
    ("uniq -c f", "allow"),
    ("cut -d: -f1 f", "allow"),
    ("diff -u a b", "allow"),
    ("od -An -tx1 f", "allow"),
    ("stat -c %s f", "allow"),
    ("du -sh .", "allow"),
    ("ps -eo pid,comm", "allow"),
    ("echo -----", "allow"),  # echo takes a dash word that is not -n/-e/-E as text
    ("echo -n hi", "allow"),
    ("test -f x", "allow"),
    ("seq -3 3", "allow"),
    ("date -Iseconds", "allow"),
    ("date +%s", "allow"),
    ("git status --porcelain", "allow"),
    ("git status -sb", "allow"),
    ("git log --oneline -5", "allow"),
    ("git log -p --stat --format='%h %s' -- src", "allow"),
    ("git diff --cached --stat", "allow"),
    ("git diff -M50% HEAD~1", "allow"),
    ("git show HEAD --name-only", "allow"),
    ("git blame -L 1,5 f", "allow"),
    ("git grep -n foo", "allow"),
    ("git branch -a", "allow"),
    ("git rev-parse --show-toplevel", "allow"),
    ("git --no-pager log -1", "allow"),
]

# finding 4: (command, verdict)
ENVIRONMENT = [
    ("env", "ask"),
    ("env -0", "ask"),
    ("env FOO=1", "ask"),
    ("printenv", "ask"),
    ("printenv ANTHROPIC_API_KEY", "ask"),
    ("/usr/bin/printenv HOME", "ask"),
    ("jq -n env.ANTHROPIC_API_KEY", "ask"),
    ("jq -n '$ENV.ANTHROPIC_API_KEY'", "ask"),
    ("jq -n -f filter.jq", "ask"),  # a filter the gate cannot see
    ("ps auxeww", "ask"),
    ("ps e", "ask"),
    ("ps auxe", "ask"),
    ("cat /proc/1/environ", "ask"),
    ("head -c 100 /proc/self/environ", "ask"),
    ("set", "ask"),
    ("export", "ask"),
    ("export -p", "ask"),
    ("declare -p", "ask"),
    ("declare -x", "ask"),
    ("env FOO=1 ls", "allow"),  # env running a command is judged as that command
    ("jq .name package.json", "allow"),
    ("ps -e", "allow"),  # UNIX -e: every process, not their environments
    ("ps -ef", "allow"),
    ("ps aux", "allow"),
]


def verdict(tmp: Path, command: str) -> str:
    p = Permissions("default", cwd=tmp, home=tmp / "home")
    return p.evaluate("Bash", {"command": command}, False).kind


@pytest.mark.parametrize("command,expected", FLAGS)
def test_read_only_commands_are_approved_only_with_known_flags(command: str, expected: str, tmp_path: Path) -> None:
    assert verdict(tmp_path, command) == expected


@pytest.mark.parametrize("command,expected", ENVIRONMENT)
def test_commands_printing_the_environment_are_asked(command: str, expected: str, tmp_path: Path) -> None:
    assert verdict(tmp_path, command) == expected


@pytest.mark.parametrize("name", sorted(n for n, s in bashcheck.COMMANDS.items()
                                        if s.read_only and s.option_words is None))
def test_every_read_only_command_asks_about_a_flag_its_table_does_not_know(name: str) -> None:
    """The allow-list is the default: a read-only command without a list of its own knows no
    flag, so an unknown one (long or short) makes the call not read-only."""
    for flag in ("--no-such-flag", "-Y"):
        c = bashparse.parse(f"{name} {flag} x").commands[0]
        assert bashcheck.read_only_problem(c) is not None, (name, flag)


# `test` and `[`: bashlex leaves `[` an unquoted glob character, but a lone `[` closes no
# bracket, so bash runs its test builtin: both forms are read-only, and a file operator's
# operand is a path read like any other (outside the working directory: asked).
TESTS = [
    ("[ -d src ]", "allow"),
    ("test -d src", "allow"),
    ("[ -f a.txt ] && cat a.txt", "allow"),
    ("[ -n \"$X\" ] || echo unset", "allow"),
    ("test 1 -eq 2 -o -z foo", "allow"),
    ("[ a.txt -nt b.txt ]", "allow"),
    ("[ -d /etc/ssh ]", "ask"),
    ("test -f /etc/shadow", "ask"),
    ("[ -d src -a -f /etc/passwd ]", "ask"),
    ("[ a.txt -nt /etc/passwd ]", "ask"),
    ("[ -d src ] && rm a.txt", "ask"),
    ("[ -d src ] > out", "ask"),
    ("[a] -d src", "ask"),  # a real bracket expression: the name is a glob, computed at run time
    ("[ -d $(touch x) ]", "ask"),
]


@pytest.mark.parametrize("command,expected", TESTS)
def test_test_and_bracket_are_read_only_with_their_paths_checked(command: str, expected: str,
                                                                   tmp_path: Path) -> None:
    assert verdict(tmp_path, command) == expected
