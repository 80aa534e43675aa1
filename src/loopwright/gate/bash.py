"""Room: bases (the gate). Owns the Bash verdicts (what a command may run without asking); may import bashcheck, bashparse, workspace and the gate's lower modules (gate.gitconfig among them).

A command is parsed (bashparse) and what it reads, writes and runs is found (bashcheck); deny
and ask rules meet every part and every path, the mode's checks come next (plan runs read-only
commands only; acceptEdits also approves a few filesystem commands inside the working
directories), and allow rules approve the parts they match. When the analysis cannot be sure,
the verdict is "ask", never "allow".
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..workspace import HARMLESS_READS, HARMLESS_WRITES, kernel_path
from .gitconfig import configured_program
from .judge import Judge
from .rules import Rule, command_matches
from .verdict import ALLOW, Verdict

if TYPE_CHECKING:  # imported by the functions that judge a command: most runs start without one
    from .shell import bashcheck, bashparse

BLOCKED_READS = ("Reads outside the working directories are blocked (permissions.blockReadsOutsideWorkingDirectories). "
                 "Add the directory with /add-dir, or remove that setting.")
# acceptEdits also approves these filesystem commands, when every path is in the working dirs.
FS_COMMANDS = {"mkdir": set("pv") | {"--parents", "--verbose"}, "touch": set("cam"),
               "mv": set("finvuT") | {"--verbose", "--force", "--no-clobber"},
               "cp": set("rRafinvpuTLP") | {"--recursive", "--verbose", "--force", "--preserve", "--archive"}}


def bash_verdict(g: Judge, command: Any, hook: str | None, unsandboxed: bool = False) -> Verdict:
    from .shell import bashcheck, bashparse

    if not isinstance(command, str):
        command = ""
    parsed = bashparse.parse(command)
    uses = bashcheck.analyze(parsed, g.ws)
    bare_rule = g.named(g.allow, "Bash")

    def deny() -> Verdict | None:
        return _deny(g, parsed, uses)

    def ask() -> Verdict | None:
        return _ask(g, parsed, uses)

    if (g.sandbox_auto_allow is not None and g.mode != "plan" and hook != "ask" and deny() is None
            and ask() is None and g.sandbox_auto_allow(command, unsandboxed)):
        return g.allowed(source="sandbox")
    if unsandboxed and g.sandbox_escape and g.mode == "bypassPermissions" and hook != "allow":
        # With the sandbox on, bypassPermissions lets the agent run freely inside the box:
        # leaving it is not part of that, so it is asked (or refused where nobody can answer).
        return deny() or Verdict("ask", "it asks to run outside the OS sandbox (dangerouslyDisableSandbox), "
                                        "which bypassPermissions does not approve by itself", code="unsandboxed")
    return g.order(deny, ask, hook, True, "Bash", lambda: _rules_allow(g, parsed, bare_rule),
                   lambda: _bash_auto(g, parsed, uses, bare_rule))


def _deny(g: Judge, parsed: bashparse.ParsedCommand, uses: list[bashcheck.PathUse]) -> Verdict | None:
    """A deny rule naming Bash, one of the command's parts, or a path it reads or writes."""
    v = g.rule_verdict("deny", g.named(g.deny, "Bash"), "Bash")
    if v is not None:
        return v
    for c in parsed.commands:
        r = bash_rule(g.deny, c)
        if r is not None:
            return g.rule_verdict("deny", r, f"`{c.text or c.original}`")
    return next((v for u in uses for lexical, real in u.paths if (v := _path_deny(g, u, lexical, real))), None)


def _path_deny(g: Judge, u: bashcheck.PathUse, lexical: str, real: str) -> Verdict | None:
    return g.write_deny(u.shown, lexical, real) if u.kind == "write" else g.read_deny(u.shown, lexical, real)


def _ask(g: Judge, parsed: bashparse.ParsedCommand, uses: list[bashcheck.PathUse]) -> Verdict | None:
    """An ask rule naming Bash, one of the command's parts, or a path it reads or writes."""
    r = g.named(g.ask, "Bash") or next(
        (rr for c in parsed.commands if (rr := bash_rule(g.ask, c)) is not None), None)
    if r is None:
        r = next((rr for u in uses for lx, rl in u.paths
                  if (rr := g.path_match(g.ask, "Edit" if u.kind == "write" else "Read", lx, rl))), None)
    if r is None and g.block_reads and any(u.kind != "write" and rl not in HARMLESS_READS and not g.inside(rl)
                                           for u in uses for _, rl in u.paths):
        # permissions.blockReadsOutsideWorkingDirectories binds commands too: asked in every mode
        return Verdict("ask", BLOCKED_READS, code="outside", subject="Bash")
    return g.rule_verdict("ask", r, "Bash")


def _rules_allow(g: Judge, parsed: bashparse.ParsedCommand, bare_rule: Rule | None) -> list[Rule] | None:
    """The allow rules approving every part (mode None's decision), or None."""
    if not parsed.ok:
        return None
    if bare_rule is not None:
        return [bare_rule]
    found = []
    for c in parsed.commands:
        if not c.argv:
            continue
        r = None if c.opaque else bash_rule(g.allow, c, allow=True)
        if r is None:
            return None
        found.append(r)
    return found


def _bash_auto(g: Judge, parsed: bashparse.ParsedCommand, uses: list[bashcheck.PathUse],
               bare_rule: Rule | None) -> Verdict:
    """default, acceptEdits, plan and dontAsk: what runs without asking."""
    bare = bare_rule is not None
    approved = {id(c): r for c in parsed.commands if c.argv and (r := bash_rule(g.allow, c, allow=True))}
    v = (_unparsed(g, parsed) or _plan_problem(g, parsed) or _paths_problem(g, uses, bare, approved)
         or (None if bare else _command_problem(g, parsed)))
    if v is not None:
        return v
    if bare_rule is not None or approved:
        return g.allowed([bare_rule] if bare_rule is not None else list(approved.values()))
    if g.mode == "acceptEdits" and any(u.kind == "write" and u.paths for u in uses):
        return g.allowed(source="mode")  # acceptEdits approved what it writes
    return ALLOW


def _plan_denial(what: str) -> Verdict:
    return Verdict("deny", f"Permission denied: plan mode runs read-only commands only, and {what}.", code="plan",
                   rule="plan", source="mode")


def _unparsed(g: Judge, parsed: bashparse.ParsedCommand) -> Verdict | None:
    """A command that could not be checked: asked (plan mode: refused)."""
    if parsed.ok:
        return None
    if g.mode == "plan":
        return _plan_denial(f"this command could not be checked: {parsed.error}")
    return Verdict("ask", f"{parsed.error}; only commands that can be checked run without approval",
                   subject=next((c.name for c in parsed.commands if c.name), None), code="unparsed")


def _plan_problem(g: Judge, parsed: bashparse.ParsedCommand) -> Verdict | None:
    """Plan mode runs read-only commands only: a part that is not is refused."""
    from .shell import bashcheck

    if g.mode != "plan":
        return None
    for c in parsed.commands:
        why = c.opaque or (bashcheck.read_only_problem(c) if c.argv else None) or _env_problem(c)
        if why is None and c.name == "git":
            why = _git_repo_problem(g, c, parsed)
        if why is None and any(rd.writes and not _harmless(rd) for rd in c.redirects):
            why = "it redirects output into a file"
        if why:
            return _plan_denial(f"`{c.text or c.original}`: {why}")
    return None


def _paths_problem(g: Judge, uses: list[bashcheck.PathUse], bare: bool, approved: dict[int, Rule]) -> Verdict | None:
    """The first file the command reads or writes that needs approval, as an ask."""
    read_denies = any(r.specifier and r.covers_tool("Read") for r in g.deny)
    for u in uses:
        if u.why is not None:
            # A path known only at run time: fine under a bare Bash rule unless it may write a
            # protected path or read a denied one; otherwise ask.
            if bare and u.kind == "read" and not read_denies:
                continue
            return Verdict("ask", f"`{u.command.text or u.command.original}`: {u.why}", code="unknown_path",
                           subject=u.command.name)
        for lexical, real in u.paths:
            v = (_write_problem(g, u, lexical, real, bare, approved) if u.kind == "write"
                 else _read_problem(g, u, lexical, real, bare))
            if v is not None:
                return v
    return None


def _write_problem(g: Judge, u: bashcheck.PathUse, lexical: str, real: str, bare: bool,
                   approved: dict[int, Rule]) -> Verdict | None:
    if u.redirect and _harmless_path(u.shown):
        return None
    v = g.auto_write(u.shown, lexical, real, approved=bare or (id(u.command) in approved and not u.redirect))
    return None if v is None else replace(v, subject=u.command.name)


def _read_problem(g: Judge, u: bashcheck.PathUse, lexical: str, real: str, bare: bool) -> Verdict | None:
    if real in HARMLESS_READS:
        return None
    if not bare and g.path_match(g.allow, "Read", lexical, real) is None and not g.inside(real):
        return Verdict("ask", f"it reads {u.shown}, outside the working directories", code="outside",
                       subject=u.command.name)
    if u.recursive and os.path.isdir(real) and (r := g.deny_below(real)) is not None:
        return Verdict("ask", f"it reads everything under {u.shown}, where the deny rule {r} hides files",
                       code="denied_below", subject=u.command.name)
    return None


def _command_problem(g: Judge, parsed: bashparse.ParsedCommand) -> Verdict | None:
    """Without a bare Bash rule: a directory change or followed link out of the working
    directories (plan mode too), or a part no rule approves and that is not read-only."""
    why = _chdir_problem(g, parsed) or _follow_problem(g, parsed)
    if why is not None:
        return Verdict("ask", why, code="outside")
    if g.mode == "plan":
        return None
    for c in parsed.commands:
        why = _part_problem(g, c, parsed)
        if why is not None:
            return Verdict("ask", why, subject=c.name)
    return None


def bash_rule(rules: list[Rule], c: bashparse.SimpleCommand, allow: bool = False) -> Rule | None:
    texts = [t for t in (c.text, c.plain) if t]
    if not allow:
        if c.original and c.original not in texts:
            texts.append(c.original)
        if c.name and "/" in c.name:  # /bin/rm is rm, for deny and ask rules
            texts.append(" ".join([c.name.rsplit("/", 1)[1], *(w.value for w in c.args)]))
    if not texts:
        return None
    for r in rules:
        if r.specifier is None or not r.covers_tool("Bash"):
            continue
        if any(command_matches(r.specifier, t) for t in texts):
            return r
    return None


def _env_problem(c: bashparse.SimpleCommand) -> str | None:
    bad = c.unsafe_env
    return f"it sets {', '.join(bad)}, which changes what runs" if bad else None


def _part_problem(g: Judge, c: bashparse.SimpleCommand, parsed: bashparse.ParsedCommand) -> str | None:
    from .shell import bashcheck

    label = f"`{c.text or c.original}`"
    if c.opaque:
        return f"{label}: {c.opaque}"
    env = _env_problem(c)
    if env:
        return f"{label}: {env}"
    if not c.argv:
        return None  # only assignments or redirections (their targets were judged as writes)
    if c.name is None:
        return f"{label}: its command name is computed at run time"
    if bash_rule(g.allow, c, allow=True):
        return None
    ro = bashcheck.read_only_problem(c)
    if ro is None and c.name == "git":
        ro = _git_repo_problem(g, c, parsed)
        if ro is not None:
            return f"{label}: {ro}"
    if ro is None:
        return None
    if g.mode == "acceptEdits" and c.name in FS_COMMANDS:
        why = _fs_option_problem(c)
        return None if why is None else f"{label}: {why}"
    return f"{label}: no allow rule matches it"


def _git_repo_problem(g: Judge, c: bashparse.SimpleCommand, parsed: bashparse.ParsedCommand) -> str | None:
    """Why a read-only git command still needs approval, or None.

    git obeys the config of the repository it finds, and a config can run programs
    (core.fsmonitor on `git status`, diff.external, ...). The project's own `.git` is
    protected from writes, but a directory that merely looks like a bare repository
    (HEAD, objects/, refs/) is one too: planted by an earlier edit, by this very command,
    or shipped in a cloned project. So git is auto-approved only where the repository it
    will find is known now and is not such a directory (the bare repository attack)."""
    from .shell import bashcheck

    starts = _git_starts(g, c, parsed)
    if isinstance(starts, str):
        return starts
    others = [x for x in parsed.commands if x is not c]
    if any(any(rd.writes and not _harmless(rd) for rd in x.redirects) for x in parsed.commands) or any(
            x.argv and (x.name is None or bashcheck.read_only_problem(x) is not None) for x in others):
        return "other parts of the command can create files, maybe a repository whose config git would obey"
    own = _repository_of(kernel_path(os.path.abspath(g.ws.shell_cwd()))[0])
    return next((why for start in starts if (why := _git_start_problem(g, start, own)) is not None), None)


def _git_starts(g: Judge, c: bashparse.SimpleCommand, parsed: bashparse.ParsedCommand) -> list[str] | str:
    """The directories git may start in (after the command's earlier cd/pushd and git's -C), or
    why they cannot be known (or why git names its repository itself: --git-dir, -c)."""
    from .shell import bashcheck

    unfollowed = "it runs after a directory change that cannot be followed, maybe into a planted repository"
    starts: list[str] | None = [g.ws.shell_cwd()]
    for x in parsed.commands[:next(i for i, y in enumerate(parsed.commands) if y is c)]:
        if x.name not in ("cd", "pushd", "popd"):
            continue
        targets = [w for w in x.args if not w.value.startswith("-")]
        new = bashcheck.cd(starts, targets[0], g.ws) if x.name != "popd" and len(targets) == 1 else None
        if new is None:
            return unfollowed
        starts = [*(starts or []), *new]
    a = bashcheck.command_args(c)
    named = next((p for p in a.problems if "--git-dir" in p or "git -c" in p), None)
    if named is not None:
        return named
    for w in a.chdir:
        starts = bashcheck.cd(starts, w, g.ws)
        if starts is None:
            return "its -C directory is computed at run time"
    return starts or []


def _git_start_problem(g: Judge, start: str, own: str | None) -> str | None:
    """Why git starting in `start` needs approval: outside the working directories, in another
    repository than the workspace's, under a bare-looking one, or one whose config names a program."""
    from .shell import bashcheck

    real = kernel_path(os.path.abspath(start))[0]
    if not g.inside(real):
        # issue 40: git -C / cd into another repository reads its files and obeys its config
        return f"git works in {start}, outside the working directories"
    if _repository_of(real) != own:
        return (f"git works in {start}, a repository other than the workspace's; git would obey "
                "its config, which can run programs (core.fsmonitor, hooks, ...)")
    bare = bashcheck.bare_repository_at_or_above(real)
    if bare is not None:
        return (f"{bare} looks like a bare git repository; git would obey its config, which can "
                "run programs (bare repository attack)")
    return configured_program(real)  # issue 40: core.fsmonitor, diff.external, pagers, filters, ...


def _repository_of(real: str) -> str | None:
    """The top of the git work tree holding `real` (the nearest `.git` at or above), or None."""
    d = real
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up


def _chdir_problem(g: Judge, parsed: bashparse.ParsedCommand) -> str | None:
    """Why a directory change (cd, pushd, env -C, git -C, ...) needs approval: it leaves the
    working directories, so what runs there reads outside them (issue 40, finding 1)."""
    from .shell import bashcheck

    here: list[str] | None = [g.ws.shell_cwd()]
    for c in parsed.commands:
        words: list[bashparse.Word] = []
        if c.name in ("cd", "pushd"):
            words = [w for w in c.args if not w.value.startswith("-")][:1]
        elif c.argv:
            words = list(bashcheck.command_args(c).chdir)
        for w in words:
            new = bashcheck.cd(here, w, g.ws)
            for d in new or []:
                if not g.inside(kernel_path(os.path.abspath(d))[0]):
                    return f"`{c.text or c.original}`: it works in {d}, outside the working directories"
            if c.name in ("cd", "pushd") and new is not None:
                here = new
    return None


_FOLLOW = {"rg": ("-L", "--follow"), "grep": ("-R", "--dereference-recursive"), "egrep": ("-R",),
           "fgrep": ("-R",), "find": ("-L", "-follow")}


def _follow_problem(g: Judge, parsed: bashparse.ParsedCommand) -> str | None:
    """Why a link-following search needs approval: a symlink below its paths leads outside the
    working directories, and a followed link counts where it leads (issue 40, finding 5). The
    scan is bounded; a tree too large to scan is asked about too."""
    for c in parsed.commands:
        flags = _FOLLOW.get(c.name or "")
        if not flags:
            continue
        vals = [w.value for w in c.args]
        short = [v for v in vals if v.startswith("-") and not v.startswith("--")]
        follows = any(v in flags for v in vals) or any(
            f[1] in v[1:] for f in flags if len(f) == 2 for v in short if c.name != "find")
        if not follows:
            continue
        operands = [v for v in vals if not v.startswith("-")]
        if c.name != "find":
            operands = operands[1:]  # rg's and grep's first operand is the pattern
        roots = [os.path.join(g.ws.shell_cwd(), v) for v in operands] or [g.ws.shell_cwd()]
        seen = 0
        for root in roots:
            for d, dirs, files in os.walk(root):
                for n in [*dirs, *files]:
                    seen += 1
                    if seen > 20000:
                        return f"`{c.text or c.original}`: it follows symlinks in a tree too large to check"
                    q = os.path.join(d, n)
                    if os.path.islink(q) and not g.inside(os.path.realpath(q)):
                        return (f"`{c.text or c.original}`: it follows the symlink {q}, which leads "
                                "outside the working directories")
    return None


def _fs_option_problem(c: bashparse.SimpleCommand) -> str | None:
    """acceptEdits approves mkdir/touch/mv/cp with these options only (their paths are judged as writes)."""
    allowed = FS_COMMANDS[c.name or ""]
    targets = 0
    for w in c.args:
        v = w.value
        if v == "--":
            break
        if v.startswith("--"):
            if v not in allowed:
                return f"option {v} is not known to be safe"
        elif v.startswith("-") and len(v) > 1:
            if any(ch not in allowed for ch in v[1:]):
                return f"option {v} is not known to be safe"
        else:
            targets += 1
    return None if targets or "--" in [w.value for w in c.args] else "no paths"


def _harmless_path(p: str) -> bool:
    return p in HARMLESS_WRITES


def _harmless(rd: bashparse.Redirect) -> bool:
    return rd.target is not None and rd.target.literal and _harmless_path(rd.target.value)
