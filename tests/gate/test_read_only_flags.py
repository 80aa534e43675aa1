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
