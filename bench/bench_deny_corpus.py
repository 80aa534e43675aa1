"""The permission corpus's deny cases against loopwright and Claude Code, side by side.

    ln -s /work/main/tests/node/node_modules tests/node/node_modules   # or: .ci/run installs it
    .venv/bin/python bench/bench_deny_corpus.py [--jobs 4] [--only hardening] [--limit N]

Every case of tests/gate/test_permission_corpus.py's DENIED list (the hardening classes of issue 9
included) runs once per harness, headless (`-p`, `--output-format json`), offline, as one
scripted tool call served by the loopback Messages-API server (loopwright.testing), in a fresh
temp tree full of canaries, with the case's rule set as CLI flags. A case *held* when the tree
is byte-for-byte unchanged afterwards and none of the canary texts (the secret, the outside
canary, the home dotfile, the case's own control text) is in a tool_result that reached the
server. Claude Code (tests/node/node_modules/.bin/claude) is the reference; it runs with
ANTHROPIC_BASE_URL pointing at the server, ANTHROPIC_API_KEY=any and
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1. As root Claude Code refuses bypassPermissions, so
the `bypass` rule set is skipped for both. Prints both counts per class and the cases where
the two differ; writes bench/results/deny_corpus.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from test_permission_corpus import DENIED, HARDENING, RULES, call, make_tree  # noqa: E402

from loopwright.testing import ScriptedServer  # noqa: E402

CLAUDE = HERE.parent / "tests" / "node" / "node_modules" / ".bin" / "claude"
MODEL = "claude-sonnet-4-5"
LEAKS = ("s3cret", "outside canary", "# rc")
# What the harnesses themselves keep in $HOME: not the case's doing.
HOME_STATE = {".claude", ".claude.json", ".loopwright", ".npm", ".cache", ".config", ".local"}


def snapshot(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        at_home = dirpath == str(root / "home")
        dirnames[:] = [d for d in dirnames if not (at_home and d in HOME_STATE)]
        for name in dirnames + filenames:
            if at_home and name in HOME_STATE:
                continue
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            out[rel] = ("-> " + os.readlink(p) if p.is_symlink() else "dir" if p.is_dir()
                        else p.read_bytes().decode(errors="replace"))
    return out


def flags(harness: str, rules: dict[str, Any]) -> list[str]:
    out = ["--permission-mode", rules["mode"]]
    for key, flag in (("allow", "--allowedTools"), ("deny", "--disallowedTools"), ("add_dirs", "--add-dir")):
        for r in rules.get(key, []):
            out += [flag, r]
    if rules.get("ask"):
        out += ["--settings", json.dumps({"permissions": {"ask": rules["ask"]}})]
    return out


def run_case(harness: str, case: tuple[str, str, Any, bool | str]) -> bool | None:
    """True when the case held: nothing changed on disk and nothing leaked to the model;
    None when the harness never sent the call's result back (it did not run the case)."""
    ruleset, tool, spec, control = case
    with tempfile.TemporaryDirectory(prefix="deny-corpus-") as tmp:
        root = Path(tmp)
        make_tree(root)
        before = snapshot(root)
        use = {"type": "tool_use", "id": "toolu_01", "name": tool, "input": call(tool, spec, root)}
        with ScriptedServer([[use], [{"type": "text", "text": "done"}]], model=MODEL, strict=False) as srv:
            env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "LOOPWRIGHT_"))}
            env.update(HOME=str(root / "home"), ANTHROPIC_API_KEY="any", ANTHROPIC_BASE_URL=srv.url,
                       LOOPWRIGHT_HOME=str(root / "home" / ".loopwright"), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                       DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1")
            if harness == "claude":
                cmd = [str(CLAUDE), "-p", "go", "--output-format", "json", "--model", MODEL, *flags(harness, RULES[ruleset])]
            else:
                cmd = [sys.executable, "-c", "import sys; from loopwright.cli import main; sys.exit(main())", "-p", "go",
                       "--output-format", "json", "--model", MODEL, "--base-url", srv.url, "--setting-sources", "",
                       *flags(harness, RULES[ruleset])]
            try:
                subprocess.run(cmd, cwd=root / "proj", env=env, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=180)
            except subprocess.TimeoutExpired:
                pass
            seen = json.dumps([b for r in srv.loop_requests for m in (r.body or {}).get("messages", [])
                               if isinstance(m.get("content"), list) for b in m["content"]
                               if isinstance(b, dict) and b.get("type") == "tool_result"])
        if "toolu_01" not in seen:
            return None
        leaks = [*LEAKS, *([control] if isinstance(control, str) else [])]
        return snapshot(root) == before and not any(x in seen for x in leaks)


def total_held(xs: list[bool | None]) -> int:
    return sum(1 for x in xs if x is True)


def word(x: bool | None) -> str:
    return "held" if x else "no result" if x is None else "FAILED"


def cls(case: tuple[str, str, Any, bool | str]) -> str:
    return "hardening (issue 9)" if case in HARDENING else "earlier classes"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--only", choices=("all", "hardening"), default="all")
    ap.add_argument("--limit", type=int, default=0, help="run only the first N cases (a quick look)")
    args = ap.parse_args()
    if not CLAUDE.exists():
        print(f"Claude Code is not installed at {CLAUDE}; see the docstring.", file=sys.stderr)
        return 2
    cases = [c for c in (HARDENING if args.only == "hardening" else DENIED) if c[0] != "bypass"]
    if args.limit:
        cases = cases[:args.limit]
    held: dict[str, list[bool | None]] = {}
    with ThreadPoolExecutor(args.jobs) as pool:
        for harness in ("claude", "loopwright"):
            held[harness] = list(pool.map(lambda c, h=harness: run_case(h, c), cases))
    total: Counter[tuple[str, str]] = Counter()
    for i, c in enumerate(cases):
        for h in held:
            total[(h, cls(c))] += held[h][i] is True
    broken = {h: sum(1 for x in held[h] if x is None) for h in held}
    lines = ["| class | cases | Claude Code held | loopwright held |", "|---|---:|---:|---:|"]
    for k in sorted({cls(c) for c in cases}):
        n = sum(1 for c in cases if cls(c) == k)
        lines.append(f"| {k} | {n} | {total[('claude', k)]} | {total[('loopwright', k)]} |")
    lines.append(f"| **all** | {len(cases)} | {total_held(held['claude'])} | {total_held(held['loopwright'])} |")
    lines.append(f"| (no result: the harness did not run the case) | | {broken['claude']} | {broken['loopwright']} |")
    diff = [f"- `{c[0]}` {c[1]} `{c[2] if isinstance(c[2], str) else json.dumps(c[2])}`: "
            f"Claude Code {word(held['claude'][i])}, loopwright {word(held['loopwright'][i])}"
            for i, c in enumerate(cases) if held["claude"][i] != held["loopwright"][i]]
    report = "\n".join(["# Deny corpus: loopwright vs Claude Code", "",
                        f"`.venv/bin/python bench/bench_deny_corpus.py --only {args.only}` "
                        f"(Claude Code {subprocess.run([str(CLAUDE), '--version'], capture_output=True, text=True).stdout.strip()})",
                        "", *lines, "", "Cases where they differ:", "", *(diff or ["- none"]), ""])
    print(report)
    out = HERE / "results" / "deny_corpus.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
