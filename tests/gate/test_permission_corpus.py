"""A security corpus for the permission gate, run end to end.

Every case is one tool call made by a ScriptedModel through `lw.run`, with the real
built-in tools (Bash, Write, Edit, Read, ...) in a temp tree full of canary files:

    root/proj/            the working directory
        canary.txt        must survive every denied case
        .git/config, src/app.py, secrets/key, package.json (`npm run test` succeeds),
        ls (a fake `ls` that writes a file), a.tar (holds pwned.txt)
        link_out -> ../outside, src/out -> ../../outside   (symlink escapes)
        tools/lnk -> ../../outside/deep/inner   (`tools/lnk/../../x` is outside/x to the
                                                  kernel, proj/x to a lexical `..`)
    root/outside/canary.txt, Makefile   outside the working directory
    root/home/.bashrc          $HOME for the run

Denied cases must come back as an is_error "Permission denied" result listed in
`permission_denials`, and the whole tree must be byte-for-byte unchanged afterwards. So
that an unchanged tree means something, each denied case (unless marked otherwise) is
also run once with bypassPermissions and no rules, and there it must change the tree.
Allowed cases must run (no denial) and, where they write, have their effect.

A read case names the text it would leak instead: with bypassPermissions that text reaches
the model (the control), and in the denied run it must not. `{root}` in an input stands for
the temp root. The end-to-end CLI tests at the bottom run the same cases through
`loopwright -p` against the loopback Messages-API server and check what reached it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright.testing import ScriptedServer
from loopwright.tools.builtin import default_tools
from tests.helpers import first_tool_result, result_text

RULES: dict[str, dict[str, Any]] = {
    # A typical project: a few approved commands, destructive ones and secrets denied.
    "default": {"mode": "default",
                "allow": ["Bash(npm run test:*)", "Bash(git diff *)", "Bash(echo *)", "Bash(git status)"],
                "deny": ["Bash(rm *)", "Bash(curl *)", "Read(./secrets/**)", "Edit(./src/generated/**)"]},
    "acceptEdits": {"mode": "acceptEdits",
                    "deny": ["Bash(rm *)", "Read(./secrets/**)", "Edit(./src/generated/**)"]},
    "dontAsk": {"mode": "dontAsk", "allow": ["Bash(ls *)", "Bash(cat *)", "Edit(./src/**)"]},
    "plan": {"mode": "plan"},
    "bypass": {"mode": "bypassPermissions", "deny": ["Bash(rm *)", "Edit(./.env)", "Read(./secrets/**)"],
               "ask": ["Bash(touch *)", "Bash(git push *)"]},
    "extraDir": {"mode": "acceptEdits", "add_dirs": ["../outside"]},
    "planDeny": {"mode": "plan", "deny": ["Read(./secrets/**)"]},
    # approved commands that still must not write outside, or read what deny rules hide
    "tools": {"mode": "default", "allow": ["Bash(sort *)", "Bash(uniq *)", "Bash(tar *)", "Bash(make *)",
                                           "Bash(tee *)", "Bash(git *)", "Bash(xargs *)"]},
    # a bare Bash rule approves every command, as in Claude Code, deny rules and protected paths aside
    "bareBash": {"mode": "default", "allow": ["Bash"], "deny": ["Read(./secrets/**)"]},
}

# (rule set, tool, input (a str is a Bash command), control): control=True: in bypass mode the
# call changes the tree; a str: in bypass mode that text reaches the model; False: no control.
DENIED: list[tuple[str, str, Any, bool | str]] = [
    # chaining: every part must be allowed
    ("default", "Bash", "ls && rm canary.txt", True),
    ("default", "Bash", "ls; rm canary.txt", True),
    ("default", "Bash", "false || rm canary.txt", True),
    ("default", "Bash", "ls | rm canary.txt", True),
    ("default", "Bash", "ls & rm canary.txt", True),
    ("default", "Bash", "ls\nrm canary.txt", True),
    ("default", "Bash", "npm run test && rm canary.txt", True),
    ("default", "Bash", "git diff; touch pwned", True),
    ("default", "Bash", "echo ok && touch pwned", True),
    ("default", "Bash", "ls |& tee canary.txt", True),
    # substitutions: the commands inside are commands too
    ("default", "Bash", "echo $(rm canary.txt)", True),
    ("default", "Bash", "echo `rm canary.txt`", True),
    ("default", "Bash", 'echo "$(rm canary.txt)"', True),
    ("default", "Bash", 'echo "x`touch pwned`"', True),
    ("default", "Bash", "cat <(rm canary.txt)", True),
    ("default", "Bash", "X=$(touch pwned)", True),
    ("default", "Bash", "echo ${x:=$(rm canary.txt)}", True),
    ("default", "Bash", "cat <<EOF\n$(rm canary.txt)\nEOF", True),
    ("default", "Bash", "echo $((1+2)) && rm canary.txt", True),
    # grouping, functions and control flow
    ("default", "Bash", "(rm canary.txt)", True),
    ("default", "Bash", "{ rm canary.txt; }", True),
    ("default", "Bash", "f() { rm canary.txt; }; f", True),
    ("default", "Bash", "for f in canary.txt; do rm $f; done", True),
    ("default", "Bash", "if true; then touch pwned; fi", True),
    # wrappers are stripped before matching
    ("default", "Bash", "timeout 5 rm canary.txt", True),
    ("default", "Bash", "nice -n 5 rm canary.txt", True),
    ("default", "Bash", "nohup rm canary.txt", True),
    ("default", "Bash", "env FOO=1 rm canary.txt", True),
    ("default", "Bash", "FOO=1 rm canary.txt", True),
    ("default", "Bash", "command rm canary.txt", True),
    ("default", "Bash", "time rm canary.txt", True),
    ("default", "Bash", "echo canary.txt | xargs rm", True),
    ("default", "Bash", "echo canary.txt | xargs -I{} rm {}", True),
    ("default", "Bash", "printf canary.txt | xargs -0 -n 1 rm -f", True),
    ("default", "Bash", "find . -name canary.txt -exec rm {} \\;", True),
    ("default", "Bash", "find . -name canary.txt -delete", True),
    ("default", "Bash", "find . -maxdepth 1 -name canary.txt -execdir mv {} gone \\;", True),
    ("default", "Bash", 'bash -c "rm canary.txt"', True),
    ("default", "Bash", "sh -c 'rm canary.txt'", True),
    ("default", "Bash", 'eval "rm canary.txt"', True),
    ("default", "Bash", '"rm" canary.txt', True),
    ("default", "Bash", "r\\m canary.txt", True),
    # commands computed at run time are never auto-allowed
    ("default", "Bash", "$(echo rm) canary.txt", True),
    ("default", "Bash", "X=rm; $X canary.txt", True),
    ("default", "Bash", 'sh -c "$(echo touch) pwned"', True),
    ("default", "Bash", "PATH=.:$PATH ls", True),
    # quoted operators do not split, but the real ones after them do
    ("default", "Bash", 'echo "a && b" && rm canary.txt', True),
    ("default", "Bash", "echo 'x; y' ; touch pwned", True),
    # redirections are writes
    ("default", "Bash", "echo hi > canary.txt", True),
    ("default", "Bash", "echo hi >> canary.txt", True),
    ("default", "Bash", "ls > listing.txt", True),
    ("default", "Bash", "ls 2> errors.txt", True),
    ("default", "Bash", "ls &> all.txt", True),
    ("default", "Bash", "echo pwned > ~/.bashrc", True),
    ("default", "Bash", "echo x > .git/config", True),
    ("default", "Bash", "echo x > ../outside/canary.txt", True),
    ("default", "Bash", "echo x > link_out/canary.txt", True),
    ("default", "Bash", "cat secrets/key > leaked.txt", True),
    ("default", "Bash", "cd .git && echo x > config", True),
    # unapproved commands and reads of denied paths
    ("default", "Bash", "touch pwned", True),
    ("default", "Bash", "mkdir newdir", True),
    ("default", "Bash", "cp canary.txt ../outside/copied.txt", True),
    ("default", "Bash", "mv canary.txt moved.txt", True),
    ("default", "Bash", "echo x | tee canary.txt", True),
    ("default", "Bash", "python3 -c \"open('canary.txt', 'w')\"", True),
    ("default", "Bash", "cat secrets/key", False),
    ("default", "Read", {"file_path": "secrets/key"}, False),
    ("default", "Grep", {"pattern": "s3cret", "path": "secrets"}, False),
    ("default", "Write", {"file_path": "new.txt", "content": "x"}, True),
    ("default", "Write", {"file_path": "../outside/new.txt", "content": "x"}, True),
    # acceptEdits: edits inside the working directory only, never protected paths
    ("acceptEdits", "Write", {"file_path": "../outside/new.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": "link_out/new.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": "src/out/new.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": "{root}/outside/abs.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": "src/../../outside/dotdot.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": ".git/hooks/pre-commit", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": ".loopwright/settings.json", "content": "{}"}, True),
    ("acceptEdits", "Write", {"file_path": ".claude/settings.json", "content": "{}"}, True),
    ("acceptEdits", "Write", {"file_path": "~/.zshrc", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": ".bashrc", "content": "x"}, True),
    # reads stay inside the working directories (as Claude Code): outside needs approval
    ("default", "Read", {"file_path": "../outside/canary.txt"}, False),
    ("default", "Read", {"file_path": "link_out/canary.txt"}, False),
    ("plan", "Read", {"file_path": "{root}/outside/canary.txt"}, False),
    ("acceptEdits", "Grep", {"pattern": "canary", "path": "../outside", "output_mode": "content"}, False),
    ("acceptEdits", "Glob", {"pattern": "*.txt", "path": "{root}/outside"}, False),
    ("acceptEdits", "Bash", "cat ../outside/canary.txt", False),
    ("dontAsk", "Bash", "cat link_out/canary.txt", False),
    ("default", "Bash", "head -1 ~/.bashrc", False),
    # run from the home directory: credentials and logins are protected too
    ("acceptEdits", "Write", {"file_path": ".ssh/authorized_keys", "content": "ssh-ed25519 AAAA evil"}, True),
    ("acceptEdits", "Write", {"file_path": ".aws/credentials", "content": "[default]"}, True),
    ("acceptEdits", "Bash", "echo 'machine x login y' > .netrc", True),
    ("acceptEdits", "Write", {"file_path": "secrets/new.txt", "content": "x"}, True),
    ("acceptEdits", "Write", {"file_path": "src/generated/x.py", "content": "x"}, True),
    ("acceptEdits", "Bash", "touch ../outside/pwned", True),
    ("acceptEdits", "Bash", "mkdir -p .git/hooks2", True),
    ("acceptEdits", "Bash", "cp canary.txt link_out/copied", True),
    ("acceptEdits", "Bash", "mv canary.txt ../outside/", True),
    ("acceptEdits", "Bash", "echo x > link_out/pwned", True),
    ("acceptEdits", "Bash", "mkdir -p src/generated/x", True),
    ("acceptEdits", "Bash", "cp secrets/key leaked", True),
    ("acceptEdits", "Bash", 'touch "$HOME/pwned"', True),
    ("acceptEdits", "Bash", "touch ~/pwned", True),
    ("acceptEdits", "Bash", "rm canary.txt", True),
    ("acceptEdits", "Bash", "ln -s ../outside escape", True),
    ("acceptEdits", "Bash", "mv canary.txt .g*/", True),
    # plan: read-only tools only
    ("plan", "Write", {"file_path": "src/new.py", "content": "x"}, True),
    ("plan", "Bash", "touch pwned", True),
    ("plan", "Bash", "git diff --output=pwned.txt", True),
    ("plan", "Bash", "ls > listing.txt", True),
    ("plan", "Bash", "find . -name canary.txt -delete", True),
    ("plan", "Bash", "sort -o sorted.txt canary.txt", True),
    # dontAsk: anything not pre-approved is refused
    ("dontAsk", "Write", {"file_path": "canary2.txt", "content": "x"}, True),
    ("dontAsk", "Write", {"file_path": "src/../new.txt", "content": "x"}, True),
    ("dontAsk", "Write", {"file_path": "src/out/new.txt", "content": "x"}, True),
    ("dontAsk", "Bash", "ls && touch pwned", True),
    ("dontAsk", "Bash", "cat canary.txt > copy.txt", True),
    # bypassPermissions still honours deny and ask rules
    ("bypass", "Bash", "rm canary.txt", True),
    ("bypass", "Bash", "ls && rm canary.txt", True),
    ("bypass", "Bash", "touch pwned", True),
    ("bypass", "Write", {"file_path": ".env", "content": "x"}, True),
    ("bypass", "Bash", "cat secrets/key > out.txt", True),
    ("bypass", "Bash", "bash -o pipefail -c 'rm canary.txt'", True),
    ("bypass", "Bash", "/bin/rm canary.txt", True),
    ("bypass", "Bash", "setsid -w rm canary.txt", True),
    ("bypass", "Bash", "cd src && rm ../canary.txt", True),
]

# The hardening classes (issue 9): paths as the kernel sees them, process-relative paths,
# directory changes and options that name files, shell expansion, Glob/Grep inputs, Read
# deny rules on shell reads. Each would leak or change something if it ran (the control).
HARDENING: list[tuple[str, str, Any, bool | str]] = [
    # 1. a symlink is followed before the `..` after it
    ("default", "Bash", "cat tools/lnk/../../canary.txt", "outside canary"),
    ("acceptEdits", "Bash", "cat tools/lnk/../../canary.txt", "outside canary"),
    ("dontAsk", "Bash", "cat tools/lnk/../../canary.txt", "outside canary"),
    ("default", "Read", {"file_path": "tools/lnk/../../canary.txt"}, "outside canary"),
    ("plan", "Read", {"file_path": "{root}/proj/tools/lnk/../../canary.txt"}, "outside canary"),
    ("acceptEdits", "Write", {"file_path": "tools/lnk/../../pwned.txt", "content": "x"}, True),
    ("acceptEdits", "Bash", "echo x > tools/lnk/../../pwned.txt", True),
    ("acceptEdits", "Bash", "touch tools/lnk/../../pwned.txt", True),
    ("acceptEdits", "Bash", "cp canary.txt tools/lnk/../../copied.txt", True),
    ("acceptEdits", "Bash", "cat link_out/../outside/canary.txt", "outside canary"),
    ("default", "Grep", {"pattern": "outside canary", "path": "tools/lnk/../..", "output_mode": "content"},
     "outside canary"),
    ("acceptEdits", "Glob", {"pattern": "*.txt", "path": "tools/lnk/../.."}, "outside/canary.txt"),
    # 2. /proc/<pid>/..., /dev/fd/N: what they name depends on the process that opens them
    ("default", "Bash", "cat /proc/self/root{root}/outside/canary.txt", "outside canary"),
    ("acceptEdits", "Bash", "cat /proc/self/cwd/secrets/key", "s3cret"),
    ("dontAsk", "Bash", "cat /proc/self/cwd/../outside/canary.txt", "outside canary"),
    ("plan", "Bash", "cat /proc/self/cwd/../outside/canary.txt", "outside canary"),
    ("acceptEdits", "Bash", "echo x > /proc/self/cwd/../outside/pwned", True),
    ("acceptEdits", "Bash", "cp canary.txt /proc/self/cwd/../outside/copied", True),
    ("plan", "Read", {"file_path": "/proc/self/root{root}/outside/canary.txt"}, "outside canary"),
    ("acceptEdits", "Read", {"file_path": "/proc/self/root{root}/outside/canary.txt"}, "outside canary"),
    # 3. commands that change directory or name files through options
    ("default", "Bash", "cd ../outside && cat canary.txt", "outside canary"),
    ("default", "Bash", "cd ../outside; cat canary.txt", "outside canary"),
    ("acceptEdits", "Bash", "cd .. && cat outside/canary.txt", "outside canary"),
    ("acceptEdits", "Bash", "pushd ../outside && cat canary.txt", "outside canary"),
    ("acceptEdits", "Bash", "env -C ../outside cat canary.txt", "outside canary"),
    ("acceptEdits", "Bash", "env --chdir ../outside cat canary.txt", "outside canary"),
    ("acceptEdits", "Bash", "cd ..; echo x > outside/pwned", True),
    ("acceptEdits", "Bash", "cd .. && touch outside/pwned", True),
    ("acceptEdits", "Bash", "cd src/out && touch pwned", True),
    ("default", "Bash", "xargs -a ../outside/canary.txt echo", "outside canary"),
    ("default", "Bash", "diff --from-file=../outside/canary.txt canary.txt", "outside canary"),
    ("default", "Bash", "diff --from-file ../outside/canary.txt canary.txt", "outside canary"),
    ("default", "Bash", "date -f ../outside/canary.txt", "outside canary"),
    ("default", "Bash", "git diff --no-index ../outside/canary.txt canary.txt", "outside canary"),
    ("acceptEdits", "Bash", "grep -f ../outside/canary.txt ../outside/canary.txt", "outside canary"),
    ("tools", "Bash", "tar -C ../outside -xf a.tar", True),
    ("tools", "Bash", "make -C ../outside", True),
    ("tools", "Bash", "git -C ../outside diff --no-index canary.txt Makefile", "outside canary"),
    ("tools", "Bash", "sort -o ../outside/sorted canary.txt", True),
    ("tools", "Bash", "sort -uo ../outside/sorted canary.txt", True),
    ("tools", "Bash", "sort -ruo ../outside/sorted canary.txt", True),
    ("tools", "Bash", "sort --output=../outside/sorted canary.txt", True),
    ("tools", "Bash", "sort --out=../outside/sorted canary.txt", True),
    ("tools", "Bash", "sort -o.git/config canary.txt", True),
    ("tools", "Bash", "uniq canary.txt ../outside/u.txt", True),
    ("tools", "Bash", "tee ../outside/t.txt < canary.txt", True),
    ("tools", "Bash", "git diff --no-index --output=../outside/d.txt canary.txt src/app.py", True),
    ("tools", "Bash", "xargs -a ../outside/canary.txt echo", "outside canary"),
    ("plan", "Bash", "sort -uo sorted.txt canary.txt", True),
    ("plan", "Bash", "sort -ruo sorted.txt canary.txt", True),
    ("plan", "Bash", "sort --out=sorted.txt canary.txt", True),
    ("plan", "Bash", "uniq canary.txt u.txt", True),
    ("plan", "Bash", "git diff --no-index --output=d.txt canary.txt src/app.py", True),
    # 4. shell expansion: globs, braces, ANSI-C quoting, backslashes, ~, variables
    ("default", "Bash", "cat ../outs*/canary.txt", "outside canary"),
    ("default", "Bash", "cat ../outsid?/canary.txt", "outside canary"),
    ("default", "Bash", "cat ../[o]utside/canary.txt", "outside canary"),
    ("default", "Bash", "cat ../{outside,nothing}/canary.txt", "outside canary"),
    ("default", "Bash", "cat $'\\x2e\\x2e/outside/canary.txt'", "outside canary"),
    ("default", "Bash", "cat \\.\\./outside/canary.txt", "outside canary"),
    ("default", "Bash", "cat ~/.bashrc", "# rc"),
    ("default", "Bash", "cat $HOME/.bashrc", "# rc"),
    ("default", "Bash", 'cat "$HOME/.bashrc"', "# rc"),
    ("default", "Bash", "cat `echo ../outside/canary.txt`", "outside canary"),
    ("default", "Bash", "cat $(echo ../outside)/canary.txt", "outside canary"),
    ("plan", "Bash", "cat ../outs*/canary.txt", "outside canary"),
    ("plan", "Bash", "cat ../[o]utside/canary.txt", "outside canary"),
    ("plan", "Bash", "cat ../{outside,nothing}/canary.txt", "outside canary"),
    ("plan", "Bash", "cat $'\\x2e\\x2e/outside/canary.txt'", "outside canary"),
    ("plan", "Bash", "cat $HOME/.bashrc", "# rc"),
    ("plan", "Bash", "cat `echo ../outside/canary.txt`", "outside canary"),
    ("dontAsk", "Bash", "cat ../outsid?/canary.txt", "outside canary"),
    ("dontAsk", "Bash", "cat ~/.bash*", "# rc"),
    ("acceptEdits", "Bash", "cp canary.txt ../outs*/", True),
    ("acceptEdits", "Bash", "touch $'\\x2e\\x2e'/outside/pwned", True),
    ("acceptEdits", "Bash", "mkdir ~/pwned", True),
    ("acceptEdits", "Bash", "X=../outside; touch $X/pwned", True),
    ("acceptEdits", "Bash", "touch ../{outside,outside}/pwned", True),
    # 5. Glob and Grep inputs: the pattern is a path too, and path may be a symlink out
    ("default", "Glob", {"pattern": "../outside/*.txt"}, "outside/canary.txt"),
    ("acceptEdits", "Glob", {"pattern": "{root}/outside/*.txt"}, "outside/canary.txt"),
    ("plan", "Glob", {"pattern": "link_out/*.txt"}, "outside/canary.txt"),
    ("default", "Glob", {"pattern": "*", "path": "~"}, ".bashrc"),
    ("default", "Grep", {"pattern": "outside canary", "path": "link_out", "output_mode": "content"}, "outside canary"),
    ("plan", "Grep", {"pattern": "canary", "path": "{root}/outside", "output_mode": "content"}, "outside canary"),
    ("dontAsk", "Grep", {"pattern": "outside", "path": "link_out", "output_mode": "content"}, "outside canary"),
    # 6. Read deny rules inside the working directory hold for shell reads too
    ("default", "Bash", "cat secr*/key", "s3cret"),
    ("default", "Bash", "cd secrets; cat key", "s3cret"),
    ("default", "Bash", "cd secrets && cat key", "s3cret"),
    ("planDeny", "Bash", "cat secr*/key", "s3cret"),
    ("planDeny", "Bash", "cd secrets; cat key", "s3cret"),
    ("planDeny", "Bash", "cat s?crets/k?y", "s3cret"),
    ("planDeny", "Bash", "cat {src,secrets}/key", "s3cret"),
    ("planDeny", "Bash", "head secrets/*", "s3cret"),
    ("planDeny", "Bash", "grep -r s3cre[t] .", "s3cret"),
    ("planDeny", "Bash", "rg s3cre[t]", "s3cret"),
    ("acceptEdits", "Bash", "cd src; cat ../secrets/key", "s3cret"),
    ("acceptEdits", "Bash", "env -C secrets cat key", "s3cret"),
    ("bareBash", "Bash", "cat secrets/key", "s3cret"),
    ("bareBash", "Bash", "cat secr*/key", "s3cret"),
    # a bare Bash rule still keeps protected paths
    ("bareBash", "Bash", "echo x > .git/config", True),
    ("bareBash", "Bash", "rm -rf .git", True),
]
DENIED += HARDENING

# (rule set, tool, input, path that must exist afterwards or None)
ALLOWED: list[tuple[str, str, Any, str | None]] = [
    ("default", "Bash", "ls -la", None),
    ("default", "Bash", "cat canary.txt", None),
    ("default", "Bash", "pwd", None),
    ("default", "Bash", "git diff HEAD", None),
    ("default", "Bash", "git status", None),
    ("default", "Bash", "npm run test", None),
    ("default", "Bash", "echo 'x; rm canary.txt'", None),
    ("default", "Bash", 'echo "a && rm canary.txt"', None),
    ("default", "Bash", "ls | grep canary | wc -l", None),
    ("default", "Bash", "head -n 1 canary.txt && tail -n 1 canary.txt", None),
    ("default", "Bash", 'find . -name "*.txt"', None),
    ("default", "Bash", "ls 2>/dev/null", None),
    ("default", "Bash", "echo hi > /dev/null 2>&1", None),
    ("default", "Bash", "timeout 5 ls", None),
    ("default", "Bash", "nice -n 5 cat canary.txt", None),
    ("default", "Bash", "FOO=1 ls", None),
    ("default", "Bash", "wc -c canary.txt; pwd", None),
    ("default", "Bash", "(ls; pwd)", None),
    ("default", "Bash", "echo $(pwd)", None),
    ("default", "Bash", "ls | xargs echo", None),
    ("default", "Bash", "cat canary.txt | sort | uniq", None),
    ("default", "Bash", "grep -n canary canary.txt", None),
    ("default", "Bash", "bash -c 'ls && pwd'", None),
    ("default", "Read", {"file_path": "canary.txt"}, None),
    ("default", "Grep", {"pattern": "canary"}, None),
    ("default", "Glob", {"pattern": "*.txt"}, None),
    ("acceptEdits", "Write", {"file_path": "src/new.py", "content": "x"}, "src/new.py"),
    ("acceptEdits", "Write", {"file_path": "docs/readme.md", "content": "x"}, "docs/readme.md"),
    ("acceptEdits", "Bash", "mkdir -p build/out && touch build/out/x", "build/out/x"),
    ("acceptEdits", "Bash", "cp canary.txt copy.txt", "copy.txt"),
    ("acceptEdits", "Bash", "echo hi > out.txt", "out.txt"),
    ("acceptEdits", "Bash", "mv canary.txt renamed.txt", "renamed.txt"),
    ("dontAsk", "Write", {"file_path": "src/x.py", "content": "x"}, "src/x.py"),
    ("dontAsk", "Bash", "ls -la", None),
    ("dontAsk", "Bash", "cat canary.txt", None),
    ("plan", "Bash", "ls && git status", None),
    ("plan", "Read", {"file_path": "canary.txt"}, None),
    ("bypass", "Bash", "mkdir made", "made"),
    ("bypass", "Write", {"file_path": "../outside/bypass.txt", "content": "x"}, "../outside/bypass.txt"),
    ("extraDir", "Write", {"file_path": "../outside/extra.txt", "content": "x"}, "../outside/extra.txt"),
    ("extraDir", "Bash", "touch ../outside/touched", "../outside/touched"),
    ("extraDir", "Read", {"file_path": "../outside/canary.txt"}, None),
    ("extraDir", "Bash", "cat ../outside/canary.txt", None),
    # what the hardening must not take away
    ("default", "Bash", "cd src && ls", None),
    ("default", "Bash", "cd src; cat app.py", None),
    ("default", "Bash", "(cd src && ls) && ls", None),
    ("default", "Bash", "cat src/*.py", None),
    ("default", "Bash", "cat {canary,package}.*", None),
    ("default", "Bash", "diff canary.txt src/../canary.txt", None),
    ("default", "Bash", "sort -u -k1 -t, canary.txt", None),
    ("default", "Bash", "grep -e canary -r src .git", None),
    ("default", "Bash", "head -n1 $'canary.txt'", None),
    ("default", "Bash", "env -C src ls", None),
    ("default", "Bash", "find src -newer canary.txt", None),
    ("default", "Bash", "cat tools/lnk/../../../proj/canary.txt", None),
    ("default", "Bash", "ls 2>/dev/null < /dev/null", None),
    ("default", "Read", {"file_path": "src/../canary.txt"}, None),
    ("default", "Glob", {"pattern": "src/**/*.py"}, None),
    ("default", "Grep", {"pattern": "app", "path": "src"}, None),
    ("plan", "Bash", "cd src && cat app.py", None),
    ("planDeny", "Bash", "grep -r app src", None),
    ("dontAsk", "Bash", "cat src/../canary.txt", None),
    ("acceptEdits", "Bash", "cd src && touch new.py", "src/new.py"),
    ("acceptEdits", "Bash", "sort canary.txt > sorted.txt", "sorted.txt"),
    ("acceptEdits", "Write", {"file_path": "src/../top.txt", "content": "x"}, "top.txt"),
    ("tools", "Bash", "sort -o sorted.txt canary.txt", "sorted.txt"),
    ("tools", "Bash", "sort -uo sorted.txt canary.txt", "sorted.txt"),
    ("tools", "Bash", "tar -cf out.tar canary.txt", "out.tar"),
    ("bareBash", "Bash", "cat /etc/os-release", None),
    ("bareBash", "Bash", "ls ~", None),
    ("bareBash", "Bash", "cat ../outside/canary.txt", None),
    ("bareBash", "Bash", "touch made.txt", "made.txt"),
    ("bareBash", "Bash", "cat ~/.bashrc", None),
]


def make_tree(root: Path) -> Path:
    proj = root / "proj"
    for d in ("src", ".git", "secrets", "outside_placeholder"):
        (proj / d).mkdir(parents=True, exist_ok=True)
    (proj / "outside_placeholder").rmdir()
    (root / "outside").mkdir()
    (root / "home").mkdir()
    (proj / "canary.txt").write_text("canary\n")
    (proj / "package.json").write_text('{"name": "p", "version": "1.0.0", "scripts": {"test": "true"}}\n')
    (proj / ".git" / "config").write_text("[core]\n")
    (proj / "src" / "app.py").write_text("print('app')\n")
    (proj / "secrets" / "key").write_text("s3cret\n")
    (root / "outside" / "canary.txt").write_text("outside canary\n")
    (root / "outside" / "Makefile").write_text("all:\n\ttouch made_by_make\n")
    (root / "outside" / "deep" / "inner").mkdir(parents=True)
    (proj / "tools").mkdir()
    (proj / "tools" / "lnk").symlink_to(root / "outside" / "deep" / "inner")
    payload = root / "pwned.txt"
    payload.write_text("pwned\n")
    with tarfile.open(proj / "a.tar", "w") as tar:
        tar.add(payload, arcname="pwned.txt")
    payload.unlink()
    (root / "home" / ".bashrc").write_text("# rc\n")
    fake_ls = proj / "ls"
    fake_ls.write_text("#!/bin/sh\ntouch pwned_by_path\n")
    fake_ls.chmod(0o755)
    (proj / "link_out").symlink_to(root / "outside")
    (proj / "src" / "out").symlink_to(root / "outside")
    return proj


def snapshot(root: Path) -> dict[str, str]:
    """Every file, directory and symlink under root, with contents."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        # npm's own logs and the CLI's session transcripts in $HOME
        dirnames[:] = [d for d in dirnames if d != ".npm" and not (d == ".loopwright" and dirpath == str(root / "home"))]
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "-> " + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = p.read_bytes().decode(errors="replace")
    return out


def call(tool: str, spec: Any, root: Path) -> dict[str, Any]:
    if isinstance(spec, str):
        return {"command": spec.replace("{root}", str(root))}
    return {k: v.replace("{root}", str(root)) if isinstance(v, str) else v for k, v in spec.items()}


def run_case(root: Path, rules: dict[str, Any], tool: str, spec: Any) -> lw.ResultMessage:
    proj = root / "proj"
    use = {"type": "tool_use", "id": "t1", "name": tool, "input": call(tool, spec, root)}
    model = lw.ScriptedModel([[use], [{"type": "text", "text": "done"}]])
    opts = lw.AgentOptions(
        model=model, tools=default_tools(), cwd=proj, permission_mode=rules.get("mode"),
        allowed_tools=list(rules.get("allow", [])), disallowed_tools=list(rules.get("deny", [])),
        settings={"permissions": {"ask": list(rules.get("ask", []))}}, setting_sources=[],
        add_dirs=list(rules.get("add_dirs", [])))
    return lw.run("go", opts)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LOOPWRIGHT_HOME", str(tmp_path / "home" / ".loopwright"))
    monkeypatch.setenv("NO_UPDATE_NOTIFIER", "1")
    monkeypatch.setenv("npm_config_update_notifier", "false")
    make_tree(tmp_path)
    return tmp_path


def _id(case: tuple[Any, ...]) -> str:
    x = case[2]
    spec = x if isinstance(x, str) else x.get("file_path") or f"{x.get('pattern')} in {x.get('path', '.')}"
    return f"{case[0]}-{case[1]}-{spec}"[:80]


def test_corpus_sizes() -> None:
    assert len(DENIED) >= 60 + 60 and len(HARDENING) >= 60 and len(ALLOWED) >= 30 + 15
    assert len({_id(c) for c in DENIED}) == len(DENIED)
    assert len({_id(c) for c in ALLOWED}) == len(ALLOWED)


@pytest.mark.parametrize("case", DENIED, ids=[_id(c) for c in DENIED])
def test_denied_and_nothing_changes(case: tuple[str, str, Any, bool | str], root: Path) -> None:
    ruleset, tool, spec, control = case
    before = snapshot(root)
    r = run_case(root, RULES[ruleset], tool, spec)
    block = first_tool_result(r)
    assert block["is_error"] is True
    assert "Permission denied" in result_text(block), result_text(block)
    assert [d["tool_use_id"] for d in r.permission_denials] == ["t1"]
    assert snapshot(root) == before
    assert "s3cret" not in result_text(block) and "outside canary" not in result_text(block)
    if isinstance(control, str):
        assert control not in result_text(block)
    assert r.subtype == "success"  # a denial is a tool result, not the end of the run


LEAKS = [c for c in DENIED if isinstance(c[3], str)]


@pytest.mark.parametrize("case", LEAKS, ids=[_id(c) for c in LEAKS])
def test_denied_read_would_reach_the_model(case: tuple[str, str, Any, bool | str], root: Path) -> None:
    """The control for reads: with no rules in bypassPermissions the same call does put the
    text in front of the model, so its absence above is the gate's doing."""
    _ruleset, tool, spec, control = case
    r = run_case(root, {"mode": "bypassPermissions"}, tool, spec)
    assert r.permission_denials == []
    assert isinstance(control, str) and control in result_text(first_tool_result(r))


@pytest.mark.parametrize("case", [c for c in DENIED if c[3] is True], ids=[_id(c) for c in DENIED if c[3] is True])
def test_denied_case_would_change_the_tree(case: tuple[str, str, Any, bool | str], root: Path) -> None:
    """The control: with no rules in bypassPermissions the same call does change the tree,
    so the unchanged tree above is the gate's doing."""
    _ruleset, tool, spec, _control = case
    before = snapshot(root)
    r = run_case(root, {"mode": "bypassPermissions"}, tool, spec)
    assert r.permission_denials == []
    assert snapshot(root) != before, result_text(first_tool_result(r))


@pytest.mark.parametrize("case", ALLOWED, ids=[_id(c) for c in ALLOWED])
def test_allowed_runs(case: tuple[str, str, Any, str | None], root: Path) -> None:
    ruleset, tool, spec, created = case
    r = run_case(root, RULES[ruleset], tool, spec)
    block = first_tool_result(r)
    assert r.permission_denials == [], result_text(block)
    assert "Permission denied" not in result_text(block)
    if created is not None:
        assert (root / "proj" / created).exists(), result_text(block)
    assert (root / "outside" / "canary.txt").read_text() == "outside canary\n"
    assert (root / "home" / ".bashrc").read_text() == "# rc\n"


# --- the same cases through the real CLI ---------------------------------------------------------

MODEL = "claude-sonnet-4-5"


def cli_flags(rules: dict[str, Any]) -> list[str]:
    flags = ["--permission-mode", rules["mode"]]
    for r in rules.get("allow", []):
        flags += ["--allowedTools", r]
    for r in rules.get("deny", []):
        flags += ["--disallowedTools", r]
    for d in rules.get("add_dirs", []):
        flags += ["--add-dir", d]
    if rules.get("ask"):
        flags += ["--settings", json.dumps({"permissions": {"ask": rules["ask"]}})]
    return flags


def run_cli(root: Path, rules: dict[str, Any], turns: list[Any]) -> tuple[subprocess.CompletedProcess[str],
                                                                          list[Any]]:
    """`loopwright -p` in the project against the loopback server; (process, loop requests)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOPWRIGHT_", "OPENAI_"))}
    env.update(ANTHROPIC_API_KEY="test", HOME=str(root / "home"), LOOPWRIGHT_HOME=str(root / "home" / ".loopwright"))
    cmd = [sys.executable, "-c", "import sys; from loopwright.cli import main; sys.exit(main())"]
    with ScriptedServer(turns, model=MODEL, strict=False) as srv:
        p = subprocess.run([*cmd, "-p", "go", "--model", MODEL, "--base-url", srv.url, "--output-format", "json",
                            "--setting-sources", "", *cli_flags(rules)],
                           cwd=root / "proj", env=env, capture_output=True, text=True, timeout=120)
        return p, srv.loop_requests


@pytest.mark.e2e
@pytest.mark.parametrize("ruleset", sorted({c[0] for c in HARDENING}))
def test_hardening_cases_through_the_cli(ruleset: str, root: Path) -> None:
    """Every hardening case of one rule set as one model turn of parallel tool calls, run by
    `loopwright -p`: each comes back to the model as a refusal, none of the leaked texts
    reaches it, and the tree is unchanged."""
    cases = [c for c in HARDENING if c[0] == ruleset]
    uses = [{"type": "tool_use", "id": f"t{i}", "name": tool, "input": call(tool, spec, root)}
            for i, (_r, tool, spec, _c) in enumerate(cases)]
    before = snapshot(root)
    p, requests = run_cli(root, RULES[ruleset], [uses, [{"type": "text", "text": "done"}]])
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["subtype"] == "success"
    assert sorted(d["tool_use_id"] for d in out["permission_denials"]) == sorted(u["id"] for u in uses)
    results = {b["tool_use_id"]: b for b in requests[1].body["messages"][-1]["content"] if b["type"] == "tool_result"}
    assert set(results) == {u["id"] for u in uses}
    for u, case in zip(uses, cases, strict=True):
        block = results[u["id"]]
        text = json.dumps(block["content"])
        assert block["is_error"] is True and "Permission denied" in text, (case, text)
        for leak in ("s3cret", "outside canary", "# rc", *([case[3]] if isinstance(case[3], str) else [])):
            assert leak not in text, (case, text)
    assert snapshot(root) == before


@pytest.mark.e2e
def test_bare_bash_rule_runs_reads_outside_through_the_cli(root: Path) -> None:
    """`--allowedTools Bash` allows every command as in Claude Code (issue 15): reads outside
    the working directory run and their output reaches the model; protected paths and Read
    deny rules still hold."""
    (root / "etc_like").mkdir()
    (root / "etc_like" / "os-release").write_text("NAME=canaryOS\n")
    cmds = [f"cat {root}/etc_like/os-release", "ls ~", "cat secrets/key", "echo x > .git/config"]
    uses = [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": c}} for i, c in enumerate(cmds)]
    p, requests = run_cli(root, RULES["bareBash"], [uses, [{"type": "text", "text": "done"}]])
    assert p.returncode == 0, p.stderr
    results = {b["tool_use_id"]: json.dumps(b["content"]) for b in requests[1].body["messages"][-1]["content"]}
    assert "NAME=canaryOS" in results["t0"]
    assert ".bashrc" not in results["t1"] and "Permission denied" not in results["t1"]  # ls ~ ran (no dotfiles)
    assert "Permission denied" in results["t2"] and "s3cret" not in results["t2"]
    assert "Permission denied" in results["t3"] and (root / "proj" / ".git" / "config").read_text() == "[core]\n"
    assert sorted(d["tool_use_id"] for d in json.loads(p.stdout)["permission_denials"]) == ["t2", "t3"]
