"""A plain install's paths import only what the base dependencies declare (issue 21).

Each CLI path a user of `pip install loopwright` (no extras) takes runs in a subprocess that
records every module loaded; each module is mapped to the distribution that installed it, and
every such distribution must be in the closure of loopwright's base requirements (extras the
base requirements ask for included, e.g. `pydantic` → pydantic-core). A module that only an
extra or the dev tools install, imported on one of these paths, fails the test: on a plain
install that path would end in an ImportError or a library's RuntimeError.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from loopwright.testing import ScriptedServer
from tests.helpers import cli_env, loopwright_cmd

TOOL_TURN = [[{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo plain"}}],
             [{"type": "text", "text": "done"}]]

# Runs the CLI's main() as the console script does, then writes every loaded top-level module.
RECORDER = """
import atexit, json, sys
def dump():
    with open(sys.argv[1], "w") as f:
        json.dump(sorted({m.partition(".")[0] for m in sys.modules}), f)
atexit.register(dump)
from loopwright.cli import main
sys.exit(main(sys.argv[2:]))
"""


# Imported by a dependency only when it happens to be installed (a try/except ImportError with a
# fallback), so a plain install without it works: .ci/plain_install.py runs these paths there.
OPTIONAL_IN_LIBRARIES: dict[str, str] = {}


def canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def base_closure() -> set[str]:
    """Distributions a plain `pip install loopwright` brings: its requirements without extras,
    then theirs, with the extras each requirement names."""
    seen: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [("loopwright", frozenset())]
    done: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in done:
            continue
        done.add((name, extras))
        seen.add(canonical(name))
        for spec in md.requires(name) or []:
            req = Requirement(spec)
            envs = [{"extra": e} for e in extras] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, frozenset(req.extras)))
    return seen


def loaded_dists(modules: list[str], baseline: set[str]) -> dict[str, set[str]]:
    """module → the distributions that ship it, for modules outside the stdlib and the baseline."""
    owners = md.packages_distributions()
    out: dict[str, set[str]] = {}
    for m in modules:
        if m in baseline or m in sys.stdlib_module_names or m == "loopwright" or m not in owners \
                or m in OPTIONAL_IN_LIBRARIES:
            continue
        out[m] = {canonical(d) for d in owners[m]}
    return out


def record(argv: list[str], tmp_path: Path, cwd: Path, **env: str) -> list[str]:
    out = tmp_path / f"modules-{len(list(tmp_path.glob('modules-*')))}.json"
    p = subprocess.run([sys.executable, "-c", RECORDER, str(out), *argv], cwd=cwd, env=cli_env(**env),
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.is_file(), p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    return list(json.loads(out.read_text()))


@pytest.mark.e2e
@pytest.mark.timeout(360)  # eleven CLI runs in a row: 120 s (the suite's per-test guard) ran out under load
def test_every_plain_cli_path_imports_only_declared_distributions(tmp_path: Path) -> None:
    allowed = base_closure()
    assert {"h11", "pydantic", "pydantic-core", "rich"} <= allowed  # the closure is really computed
    assert "mcp" not in allowed and "ray" not in allowed
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    bare = subprocess.run([sys.executable, "-c", "import sys, json; print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, check=True)
    baseline = {m.partition(".")[0] for m in json.loads(bare.stdout)}  # what site loads for anyone
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(TOOL_TURN * 3))
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "prompt": "x"}\n{"id": "b", "prompt": "y"}\n')
    keys = {"ANTHROPIC_API_KEY": "sk-test", "OPENAI_API_KEY": "sk-test"}
    json_bash = ["--output-format", "json", "--allowedTools", "Bash"]
    paths: dict[str, list[str]] = {}
    with ScriptedServer(TOOL_TURN * 2) as srv:
        paths["-p anthropic"] = record(["-p", "go", "--model", "claude-sonnet-4-5", *json_bash], tmp_path,
                                       project, ANTHROPIC_BASE_URL=srv.url, **keys)
        paths["-p openai"] = record(["-p", "go", "--model", "openai:gpt-4o", "--base-url", srv.openai_url,
                                     *json_bash], tmp_path, project, **keys)
        assert len(srv.loop_requests) == 4  # both runs really spoke HTTP (2 loop calls each; the window probes apart)
    paths["-p scripted, text trace"] = record(["-p", "go", "--model", f"scripted:{script}", "--allowedTools",
                                               "Bash"], tmp_path, project)
    paths["--version"] = record(["--version"], tmp_path, project)
    paths["mcp list"] = record(["mcp", "list"], tmp_path, project)
    paths["sessions list"] = record(["sessions", "list"], tmp_path, project)
    paths["view"] = record(["view", "-o", str(tmp_path / "v.html")], tmp_path, project)
    paths["stats"] = record(["stats"], tmp_path, project)
    paths["batch"] = record(["batch", str(tasks), "-o", str(tmp_path / "r.jsonl"), "--model",
                             f"scripted:{script}", "--concurrency", "1"], tmp_path, project)
    paths["demo"] = record(["demo"], tmp_path, project)
    assert "h11" in paths["-p anthropic"] and "h11" in paths["-p openai"]  # the recorder sees them
    undeclared = {
        path: {m: sorted(d) for m, d in loaded_dists(mods, baseline).items() if not d & allowed}
        for path, mods in paths.items()
    }
    assert not any(undeclared.values()), f"modules from undeclared distributions: {undeclared}"


def test_the_check_catches_a_module_from_an_undeclared_distribution() -> None:
    """The mapping that the test above relies on: a dev-only distribution is not in the closure."""
    owners = md.packages_distributions()
    assert "hypothesis" in owners
    assert not {canonical(d) for d in owners["hypothesis"]} & base_closure()


def test_the_console_script_is_what_the_recorder_runs() -> None:
    """The recorder calls loopwright.cli:main, the console script's entry point."""
    eps = [e for e in md.entry_points(group="console_scripts") if e.name == "loopwright"]
    assert eps and eps[0].value == "loopwright.cli:main"
    assert loopwright_cmd()  # the CLI is launchable in this environment


@pytest.mark.parametrize(("argv", "extra"), [(["mcp", "serve"], "mcp"), (["batch", "{tasks}", "-o", "{out}", "--ray", "--model", "scripted:{tasks}",
                                                                      "--concurrency", "1"], "ray")])
def test_a_feature_without_its_extra_ends_in_one_line_naming_it(
        argv: list[str], extra: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    from loopwright.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name.partition(".")[0] in {"mcp", "mcp_types", "ray"}
                        else real(name, *a))
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "prompt": "x"}\n')
    monkeypatch.chdir(tmp_path)
    code = main([a.format(tasks=tasks, out=tmp_path / "r.jsonl") for a in argv])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 2
    assert len(err) == 1 and f'pip install "loopwright[{extra}]"' in err[0], err
