"""What a user gets from `pip install loopwright` (no extras) really works.

Run by .ci/run with the python of a venv where the project is installed WITHOUT extras:

    python3 -m venv .venv-plain && .venv-plain/bin/pip install -q . && .venv-plain/bin/python .ci/plain_install.py

Against the project's own loopback server (loopwright.testing, started in this process): one
`-p` tool turn on the Anthropic provider and one on the OpenAI-compatible provider, Grep and Glob
with no `rg` on PATH (the ripgrep wheel's own), `loopwright mcp list`, `loopwright view` on the transcript of the first run and `loopwright batch` on two
tasks. Then each optional feature used without its extra must end in one line that names the
extra, never a traceback. Prints one line per check; exits 1 when any fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from loopwright.testing import ScriptedServer

LW = str(Path(sys.executable).parent / "loopwright")
BAD = ("Traceback", "RuntimeError", "ModuleNotFoundError")
failures: list[str] = []


def check(name: str, ok: bool, detail: str = "") -> None:
    print(f"plain install: {'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": {detail[-600:]}"), flush=True)
    if not ok:
        failures.append(name)


def lw(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LW, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def last_json(out: str) -> dict[str, Any]:
    for line in reversed(out.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def clean(p: subprocess.CompletedProcess[str]) -> bool:
    return not any(b in p.stdout + p.stderr for b in BAD)


def one_line_naming(p: subprocess.CompletedProcess[str], extra: str) -> bool:
    """Exit 2 and stderr one line that names `pip install "loopwright[extra]"`."""
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    return (p.returncode == 2 and len(lines) == 1 and f'pip install "loopwright[{extra}]"' in lines[0]
            and clean(p))


def main() -> int:
    tool_turn = [[{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo plain-ok"}}],
                 [{"type": "text", "text": "done"}]]
    work = Path(tempfile.mkdtemp(prefix="lw-plain-"))
    home = work / "home"
    home.mkdir()
    project = work / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "LOOPWRIGHT_"))}
    env.update(HOME=str(home), ANTHROPIC_API_KEY="sk-test", OPENAI_API_KEY="sk-test")
    run = ["--output-format", "json", "--allowedTools", "Bash"]

    # The two real providers, each one tool turn over real HTTP.
    for provider in ("anthropic", "openai"):
        with ScriptedServer(tool_turn) as srv:
            argv = ["-p", "go", "--model", "claude-sonnet-4-5"] if provider == "anthropic" else \
                ["-p", "go", "--model", "openai:gpt-4o", "--base-url", srv.openai_url]
            p = lw(argv + run, project, {**env, "ANTHROPIC_BASE_URL": srv.url})
            res = last_json(p.stdout)
            echoed = len(srv.loop_requests) == 2 and "plain-ok" in json.dumps(srv.loop_requests[-1].body)
            check(f"-p tool turn on the {provider} provider",
                  res.get("subtype") == "success" and res.get("model_calls") == 2 and echoed and clean(p),
                  p.stdout + p.stderr)
            if provider == "anthropic":
                session = str(res.get("session_id", ""))

    # Grep and Glob with no rg on PATH: the ripgrep wheel (a base dependency) brings its own.
    no_rg_path = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                 if d and not (Path(d) / "rg").exists())
    (project / "src").mkdir()
    (project / "src" / "found_me.py").write_text("NEEDLE = 1\n")
    (project / "build").mkdir()
    (project / "build" / "hidden.py").write_text("NEEDLE = 2\n")
    (project / ".gitignore").write_text("build/\n")
    search_turn = [[{"type": "tool_use", "id": "toolu_g", "name": "Grep", "input": {"pattern": "NEEDLE"}},
                    {"type": "tool_use", "id": "toolu_f", "name": "Glob", "input": {"pattern": "**/*.py"}}],
                   [{"type": "text", "text": "done"}]]
    with ScriptedServer(search_turn) as srv:
        p = lw(["-p", "find it", "--model", "claude-sonnet-4-5", "--output-format", "json",
                "--allowedTools", "Grep Glob"], project,
               {**env, "ANTHROPIC_BASE_URL": srv.url, "PATH": no_rg_path})
        results = {b.get("tool_use_id"): str(b.get("content")) for b in
                   (srv.loop_requests[-1].body["messages"][-1]["content"] if len(srv.loop_requests) == 2 else [])
                   if isinstance(b, dict)}
    grep_out, glob_out = results.get("toolu_g", ""), results.get("toolu_f", "")
    check("Grep and Glob with no rg on PATH (the ripgrep wheel's rg)",
          grep_out.splitlines() == ["Found 1 file", "src/found_me.py"]
          and glob_out.splitlines() == ["src/found_me.py"] and "not installed" not in grep_out + glob_out
          and clean(p), f"{p.stdout}{p.stderr}\ngrep: {grep_out!r}\nglob: {glob_out!r}")
    q = subprocess.run([sys.executable, "-c", "from loopwright.tools.grep.rg import bundled_rg; print(bundled_rg())"],
                       capture_output=True, text=True, env={**env, "PATH": no_rg_path})
    check("the rg Grep runs is the wheel's, in this environment",
          q.returncode == 0 and q.stdout.strip().startswith(os.path.realpath(sys.prefix)), q.stdout + q.stderr)

    # The viewer on that run's transcript.
    page = work / "page.html"
    p = lw(["view", session, "-o", str(page)], project, env)
    check("loopwright view on a transcript", p.returncode == 0 and page.is_file()
          and "plain-ok" in page.read_text(errors="replace") and clean(p), p.stdout + p.stderr)

    # mcp list on a user-scope server: listed with its status, the missing extra named.
    p = lw(["mcp", "add", "--scope", "user", "tick", "--", sys.executable, "-c", "pass"], project, env)
    check("loopwright mcp add", p.returncode == 0 and clean(p), p.stdout + p.stderr)
    p = lw(["mcp", "list"], project, env)
    check("loopwright mcp list", p.returncode == 0 and "tick" in p.stdout
          and 'pip install "loopwright[mcp]"' in p.stdout and clean(p), p.stdout + p.stderr)

    # batch on two tasks, local executor.
    script = work / "turns.json"
    script.write_text(json.dumps([[{"type": "text", "text": "answered"}]] * 2))
    tasks = work / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": i, "prompt": f"task {i}"}) + "\n" for i in ("a", "b")))
    out = work / "results.jsonl"
    p = lw(["batch", str(tasks), "-o", str(out), "--model", f"scripted:{script}", "--concurrency", "1"],
           project, env)
    rows = [json.loads(ln) for ln in out.read_text().splitlines()] if out.is_file() else []
    check("loopwright batch on two tasks", p.returncode == 0 and len(rows) == 2
          and all(r.get("subtype") == "success" for r in rows) and clean(p), p.stdout + p.stderr)

    # Optional features without their extras: one line that names the extra.
    p = lw(["mcp", "serve"], project, env)
    check("mcp serve without the mcp extra", one_line_naming(p, "mcp"), p.stdout + p.stderr)
    p = lw(["batch", str(tasks), "-o", str(work / "ray.jsonl"), "--model", f"scripted:{script}", "--ray",
            "--concurrency", "1"],
           project, env)
    check("batch --ray without the ray extra", one_line_naming(p, "ray"), p.stdout + p.stderr)
    cfg = json.dumps({"mcpServers": {"tick": {"command": sys.executable, "args": ["-c", "pass"]}}})
    p = lw(["-p", "hi", "--model", f"scripted:{script}", "--mcp-config", cfg, "--strict-mcp-config"],
           project, env)
    check("-p with an MCP server without the mcp extra", p.returncode == 0 and
          'pip install "loopwright[mcp]"' in p.stderr and clean(p), p.stdout + p.stderr)
    p = lw(["acp", "--model", f"scripted:{script}"], project, env)
    check("acp without the acp extra", one_line_naming(p, "acp"), p.stdout + p.stderr)

    print(f"plain install: {'all checks hold' if not failures else 'FAILED: ' + ', '.join(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
