"""Room: bases (under the gate). Owns shell-command parsing; may import bashlexload and bashwords only.

Split a shell command into the simple commands it would run, for the permission gate.

A Bash call is only as safe as every command it runs, so the gate needs all of them:
the parts of `&& || ; | |& &` and newlines, of subshells `( )` and groups `{ }`, of
command substitutions `$(...)` and backticks (also inside double quotes), of process
substitutions `<(...)` `>(...)`, the body of `sh -c '...'` / `eval '...'`, the command
that `find -exec` or `xargs` runs, and the command behind harmless wrappers such as
`timeout 5`, `nice -n 5`, `env VAR=1` or leading `VAR=1` assignments.

What it finds is bashwords.py's data (Word, Redirect, SimpleCommand, ParsedCommand; re-exported
here, where the gate names them). Parsing uses `bashlex` (a port of bash's own grammar). When
it cannot parse a command, or when something in it is beyond what this module understands
(arithmetic, `case`, `[[ ]]`, a substitution hidden in a parameter expansion or a
here-document), the result says so (`error`), and the gate never auto-allows it; a rough split
is still provided so that deny rules keep working on it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .bashlexload import bashlex
from .bashwords import ParsedCommand as ParsedCommand
from .bashwords import Redirect as Redirect
from .bashwords import SimpleCommand as SimpleCommand
from .bashwords import Word as Word

# Shell programs: the string of their -c is parsed as commands of its own (`bash -c '...'`)
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_CONTEXTS = ("top", "conditional", "nested", "repeated")


class _Unsupported(Exception):
    pass


MAX_PARSE_CHARS = 50_000  # the parser is pure Python: longer commands are not auto-allowed


def parse(source: str) -> ParsedCommand:
    """All simple commands of `source`; `error` says why it was not fully understood."""
    if len(source) > MAX_PARSE_CHARS:
        return ParsedCommand(source, rough_split(source),
                             f"the command is longer than {MAX_PARSE_CHARS} characters, too long to check")
    try:
        commands = _parse_into(source, depth=0)
    except _Unsupported as e:
        return ParsedCommand(source, rough_split(source), str(e))
    except Exception as e:  # bashlex raises many types on input it cannot handle
        reason = str(e).split("\n")[0] or type(e).__name__
        return ParsedCommand(source, rough_split(source), f"cannot parse the command ({reason})")
    return ParsedCommand(source, commands)


# --- the walk over bashlex's tree ------------------------------------------------------------

_TIME_PREFIX = re.compile(r"(^|[;&|(\n`{]|&&|\|\|)(\s*)(time(?:\s+-p)?)(?=\s)")


def _parse_into(source: str, depth: int) -> list[SimpleCommand]:
    if depth > 5:
        raise _Unsupported("commands nested too deeply")
    if not source.strip():
        return []
    # bashlex does not know the `time` keyword: blank it out, keeping positions.
    prepared = _TIME_PREFIX.sub(lambda m: m.group(1) + m.group(2) + " " * len(m.group(3)), source)
    trees = bashlex().parse(prepared)  # (imported at the first parse: bashlexload.py)
    walker = _Walker(source, depth)
    for t in trees:
        walker.visit(t)
    expected = count_substitutions(source)
    if expected > walker.substitutions:
        raise _Unsupported(
            "a command substitution sits where it cannot be checked (in a parameter expansion or here-document)"
        )
    return walker.out


class _Walker:
    def __init__(self, source: str, depth: int) -> None:
        self.source = source
        self.depth = depth
        self.context = "top"
        self.out: list[SimpleCommand] = []
        self.substitutions = 0

    def within(self, context: str, node: Any) -> None:
        saved = self.context
        self.context = _outer(saved, context)
        try:
            self.visit(node)
        finally:
            self.context = saved

    def visit(self, node: Any) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.substitutions += 1
            self.within("nested", node.command)
        elif kind == "list":
            self.command_list(node.parts)
        elif kind == "pipeline" and sum(1 for p in node.parts if p.kind != "pipe") > 1:
            for child in node.parts:
                self.within("nested", child)
        elif kind in ("compound", "function"):
            self.compound(node)
        elif kind in ("word", "assignment", "redirect"):
            self.nested(node)
        else:
            self.generic(node)

    def command_list(self, parts: list[Any]) -> None:
        """`a && b || c; d & e`: a part after && or || may not run, one before & runs beside."""
        for i, child in enumerate(parts):
            if child.kind == "operator":
                continue
            after = parts[i + 1].op if i + 1 < len(parts) and parts[i + 1].kind == "operator" else ""
            before = parts[i - 1].op if i > 0 and parts[i - 1].kind == "operator" else ""
            self.within("nested" if after == "&" else "conditional" if before in ("&&", "||") else "top", child)

    def compound(self, node: Any) -> None:
        """A loop or function body may run any number of times, a subshell's in its own shell, an
        if's or case's maybe not at all."""
        first = next((p for p in (getattr(node, "list", None) or []) if p.kind == "reservedword"), None)
        word = getattr(first, "word", "")
        context = ("repeated" if node.kind == "function" or word in ("for", "while", "until", "select") else
                   "nested" if word == "(" else "conditional" if word in ("if", "case") else "top")
        saved = self.context
        self.context = _outer(saved, context)
        try:
            self.generic(node)
        finally:
            self.context = saved

    def generic(self, node: Any) -> None:
        for attr in ("parts", "list"):
            for child in getattr(node, attr, None) or []:
                self.visit(child)
        inner = getattr(node, "command", None)
        if inner is not None and not isinstance(inner, (str, int)):
            self.visit(inner)
        # `{ ...; } > f`, `(...) > f`, `for ...; done > f`: the redirections of a compound
        # command apply to everything inside it. They become a command with no argv, so
        # the gate judges them like any other redirection.
        redirects = [r for r in getattr(node, "redirects", None) or [] if getattr(r, "kind", "") == "redirect"]
        if redirects:
            for r in redirects:
                self.nested(r)
            start, end = node.pos
            self.out.append(SimpleCommand([], "", [], [self.redirect(r) for r in redirects],
                                          original=self.source[start:end]))

    def nested(self, node: Any) -> None:
        """Substitutions inside a word, an assignment or a redirect target."""
        if node.kind == "redirect":
            target = getattr(node, "output", None)
            if target is not None and not isinstance(target, int):
                self.nested(target)
            return
        for child in getattr(node, "parts", None) or []:
            if child.kind in ("commandsubstitution", "processsubstitution"):
                self.visit(child)
            elif child.kind == "parameter" and _hides_substitution(getattr(child, "value", "")):
                raise _Unsupported("a parameter expansion contains a command substitution")
            else:
                self.nested(child)

    def word(self, node: Any) -> Word:
        text = self.source[node.pos[0]:node.pos[1]]
        parts = getattr(node, "parts", None) or []
        literal = not any(p.kind in ("parameter", "commandsubstitution", "processsubstitution") for p in parts)
        tilde = any(p.kind == "tilde" for p in parts)
        return Word(text, node.word, literal, tilde)

    def command(self, node: Any) -> None:
        assignments: list[str] = []
        argv: list[Word] = []
        redirects: list[Redirect] = []
        for p in node.parts:
            if p.kind == "assignment" and not argv:
                self.nested(p)
                assignments.append(p.word.split("=", 1)[0].rstrip("+"))
            elif p.kind in ("word", "assignment"):
                self.nested(p)
                argv.append(self.word(p))
            elif p.kind == "redirect":
                self.nested(p)
                redirects.append(self.redirect(p))
            else:
                self.visit(p)
        start, end = node.pos
        original = self.source[start:end]
        cmd = SimpleCommand(argv, _slice_text(self.source, argv) if argv else "", assignments, redirects,
                            original=original, context=self.context)
        self.out.extend(unwrap(cmd, self.depth))

    def redirect(self, node: Any) -> Redirect:
        out = getattr(node, "output", None)
        fd = getattr(node, "input", None)
        if out is None or isinstance(out, int):
            return Redirect(node.type, None, out if isinstance(out, int) else None)
        if node.type == "<<":  # here-document: the word is the delimiter, not a file
            return Redirect(node.type, None, fd)
        return Redirect(node.type, self.word(out), fd if isinstance(fd, int) else None)


def _slice_text(source: str, argv: list[Word]) -> str:
    return " ".join(w.text for w in argv)


def _hides_substitution(value: str) -> bool:
    return "$(" in value or "`" in value or "<(" in value or ">(" in value


def count_substitutions(source: str) -> int:
    """Count `$(`, backtick pairs and process substitutions outside single quotes: a check
    that the parser saw every one of them."""
    n = 0
    backticks = 0
    i = 0
    in_single = in_double = False
    while i < len(source):
        c = source[i]
        if c == "\\" and not in_single:
            i += 2
            continue
        if c == "'" and not in_double:
            in_single = not in_single
        elif in_single:
            pass
        elif c == '"':
            in_double = not in_double
        elif c == "$" and source.startswith("$(", i) and not source.startswith("$((", i):
            n += 1
        elif c == "`":
            backticks += 1
        elif c in "<>" and source.startswith("(", i + 1) and not in_double:
            n += 1
        i += 1
    return n + backticks // 2


# --- wrappers ----------------------------------------------------------------------------------

_TIMEOUT_OPTS_WITH_ARG = {"-s", "--signal", "-k", "--kill-after"}
_XARGS_OPTS_WITH_ARG = {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--max-args", "--max-procs",
                        "--max-lines", "--delimiter", "--arg-file", "--eof", "--max-chars", "--replace",
                        "--process-slot-var"}
_ENV_OPTS_WITH_ARG = {"-u", "--unset", "-C", "--chdir"}


# A wrapper's step: the words of the command it runs (unwrapping goes on with them), the
# commands of a string it runs (_Inner), or None (what is left is the command itself).
@dataclass
class _Inner:
    """The commands a wrapper's string parses to (`sh -c '...'`, `eval ...`): unwrapping ends."""

    commands: list[SimpleCommand]


def unwrap(cmd: SimpleCommand, depth: int) -> list[SimpleCommand]:
    """Strip wrappers that only run another command; expand `sh -c`, `eval`, `find -exec`."""
    while True:
        wrapper = _WRAPPERS.get(cmd.name or "")
        step = wrapper(cmd, depth) if wrapper is not None else None
        if isinstance(step, _Inner):
            return [*step.commands, *_redirect_only(cmd)]
        if step is None:
            break
        cmd = SimpleCommand(step, " ".join(w.text for w in step), cmd.assignments, cmd.redirects,
                            [*cmd.wrappers, cmd.name or ""], cmd.opaque, cmd.original, cmd.wrapper_reads,
                            cmd.wrapper_chdir, cmd.context)
        if not step:
            break
    return [*_find_exec(cmd, depth), cmd] if cmd.name == "find" else [cmd]


def _options_then(args: list[Word], with_arg: set[str]) -> list[Word]:
    """The words after a wrapper's leading options (`with_arg`: those that take a value)."""
    i = 0
    while i < len(args) and args[i].value.startswith("-"):
        i += 2 if args[i].value in with_arg else 1
    return args[i:]


def _timeout(cmd: SimpleCommand, depth: int) -> list[Word] | _Inner | None:
    args = cmd.args
    i = _skip_options(args, _TIMEOUT_OPTS_WITH_ARG)
    return args[i + 1:] if i < len(args) else []  # the duration, then the command


def _time(cmd: SimpleCommand, depth: int) -> list[Word] | _Inner | None:
    args = cmd.args
    return args[1:] if args and args[0].value == "-p" else args


def _plain(cmd: SimpleCommand, depth: int) -> list[Word] | _Inner | None:
    """nohup, builtin, exec, setsid (its -f/-w)."""
    args = cmd.args
    return args[1:] if cmd.name == "setsid" and args and args[0].value in ("-f", "-w", "--fork", "--wait") else args


def _command(cmd: SimpleCommand, depth: int) -> list[Word] | _Inner | None:
    args = cmd.args
    if args and args[0].value in ("-v", "-V"):
        return None  # `command -v x` only looks a name up
    return args[1:] if args and args[0].value == "-p" else args


def _env(cmd: SimpleCommand, depth: int) -> list[Word] | _Inner | None:
    args = cmd.args
    i = 0
    while i < len(args) and not cmd.opaque:
        step = _env_word(cmd, args, i)
        if step == 0:
            break
        i += step
    if cmd.opaque or i >= len(args):
        return None  # bare `env` prints the environment
    return args[i:]


def _env_word(cmd: SimpleCommand, args: list[Word], i: int) -> int:
    """How many of env's words `args[i]` takes (0: the command starts there); notes its -C
    directory and its assignments, or marks the command opaque."""
    v = args[i].value
    if v in ("-S", "--split-string") or v.startswith("--split-string="):
        cmd.opaque = "env -S splits a string into a command"
        return 1
    if v in ("-C", "--chdir") and i + 1 < len(args):
        cmd.wrapper_chdir.append(args[i + 1])
    if v.startswith("--chdir=") or (v.startswith("-C") and len(v) > 2):
        cmd.opaque = "env -CDIR / --chdir=DIR: a directory change the gate does not follow"
        return 1
    if v in _ENV_OPTS_WITH_ARG:
        return 2
    if v.startswith("-"):
        return 1
    if "=" in v and re.match(r"^[A-Za-z_]\w*=", v):
        cmd.assignments.append(v.split("=", 1)[0])
        return 1
    return 0


def _xargs(cmd: SimpleCommand, depth: int) -> list[Word] | _Inner | None:
    args = cmd.args
    i = 0
    while i < len(args) and args[i].value.startswith("-") and args[i].value != "--":
        v = args[i].value
        if v in ("-a", "--arg-file") and i + 1 < len(args):
            cmd.wrapper_reads.append(args[i + 1])
        elif v.startswith(("--arg-file=", "-a")) and v != "-a":
            cmd.opaque = "xargs -aFILE / --arg-file=FILE: a file the gate does not follow"
        i += 2 if v in _XARGS_OPTS_WITH_ARG else 1
    if i < len(args) and args[i].value == "--":
        i += 1
    return args[i:] or [Word("echo", "echo", True)]


def _shell(cmd: SimpleCommand, depth: int) -> list[Word] | _Inner | None:
    name = cmd.name
    script = _shell_script(cmd.args)
    if script is None:
        return None  # `bash script.sh`: a command of its own
    if not script.literal:
        cmd.opaque = f"{name} -c runs a string computed at run time"
        return None
    inner = _parse_into(script.value, depth + 1)
    for c in inner:
        c.wrappers = [*cmd.wrappers, f"{name} -c", *c.wrappers]
        c.assignments = [*cmd.assignments, *c.assignments]
        c.context = _outer(c.context, "nested")
    return _Inner(inner)


def _eval(cmd: SimpleCommand, depth: int) -> list[Word] | _Inner | None:
    if not all(w.literal for w in cmd.args):
        cmd.opaque = "eval runs a string computed at run time"
        return None
    inner = _parse_into(" ".join(w.value for w in cmd.args), depth + 1)
    for c in inner:
        c.wrappers = [*cmd.wrappers, "eval", *c.wrappers]
        c.context = _outer(c.context, cmd.context)
    return _Inner(inner)


# The wrappers that only run another command (sudo and doas are never stripped: running as root
# is not harmless).
_WRAPPERS: dict[str, Callable[[SimpleCommand, int], list[Word] | _Inner | None]] = {
    "timeout": _timeout, "gtimeout": _timeout, "time": _time,
    "nice": lambda c, d: _options_then(c.args, {"-n", "--adjustment"}),
    "ionice": lambda c, d: _options_then(c.args, {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "stdbuf": lambda c, d: _options_then(c.args, {"-i", "-o", "-e"}),
    **{n: _plain for n in ("nohup", "builtin", "exec", "setsid")},
    "command": _command, "env": _env, "xargs": _xargs, "eval": _eval,
    **{n: _shell for n in SHELLS},
}


def _outer(a: str, b: str) -> str:
    return a if _CONTEXTS.index(a) >= _CONTEXTS.index(b) else b


def _skip_options(args: list[Word], with_arg: set[str]) -> int:
    i = 0
    while i < len(args) and args[i].value.startswith("-") and args[i].value != "--":
        i += 2 if args[i].value in with_arg else 1
    if i < len(args) and args[i].value == "--":
        i += 1
    return i


def _shell_script(args: list[Word]) -> Word | None:
    """The -c string of `bash [options] -c [options] STRING`, or None when it runs a script file."""
    has_c = False
    i = 0
    while i < len(args):
        v = args[i].value
        if v == "--":
            i += 1
            break
        if v in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2  # these take an argument
            continue
        if v.startswith("--"):
            i += 1
            continue
        if len(v) > 1 and v[0] in "-+":
            has_c = has_c or (v[0] == "-" and "c" in v[1:])
            i += 1
            continue
        break
    if not has_c:
        return None
    return args[i] if i < len(args) else Word("", "", True)


def _redirect_only(cmd: SimpleCommand) -> list[SimpleCommand]:
    """Keep the outer command's redirections (bash -c '...' > f writes f)."""
    if not cmd.redirects:
        return []
    return [SimpleCommand([], "", [], cmd.redirects, cmd.wrappers, None, cmd.original)]


def _find_exec(cmd: SimpleCommand, depth: int) -> list[SimpleCommand]:
    """The commands `find -exec CMD ... ;` would run, as commands of their own."""
    out: list[SimpleCommand] = []
    args = cmd.args
    i = 0
    while i < len(args):
        if args[i].value in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].value not in (";", "+"):
                j += 1
            inner = args[i + 1:j]
            if inner:
                sub = SimpleCommand(inner, " ".join(w.text for w in inner), [], [], ["find " + args[i].value],
                                    cmd.opaque, cmd.original)
                out.extend(unwrap(sub, depth))
            i = j
        i += 1
    return out


# --- a fallback for deny rules when parsing fails ----------------------------------------------

_ROUGH_SPLIT = re.compile(r"&&|\|\||\|&|[;&|\n`()]|\$\(|<\(|>\(")


def rough_split(source: str) -> list[SimpleCommand]:
    """Split on every operator character, quotes or not: used only to find deny-rule matches
    in a command that could not be parsed (never to allow anything)."""
    out: list[SimpleCommand] = []
    for frag in _ROUGH_SPLIT.split(source):
        frag = frag.strip().strip("{}").strip()
        if not frag:
            continue
        try:
            values = shlex.split(frag)
        except ValueError:
            values = frag.split()
        argv = [Word(v, v, "$" not in v) for v in values]
        if not argv:
            continue
        cmd = SimpleCommand(argv, frag, [], [], [], "not parsed", frag)
        while cmd.argv and re.match(r"^[A-Za-z_]\w*=", cmd.argv[0].value):
            cmd.assignments.append(cmd.argv[0].value.split("=", 1)[0])
            cmd.argv = cmd.argv[1:]
        cmd.text = " ".join(w.text for w in cmd.argv)
        try:
            out.extend(unwrap(cmd, 5))
        except Exception:
            out.append(cmd)
    return out
