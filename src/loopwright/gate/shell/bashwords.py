"""Room: bases (under the gate). Owns what shell-command parsing finds (gate/shell/bashparse.py): a
command line's simple commands, their words and redirections, and what of them the gate asks about
(a word that is a pattern, a redirection that writes or reads, an assignment that changes which
program runs); imports nothing of loopwright.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Characters that make a word a pattern rather than one fixed name.
GLOB_CHARS = frozenset("*?[]{}")
WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
READ_REDIRECTS = frozenset({"<"})
# Environment variables that change which program runs or what it loads: a command
# that sets one is never auto-allowed (PATH=. ls runs ./ls).
_DANGEROUS_VAR = re.compile(
    r"^(PATH|IFS|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|CDPATH|HOME|EDITOR|VISUAL|PAGER|"
    r"LD_\w*|DYLD_\w*|GIT_\w*|\w*_PAGER|PYTHON\w*|NODE_OPTIONS|NODE_PATH|PERL5\w*|PERLLIB|RUBYOPT|"
    r"RUBYLIB|LESSOPEN|LESSCLOSE|BASH_FUNC_\w*|TMPDIR|XDG_CONFIG_HOME|ZDOTDIR)$"
)


@dataclass(slots=True)
class Word:
    """One word of a simple command, as written and after quote removal."""

    text: str  # as written, quotes included
    value: str  # after quote removal (expansions left as written)
    literal: bool  # no parameter/command/process substitution: `value` is what the program gets
    tilde: bool = False  # starts with an unquoted ~ (expanded to the home directory)

    @property
    def pattern(self) -> bool:
        """Unquoted glob or brace characters: the shell may turn it into other names."""
        if not self.literal:
            return True
        unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", self.text)
        return any(c in GLOB_CHARS for c in unquoted)


@dataclass(slots=True)
class Redirect:
    """One redirection of a simple command (`>`, `<`, `2>&1`, ...)."""

    op: str
    target: Word | None  # None: a file-descriptor duplication such as 2>&1
    fd: int | None = None

    @property
    def writes(self) -> bool:
        return self.target is not None and self.op in WRITE_REDIRECTS

    @property
    def reads(self) -> bool:
        return self.target is not None and self.op in READ_REDIRECTS


@dataclass
class SimpleCommand:
    """One command the shell would run, with harmless wrappers already stripped."""

    argv: list[Word]
    text: str  # the command as written, from its name to its last argument (for rule matching)
    assignments: list[str] = field(default_factory=list)  # VAR names set for it (or in the shell)
    redirects: list[Redirect] = field(default_factory=list)
    wrappers: list[str] = field(default_factory=list)
    opaque: str | None = None  # why its real command cannot be known, if it cannot
    original: str = ""  # the text before wrappers were stripped
    # Words the stripped wrappers used: `xargs -a FILE` reads FILE, `env -C DIR` runs in DIR.
    wrapper_reads: list[Word] = field(default_factory=list)
    wrapper_chdir: list[Word] = field(default_factory=list)
    # Where it runs: "top" (the main shell, unconditionally), "conditional" (after && / ||,
    # in an if or case), "nested" (a subshell, pipeline, background job or substitution: a
    # cd there does not outlive it), "repeated" (a loop or function body: it may run many times).
    context: str = "top"

    @property
    def name(self) -> str | None:
        """The program name, or None when it is computed at run time."""
        w = self.argv[0] if self.argv else None  # (a lone `[` closes no bracket: bash's test, not a glob)
        if w is None or not w.literal or (w.pattern and w.value != "["):
            return None
        return w.value

    @property
    def args(self) -> list[Word]:
        return self.argv[1:]

    @property
    def plain(self) -> str:
        """The argv joined by single spaces, quotes removed."""
        return " ".join(w.value for w in self.argv)

    @property
    def unsafe_env(self) -> list[str]:
        return [a for a in self.assignments if _DANGEROUS_VAR.match(a)]


@dataclass
class ParsedCommand:
    """A command line's simple commands, or why it could not be fully understood."""

    source: str
    commands: list[SimpleCommand]
    error: str | None = None  # set when the command could not be fully understood

    @property
    def ok(self) -> bool:
        return self.error is None
