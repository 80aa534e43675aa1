"""Room: bases (the gate). Owns shell-command analysis; may import bashparse and workspace only.

Shell-command analysis for the gate: which files a command reads and writes, where.

`bashparse` splits a command into the simple commands it runs; this module reads each one
against a table per command (which options take a value, which values and arguments are
files read or written, which options change directory or run programs), parses options as
getopt does (combined short flags `-uo FILE`, `--opt=value`, unambiguous long prefixes,
`--`), follows `cd` / `pushd` / `env -C` / `git -C` / `make -C` / `tar -C`, and expands
every word as bash would (quotes, backslashes, `$'..'`, `~`, `~user`, braces, globs
against the file system). A word it cannot expand safely (a variable, a substitution,
`~-`, too many matches) becomes an unknown path, which the gate asks about.

It also holds the read-only command list and the git checks (git obeys the config of the
repository it finds). Imports: bashparse, workspace.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass, field
from typing import Literal

from . import bashparse
from .workspace import Workspace

# --- the command table -----------------------------------------------------------------------

# Option kinds: "flag" (no value), "arg" (a value that is no path), "read" / "write" (a file),
# "chdir" (a directory the command works in), "exec" (runs or changes something: never
# read-only), "pattern" (a value standing for the first plain argument, such as grep -e),
# "readpattern" (a file holding it, grep -f), "indirect" (a file listing more files to read),
# "arg2" / "read2" (two values; the second is a file for read2, jq --rawfile NAME FILE).
# Arguments: "read", "write", "none", "pattern" (the first is no path unless -e/-f gave it),
# "copy" (all read but the last, written), "first" (the first read, e.g. a script), "uniq"
# (first read, second written), "modes" (the first is a mode/owner, then written).
ArgKind = Literal["read", "write", "none", "pattern", "copy", "first", "uniq", "modes"]


@dataclass(frozen=True)
class Spec:
    args: ArgKind = "read"
    opts: dict[str, str] = field(default_factory=dict)
    implicit: bool = False  # with no path argument it reads its working directory
    read_only: bool = True
    # The options without a value known to be read-only. None: not allow-listed yet; a set: any
    # option neither in `opts` nor here makes the call not read-only (an unknown flag may run a
    # program, as ripgrep's --hostname-bin does).
    known: frozenset[str] | None = None


def _o(spec: str) -> dict[str, str]:
    """'-n,--lines:arg -o,--output:write' -> {'-n': 'arg', '--lines': 'arg', ...}."""
    out: dict[str, str] = {}
    for item in spec.split():
        names, kind = item.rsplit(":", 1)
        for n in names.split(","):
            out[n] = kind
    return out


def _k(spec: str) -> frozenset[str]:
    """'-i,--ignore-case -n' -> {'-i', '--ignore-case', '-n'}."""
    return frozenset(n for item in spec.split() for n in item.split(","))


_GREP = Spec("pattern", _o("-e,--regexp:pattern -f,--file:readpattern -A,--after-context:arg "
                    "-B,--before-context:arg -C,--context:arg -m,--max-count:arg --include:arg "
                    "--exclude:arg --exclude-dir:arg --exclude-from:read -d,--directories:arg "
                    "-D,--devices:arg --color:arg --colour:arg --label:arg --binary-files:arg "
                    "--group-separator:arg"), implicit=True,
             known=_k("-E,--extended-regexp -F,--fixed-strings -G,--basic-regexp -P,--perl-regexp -i,-y,--ignore-case "
                      "--no-ignore-case -v,--invert-match -w,--word-regexp -x,--line-regexp -c,--count "
                      "-L,--files-without-match -l,--files-with-matches -o,--only-matching -q,--quiet,--silent "
                      "-s,--no-messages -b,--byte-offset -H,--with-filename -h,--no-filename -n,--line-number "
                      "-T,--initial-tab -Z,--null -z,--null-data -a,--text -I -r,--recursive -R,--dereference-recursive "
                      "-U,--binary --line-buffered --no-group-separator --help -V,--version "
                      "-0 -1 -2 -3 -4 -5 -6 -7 -8 -9"))
_SUMS = Spec("read", _o("-c,--check:indirect"))
_READERS = Spec("read")
COMMANDS: dict[str, Spec] = {
    "ls": Spec("read", _o("-I,--ignore:arg -w,--width:arg --hide:arg -T,--tabsize:arg"), implicit=True),
    **{n: _READERS for n in ("cat", "tac", "rev", "strings", "file", "cmp", "comm", "paste", "column",
                             "realpath", "readlink", "expand")},
    # pagers read files too, but run preprocessors (LESSOPEN) and commands: never read-only
    **{n: Spec("read", read_only=False) for n in ("less", "more")},
    "head": Spec("read", _o("-n,--lines:arg -c,--bytes:arg")),
    "tail": Spec("read", _o("-n,--lines:arg -c,--bytes:arg -s,--sleep-interval:arg --pid:arg")),
    "nl": Spec("read", _o("-b:arg -d:arg -f:arg -h:arg -i:arg -l:arg -n:arg -s:arg -v:arg -w:arg")),
    "od": Spec("read", _o("-A:arg -j:arg -N:arg -t:arg -w:arg -S:arg")),
    "hexdump": Spec("read", _o("-e:arg -f:read -n:arg -s:arg")),
    "fold": Spec("read", _o("-w,--width:arg")),
    "cut": Spec("read", _o("-b,--bytes:arg -c,--characters:arg -d,--delimiter:arg -f,--fields:arg "
                           "--output-delimiter:arg")),
    "stat": Spec("read", _o("-c,--format:arg --printf:arg")),
    "base64": Spec("read", _o("-w,--wrap:arg")),
    "xxd": Spec("uniq", _o("-s:arg -l:arg -c:arg -g:arg -o:arg -n:arg"), read_only=False),
    **{n: _SUMS for n in ("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum")},
    "wc": Spec("read", _o("--files0-from:indirect")),
    **{n: _GREP for n in ("grep", "egrep", "fgrep")},
    "rg": Spec("pattern", _o("-e,--regexp:pattern -f,--file:readpattern -g,--glob:arg --iglob:arg -t,--type:arg "
                             "-T,--type-not:arg -A,--after-context:arg -B,--before-context:arg -C,--context:arg "
                             "-m,--max-count:arg -M,--max-columns:arg --pre:exec --pre-glob:arg "
                             "--ignore-file:read -E,--encoding:arg -r,--replace:arg --type-add:arg "
                             "--max-depth,-d:arg -j,--threads:arg --sort:arg --sortr:arg --color:arg "
                             "--colors:arg --path-separator:arg --max-filesize:arg --engine:arg"), implicit=True,
               # not -z/--search-zip: it runs decompression programs
               known=_k("-i,--ignore-case -s,--case-sensitive -S,--smart-case -F,--fixed-strings -v,--invert-match "
                        "-w,--word-regexp -x,--line-regexp -c,--count --count-matches -l,--files-with-matches "
                        "--files-without-match -o,--only-matching -q,--quiet -n,--line-number -N,--no-line-number "
                        "-H,--with-filename -I,--no-filename --heading --no-heading --column --no-column "
                        "-b,--byte-offset --vimgrep --json -u,--unrestricted -.,--hidden --no-hidden --no-ignore "
                        "--no-ignore-vcs --no-ignore-dot --no-ignore-global --no-ignore-parent --no-ignore-exclude "
                        "--no-ignore-files --no-ignore-messages -L,--follow --no-follow -a,--text --no-text --binary "
                        "--no-binary -P,--pcre2 --no-pcre2 -U,--multiline --no-multiline --multiline-dotall --crlf "
                        "--no-crlf -0,--null --null-data --files --type-list --trim --no-trim -p,--pretty --stats "
                        "--no-stats --passthru --passthrough --sort-files --no-config --no-messages --line-buffered "
                        "--block-buffered --one-file-system --no-unicode --include-zero --glob-case-insensitive "
                        "--ignore-file-case-insensitive --max-columns-preview --auto-hybrid-regex -h,--help "
                        "-V,--version")),
    "jq": Spec("pattern", _o("--arg:arg2 --argjson:arg2 --slurpfile:read2 --rawfile:read2 -f,--from-file:readpattern "
                             "-L:read --indent:arg --tab:flag")),
    "diff": Spec("read", _o("--from-file:read --to-file:read -x,--exclude:arg -X,--exclude-from:read "
                            "-I,--ignore-matching-lines:arg -C,--context:arg -U,--unified:arg -F:arg "
                            "--label:arg -W,--width:arg -L:arg --line-format:arg --color:arg")),
    "sort": Spec("read", _o("-o,--output:write --files0-from:indirect -k,--key:arg -t,--field-separator:arg "
                            "-S,--buffer-size:arg --batch-size:arg --parallel:arg -T,--temporary-directory:write "
                            "--compress-program:exec --random-source:read --sort:arg")),
    "uniq": Spec("uniq", _o("-f,--skip-fields:arg -s,--skip-chars:arg -w,--check-chars:arg")),
    "du": Spec("read", _o("--files0-from:indirect -X,--exclude-from:read --exclude:arg -d,--max-depth:arg "
                          "-B,--block-size:arg -t,--threshold:arg --time-style:arg"), implicit=True),
    "df": Spec("read", _o("-B,--block-size:arg -t,--type:arg -x,--exclude-type:arg --output:arg")),
    "tree": Spec("read", _o("-o:write -I:arg -P:arg -L:arg --filelimit:arg --timefmt:arg --charset:arg "
                            "--fromfile:exec"), implicit=True),
    "date": Spec("none", _o("-f,--file:read -r,--reference:read -d,--date:arg -s,--set:exec -I:flag")),
    "find": Spec("read", {}, implicit=True),  # analysed by _find
    "tee": Spec("write", _o("-a,--append:flag"), read_only=False),
    **{n: Spec("write", _o("-m,--mode:arg -r,--reference:read -d,--date:arg -t:arg -s,--size:arg -n,--iterations:arg"),
               read_only=False)
       for n in ("touch", "mkdir", "rm", "rmdir", "truncate", "shred", "unlink")},
    **{n: Spec("modes", _o("--reference:read"), read_only=False) for n in ("chmod", "chown", "chgrp")},
    "cp": Spec("copy", _o("-t,--target-directory:write -S,--suffix:arg --backup:arg"), read_only=False),
    "mv": Spec("write", _o("-t,--target-directory:write -S,--suffix:arg --backup:arg"), read_only=False),
    "ln": Spec("write", _o("-t,--target-directory:write -S,--suffix:arg"), read_only=False),
    "install": Spec("copy", _o("-t,--target-directory:write -m,--mode:arg -o,--owner:arg -g,--group:arg "
                               "-S,--suffix:arg"), read_only=False),
    "rsync": Spec("copy", _o("-e,--rsh:exec --files-from:indirect --exclude-from:read --include-from:read "
                             "--exclude:arg --include:arg"), read_only=False),
    "sed": Spec("pattern", _o("-e,--expression:pattern -f,--file:readpattern -l,--line-length:arg "
                              "-i,--in-place:exec -s:flag -n:flag -E:flag -r:flag"), read_only=False),
    **{n: Spec("pattern", _o("-f,--file:readpattern -v,--assign:arg -F,--field-separator:arg"), read_only=False)
       for n in ("awk", "gawk", "mawk")},
    "tar": Spec("read", _o("-C,--directory:chdir -f,--file:write -T,--files-from:indirect -X,--exclude-from:read "
                           "--exclude:arg -b:arg --transform:arg --xform:arg -I,--use-compress-program:exec "
                           "--to-command:exec"), read_only=False),
    "make": Spec("none", _o("-C,--directory:chdir -f,--file,--makefile:read -I,--include-dir:read -j,--jobs:arg "
                            "-l,--load-average:arg -o,--old-file:arg -W,--what-if:arg"), read_only=False),
    "curl": Spec("none", _o("-o,--output:write -K,--config:read -T,--upload-file:read -c,--cookie-jar:write "
                            "-D,--dump-header:write --trace:write --trace-ascii:write --stderr:write "
                            "-d,--data:arg --data-binary:arg --data-raw:arg --data-urlencode:arg -b,--cookie:arg "
                            "-H,--header:arg -X,--request:arg -u,--user:arg -A,--user-agent:arg -e,--referer:arg "
                            "-x,--proxy:arg -w,--write-out:arg -m,--max-time:arg -F,--form:arg --cacert:read "
                            "-E,--cert:read --key:read --netrc-file:read"), read_only=False),
    "wget": Spec("none", _o("-O,--output-document:write -o,--output-file:write -a,--append-output:write "
                            "-i,--input-file:read -P,--directory-prefix:write --header:arg -U,--user-agent:arg "
                            "--post-file:read --load-cookies:read --save-cookies:write"), read_only=False),
    **{n: Spec("first", _o("-m:arg -c:exec -W:arg -X:arg -e:exec -r:read -I:read"), read_only=False)
       for n in ("python", "python3", "node", "ruby", "perl", "php", "bash", "sh", "zsh", "dash", "ksh")},
    **{n: Spec("first", {}, read_only=False) for n in ("source", ".")},
    "dd": Spec("none", {}, read_only=False),  # analysed by _dd
    "git": Spec("none", {}),  # analysed by _git
    **{n: Spec("none", {}) for n in ("echo", "printf", "pwd", "true", "false", "seq", "sleep", "whoami", "id",
                                    "uname", "printenv", "which", "type", "whereis", "ps", "pgrep", "tr", "test",
                                    "[", "basename", "dirname", "env", "command", "dirs", "cd", "pushd", "popd")},
}
# A command made only of these (and no writing option or redirection) runs without asking.
READ_ONLY_COMMANDS = frozenset(n for n, s in COMMANDS.items() if s.read_only)
# Commands that print the environment (the API key is in it) or other processes' environments:
# never read-only. None: whatever its arguments; a pattern: when one of its words matches (jq's
# `env` / `$ENV`, or a filter file the gate cannot see; ps's BSD `e`, as in `ps auxeww`).
ENV_PRINTERS: dict[str, re.Pattern[str] | None] = {
    "printenv": None,
    "env": None,  # `env CMD` is judged as CMD; env itself prints the environment
    "jq": re.compile(r"\$ENV|\benv\b|^(?:-f|--from-file)(?:=|$)"),
    "ps": re.compile(r"^(?!-).*e"),  # BSD words (no dash); UNIX -e means every process
}
# Options that write in any command, whatever its table says (`--output=x`, `--log-file x`).
_GENERIC_WRITE = re.compile(r"^--(?:output|output-file|output-document|log-file|outfile|out-file)(?:=|$)")
_FIND_READ = frozenset({"-newer", "-anewer", "-cnewer", "-samefile", "-newermt"})
_FIND_WRITE = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete"})
_FIND_ARG = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
                       "-type", "-xtype", "-maxdepth", "-mindepth", "-size", "-perm", "-user", "-group",
                       "-uid", "-gid", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-links",
                       "-inum", "-printf", "-lname", "-ilname", "-fstype", "-used", "-regextype",
                       "-context"})
# find's tests and actions without a value known to be read-only (anything else is asked about)
_FIND_KNOWN = _k("-print -print0 -ls -prune -quit -true -false -empty -executable -readable -writable -nouser -nogroup "
                 "-depth -d -follow -mount -xdev -noleaf -daystart -ignore_readdir_race -noignore_readdir_race "
                 "-not -and -or -a -o ! ( ) , -help --help -version --version")


# --- expansion of one word, as bash does ---------------------------------------------------------

MAX_MATCHES = 1000


class Unknown(Exception):
    """The word's value is only known at run time."""


Chars = list[tuple[str, bool]]  # (character, quoted)


def _ansi_c(body: str) -> str:
    if "\\c" in body:
        raise Unknown("$'\\c..' control characters")
    return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")


def _chars(text: str) -> Chars:
    """Quote removal with the quoting remembered; variables and substitutions raise Unknown."""
    out: Chars = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            if i + 1 < n and text[i + 1] != "\n":
                out.append((text[i + 1], True))
            i += 2
        elif c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise Unknown("unbalanced quote")
            out += [(ch, True) for ch in text[i + 1:j]]
            i = j + 1
        elif text.startswith("$'", i):
            j = i + 2
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise Unknown("unbalanced quote")
            out += [(ch, True) for ch in _ansi_c(text[i + 2:j])]
            i = j + 1
        elif c == '"' or text.startswith('$"', i):
            j = i + (2 if c == "$" else 1)
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    nxt = text[j + 1]
                    if nxt in '$`"\\':
                        out.append((nxt, True))
                    elif nxt != "\n":
                        out += [("\\", True), (nxt, True)]
                    j += 2
                    continue
                if text[j] in "$`":
                    raise Unknown("a variable or command substitution")
                out.append((text[j], True))
                j += 1
            if j >= n:
                raise Unknown("unbalanced quote")
            i = j + 1
        elif c in "$`":
            raise Unknown("a variable or command substitution")
        else:
            out.append((c, False))
            i += 1
    return out


def _braces(w: Chars) -> list[Chars]:
    """Brace expansion on unquoted `{a,b}` (sequences `{1..3}` are left to run time)."""
    depth, start = 0, -1
    for i, (c, q) in enumerate(w):
        if q:
            continue
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                inner = w[start + 1:i]
                parts: list[Chars] = [[]]
                d = 0
                for ch, qq in inner:
                    if ch == "," and not qq and d == 0:
                        parts.append([])
                        continue
                    if not qq:
                        d += ch == "{"
                        d -= ch == "}"
                    parts[-1].append((ch, qq))
                if len(parts) == 1:
                    if "".join(c for c, _ in inner).count("..") and not any(qq for _, qq in inner):
                        raise Unknown("a brace sequence")
                    continue
                out = [x for p in parts for x in _braces(w[:start] + p + w[i + 1:])]
                if len(out) > MAX_MATCHES:
                    raise Unknown("too many brace expansions")
                return out
    return [w]


def _segment_regex(seg: Chars) -> re.Pattern[str]:
    """Bash's pattern for one segment, by the one glob matcher (ignore.py); quoted characters
    are literal."""
    from .ignore import segment_regex

    return segment_regex("".join(f"\\{c}" if q and c in "*?[]\\!{}" else c for c, q in seg))


def _glob(w: Chars, cwd: str) -> list[str] | None:
    """The names bash's pathname expansion gives, or None when nothing matches (the word
    then stays as written)."""
    segs: list[Chars] = [[]]
    for ch in w:
        if ch == ("/", False) or ch == ("/", True):
            segs.append([])
        else:
            segs[-1].append(ch)
    absolute = not segs[0] and len(segs) > 1
    bases = ["/"] if absolute else [""]
    for k, seg in enumerate(segs[1:] if absolute else segs):
        last = k == len(segs) - (2 if absolute else 1)
        magic = any(not q and c in "*?[" for c, q in seg)
        nxt: list[str] = []
        if not magic:
            name = "".join(c for c, _ in seg)
            nxt = [os.path.join(b, name) if b else name for b in bases]
            if not last:
                nxt = [p for p in nxt if os.path.isdir(os.path.join(cwd, p))]
        else:
            rx = _segment_regex(seg)
            dot = bool(seg) and seg[0][0] == "."
            for b in bases:
                try:
                    names = sorted(os.listdir(os.path.join(cwd, b) if b else cwd))
                except OSError:
                    continue
                for name in names:
                    if name.startswith(".") and not dot:
                        continue
                    if rx.fullmatch(name):
                        p = os.path.join(b, name) if b else name
                        if last or os.path.isdir(os.path.join(cwd, p)):
                            nxt.append(p)
                if len(nxt) > MAX_MATCHES:
                    raise Unknown("a glob with too many matches")
        bases = nxt
        if not bases:
            return None
    return bases


def expand(word: bashparse.Word, cwd: str | None, ws: Workspace) -> list[str]:
    """The arguments bash makes of `word` in `cwd` (None: unknown); raises Unknown."""
    w = _chars(word.text)
    out: list[str] = []
    for alt in _braces(w):
        if alt and alt[0] == ("~", False):  # tilde prefix up to the first unquoted /
            k = 1
            while k < len(alt) and alt[k] != ("/", False) and not alt[k][1]:
                k += 1
            user = "".join(c for c, _ in alt[1:k])
            if user in ("-", "+") or user.startswith(("-", "+")):
                if user == "+" and cwd is not None:
                    alt = [(c, True) for c in cwd] + alt[k:]
                else:
                    raise Unknown("~- names the previous directory")
            elif user == "":
                alt = [(c, True) for c in ws.home_dir] + alt[k:]
            else:
                home = os.path.expanduser("~" + user)
                if not home.startswith("~"):
                    alt = [(c, True) for c in home] + alt[k:]
        if any(not q and c in "*?[" for c, q in alt):
            if cwd is None:
                raise Unknown("a glob in a directory that cannot be known")
            matched = _glob(alt, cwd)
            if matched is not None:
                out += matched
                continue
        out.append("".join(c for c, _ in alt))
    return out


def word_values(word: bashparse.Word) -> list[str] | None:
    """The word's value(s) independent of the file system (for options); None: unknown."""
    try:
        w = _chars(word.text)
        return ["".join(c for c, _ in alt) for alt in _braces(w)]
    except Unknown:
        return None


# --- one command against its table ------------------------------------------------------------

@dataclass
class Use:
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
        for k in ("write", "exec", "read", "indirect", "readpattern", "read2", "chdir", "pattern", "arg2", "arg"):
            if k in kinds:
                return k
    return None


def command_args(c: bashparse.SimpleCommand) -> Args:
    """Read `c`'s words against its table."""
    out = Args()
    name = c.name
    for w in c.wrapper_reads:
        out.uses.append(Use("read", w, c))
    if c.wrapper_chdir:
        out.chdir += c.wrapper_chdir
    if name is None:
        return out
    base = name.rsplit("/", 1)[-1]
    if base == "find":
        return _find(c, out)
    if base == "dd":
        for w in c.args:
            vals = word_values(w)
            for v in vals or [w.value]:
                if v.startswith(("if=", "of=")):
                    out.uses.append(Use("read" if v.startswith("if=") else "write", w, c, v[3:]))
        return out
    if base == "git":
        return _git(c, out)
    spec = COMMANDS.get(base)
    if "xargs" in c.wrappers and (spec is None or spec.args != "none"):
        out.unknown.append("xargs adds arguments read from its input")
    plain: list[bashparse.Word] = []
    pattern_given = target_given = False
    i = 0
    args = c.args
    done = False
    while i < len(args):
        w = args[i]
        v = w.value
        i += 1
        if done or not v.startswith("-") or v == "-":
            plain.append(w)
            continue
        if v == "--":
            done = True
            continue
        items: list[tuple[str, str | None]] = []  # (option, attached value)
        if v.startswith("--"):
            opt, eq, val = v.partition("=")
            items.append((opt, val if eq else None))
            if _GENERIC_WRITE.match(v) and spec is None:
                out.uses.append(Use("write", w, c, val if eq else None) if eq else Use("write", args[i] if i < len(
                    args) else None, c))
                continue
        else:
            k = 1
            while k < len(v):
                ch = "-" + v[k]
                kind = _lookup(spec.opts, ch) if spec else None
                if kind not in (None, "flag"):
                    items.append((ch, v[k + 1:] or None))
                    break
                items.append((ch, None))
                k += 1
        for opt, attached in items:
            kind = _lookup(spec.opts, opt) if spec else None
            if kind is None and spec is not None and _GENERIC_WRITE.match(opt):
                kind = "write"
            if kind is None and spec is not None and spec.known is not None and opt not in spec.known:
                out.problems.append(f"{base} {opt} is not an option known to be read-only")
            if kind in (None, "flag"):
                continue
            if kind in ("arg2", "read2"):
                first_second = args[i:i + 2]
                i += 2
                if kind == "read2" and len(first_second) == 2:
                    out.uses.append(Use("read", first_second[1], c))
                continue
            if attached is not None:
                target: bashparse.Word | None = w
                value: str | None = attached
            else:
                target = args[i] if i < len(args) else None
                value = None
                i += 1
            if kind == "exec":
                out.problems.append(f"{base} {opt} runs a program or changes state")
            elif kind in ("read", "write", "readpattern", "indirect"):
                if target is not None:
                    out.uses.append(Use("write" if kind == "write" else "read", target, c, value))
                if kind == "write":
                    out.problems.append(f"{base} {opt} writes a file")
                if kind == "indirect":
                    out.unknown.append(f"{base} {opt} reads the files a list names")
                if kind == "readpattern":
                    pattern_given = True
                if opt in ("-t", "--target-directory"):
                    target_given = True
            elif kind == "chdir" and target is not None:
                if value is not None:
                    out.unknown.append(f"{base} {opt}=DIR is not followed")
                else:
                    out.chdir.append(target)
            elif kind == "pattern":
                pattern_given = True
    if spec is None:
        return out
    if not spec.read_only:
        out.problems.append(f"{base} is not a read-only command")
    kind = spec.args
    if kind == "pattern" and not pattern_given:
        plain = plain[1:]
    if base == "sed" and any(p.startswith("sed -i") for p in out.problems):
        kind = "write"
    if kind in ("read", "pattern"):
        out.uses += [Use("read", w, c) for w in plain]
    elif kind == "write":
        out.uses += [Use("write", w, c) for w in plain]
    elif kind == "modes":
        out.uses += [Use("write", w, c) for w in plain[1:]]
    elif kind == "first":
        out.uses += [Use("read", w, c) for w in plain[:1]]
    elif kind == "copy" and target_given:
        out.uses += [Use("read", w, c) for w in plain]
    elif kind in ("copy", "uniq"):
        if kind == "uniq" and len(plain) > 2:
            out.unknown.append("uniq with more than two files")
        if kind == "uniq" and len(plain) >= 2:
            out.problems.append(f"{base} with two file names writes the second")
        out.uses += [Use("read", w, c) for w in plain[:-1]] + [Use("write", w, c) for w in plain[-1:]]
        if kind == "uniq" and len(plain) == 1:
            out.uses[-1].kind = "read"
    if spec.implicit and not plain:
        out.uses.append(Use("read", None, c))
    if base == "rg" or (base in ("grep", "egrep", "fgrep") and any(
            w.value in ("--recursive", "--dereference-recursive") or (
                w.value.startswith("-") and not w.value.startswith("--") and ("r" in w.value or "R" in w.value))
            for w in c.args)):
        for u in out.uses:
            u.recursive = u.kind == "read"
    if out.chdir and not any(u.word is None for u in out.uses):
        out.uses.append(Use("read", None, c))  # it works in (reads) that directory
    if base == "tar" and any(w.value in ("--extract", "--get") or (
            (w.value.startswith("-") and not w.value.startswith("--") or i == 0 and not w.value.startswith("-"))
            and "x" in w.value) for i, w in enumerate(c.args)):
        out.uses.append(Use("write", None, c))  # extraction writes into its directory (-C's, if given)
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
        v = args[i].value
        if v in _FIND_EXEC:
            out.problems.append(f"find {v} runs or deletes")
            while i < len(args) and args[i].value not in (";", "+"):
                i += 1
        elif v in _FIND_WRITE:
            out.problems.append(f"find {v} writes a file")
            if i + 1 < len(args):
                out.uses.append(Use("write", args[i + 1], c))
            i += 1 + (v == "-fprintf")
        elif v in _FIND_READ:
            if i + 1 < len(args) and v != "-newermt":
                out.uses.append(Use("read", args[i + 1], c))
            i += 1
        elif v.startswith("-newer") and len(v) == 8:  # -newerXY file
            if i + 1 < len(args) and not v.endswith("t"):
                out.uses.append(Use("read", args[i + 1], c))
            i += 1
        elif v in ("-files0-from",):
            out.unknown.append("find -files0-from reads the files a list names")
            i += 1
        elif v in _FIND_ARG:
            i += 1
        elif v not in _FIND_KNOWN:
            out.problems.append(f"find {v} is not a test or action known to be read-only")
        i += 1
    return out


# --- git -----------------------------------------------------------------------------------------

GIT_READ_ONLY = frozenset({"status", "diff", "log", "show", "blame", "rev-parse", "ls-files", "ls-tree",
                           "shortlog", "describe", "grep", "cat-file", "reflog", "branch", "tag", "remote",
                           "merge-base", "rev-list", "whatchanged", "show-ref", "var", "version"})
_GIT_LISTING_ONLY = {"branch": {"-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all", "--remotes",
                                "--no-color", "--color", "--merged", "--no-merged", "--contains"},
                     "tag": {"-l", "--list", "-n"}, "remote": {"-v", "--verbose", "show", "get-url"},
                     "reflog": {"show"}}
_GIT_SUB_OPTS = _o("--output:write -O,--open-files-in-pager:exec --ext-diff:exec --textconv:exec "
                   "-f:read --contents:read -S:read --ignore-revs-file:read --output-directory:write")


def _git(c: bashparse.SimpleCommand, out: Args) -> Args:
    vals = [w.value for w in c.args]
    args = c.args
    i = 0
    while i < len(vals) and vals[i].startswith("-"):
        v = vals[i]
        if v in ("-c", "--config-env") or v.startswith(("--config-env=", "--exec-path=")):
            out.problems.append("git -c can run configured programs")
        if v in ("--git-dir", "--work-tree", "--bare") or v.startswith(("--git-dir=", "--work-tree=")):
            out.problems.append("it names its repository (--git-dir/--work-tree/--bare), whose config can run programs")
        if v == "-C" and i + 1 < len(args):
            out.chdir.append(args[i + 1])
        i += 2 if v in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env") else 1
    if i >= len(vals):
        return out
    sub, rest = vals[i], args[i + 1:]
    if sub not in GIT_READ_ONLY:
        out.problems.append(f"git {sub} is not read-only")
    listing = _GIT_LISTING_ONLY.get(sub)
    if listing is not None and any(w.value not in listing for w in rest):
        out.problems.append(f"git {sub} with arguments can change the repository")
    no_index = False
    plain: list[bashparse.Word] = []
    j = 0
    while j < len(rest):
        w = rest[j]
        v = w.value
        j += 1
        if v == "--no-index":
            no_index = True
            continue
        if not v.startswith("-"):
            plain.append(w)
            continue
        opt, eq, val = v.partition("=")
        kind = _lookup(_GIT_SUB_OPTS, opt) if opt.startswith("--") else _GIT_SUB_OPTS.get(v[:2])
        if kind is None or (not opt.startswith("--") and sub not in ("grep", "blame")):
            if v.startswith(("--output", "-O")):
                kind = "write" if v.startswith("--output") else "exec"
            else:
                continue
        if kind == "exec":
            out.problems.append(f"git {sub} {opt} runs programs")
            continue
        if eq or (not opt.startswith("--") and len(v) > 2):
            out.uses.append(Use("write" if kind == "write" else "read", w, c, val if eq else v[2:]))
        elif j < len(rest):
            out.uses.append(Use("write" if kind == "write" else "read", rest[j], c))
            j += 1
        if kind == "write":
            out.problems.append(f"git {sub} {opt} writes a file")
    if no_index and sub == "diff":
        out.uses += [Use("read", w, c) for w in plain]
    return out


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
