"""Room: bases (the gate). Owns shell-command analysis; may import bashparse, bashtables, expand and workspace only.

Shell-command analysis for the gate: which files a command reads and writes, where.

`bashparse` splits a command into the simple commands it runs; this module reads each one
against a table per command (which options take a value, which values and arguments are
files read or written, which options change directory or run programs), parses options as
getopt does (combined short flags `-uo FILE`, `--opt=value`, unambiguous long prefixes,
`--`), follows `cd` / `pushd` / `env -C` / `git -C` / `make -C` / `tar -C`, and expands
every word as bash would (`expand`). A word it cannot expand safely (a variable, a
substitution, `~-`, too many matches) becomes an unknown path, which the gate asks about.
The tables themselves (each command's options, the read-only commands, git's) are in
`bashtables`; the git checks (git obeys the config of the repository it finds) are here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Literal

from ...workspace import Workspace
from . import bashparse
from .bashtables import (
    COMMANDS,
    ENV_PRINTERS,
    FIND_ARG,
    FIND_EXEC,
    FIND_KNOWN,
    FIND_READ,
    FIND_WRITE,
    GENERIC_WRITE,
    GIT_GLOBAL,
    GIT_GLOBAL_ARG,
    GIT_LISTING_ONLY,
    GIT_SUBCOMMANDS,
    READ_ONLY_COMMANDS,
    Spec,
)
from .expand import Unknown, expand, word_values

# (re-exported: the gate and tests read them here)
__all__ = ["COMMANDS", "ENV_PRINTERS", "READ_ONLY_COMMANDS", "GIT_READ_ONLY", "Spec"]
GIT_READ_ONLY = frozenset(GIT_SUBCOMMANDS)

# --- one command against its table ------------------------------------------------------------

@dataclass
class Use:
    """One path a simple command reads or writes, and the word it comes from."""

    kind: Literal["read", "write"]
    word: bashparse.Word | None  # None: the working directory itself
    command: bashparse.SimpleCommand
    value: str | None = None  # a value taken from inside a word (--file=x, if=x)
    recursive: bool = False  # it reads the contents of everything under a directory (grep -r, rg)


@dataclass
class Args:
    """What one simple command does with its words."""

    uses: list[Use] = field(default_factory=list)
    chdir: list[bashparse.Word] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # why it is not read-only
    unknown: list[str] = field(default_factory=list)  # files it reads or writes that cannot be named now


def _lookup(opts: dict[str, str], name: str) -> str | None:
    if name in opts:
        return opts[name]
    if name.startswith("--") and len(name) > 3:  # getopt_long accepts unambiguous prefixes
        kinds = {k for o, k in opts.items() if o.startswith(name)}
        for k in ("write", "exec", "read", "indirect", "readpattern", "read2", "chdir", "pattern", "arg2", "arg",
                  "optarg"):
            if k in kinds:
                return k
    return None


@dataclass
class _Words:
    """A command's words after its options: the operands, and what the options said of them."""

    plain: list[bashparse.Word] = field(default_factory=list)
    pattern_given: bool = False  # -e/-f gave the pattern: the first operand is a path
    target_given: bool = False  # -t DIR: every operand is read


_NUMBER = re.compile(r"-\d+(?:\.\d*)?")


def command_args(c: bashparse.SimpleCommand) -> Args:
    """Read `c`'s words against its table."""
    out = Args()
    out.uses += [Use("read", w, c) for w in c.wrapper_reads]
    out.chdir += c.wrapper_chdir
    if c.name is None:
        return out
    base = c.name.rsplit("/", 1)[-1]
    special = _SPECIAL.get(base)
    if special is not None:
        return special(c, out)
    spec = COMMANDS.get(base)
    if "xargs" in c.wrappers and (spec is None or spec.args != "none"):
        out.unknown.append("xargs adds arguments read from its input")
    if spec is None:
        _generic_writes(c, out)
        return out
    words = _options(spec, base, c, c.args, out)
    if not spec.read_only:
        out.problems.append(f"{base} is not a read-only command")
    plain = _operands(spec, base, c, words, out)
    _implied(spec, base, c, plain, out)
    return out


def _generic_writes(c: bashparse.SimpleCommand, out: Args) -> None:
    """A command without a table: only the options that write in any command (`--output=x`)."""
    args = c.args
    for i, w in enumerate(args):
        if w.value == "--":
            return
        if GENERIC_WRITE.match(w.value):
            _, eq, val = w.value.partition("=")
            out.uses.append(Use("write", w, c, val) if eq else Use("write", args[i + 1] if i + 1 < len(args)
                                                                    else None, c))


def _options(spec: Spec, base: str, c: bashparse.SimpleCommand, args: list[bashparse.Word], out: Args) -> _Words:
    """Parse `args` as getopt does (combined short flags, `--opt=value`, prefixes, `--`) against
    `spec`: what each option does goes into `out`; the operands are returned."""
    words = _Words()
    i = 0
    done = False
    while i < len(args):
        w = args[i]
        v = w.value
        i += 1
        if done or _is_operand(spec, v):
            words.plain.append(w)
        elif v == "--":
            done = True
        else:
            for opt, attached in _option_items(spec, v):
                i = _option(spec, base, c, args, i, w, opt, attached, out, words)
    return words


def _is_operand(spec: Spec, v: str) -> bool:
    if not v.startswith("-") or v == "-":
        return True
    if spec.option_words is not None:
        return spec.option_words.fullmatch(v) is None
    return spec.numbers and _NUMBER.fullmatch(v) is not None


def _option_items(spec: Spec, v: str) -> list[tuple[str, str | None]]:
    """The options in one word, each with its attached value: `--opt=x` -> [(--opt, x)];
    `-abn5` -> [(-a, None), (-b, None), (-n, 5)] when -n takes a value."""
    if spec.option_words is not None:
        # a word of the command's own (echo -n, test -f): known; a value only if the table says (test -f PATH)
        return [(v, None)] if v in spec.opts else []
    if v.startswith("--"):
        opt, eq, val = v.partition("=")
        return [(opt, val if eq else None)]
    items: list[tuple[str, str | None]] = []
    for k in range(1, len(v)):
        ch = "-" + v[k]
        if _lookup(spec.opts, ch) not in (None, "flag"):
            items.append((ch, v[k + 1:] or None))
            break
        items.append((ch, None))
    return items


def _option(spec: Spec, base: str, c: bashparse.SimpleCommand, args: list[bashparse.Word], i: int,
            w: bashparse.Word, opt: str, attached: str | None, out: Args, words: _Words) -> int:
    """One option (`w` holds it, `args[i]` is the word after it): what it does goes into `out` and
    `words`; returns the index of the next word to read."""
    kind = _lookup(spec.opts, opt)
    if kind is None and GENERIC_WRITE.match(opt):
        kind = "write"
    if kind is None and spec.read_only and opt not in spec.known:
        out.problems.append(f"{base} {opt} is not an option known to be read-only")
    if kind in (None, "flag", "optarg"):
        return i
    if kind in ("arg2", "read2"):
        pair = args[i:i + 2]
        if kind == "read2" and len(pair) == 2:
            out.uses.append(Use("read", pair[1], c))
        return i + 2
    target: bashparse.Word | None = w
    if attached is None:
        target = args[i] if i < len(args) else None
        i += 1
    _option_value(base, c, opt, kind, target, attached, out, words)
    return i


def _option_value(base: str, c: bashparse.SimpleCommand, opt: str, kind: str, target: bashparse.Word | None,
                  value: str | None, out: Args, words: _Words) -> None:
    """What an option's value is: a file read or written, a directory, a pattern, a program."""
    if kind == "exec":
        out.problems.append(f"{base} {opt} runs a program or changes state")
    elif kind in ("read", "write", "readpattern", "indirect"):
        if target is not None:
            out.uses.append(Use("write" if kind == "write" else "read", target, c, value))
        if kind == "write":
            out.problems.append(f"{base} {opt} writes a file")
        if kind == "indirect":
            out.unknown.append(f"{base} {opt} reads the files a list names")
        words.pattern_given = words.pattern_given or kind == "readpattern"
        words.target_given = words.target_given or opt in ("-t", "--target-directory")
    elif kind == "chdir" and target is not None:
        if value is not None:
            out.unknown.append(f"{base} {opt}=DIR is not followed")
        else:
            out.chdir.append(target)
    elif kind == "pattern":
        words.pattern_given = True


def _operands(spec: Spec, base: str, c: bashparse.SimpleCommand, words: _Words, out: Args) -> list[bashparse.Word]:
    """The operands' reads and writes by the table's `args`; returns the operands that are paths."""
    kind = spec.args
    plain = words.plain[1:] if kind == "pattern" and not words.pattern_given else words.plain
    if base == "sed" and any(p.startswith("sed -i") for p in out.problems):
        kind = "write"
    if kind == "uniq" and len(plain) > 2:
        out.unknown.append("uniq with more than two files")
    if kind == "uniq" and len(plain) >= 2:
        out.problems.append(f"{base} with two file names writes the second")
    out.uses += [Use(k, w, c) for k, w in _operand_uses(kind, plain, words.target_given)]
    return plain


def _operand_uses(kind: str, plain: list[bashparse.Word],
                  target_given: bool) -> list[tuple[Literal["read", "write"], bashparse.Word]]:
    if kind in ("read", "pattern") or kind == "copy" and target_given:
        return [("read", w) for w in plain]
    if kind == "write":
        return [("write", w) for w in plain]
    if kind == "modes":
        return [("write", w) for w in plain[1:]]
    if kind == "first":
        return [("read", w) for w in plain[:1]]
    if kind == "uniq" and len(plain) == 1:
        return [("read", plain[0])]
    if kind in ("copy", "uniq"):
        return [("read", w) for w in plain[:-1]] + [("write", w) for w in plain[-1:]]
    return []


def _implied(spec: Spec, base: str, c: bashparse.SimpleCommand, plain: list[bashparse.Word], out: Args) -> None:
    """What the command reads or writes without naming it: its directory (ls, rg with no path,
    a -C directory), recursively (grep -r, rg), and tar's extraction."""
    if spec.implicit and not plain:
        out.uses.append(Use("read", None, c))
    if _recursive(base, c):
        for u in out.uses:
            u.recursive = u.kind == "read"
    if out.chdir and not any(u.word is None for u in out.uses):
        out.uses.append(Use("read", None, c))  # it works in (reads) that directory
    if base == "tar" and _tar_extracts(c):
        out.uses.append(Use("write", None, c))  # extraction writes into its directory (-C's, if given)


def _recursive(base: str, c: bashparse.SimpleCommand) -> bool:
    if base == "rg":
        return True
    return base in ("grep", "egrep", "fgrep") and any(
        w.value in ("--recursive", "--dereference-recursive") or (
            w.value.startswith("-") and not w.value.startswith("--") and ("r" in w.value or "R" in w.value))
        for w in c.args)


def _tar_extracts(c: bashparse.SimpleCommand) -> bool:
    return any(w.value in ("--extract", "--get") or (
        (w.value.startswith("-") and not w.value.startswith("--") or i == 0 and not w.value.startswith("-"))
        and "x" in w.value) for i, w in enumerate(c.args))


def _dd(c: bashparse.SimpleCommand, out: Args) -> Args:
    for w in c.args:
        for v in word_values(w) or [w.value]:
            if v.startswith(("if=", "of=")):
                out.uses.append(Use("read" if v.startswith("if=") else "write", w, c, v[3:]))
    return out


def _find(c: bashparse.SimpleCommand, out: Args) -> Args:
    args = c.args
    i = 0
    while i < len(args) and (args[i].value in ("-H", "-L", "-P", "-D") or args[i].value.startswith("-O")):
        i += 2 if args[i].value == "-D" else 1  # global options come before the starting points
    starts = []
    while i < len(args) and not (args[i].value.startswith("-") or args[i].value in ("(", "!", ")")):
        starts.append(args[i])
        i += 1
    out.uses += [Use("read", w, c) for w in starts] or [Use("read", None, c)]
    while i < len(args):
        i = _find_word(c, args, i, out) + 1
    return out


def _find_word(c: bashparse.SimpleCommand, args: list[bashparse.Word], i: int, out: Args) -> int:
    """One test or action of find's expression (`args[i]`): what it reads, writes or runs goes
    into `out`; returns the index of its last word."""
    v = args[i].value
    value = args[i + 1] if i + 1 < len(args) else None
    if v in FIND_EXEC:
        out.problems.append(f"find {v} runs or deletes")
        return next((j for j in range(i, len(args)) if args[j].value in (";", "+")), len(args))
    if v in FIND_WRITE:
        out.problems.append(f"find {v} writes a file")
        out.uses += [Use("write", value, c)] if value is not None else []
        return i + 1 + (v == "-fprintf")
    if v in FIND_READ or v.startswith("-newer") and len(v) == 8:  # -newerXY file (XY ending in t: a time)
        if value is not None and v != "-newermt" and not (len(v) == 8 and v.endswith("t")):
            out.uses.append(Use("read", value, c))
        return i + 1
    if v == "-files0-from":
        out.unknown.append("find -files0-from reads the files a list names")
        return i + 1
    if v in FIND_ARG:
        return i + 1
    if v not in FIND_KNOWN:
        out.problems.append(f"find {v} is not a test or action known to be read-only")
    return i


# --- git -----------------------------------------------------------------------------------------

# A subcommand that is not read-only: its options that name files still count (deny rules).
_GIT_OTHER = Spec("none", {"--output": "write", "--output-directory": "write"}, read_only=False)


def _git(c: bashparse.SimpleCommand, out: Args) -> Args:
    args = c.args
    i = _git_globals(c, out)
    if i >= len(args):
        return out
    sub, rest = args[i].value, args[i + 1:]
    spec = GIT_SUBCOMMANDS.get(sub)
    if spec is None:
        out.problems.append(f"git {sub} is not read-only")
        _options(_GIT_OTHER, f"git {sub}", c, rest, out)
        return out
    listing = GIT_LISTING_ONLY.get(sub)
    if listing is not None:
        if any(w.value not in listing for w in rest):
            out.problems.append(f"git {sub} with arguments can change the repository")
        return out
    words = _options(spec, f"git {sub}", c, rest, out)
    if any("%G" in w.value for w in rest):
        out.problems.append(f"git {sub}: a %G format checks signatures, running gpg.program")
    if sub == "diff" and any(w.value == "--no-index" for w in rest):
        out.uses += [Use("read", w, c) for w in words.plain]
    return out


def _git_globals(c: bashparse.SimpleCommand, out: Args) -> int:
    """git's options before the subcommand (an allow-list); returns the subcommand's index."""
    vals = [w.value for w in c.args]
    i = 0
    while i < len(vals) and vals[i].startswith("-"):
        v = vals[i]
        if v in ("-c", "--config-env") or v.startswith(("--config-env=", "--exec-path=")):
            out.problems.append("git -c can run configured programs")
        elif v in ("--git-dir", "--work-tree", "--bare") or v.startswith(("--git-dir=", "--work-tree=")):
            out.problems.append("it names its repository (--git-dir/--work-tree/--bare), whose config can run programs")
        elif v == "-C" and i + 1 < len(vals):
            out.chdir.append(c.args[i + 1])
        elif v not in GIT_GLOBAL and v not in GIT_GLOBAL_ARG and not v.startswith("--namespace="):
            out.problems.append(f"git {v} is not an option known to be read-only")
        i += 2 if v in GIT_GLOBAL_ARG else 1
    return i


_SPECIAL = {"find": _find, "dd": _dd, "git": _git}  # commands analysed by a function of their own


def bare_repository_at_or_above(start: str) -> str | None:
    """The directory git would take as a bare repository when run in `start` (found before
    any `.git`, as git's own discovery does), or None."""
    d = os.path.realpath(start)
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return None
        if all(os.path.exists(os.path.join(d, x)) for x in ("HEAD", "objects", "refs")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def read_only_problem(c: bashparse.SimpleCommand) -> str | None:
    """None if this command only reads, else why not."""
    name = c.name
    if name is None:
        return "its command name is computed at run time"
    if name not in READ_ONLY_COMMANDS:
        return f"{name} is not a read-only command"
    vals = [w.value for w in c.args]
    if name in ("env", "command") and vals and not vals[0].startswith("-"):
        return f"{name} runs a command"
    if name in ENV_PRINTERS:
        pat = ENV_PRINTERS[name]
        if pat is None or any(pat.search(v) for v in vals):
            return f"{name} can print environment variables (secrets)"
    if name == "file" and any(v == "-C" or v.startswith("--compile") for v in vals):
        return "file -C writes a file"
    a = command_args(c)
    return a.problems[0] if a.problems else None


# --- the whole command: paths in order, following directory changes -----------------------------

@dataclass
class PathUse:
    """A file a command reads or writes: `paths` as the kernel would open them (absolute,
    lexical and real), or `why` it cannot be known before the command runs."""

    kind: Literal["read", "write"]
    shown: str
    command: bashparse.SimpleCommand
    paths: list[tuple[str, str]] = field(default_factory=list)  # (lexical, real)
    why: str | None = None
    redirect: bool = False
    recursive: bool = False


def analyze(parsed: bashparse.ParsedCommand, ws: Workspace) -> list[PathUse]:
    """Every file the command reads or writes, from every directory it may be in."""
    cwds: list[str] | None = [ws.shell_cwd()]
    out: list[PathUse] = []
    changed = False  # an earlier part may have changed the file system
    for c in parsed.commands:
        name = c.name.rsplit("/", 1)[-1] if c.name else None
        a = command_args(c)
        here = cwds
        for d in a.chdir:  # env -C, git -C, make -C, tar -C: this command only
            here = cd(here, d, ws)
        for rd in c.redirects:
            if rd.target is None:
                continue
            kind: Literal["read", "write"] | None = "write" if rd.writes else "read" if rd.reads else None
            if kind is None:
                continue
            out.append(_use(kind, rd.target, None, c, here, ws, redirect=True))
        for u in a.uses:
            out.append(_use(u.kind, u.word, u.value, c, here, ws))
            out[-1].recursive = u.recursive
        for why in a.unknown:
            out.append(PathUse("read", c.text or c.original, c, why=why))
        if name in ("cd", "pushd", "popd"):
            cwds = _after_cd(c, cwds, ws, changed)
        changed = changed or (c.argv and read_only_problem(c) is not None) or any(
            rd.writes for rd in c.redirects)
    return out


def _after_cd(c: bashparse.SimpleCommand, cwds: list[str] | None, ws: Workspace, changed: bool) -> list[str] | None:
    """The directories the shell may be in after `c` (a cd, pushd or popd); None: unknown.

    A cd in the main shell, unconditionally, into a directory that exists now (and that no
    earlier part can have changed) moves there. Anywhere else it may or may not have run
    (`false && cd x`, a subshell, an `if`): both places stay possible. In a loop or a
    function it may run any number of times, and popd's target is unknown: unknown."""
    if cwds is None or c.name == "popd" or c.context == "repeated":
        return None
    targets = [w for w in c.args if not w.value.startswith("-") or w.value == "-"]
    if len(targets) > 1:
        return None
    if not targets:
        new: list[str] | None = [ws.home_dir] if c.name == "cd" else None
    else:
        new = cd(cwds, targets[0], ws)
    if new is None:
        return None
    certain = c.context == "top" and not changed and all(
        os.path.isdir(d) and os.access(d, os.X_OK) for d in new)
    return new if certain else list(dict.fromkeys(cwds + new))


def cd(cwds: list[str] | None, w: bashparse.Word, ws: Workspace) -> list[str] | None:
    """Each directory of `cwds` after `cd WORD` (None: unknown)."""
    if cwds is None:
        return None
    out = []
    for d in cwds:
        try:
            vals = expand(w, d, ws)
        except Unknown:
            return None
        if len(vals) != 1 or vals[0] == "-":
            return None
        out.append(os.path.join(d, vals[0]))
    return out


def _use(kind: Literal["read", "write"], w: bashparse.Word | None, value: str | None, c: bashparse.SimpleCommand,
         cwds: list[str] | None, ws: Workspace, redirect: bool = False) -> PathUse:
    shown = "." if w is None else (value if value is not None else w.value)
    u = PathUse(kind, shown, c, redirect=redirect)
    if cwds is None:
        u.why = "it runs after a directory change that cannot be followed"
        return u
    for d in cwds:
        try:
            vals = ["."] if w is None else expand(w, d, ws) if value is None else _attached(w, value, ws)
        except Unknown as e:
            u.why = f"{shown} is computed at run time ({e})"
            return u
        for v in vals:
            if v == "-" and not redirect:
                continue  # stdin / stdout
            why = ws.unresolvable(v, d)
            if why is not None:
                u.why = why
                return u
            u.paths.append(ws.resolve(v, d))
    return u


def _attached(w: bashparse.Word, value: str, ws: Workspace) -> list[str]:
    """The file names in an option's attached value (`--file=x`, `-fx`, `if=x`): bash expands
    braces in the whole word, and `~` after the `=` of a `name=` word (not of `--name=`)."""
    full = word_values(w)
    if full is None or not w.literal:
        raise Unknown("a variable or command substitution")
    cut = len(w.value) - len(value)
    out = []
    for f in full:
        v = f[cut:]
        if re.match(r"^[A-Za-z_]\w*=~", f) and (v == "~" or v.startswith("~/")):
            v = ws.home_dir + v[1:]
        out.append(v)
    return out
