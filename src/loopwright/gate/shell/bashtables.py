"""Room: bases (the gate). Owns the command tables of shell-command analysis: each command's options and what they do; imports nothing of the package.

A read-only command is approved only with options its table lists (`opts`, with what their
value is, and `known`, those without a value known to be read-only): an allow-list, never a
deny-list, since an option no table knows may run a program (ripgrep >= 14 runs
`--hostname-bin`, sort runs `--compress-program`, git log writes `--output`). bashcheck reads
a command's words against these tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

# Option kinds: "flag" (no value), "arg" (a value that is no path), "optarg" (a value only when
# attached, `-M50%`, `-Iseconds`), "read" / "write" (a file), "chdir" (a directory the command
# works in), "exec" (runs or changes something: never read-only), "pattern" (a value standing for
# the first plain argument, such as grep -e), "readpattern" (a file holding it, grep -f),
# "indirect" (a file listing more files to read), "arg2" / "read2" (two values; the second is a
# file for read2, jq --rawfile NAME FILE).
# Arguments: "read", "write", "none", "pattern" (the first is no path unless -e/-f gave it),
# "copy" (all read but the last, written), "first" (the first read, e.g. a script), "uniq"
# (first read, second written), "modes" (the first is a mode/owner, then written).
ArgKind = Literal["read", "write", "none", "pattern", "copy", "first", "uniq", "modes"]


@dataclass(frozen=True)
class Spec:
    """One command's table."""

    args: ArgKind = "read"
    opts: dict[str, str] = field(default_factory=dict)
    implicit: bool = False  # with no path argument it reads its working directory
    read_only: bool = True
    # The options without a value known to be read-only: any option neither in `opts` nor here
    # makes the call not read-only (for a read-only command, an empty set when not given).
    known: frozenset[str] = frozenset()
    # Words that are options at all, for commands that take any other dash word as an operand
    # (echo's `-n`, test's `-f`): each matching word is a known option, any other an operand.
    option_words: re.Pattern[str] | None = None
    numbers: bool = False  # a negative number (`seq -5 5`, `pushd -1`) is an operand


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


_DIGITS = " -0 -1 -2 -3 -4 -5 -6 -7 -8 -9"  # grep -5, head -20, git log -3
_VERSION = " --help --version"
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
                      "-U,--binary --line-buffered --no-group-separator -V" + _VERSION + _DIGITS))
_SUMS = Spec("read", _o("-c,--check:indirect -l,--length:arg -a,--algorithm:arg"),
             known=_k("-b,--binary -t,--text --tag --untagged -z,--zero --ignore-missing --quiet --status --strict "
                      "-w,--warn --base64 --raw --debug" + _VERSION))
# test's file operators: the word after each is a path it reads (its metadata), judged like any read
_TEST_FILES = ",".join("-" + c for c in "bcdefghkprsuwxGLNOS") + ",-ef,-nt,-ot:read"
_TEST = re.compile(r"-(?:[abcdefghknoprstuvwxzGLNORS]|ef|nt|ot|eq|ne|lt|le|gt|ge)")
_NONE = Spec("none", known=_k(_VERSION))
COMMANDS: dict[str, Spec] = {
    "ls": Spec("read", _o("-I,--ignore:arg -w,--width:arg --hide:arg -T,--tabsize:arg --block-size:arg --format:arg "
                          "--indicator-style:arg --quoting-style:arg --sort:arg --time:arg --time-style:arg"),
               implicit=True,
               known=_k("-a,--all -A,--almost-all --author -b,--escape -B,--ignore-backups -c -C --color --colour "
                        "-d,--directory -D,--dired -f -F,--classify --file-type --full-time -g "
                        "--group-directories-first -G,--no-group -h,--human-readable --si -H "
                        "--dereference-command-line --dereference-command-line-symlink-to-dir --hyperlink "
                        "-i,--inode -k,--kibibytes -l -L,--dereference -m -n,--numeric-uid-gid -N,--literal -o -p "
                        "-q,--hide-control-chars --show-control-chars -Q,--quote-name -r,--reverse -R,--recursive "
                        "-s,--size -S -t -u -U -v -x -X -Z,--context --zero -1" + _VERSION)),
    "cat": Spec("read", known=_k("-A,--show-all -b,--number-nonblank -e -E,--show-ends -n,--number "
                                 "-s,--squeeze-blank -t -T,--show-tabs -u -v,--show-nonprinting" + _VERSION)),
    "tac": Spec("read", _o("-s,--separator:arg"), known=_k("-b,--before -r,--regex" + _VERSION)),
    "rev": Spec("read", known=_k("-0,--zero -h -V" + _VERSION)),
    "strings": Spec("read", _o("-e,--encoding:arg -n,--bytes:arg -t,--radix:arg -s,--output-separator:arg "
                               "-T,--target:arg -U,--unicode:arg"),
                    known=_k("-a,--all -d,--data -f,--print-file-name -o -w,--include-all-whitespace -v,-V"
                             + _VERSION + _DIGITS)),
    # not -z/-Z (looks inside compressed files by running decompressors), -S (--no-sandbox), -C (writes)
    "file": Spec("read", _o("-m,--magic-file:read -f,--files-from:indirect -e,--exclude:arg --exclude-quiet:arg "
                            "-F,--separator:arg -P,--parameter:arg"),
                 known=_k("-b,--brief -i,--mime --mime-type --mime-encoding -L,--dereference -h,--no-dereference "
                          "-k,--keep-going -l,--list -N,--no-pad -0,--print0 -p,--preserve-date -r,--raw "
                          "-s,--special-files -E --extension --apple -d,--debug -v" + _VERSION)),
    "cmp": Spec("read", _o("-i,--ignore-initial:arg -n,--bytes:arg"),
                known=_k("-b,--print-bytes -l,--verbose -s,--quiet,--silent" + _VERSION)),
    "comm": Spec("read", _o("--output-delimiter:arg"),
                 known=_k("-1 -2 -3 --check-order --nocheck-order --total -z,--zero-terminated" + _VERSION)),
    "paste": Spec("read", _o("-d,--delimiters:arg"), known=_k("-s,--serial -z,--zero-terminated" + _VERSION)),
    "column": Spec("read", _o("-s,--separator:arg -o,--output-separator:arg -c,--output-width:arg "
                              "-N,--table-columns:arg -R,--table-right:arg -H,--table-hide:arg -O,--table-order:arg "
                              "-W,--table-wrap:arg -E,--table-noextreme:arg -T,--table-truncate:arg "
                              "-r,--tree:arg -i,--tree-id:arg -p,--tree-parent:arg -l,--table-columns-limit:arg "
                              "-d,--table-noheadings:flag -n,--table-name:arg"),
                   known=_k("-t,--table -x,--fillrows -J,--json -L,--keep-empty-lines -e,--table-header-repeat "
                            "-h -V" + _VERSION)),
    "realpath": Spec("read", _o("--relative-to:arg --relative-base:arg"),
                     known=_k("-e,--canonicalize-existing -m,--canonicalize-missing -L,--logical -P,--physical "
                              "-q,--quiet -s,--strip,--no-symlinks -z,--zero" + _VERSION)),
    "readlink": Spec("read", known=_k("-f,--canonicalize -e,--canonicalize-existing -m,--canonicalize-missing "
                                      "-n,--no-newline -q,--quiet -s,--silent -v,--verbose -z,--zero" + _VERSION)),
    "expand": Spec("read", _o("-t,--tabs:arg"), known=_k("-i,--initial" + _VERSION + _DIGITS)),
    # pagers read files too, but run preprocessors (LESSOPEN) and commands: never read-only
    **{n: Spec("read", read_only=False) for n in ("less", "more")},
    "head": Spec("read", _o("-n,--lines:arg -c,--bytes:arg"),
                 known=_k("-q,--quiet,--silent -v,--verbose -z,--zero-terminated" + _VERSION + _DIGITS)),
    "tail": Spec("read", _o("-n,--lines:arg -c,--bytes:arg -s,--sleep-interval:arg --pid:arg "
                            "--max-unchanged-stats:arg"),
                 known=_k("-f,--follow -F --retry -q,--quiet,--silent -v,--verbose -z,--zero-terminated"
                          + _VERSION + _DIGITS)),
    "nl": Spec("read", _o("-b,--body-numbering:arg -d,--section-delimiter:arg -f,--footer-numbering:arg "
                          "-h,--header-numbering:arg -i,--line-increment:arg -l,--join-blank-lines:arg "
                          "-n,--number-format:arg -s,--number-separator:arg -v,--starting-line-number:arg "
                          "-w,--number-width:arg"), known=_k("-p,--no-renumber" + _VERSION)),
    "od": Spec("read", _o("-A,--address-radix:arg -j,--skip-bytes:arg -N,--read-bytes:arg -t,--format:arg "
                          "-w,--width:optarg -S,--strings:optarg --endian:arg"),
               known=_k("-a -b -c -d -f -i -l -o -s -x -v,--output-duplicates --traditional" + _VERSION)),
    "hexdump": Spec("read", _o("-e,--format:arg -f,--format-file:read -n,--length:arg -s,--skip:arg"),
                    known=_k("-b,--one-byte-octal -X,--one-byte-hex -c,--one-byte-char -C,--canonical "
                             "-d,--two-bytes-decimal -o,--two-bytes-octal -x,--two-bytes-hex -v,--no-squeezing "
                             "-L,--color -h,--help -V,--version")),
    "fold": Spec("read", _o("-w,--width:arg"), known=_k("-b,--bytes -s,--spaces" + _VERSION + _DIGITS)),
    "cut": Spec("read", _o("-b,--bytes:arg -c,--characters:arg -d,--delimiter:arg -f,--fields:arg "
                           "--output-delimiter:arg"),
                known=_k("-n -s,--only-delimited --complement -z,--zero-terminated" + _VERSION)),
    "stat": Spec("read", _o("-c,--format:arg --printf:arg --cached:arg"),
                 known=_k("-L,--dereference -f,--file-system -t,--terse" + _VERSION)),
    "base64": Spec("read", _o("-w,--wrap:arg"), known=_k("-d,--decode -i,--ignore-garbage" + _VERSION)),
    "xxd": Spec("uniq", _o("-s:arg -l:arg -c:arg -g:arg -o:arg -n:arg"), read_only=False),
    **{n: _SUMS for n in ("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum")},
    "wc": Spec("read", _o("--files0-from:indirect --total:arg"),
               known=_k("-c,--bytes -m,--chars -l,--lines -L,--max-line-length -w,--words" + _VERSION)),
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
                             "-L:read --indent:arg"),
               known=_k("-n,--null-input -r,--raw-output -j,--join-output --raw-output0 -a,--ascii-output "
                        "-c,--compact-output -s,--slurp -R,--raw-input -e,--exit-status -S,--sort-keys "
                        "-C,--color-output -M,--monochrome-output --tab --args --jsonargs --seq --stream "
                        "--stream-errors --unbuffered -0 -h -V --build-configuration" + _VERSION)),
    # not -l/--paginate (runs pr)
    "diff": Spec("read", _o("--from-file:read --to-file:read -x,--exclude:arg -X,--exclude-from:read "
                            "-I,--ignore-matching-lines:arg -C,--context:arg -U,--unified:arg -F,--show-function-line:arg "
                            "--label:arg -W,--width:arg -L:arg --line-format:arg --color:arg --palette:arg "
                            "-D,--ifdef:arg --horizon-lines:arg -S,--starting-file:arg --tabsize:arg "
                            "--old-line-format:arg --new-line-format:arg --unchanged-line-format:arg "
                            "--old-group-format:arg --new-group-format:arg --changed-group-format:arg "
                            "--unchanged-group-format:arg"),
                 known=_k("-q,--brief -s,--report-identical-files -c -u -e,--ed -n,--rcs -y,--side-by-side "
                          "--normal --left-column --suppress-common-lines -p,--show-c-function -t,--expand-tabs "
                          "-T,--initial-tab -r,--recursive -N,--new-file --unidirectional-new-file "
                          "--strip-trailing-cr -i,--ignore-case -E,--ignore-tab-expansion -Z,--ignore-trailing-space "
                          "-b,--ignore-space-change -w,--ignore-all-space -B,--ignore-blank-lines -a,--text "
                          "--ignore-file-name-case --no-ignore-file-name-case -d,--minimal --speed-large-files "
                          "--suppress-blank-empty --no-dereference -v" + _VERSION + _DIGITS)),
    "sort": Spec("read", _o("-o,--output:write --files0-from:indirect -k,--key:arg -t,--field-separator:arg "
                            "-S,--buffer-size:arg --batch-size:arg --parallel:arg -T,--temporary-directory:write "
                            "--compress-program:exec --random-source:read --sort:arg"),
                 known=_k("-b,--ignore-leading-blanks -d,--dictionary-order -f,--ignore-case -g,--general-numeric-sort "
                          "-h,--human-numeric-sort -i,--ignore-nonprinting -M,--month-sort -n,--numeric-sort "
                          "-R,--random-sort -r,--reverse -V,--version-sort -c,-C,--check -m,--merge -s,--stable "
                          "-u,--unique -z,--zero-terminated --debug" + _VERSION)),
    "uniq": Spec("uniq", _o("-f,--skip-fields:arg -s,--skip-chars:arg -w,--check-chars:arg"),
                 known=_k("-c,--count -d,--repeated -D,--all-repeated --group -i,--ignore-case -u,--unique "
                          "-z,--zero-terminated" + _VERSION)),
    "du": Spec("read", _o("--files0-from:indirect -X,--exclude-from:read --exclude:arg -d,--max-depth:arg "
                          "-B,--block-size:arg -t,--threshold:arg --time-style:arg"), implicit=True,
               known=_k("-a,--all --apparent-size -b,--bytes -c,--total -D,-H,--dereference-args -h,--human-readable "
                        "--inodes -k -L,--dereference -l,--count-links -m -P,--no-dereference -S,--separate-dirs "
                        "-s,--summarize -x,--one-file-system --si --time -0,--null" + _VERSION)),
    "df": Spec("read", _o("-B,--block-size:arg -t,--type:arg -x,--exclude-type:arg --output:optarg"),
               known=_k("-a,--all -h,--human-readable -H,--si -i,--inodes -k -l,--local --no-sync --sync "
                        "-P,--portability -T,--print-type --total" + _VERSION)),
    # not -R (reruns tree writing 00Tree.html files), -o (writes)
    "tree": Spec("read", _o("-o:write -I:arg -P:arg -L:arg -H:arg -T:arg --filelimit:arg --timefmt:arg --charset:arg "
                            "--sort:arg --fromfile:exec --gitfile:read --infofile:read --hintro:arg --houtro:arg"),
                 implicit=True,
                 known=_k("-a -d -l -f -x -i -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -n -C -A -S -J -X "
                          "--si --du --inodes --device --noreport --dirsfirst --filesfirst --prune --matchdirs "
                          "--ignore-case --nolinks --gitignore --info --metafirst --condense" + _VERSION)),
    "date": Spec("none", _o("-f,--file:read -r,--reference:read -d,--date:arg -s,--set:exec -I,--iso-8601:optarg "
                            "--rfc-3339:arg --resolution:flag"),
                 known=_k("-u,--utc,--universal -R,--rfc-email --debug" + _VERSION)),
    "find": Spec("read", {}, implicit=True),  # analysed by bashcheck._find
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
    "dd": Spec("none", {}, read_only=False),  # analysed by bashcheck's dd
    "git": Spec("none", {}),  # analysed by bashcheck._git, with GIT_SUBCOMMANDS
    # echo takes a dash word that is not all of -n/-e/-E as text; test's operators are its options
    "echo": Spec("none", option_words=re.compile(r"-[neE]+")),
    **{n: Spec("none", _o(_TEST_FILES), option_words=_TEST, numbers=True) for n in ("test", "[")},
    "printf": Spec("none", _o("-v:arg")),
    **{n: _NONE for n in ("true", "false", "sleep", "whoami")},
    "pwd": Spec("none", known=_k("-L -P")),
    "seq": Spec("none", _o("-f,--format:arg -s,--separator:arg"), known=_k("-w,--equal-width" + _VERSION),
                numbers=True),
    "id": Spec("none", known=_k("-a -Z,--context -g,--group -G,--groups -n,--name -r,--real -u,--user -z,--zero"
                                + _VERSION)),
    "uname": Spec("none", known=_k("-a,--all -s,--kernel-name -n,--nodename -r,--kernel-release "
                                   "-v,--kernel-version -m,--machine -p,--processor -i,--hardware-platform "
                                   "-o,--operating-system" + _VERSION)),
    "printenv": Spec("none", known=_k("-0,--null" + _VERSION)),  # asked anyway: bashcheck.ENV_PRINTERS
    "env": Spec("none", known=_k("-0,--null")),  # env printing: asked; `env CMD` is judged as CMD
    "which": Spec("none", known=_k("-a -s")),
    "type": Spec("none", known=_k("-a -f -P -p -t")),
    "command": Spec("none", known=_k("-v -V -p")),
    "whereis": Spec("none", known=_k("-b -B -m -M -s -S -f -u -l -g")),
    "ps": Spec("none", _o("-o,-O,--format:arg -p,--pid,-q,--quick-pid:arg --ppid:arg -u,-U,--user,--User:arg "
                          "-g,-G,--group,--Group:arg -t,--tty:arg -C:arg -s,--sid:arg -k,--sort:arg "
                          "--cols,--columns,--width,--lines,--rows:arg -n:arg"),
               known=_k("-A -a -d -e -N,--deselect -T -r -x -f -F -c -j -l -y -H -L -m -M -Z,--context -w -V "
                        "--forest --headers --no-headers,--no-header -h --cumulative --info" + _VERSION)),
    "pgrep": Spec("none", _o("-d,--delimiter:arg -u,--euid:arg -U,--uid:arg -g,--pgroup:arg -G,--group:arg "
                             "-P,--parent:arg -s,--session:arg -t,--terminal:arg -r,--runstates:arg --ns:arg "
                             "--nslist:arg -F,--pidfile:read -O,--older:arg --cgroup:arg --env:arg"),
                  known=_k("-l,--list-name -a,--list-full -f,--full -x,--exact -n,--newest -o,--oldest "
                           "-v,--inverse -w,--lightweight -c,--count -i,--ignore-case -L,--logpidfile "
                           "-A,--ignore-ancestors" + _VERSION)),
    "tr": Spec("none", known=_k("-c,-C,--complement -d,--delete -s,--squeeze-repeats -t,--truncate-set1"
                                + _VERSION)),
    "basename": Spec("none", _o("-s,--suffix:arg"), known=_k("-a,--multiple -z,--zero" + _VERSION)),
    "dirname": Spec("none", known=_k("-z,--zero" + _VERSION)),
    "dirs": Spec("none", known=_k("-c -l -p -v"), numbers=True),
    "cd": Spec("none", known=_k("-L -P -e -@")),
    **{n: Spec("none", known=_k("-n"), numbers=True) for n in ("pushd", "popd")},
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
GENERIC_WRITE = re.compile(r"^--(?:output|output-file|output-document|log-file|outfile|out-file)(?:=|$)")

# --- find ----------------------------------------------------------------------------------------

FIND_READ = frozenset({"-newer", "-anewer", "-cnewer", "-samefile", "-newermt"})
FIND_WRITE = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete"})
FIND_ARG = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
                      "-type", "-xtype", "-maxdepth", "-mindepth", "-size", "-perm", "-user", "-group",
                      "-uid", "-gid", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-links",
                      "-inum", "-printf", "-lname", "-ilname", "-fstype", "-used", "-regextype",
                      "-context"})
# find's tests and actions without a value known to be read-only (anything else is asked about)
FIND_KNOWN = _k("-print -print0 -ls -prune -quit -true -false -empty -executable -readable -writable -nouser -nogroup "
                "-depth -d -follow -mount -xdev -noleaf -daystart -ignore_readdir_race -noignore_readdir_race "
                "-not -and -or -a -o ! ( ) , -help --help -version --version")

# --- git -----------------------------------------------------------------------------------------

# git's options before the subcommand known to be harmless; -c, --config-env, --exec-path=,
# --git-dir, --work-tree and --bare are judged by bashcheck._git; anything else is asked about.
GIT_GLOBAL = _k("--no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs "
                "--icase-pathspecs --no-replace-objects --no-lazy-fetch --no-advice --version --html-path "
                "--man-path --info-path --exec-path")
GIT_GLOBAL_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
# The diff options (diff, log, show, ...). Not --ext-diff (runs diff.external), --textconv (runs
# textconv filters), --output (writes): with an allow-list they are asked about.
_DIFF_OPTS = ("-U,--unified:optarg --stat:optarg --dirstat:optarg -B,--break-rewrites:optarg "
              "-M,--find-renames:optarg -C,--find-copies:optarg -l:arg --diff-filter:arg -S:arg -G:arg "
              "--find-object:arg -O:read --skip-to:arg --rotate-to:arg --relative:optarg -I,--ignore-matching-lines:arg "
              "--inter-hunk-context:arg --src-prefix:arg --dst-prefix:arg --line-prefix:arg --anchored:arg "
              "--diff-algorithm:arg --color-moved-ws:arg --word-diff-regex:arg --ws-error-highlight:arg "
              "--output:write --output-indicator-new:arg --output-indicator-old:arg --output-indicator-context:arg "
              "--stat-width:arg --stat-name-width:arg --stat-count:arg --stat-graph-width:arg "
              "--ext-diff:exec --textconv:exec")
_DIFF_KNOWN = ("-p -u --patch -s --no-patch --raw --patch-with-raw --indent-heuristic --no-indent-heuristic "
               "--minimal --patience --histogram --compact-summary --numstat --shortstat --cumulative "
               "--dirstat-by-file --summary --patch-with-stat -z --name-only --name-status --submodule --color "
               "--no-color --color-moved --no-color-moved --word-diff --color-words --no-renames --rename-empty "
               "--no-rename-empty --check --full-index --binary --abbrev --find-copies-harder -D "
               "--irreversible-delete --pickaxe-all --pickaxe-regex -R --no-relative -a --text --ignore-cr-at-eol "
               "--ignore-space-at-eol -b --ignore-space-change -w --ignore-all-space --ignore-blank-lines -W "
               "--function-context --exit-code --quiet --no-ext-diff --no-textconv --ignore-submodules --no-prefix "
               "--default-prefix --ita-invisible-in-index --ita-visible-in-index -m -c --cc --dd --remerge-diff "
               "--no-diff-merges --combined-all-paths -t")
_REV_OPTS = ("-n,--max-count:arg --skip:arg --since,--after,--until,--before,--since-as-filter:arg "
             "--author,--committer,--grep,--grep-reflog:arg --min-parents,--max-parents:arg --glob:arg "
             "--exclude:arg --format,--pretty:optarg --encoding:arg --date:arg --decorate-refs:arg "
             "--decorate-refs-exclude:arg -L:arg --diff-merges:arg --expand-tabs:optarg --notes,--show-notes:optarg "
             "--ancestry-path:optarg --no-walk:optarg --branches,--tags,--remotes:optarg --decorate:optarg "
             "--show-linear-break:optarg --show-signature:exec")
_REV_KNOWN = ("--all-match --invert-grep -i --regexp-ignore-case --basic-regexp -E --extended-regexp -F "
              "--fixed-strings -P --perl-regexp --remove-empty --merges --no-merges --no-min-parents "
              "--no-max-parents --first-parent --exclude-first-parent-only --not --all --reflog --alternate-refs "
              "--single-worktree --ignore-missing --bisect --cherry-mark --cherry-pick --left-only --right-only "
              "--cherry -g --walk-reflogs --merge --boundary --simplify-by-decoration --show-pulls --full-history "
              "--dense --sparse --simplify-merges --date-order --author-date-order --topo-order --reverse "
              "--do-walk --abbrev-commit --no-abbrev-commit --oneline --no-expand-tabs --no-notes "
              "--standard-notes --no-standard-notes --relative-date --parents --children --left-right --graph "
              "--follow --no-decorate --clear-decorations --source --use-mailmap --no-use-mailmap --mailmap "
              "--no-mailmap --full-diff --log-size --count --no-color --color --no-abbrev --stdin" + _DIGITS)


def _git_spec(opts: str, known: str) -> Spec:
    return Spec("none", _o(opts) if opts else {}, known=_k(known))


# git's read-only subcommands and their options (an allow-list each); branch, tag, remote and
# reflog are approved only with a listing's words (GIT_LISTING_ONLY).
GIT_SUBCOMMANDS: dict[str, Spec] = {
    "status": _git_spec("-u,--untracked-files:optarg --ignore-submodules:optarg --ignored:optarg "
                        "--porcelain:optarg --column:optarg --find-renames:optarg",
                        "-s --short -b --branch --show-stash --long -v --verbose -z --no-column --ahead-behind "
                        "--no-ahead-behind --renames --no-renames"),
    "diff": _git_spec(_DIFF_OPTS, _DIFF_KNOWN + " --cached --staged --merge-base --no-index -1 -2 -3 -0 --base "
                      "--ours --theirs"),
    **{n: _git_spec(_DIFF_OPTS + " " + _REV_OPTS, _DIFF_KNOWN + " " + _REV_KNOWN)
       for n in ("log", "show", "whatchanged")},
    "shortlog": _git_spec(_REV_OPTS + " --group:arg -w:optarg",
                          _REV_KNOWN + " -n --numbered -s --summary -e --email -c --committer"),
    "rev-list": _git_spec(_REV_OPTS + " --filter:arg --missing:arg --disk-usage:optarg --progress:arg",
                          _REV_KNOWN + " --objects --objects-edge --objects-edge-aggressive --indexed-objects "
                          "--unpacked --object-names --no-object-names --no-filter --filter-print-omitted "
                          "--exclude-promisor-objects --timestamp --header --quiet --bisect-vars --bisect-all "
                          "--in-commit-order --use-bitmap-index"),
    "blame": _git_spec("-L:arg -S:read --reverse:arg --encoding:arg --contents:read --date:arg -M,-C:optarg "
                       "--ignore-rev:arg --ignore-revs-file:read --abbrev:optarg",
                       "-b --root --show-stats -l -t --first-parent -p --porcelain --line-porcelain --incremental "
                       "--progress --no-progress --color-lines --color-by-age -c --score-debug -f --show-name "
                       "-n --show-number -s -e --show-email -w"),
    "grep": _git_spec("--max-depth:arg -O,--open-files-in-pager:exec --textconv:exec -A,-B,-C,--context,"
                      "--after-context,--before-context:arg -m,--max-count:arg --threads:arg -f:read -e:arg "
                      "--parent-basename:arg --color:optarg",
                      "-a --text --no-textconv -i --ignore-case -I -r --recursive --no-recursive -w --word-regexp "
                      "-v --invert-match -h -H --full-name -E -G -F -P --extended-regexp --basic-regexp "
                      "--fixed-strings --perl-regexp -n --line-number --column -l --files-with-matches --name-only "
                      "-L --files-without-match -z --null -o --only-matching -c --count --no-color --break "
                      "--heading -p --show-function -W --function-context --and --or --not ( ) --all-match -q "
                      "--quiet --cached --untracked --no-index --no-exclude-standard --exclude-standard "
                      "--recurse-submodules" + _DIGITS),
    "rev-parse": _git_spec("--short:optarg --default:arg --prefix:arg --path-format:arg --git-path:arg "
                           "--resolve-git-dir:arg --show-object-format:optarg --disambiguate:arg --exclude:arg "
                           "--glob:arg --since,--until,--after,--before:arg --branches,--tags,--remotes:optarg "
                           "--abbrev-ref:optarg",
                           "--show-toplevel --git-dir --verify --quiet -q --symbolic --symbolic-full-name "
                           "--is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository "
                           "--show-prefix --show-cdup --git-common-dir --absolute-git-dir "
                           "--show-superproject-working-tree --shared-index-path --local-env-vars --all --sq-quote "
                           "--sq --not --revs-only --no-revs --flags --no-flags --stop-at-non-option --keep-dashdash "
                           "--show-ref-format"),
    "ls-files": _git_spec("-x,--exclude:arg -X,--exclude-from:read --exclude-per-directory:arg --with-tree:arg "
                          "--abbrev:optarg --format:arg",
                          "-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage -u --unmerged "
                          "-k --killed -z -t -v -f --directory --no-empty-directory --eol --deduplicate "
                          "--exclude-standard --error-unmatch --full-name --recurse-submodules --debug --sparse "
                          "--resolve-undo"),
    "ls-tree": _git_spec("--abbrev:optarg --format:arg",
                         "-d -r -t -l --long -z --name-only --name-status --object-only --full-name --full-tree"),
    "describe": _git_spec("--dirty,--broken,--abbrev:optarg --candidates:arg --match:arg --exclude:arg",
                          "--all --tags --contains --exact-match --debug --long --always --first-parent"),
    "cat-file": _git_spec("--batch-command,--batch,--batch-check:optarg",
                          "-t -s -e -p --allow-unknown-type --mailmap --use-mailmap --no-mailmap --batch-all-objects "
                          "--buffer --follow-symlinks --unordered -Z -z"),
    "merge-base": _git_spec("", "-a --all --octopus --independent --is-ancestor --fork-point"),
    "show-ref": _git_spec("--hash,--abbrev,--exclude-existing:optarg",
                          "--head --heads --branches --tags -d --dereference -s --verify --exists -q --quiet"),
    "var": _git_spec("", "-l"),
    "version": _git_spec("", "--build-options"),
    **{n: Spec("none") for n in ("branch", "tag", "remote", "reflog")},  # GIT_LISTING_ONLY's words only
}
GIT_LISTING_ONLY = {"branch": {"-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--all", "--remotes",
                               "--no-color", "--color", "--merged", "--no-merged", "--contains"},
                    "tag": {"-l", "--list", "-n"}, "remote": {"-v", "--verbose", "show", "get-url"},
                    "reflog": {"show"}}
