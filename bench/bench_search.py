"""Search at repository scale (issue 44): Grep in every output mode and Glob on a generated
repository of ~50,000 files (node_modules/, build/ and *.log gitignored, the rest committed),
loopwright side by side with Claude Code in one run.

    .venv/bin/python bench/bench_search.py [--runs 3] [--files 50000] [--repo DIR] [--python]

Each harness runs `-p` against the loopback server (loopwright.testing.ScriptedServer, offline)
with one scripted turn per call below, then a final text; the cost of a call is the gap from the
server's answer that asked for it to the next request (bench/measure.py `Served.gaps`: the
tool's run plus the harness's own turn). Runs are interleaved; medians of --runs runs (after a
warm-up run each). Columns:
- loopwright: a plain install: the `ripgrep` wheel's rg (PATH holds no other rg);
- loopwright, system rg: the same with the rg on PATH instead of the wheel's (ripgrep 13 here);
- Claude Code (its own search);
- with --python: loopwright's Python engine (no rg at all), for the record.
The results are compared call by call (paths made relative, sorted): "same" where both list the
same files, else what differs. The repository is kept (--repo, default under /tmp) for re-runs.
Writes bench/results/search.md.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import serve_and_run  # noqa: E402

HERE = Path(__file__).resolve().parent
CLAUDE = HERE.parent / "tests" / "node" / "node_modules" / ".bin" / "claude"
MODEL = "claude-sonnet-4-5"
FINAL = "done searching"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"]

CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("Grep files_with_matches", "Grep", {"pattern": "TODO"}),
    ("Grep files_with_matches, 70 files", "Grep", {"pattern": r"FIXME\(security\)"}),
    ("Grep count, 70 files", "Grep", {"pattern": r"FIXME\(security\)", "output_mode": "count"}),
    ("Grep content", "Grep", {"pattern": r"FIXME\(security\)", "output_mode": "content"}),
    ("Grep content -C 2", "Grep", {"pattern": "struct_begin", "output_mode": "content", "-C": 2}),
    ("Grep count, every file", "Grep", {"pattern": "import", "output_mode": "count"}),
    ("Grep -i, type js", "Grep", {"pattern": "todo", "-i": True, "type": "js"}),
    ("Grep glob *.ts, content", "Grep", {"pattern": r"class Widget7\w*", "glob": "*.ts", "output_mode": "content"}),
    ("Grep multiline", "Grep", {"pattern": r"struct_begin[\s\S]*?struct_end", "multiline": True,
                                "output_mode": "files_with_matches"}),
    ("Glob **/*.py", "Glob", {"pattern": "**/*.py"}),
    ("Glob src/app1/mod1*/**/*.py", "Glob", {"pattern": "src/app1/mod1*/**/*.py"}),
    ("Glob **/*.log (gitignored)", "Glob", {"pattern": "**/*.log"}),
]


# --- the repository -------------------------------------------------------------------------------

def _source(rng: random.Random, ext: str, i: int) -> str:
    lines = []
    if ext == "py":
        lines += ["import os", "import sys", f"from pkg{i % 17} import thing"]
    elif ext in ("js", "ts"):
        lines += [f"import {{ x{i % 13} }} from './m{i % 13}';"]
    for k in range(rng.randint(15, 45)):
        r = rng.random()
        if r < 0.02:
            lines.append("# TODO: tidy this up" if ext == "py" else "// todo: later")
        elif r < 0.05:
            lines.append(f"def handle_{k % 40}(request):" if ext == "py" else f"export class Widget{k}{i % 7} {{}}")
        else:
            lines.append(f"value_{k} = compute({k}, {i}) + {rng.randint(0, 999)}  # padding text for realism")
    if i % 397 == 5:
        lines.insert(rng.randint(0, len(lines)), "# FIXME(security): check the input")
    if i % 997 == 0:
        lines += ["struct_begin", "  field", "struct_end"]
    return "\n".join(lines) + "\n"


def make_repo(root: Path, n_files: int) -> int:
    """A repository of about n_files files: src/, tests/, docs/ committed; node_modules/, build/ and
    *.log present but gitignored. Returns the number of files on disk."""
    rng = random.Random(44)
    root.mkdir(parents=True)
    (root / ".gitignore").write_text("node_modules/\nbuild/\n*.log\n")
    shares = {"src": 0.40, "tests": 0.10, "docs": 0.04, "node_modules": 0.32, "build": 0.10, "logs": 0.04}
    count = 1
    for top, share in shares.items():
        n = int(n_files * share)
        for i in range(n):
            if top == "src":
                ext = rng.choice(["py", "py", "py", "js", "ts", "md", "json"])
                rel = f"src/app{i % 40}/mod{i // 40 % 25}/f{i}.{ext}"
            elif top == "tests":
                ext = "py"
                rel = f"tests/t{i % 30}/test_{i}.py"
            elif top == "docs":
                ext = "md"
                rel = f"docs/d{i % 10}/page{i}.md"
            elif top == "node_modules":
                ext = rng.choice(["js", "js", "json", "md", "ts"])
                rel = f"node_modules/pkg{i % 300}/lib/m{i}.{ext}"
            elif top == "build":
                ext = rng.choice(["js", "py", "map"])
                rel = f"build/out{i % 50}/b{i}.{ext}"
            else:
                ext = "log"
                rel = f"src/app{i % 40}/run{i}.log"
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(_source(rng, ext, i))
            count += 1
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "bench"], cwd=root, check=True)
    return count


# --- one run of one harness ---------------------------------------------------------------------

def turns() -> list[Any]:
    return [*([{"type": "tool_use", "id": f"toolu_{k:02d}", "name": tool, "input": inp}]
              for k, (_, tool, inp) in enumerate(CALLS)), [{"type": "text", "text": FINAL}]]


def path_without_rg() -> str:
    """PATH less every directory that holds an `rg`."""
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not (Path(d) / "rg").exists())


# loopwright with the rg on PATH rather than the wheel's (for the "system rg" column), and with no rg
# at all (--python); the same CLI entry otherwise.
ENTRY = ("import sys\n"
         "import loopwright.tools.grep.rg as r\n"
         "mode = sys.argv.pop(1)\n"
         "if mode != 'wheel': r.bundled_rg = lambda: None\n"
         "from loopwright.cli import main\n"
         "sys.exit(main())\n")


def run_one(harness: str, repo: Path, home: Path) -> tuple[list[float], list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "LOOPWRIGHT_"))}
    env.update(HOME=str(home), ANTHROPIC_API_KEY="test", LOOPWRIGHT_HOME=str(home / "lw"),
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1",
               DISABLE_ERROR_REPORTING="1", NO_PROXY="127.0.0.1,localhost")
    if harness in ("loopwright", "python"):
        env["PATH"] = path_without_rg()
    head = ["-p", "search the repository", "--output-format", "json", "--permission-mode", "acceptEdits",
            "--allowedTools", "Grep Glob"]

    def cmd(url: str) -> list[str]:
        env["ANTHROPIC_BASE_URL"] = url
        if harness == "claude":
            return [str(CLAUDE), *head, "--model", MODEL]
        mode = {"loopwright": "wheel", "system-rg": "path", "python": "none"}[harness]
        return [sys.executable, "-c", ENTRY, mode, *head, "--model", MODEL, "--base-url", url]

    proc, served = serve_and_run(turns(), cmd, cwd=repo, env=env, model=MODEL, timeout=900)
    if proc.returncode != 0 or len(served.loop) != len(CALLS) + 1:
        raise SystemExit(f"{harness} failed (exit {proc.returncode}, {len(served.loop)} model calls): "
                         f"{proc.stderr[-1500:]}")
    results = []
    for k, req in enumerate(served.loop[1:]):
        want = f"toolu_{k:02d}"
        text = ""
        for block in req.body["messages"][-1]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") == want:
                c = block.get("content")
                text = c if isinstance(c, str) else "".join(b.get("text", "") for b in c or [])
        results.append(text)
    return served.gaps(), results


# --- comparing results ----------------------------------------------------------------------------

SUMMARY = re.compile(r"^(Found \d+|\(|No (files|matches) found|$)|truncated|showing the first|Showing")


def normalize(text: str, repo: Path) -> tuple[list[str], bool]:
    """The result's entries (paths relative to the repository, sorted) and whether it was cut."""
    prefix = str(repo) + "/"
    rows, cut = [], False
    for line in text.splitlines():
        if "truncated" in line.lower() or "showing the first" in line or "limit: " in line:
            cut = True
        if SUMMARY.search(line) or line.startswith(("<", "</")) or not line.strip():
            continue  # summaries, notes, Claude Code's <system-reminder> of the tokens left
        rows.append(line.removeprefix(prefix))
    return sorted(rows), cut


TOTALS = re.compile(r"Found (\d+) total occurrences? across (\d+) files?")


def compare(a: str, b: str, repo: Path) -> str:
    ra, cut_a = normalize(a, repo)
    rb, cut_b = normalize(b, repo)
    if ra == rb:
        return f"same ({len(ra)} entries)"
    if cut_a or cut_b:
        ta, tb = TOTALS.search(a), TOTALS.search(b)
        if ta and tb:
            same = "same totals" if ta.groups() == tb.groups() else "totals differ"
            return f"cut ({len(ra)} vs {len(rb)} shown); {same}: {ta.group(1)} in {ta.group(2)} files"
        return f"cut ({len(ra)} vs {len(rb)} shown)"
    only_a, only_b = set(ra) - set(rb), set(rb) - set(ra)
    return f"differ: {len(only_a)} only in loopwright, {len(only_b)} only in Claude Code"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--repo", default=str(Path(tempfile.gettempdir()) / "lw-bench-search"))
    ap.add_argument("--python", action="store_true", help="also run loopwright's Python engine (no rg)")
    args = ap.parse_args()
    base = Path(args.repo)
    repo = base / f"repo-{args.files}"
    if not (repo / ".git").exists():
        shutil.rmtree(repo, ignore_errors=True)
        print(f"generating {repo} ...", file=sys.stderr)
        make_repo(repo, args.files)
    n_files = sum(len(f) for d, _, f in os.walk(repo) if "/.git" not in d + "/")
    tracked = len(subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True).stdout.splitlines())
    size_mb = sum(os.path.getsize(os.path.join(d, x)) for d, _, f in os.walk(repo) if "/.git" not in d + "/"
                  for x in f) / 1e6
    home = Path(tempfile.mkdtemp(prefix="lw-bench-search-home-"))
    harnesses = ["loopwright", "system-rg"]
    if CLAUDE.exists():
        harnesses.append("claude")
    if args.python:
        harnesses.append("python")
    gaps: dict[str, list[list[float]]] = {h: [] for h in harnesses}
    outs: dict[str, list[str]] = {}
    for r in range(args.runs + 1):
        for h in harnesses:
            g, res = run_one(h, repo, home)
            if r:  # the first run of each is a warm-up (page cache, bytecode, first-run config)
                gaps[h].append(g)
                outs[h] = res
            print(f"run {r} {h}: " + " ".join(f"{x * 1000:.0f}" for x in g), file=sys.stderr)
    med = {h: [statistics.median(run[k] for run in gaps[h]) for k in range(len(CALLS))] for h in harnesses}
    rg_v = subprocess.run([sys.executable, "-c", "from loopwright.tools.grep.rg import bundled_rg; print(bundled_rg())"],
                          capture_output=True, text=True).stdout.strip()
    ver = lambda b: subprocess.run([b, "--version"], capture_output=True, text=True).stdout.split("\n")[0]  # noqa: E731
    sys_rg = shutil.which("rg")
    cc = subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True).stdout.strip() if CLAUDE.exists() else ""
    head = ["call", "loopwright ms", "loopwright, system rg ms"]
    if "claude" in harnesses:
        head += ["Claude Code ms", "loopwright / Claude Code", "results"]
    if "python" in harnesses:
        head += ["Python engine ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "".join("---|" if h in ("call", "results") else "---:|" for h in head)]
    for k, (name, _, _) in enumerate(CALLS):
        row = [name, f"{med['loopwright'][k] * 1000:.0f}", f"{med['system-rg'][k] * 1000:.0f}"]
        if "claude" in harnesses:
            row += [f"{med['claude'][k] * 1000:.0f}", f"{med['loopwright'][k] / med['claude'][k]:.2f}×",
                    compare(outs["loopwright"][k], outs["claude"][k], repo)]
        if "python" in harnesses:
            row += [f"{med['python'][k] * 1000:.0f}"]
        lines.append("| " + " | ".join(row) + " |")
    grep_ks = [k for k, c in enumerate(CALLS) if c[1] == "Grep"]
    plain = statistics.median(med["loopwright"][k] / med["system-rg"][k] for k in grep_ks)
    text = "\n".join([
        "# Search at repository scale",
        "",
        f"Repository: {n_files:,} files ({size_mb:.0f} MB; {tracked:,} tracked; node_modules/, build/ and *.log "
        f"gitignored), generated by the bench. Gap from the model's answer to the next request, median of "
        f"{args.runs} interleaved runs after a warm-up each; {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f} at the end.",
        f"loopwright: the wheel's rg ({ver(rg_v) if rg_v and rg_v != 'None' else 'none'}), no rg on PATH; "
        f"system rg: {ver(sys_rg) if sys_rg else 'none'}; Claude Code: {cc or 'not installed'}.",
        "",
        *lines,
        "",
        f"Grep, plain install (wheel's rg) / system rg: median ratio {plain:.2f}×.",
        "Results: entries with paths made relative, sorted; \"cut\" where an output was truncated "
        "(the two harnesses cut at different places). Claude Code's Glob lists gitignored files "
        "(`--no-ignore`), loopwright's hides what Grep hides, and Claude Code sorts by modification "
        "time oldest first.",
    ]) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "search.md").write_text(text)
    shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
