"""A new user's first mistakes, each as a real `loopwright` subprocess in a temp dir with its own
HOME: one line naming the problem and what to do, a non-zero exit where the run cannot go on, and
never a Python traceback. (Claude Code's answer to the same mistake, where it has one, is quoted.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from loopwright.testing import Fault, ScriptedServer
from tests.helpers import TESTS, claude_code_env, cli_env, loopwright_cmd

pytestmark = pytest.mark.e2e


def run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*loopwright_cmd(), *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env=cli_env(HOME=str(cwd / "home"), LOOPWRIGHT_HOME=str(cwd / "home" / ".loopwright"), **env),
                          stdin=subprocess.DEVNULL)


def no_traceback(p: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in p.stderr + p.stdout, p.stderr


@pytest.mark.parametrize(("typo", "meant"), [("--modle", "--model"), ("--alowedTools", "--allowedTools"),
                                             ("--permision-mode", "--permission-mode"), ("--max-trns", "--max-turns")])
def test_a_mistyped_flag_names_the_flag_it_looks_like(tmp_path: Path, typo: str, meant: str) -> None:
    # Claude Code: "error: unknown option '--modle'" and "(Did you mean --model?)"
    p = run("-p", "hi", typo, "x", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2 and p.stdout == ""
    first = p.stderr.splitlines()[0]
    assert first == f"loopwright: error: unrecognized arguments: {typo} (did you mean {meant}?)", p.stderr


@pytest.mark.parametrize(("short", "meant"), [("--outp", "--output-format"), ("--verb", "--verbose"),
                                              ("--max-turn", "--max-turns")])
def test_an_abbreviated_flag_is_refused_as_claude_code_refuses_it(tmp_path: Path, short: str, meant: str) -> None:
    """argparse would take `--outp json` for `--output-format json`; Claude Code 2.1.332 refuses it
    (exit 1, "error: unknown option '--outp'"), so a script that works here must fail there: refused,
    naming the flag it abbreviates."""
    p = run("-p", "hi", short, "json" if short == "--outp" else "2", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.splitlines()[0] == f"loopwright: error: unrecognized arguments: {short} (did you mean {meant}?)"
    claude = TESTS / "node" / "node_modules" / ".bin" / "claude"
    if claude.exists():  # the reference, on the same command line (it refuses before any request)
        home = tmp_path / "cchome"
        home.mkdir()
        cc = subprocess.run([str(claude), "-p", "hi", short, "json"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60, env=claude_code_env("http://127.0.0.1:9", str(home)), stdin=subprocess.DEVNULL)
        assert cc.returncode == 1 and cc.stderr.splitlines()[0] == f"error: unknown option '{short}'", cc.stderr


def test_partial_messages_outside_stream_json_are_refused_as_claude_code_refuses_them(tmp_path: Path) -> None:
    """Text and json output have no place for partial messages: refused in one line, not ignored."""
    p = run("-p", "hi", "--include-partial-messages", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.splitlines()[0] == ("loopwright: --include-partial-messages needs -p --output-format stream-json: "
                                        "the partial messages are stream-json lines")
    claude = TESTS / "node" / "node_modules" / ".bin" / "claude"
    if claude.exists():
        home = tmp_path / "cchome"
        home.mkdir()
        cc = subprocess.run([str(claude), "-p", "hi", "--include-partial-messages"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, env=claude_code_env("http://127.0.0.1:9", str(home)),
                            stdin=subprocess.DEVNULL)
        assert cc.returncode == 1 and "--include-partial-messages requires --print and --output-format=stream-json" \
            in cc.stderr, cc.stderr


@pytest.mark.parametrize("args", [("-p", "hi"), ("--input-format", "stream-json")], ids=["print", "sdk-protocol"])
def test_stream_json_without_verbose_is_refused_in_claude_codes_words(tmp_path: Path, args: tuple[str, ...]) -> None:
    """`--output-format stream-json` without `--verbose`: Claude Code 2.1.332 refuses it before any
    request (exit 1), so a script that works here must not leave it out: refused in its words (exit 2
    with -p, loopwright's code for bad usage; 1 in the Agent SDK protocol, as its other refusals)."""
    said = "When using --print, --output-format=stream-json requires --verbose"
    p = run(*args, "--output-format", "stream-json", cwd=tmp_path, ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    no_traceback(p)
    assert (p.returncode, p.stdout) == ((2 if args[0] == "-p" else 1), ""), p.stderr
    assert p.stderr.splitlines()[0] == f"loopwright: {said}", p.stderr
    claude = TESTS / "node" / "node_modules" / ".bin" / "claude"
    if claude.exists():
        home = tmp_path / "cchome"
        home.mkdir()
        cc = subprocess.run([str(claude), *args, "--output-format", "stream-json"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, env=claude_code_env("http://127.0.0.1:9", str(home)),
                            stdin=subprocess.DEVNULL)
        assert (cc.returncode, cc.stdout, cc.stderr.splitlines()[0]) == (1, "", f"Error: {said}"), cc.stderr


def test_a_flag_like_nothing_known_gets_no_guess(tmp_path: Path) -> None:
    p = run("-p", "hi", "--zzqqxx", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == "loopwright: error: unrecognized arguments: --zzqqxx"


def test_a_subcommand_flag_typo_is_guessed_among_that_subcommands_flags(tmp_path: Path) -> None:
    p = run("sessions", "list", "--alll", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2
    assert "unrecognized arguments: --alll (did you mean --all?)" in p.stderr.splitlines()[0], p.stderr


def test_a_model_name_the_api_does_not_know_says_so_and_what_to_do(tmp_path: Path) -> None:
    # Claude Code: "There's an issue with the selected model (claude-sonet-4-5). It may not exist or you may
    # not have access to it. Run --model to pick a different model."
    with ScriptedServer([[{"type": "text", "text": "unused"}]]) as srv:
        srv.inject(Fault.error(404, "model: claude-sonet-4-5", "not_found_error", times=5))
        p = run("-p", "hi", "--model", "claude-sonet-4-5", "--base-url", srv.url, cwd=tmp_path, ANTHROPIC_API_KEY="k")
        calls = len(srv.requests)
    no_traceback(p)
    assert p.returncode == 1 and calls == 1  # a 404 is not retried
    last = p.stderr.splitlines()[-1]
    assert "404" in last and "claude-sonet-4-5" in last
    assert "may not exist or you may not have access to it" in last and "--model" in last and "/model" in last, last


def test_a_404_that_is_not_about_the_model_points_at_the_base_url(tmp_path: Path) -> None:
    with ScriptedServer([[{"type": "text", "text": "unused"}]]) as srv:
        srv.inject(Fault.error(404, "Not Found", times=5))
        p = run("-p", "hi", "--model", "claude-sonnet-5-5", "--base-url", srv.url + "/wrong", cwd=tmp_path,
                ANTHROPIC_API_KEY="k")
    no_traceback(p)
    last = p.stderr.splitlines()[-1]
    assert p.returncode == 1 and "404" in last
    assert f"nothing at {srv.url}/wrong/v1/messages: is the base URL right?" in last, last
    assert "may not exist" not in last


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scripted-turns.json"


def test_a_rule_naming_no_tool_is_named_with_the_tool_it_looks_like(tmp_path: Path) -> None:
    # Claude Code runs `--allowedTools "Bsh(git:*)"` without a word, and the rule matches nothing.
    p = run("-p", "hi", "--model", f"scripted:{EXAMPLE}", "--allowedTools", "Bsh(git:*) Read", "--disallowedTools",
            "Wirte,Zzqx", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 0, p.stderr  # a warning, not a refusal: the run goes on
    warnings = [ln for ln in p.stderr.splitlines() if ln.startswith("loopwright: warning:")]
    assert warnings == [
        "loopwright: warning: --allowedTools Bsh(git:*): no tool is named Bsh (did you mean Bash?); the rule "
        "matches nothing",
        "loopwright: warning: --disallowedTools Wirte: no tool is named Wirte (did you mean Write?); the rule "
        "matches nothing",
        "loopwright: warning: --disallowedTools Zzqx: no tool is named Zzqx; the rule matches nothing"], p.stderr


def test_rules_naming_real_tools_say_nothing(tmp_path: Path) -> None:
    p = run("-p", "hi", "--model", f"scripted:{EXAMPLE}", "--allowedTools", "Bash(git diff *)", "Read", "Task",
            "mcp__github__get_issue", "Agent(Explore)", "WebFetch(domain:example.com)", "--disallowedTools",
            "mcp__fs", "NotebookEdit", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "warning" not in p.stderr, p.stderr


def test_mcp_list_in_an_untrusted_workspace_advises_only_what_mcp_list_takes(tmp_path: Path) -> None:
    """`loopwright mcp list` named `--trust for this run`, a flag `mcp list` refuses."""
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"fs": {"command": "no-such-mcp-server"}}}')
    p = run("mcp", "list", cwd=tmp_path, LOOPWRIGHT_TRUSTED_DIRS="")
    assert p.returncode == 0, p.stderr
    assert f"loopwright trust {tmp_path}" in p.stderr and "--trust" not in p.stderr, p.stderr
    assert run("mcp", "list", "--trust", cwd=tmp_path).returncode == 2  # (what the advice must not name)


@pytest.mark.parametrize("how", ["run", "mcp list"])
def test_an_mcp_server_whose_command_is_missing_is_named_in_one_line(tmp_path: Path, how: str) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"fs": {"command": "no-such-mcp-server", "args": ["x"]}}}')
    (tmp_path / ".loopwright").mkdir()
    (tmp_path / ".loopwright" / "settings.json").write_text('{"enableAllProjectMcpServers": true}')
    args = ["mcp", "list"] if how == "mcp list" else ["-p", "hi", "--model", f"scripted:{EXAMPLE}"]
    p = run(*args, cwd=tmp_path, LOOPWRIGHT_TRUSTED_DIRS=str(tmp_path))
    no_traceback(p)
    assert p.returncode == 0, p.stderr  # one server that cannot start does not end the run
    said = [ln for ln in (p.stdout + p.stderr).splitlines() if "fs" in ln and "no-such-mcp-server" in ln]
    assert len(said) == 1 and "command not found: no-such-mcp-server" in said[0], p.stdout + p.stderr
    assert "Errno" not in said[0] and "FileNotFoundError" not in said[0]


def test_a_key_the_api_refuses_names_the_variable_it_came_from(tmp_path: Path) -> None:
    # Claude Code: "Invalid API key · Please run /login"
    with ScriptedServer([[{"type": "text", "text": "unused"}]]) as srv:
        srv.inject(Fault.error(401, "invalid x-api-key", "authentication_error", times=5))
        p = run("-p", "hi", "--model", "claude-sonnet-5-5", "--base-url", srv.url, cwd=tmp_path,
                ANTHROPIC_API_KEY="sk-ant-wrong")
        calls = len(srv.requests)
    no_traceback(p)
    last = p.stderr.splitlines()[-1]
    assert p.returncode == 1 and calls == 1
    assert "401" in last and "invalid x-api-key" in last and "ANTHROPIC_API_KEY" in last, last


def test_mcp_get_of_a_server_just_added_in_an_untrusted_workspace_says_why_it_is_not_used(tmp_path: Path) -> None:
    """docs/mcp.md's first steps: `mcp add fs -- ...` then `mcp get fs` said "no MCP server named 'fs'"."""
    untrusted = {"LOOPWRIGHT_TRUSTED_DIRS": ""}
    assert run("mcp", "add", "fs", "--", "python3", "-c", "pass", cwd=tmp_path, **untrusted).returncode == 0
    p = run("mcp", "get", "fs", cwd=tmp_path, **untrusted)
    no_traceback(p)
    assert p.returncode == 1
    last = p.stderr.splitlines()[-1]
    assert last == (f"loopwright: no MCP server named 'fs' that a run here would use: this workspace is not trusted, "
                     f"so its files' servers are ignored (`loopwright trust {tmp_path}` trusts it)"), p.stderr
    assert run("mcp", "get", "nothere", cwd=tmp_path).stderr.splitlines()[-1] == \
        "loopwright: no MCP server named 'nothere'"


@pytest.mark.parametrize("sub", ["", "demo", "serve-scripted", "sessions", "rewind", "view", "stats", "batch", "mcp",
                                 "trust", "acp", "plugin", "plugins"])
def test_every_help_exits_0_and_says_what_each_subcommand_does(tmp_path: Path, sub: str) -> None:
    from loopwright.cli import SUBCOMMANDS

    assert set(SUBCOMMANDS) <= {"demo", "serve-scripted", "sessions", "rewind", "view", "stats", "batch", "mcp",
                                "trust", "acp", "plugin", "plugins"}  # (a new subcommand joins the list above)
    p = run(*([sub] if sub else []), "--help", cwd=tmp_path)
    no_traceback(p)
    if sub == "acp" and "acp extra" in p.stderr:
        pytest.skip("the acp extra is not installed")
    prog = {"plugins": "plugin"}.get(sub, sub)  # (the same command)
    assert p.returncode == 0 and p.stdout.startswith(f"usage: loopwright {prog}".rstrip()), p.stderr
    actions = {"mcp": ["list", "get", "add", "remove", "serve", "login", "logout", "add-json",
                       "add-from-claude-desktop"],
               "plugin": ["marketplace", "install", "list", "enable", "disable", "remove"],
               "plugins": ["marketplace", "install", "list", "enable", "disable", "remove"],
               "sessions": ["list", "show"]}.get(sub, [])
    lines = p.stdout.splitlines()
    for action in actions:  # each on a line of its own with what it does, as `claude mcp --help` lists them
        at = [i for i, ln in enumerate(lines) if ln.split()[:1] == [action]]
        assert at and (len(lines[at[0]].split()) > 1 or lines[at[0] + 1].startswith(" " * 8)), f"{sub} {action}:\n{p.stdout}"


def test_worktree_in_a_repository_with_no_commit_says_so_in_one_line(tmp_path: Path) -> None:
    # Claude Code: 'Error creating worktree: Failed to resolve base branch "HEAD": git rev-parse returned no
    # commit for HEAD (for example in a new repository, ...)'
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    p = run("-p", "fix it", "--worktree", "flaky", "--model", f"scripted:{EXAMPLE}", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [f"loopwright: Error creating worktree: {tmp_path} has no commit yet, so there is "
                                     "nothing to start a worktree from: commit once, then try again"], p.stderr


def test_a_mistyped_slash_command_names_the_command_it_looks_like(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """At the interactive prompt, `/hepl` said "unknown command /hepl (try /help)"; Claude Code offers
    the command it looks like. (The REPL driven without a terminal, as tests/cli/test_interactive.py does.)"""
    import asyncio
    import io

    from loopwright.cli.interactive import Repl
    from loopwright.cli.render import TraceRenderer
    from loopwright.options import AgentOptions

    repl = Repl(AgentOptions(model="scripted:unused.json", cwd=tmp_path))
    repl.renderer = TraceRenderer(io.StringIO(), spinner=False)

    async def go() -> list[str]:
        said = []
        for line in ("/hepl", "/modle x", "/exti", "/zzqqxx"):
            assert await repl.command(line)  # (none of them ends the session)
            said.append(capsys.readouterr().out.strip())
        return said

    assert asyncio.run(go()) == ["unknown command /hepl (did you mean /help?)",
                                 "unknown command /modle (did you mean /model?)",
                                 "unknown command /exti (did you mean /exit?)",
                                 "unknown command /zzqqxx (try /help)"]


def test_what_the_cli_page_quotes_is_what_loopwright_says(tmp_path: Path) -> None:
    """docs/cli.md quoted `--worktree is not supported by loopwright` after --worktree became supported;
    its quoted refusal and its mistyped-flag lines are checked against real runs."""
    import re

    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text()
    refused = re.search(r"refused in one line naming it \(`(--[\w-]+) is not supported by loopwright: ([^`]*?)`", page)
    assert refused is not None
    p = run("-p", "hi", "--model", f"scripted:{EXAMPLE}", refused[1], cwd=tmp_path)
    said = refused[2].removesuffix("...").rstrip()
    assert p.returncode == 2 and p.stderr.startswith(f"loopwright: {refused[1]} is not supported by loopwright: {said}")
    mistakes = re.findall(r"\(`(loopwright: error: [^`]+)`, then `([^`]+)`\)", page)
    assert mistakes
    for quoted in mistakes:
        flag = re.search(r"(--[\w-]+)", quoted[0])
        assert flag is not None
        value = re.search(r"value: '([^']*)'", quoted[0])
        p = run("-p", "hi", flag[1], value[1] if value else "x", cwd=tmp_path)
        assert p.stderr.splitlines() == [" ".join(q.split()) for q in quoted], p.stderr  # (the page wraps lines)


def test_trust_revoke_of_dot_names_the_directory_it_revoked(tmp_path: Path) -> None:
    """`loopwright trust .` says the directory; `trust revoke .` said `no longer trusted: .`."""
    assert run("trust", ".", cwd=tmp_path).returncode == 0
    p = run("trust", "revoke", ".", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == f"no longer trusted: {tmp_path.resolve()}\n", p.stdout + p.stderr
    assert "not trusted" in run("trust", "show", ".", cwd=tmp_path, LOOPWRIGHT_TRUSTED_DIRS="").stdout


@pytest.mark.parametrize("args", [["plugin", "list"], ["sessions", "list"], ["mcp", "list"]])
def test_a_listing_piped_into_a_reader_that_left_says_nothing(tmp_path: Path, args: list[str]) -> None:
    """`loopwright plugin list | head -0` printed `loopwright: [Errno 32] Broken pipe`; the run's own
    output (`-p ... | head`) and the other listings end silently, as a Unix tool does."""
    import os

    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first line
    try:
        p = subprocess.run([*loopwright_cmd(), *args], cwd=tmp_path, stdout=w, stderr=subprocess.PIPE, text=True,
                           env=cli_env(HOME=str(tmp_path), LOOPWRIGHT_HOME=str(tmp_path / ".loopwright")),
                           stdin=subprocess.DEVNULL, timeout=60)
    finally:
        os.close(w)
    assert p.stderr == "", p.stderr


@pytest.mark.parametrize(("argv", "meant"), [(["veiw"], "view"), (["sesions", "list"], "sessions"),
                                             (["mpc", "list"], "mcp"), (["plugn", "list"], "plugin")])
def test_a_mistyped_subcommand_is_named_not_sent_to_the_model(tmp_path: Path, argv: list[str], meant: str) -> None:
    """`loopwright veiw` with a key set sent "veiw" to the model as a prompt (stdin not a terminal), and
    `loopwright sesions list` said "unrecognized arguments: list"."""
    with ScriptedServer([[{"type": "text", "text": "a paid answer"}]]) as srv:
        p = run(*argv, "--base-url", srv.url, cwd=tmp_path, ANTHROPIC_API_KEY="k")
        calls = len(srv.requests)
    no_traceback(p)
    assert p.returncode == 2 and calls == 0, p.stderr
    assert p.stderr.splitlines() == [
        f"loopwright: unknown command '{argv[0]}' (did you mean `loopwright {meant}`?); a prompt goes with -p: "
        f"loopwright -p \"{' '.join(argv)}\""], p.stderr


def test_a_word_like_a_subcommand_given_with_p_is_a_prompt(tmp_path: Path) -> None:
    with ScriptedServer([[{"type": "text", "text": "an answer"}]]) as srv:
        p = run("veiw", "-p", "--base-url", srv.url, "--model", "claude-sonnet-5-5", cwd=tmp_path,
                ANTHROPIC_API_KEY="k")
    assert p.returncode == 0 and p.stdout == "an answer\n", p.stderr


def test_the_main_help_starts_with_a_short_usage_and_lists_the_commands_one_a_line(tmp_path: Path) -> None:
    """`loopwright --help` opened on ~50 lines of every option's usage before saying what loopwright is
    (Claude Code: "Usage: claude [options] [command] [prompt]"), and its subcommands were one wrapped line."""
    from loopwright.cli import SUBCOMMANDS

    p = run("--help", cwd=tmp_path)
    lines = p.stdout.splitlines()
    assert p.returncode == 0 and lines[0] == "usage: loopwright [OPTIONS] [-p] [PROMPT]", lines[:3]
    assert lines.index("") <= 3 and lines[lines.index("") + 1].startswith("The agent loop"), lines[:6]
    commands = lines[lines.index("commands:") + 1:]
    for name in SUBCOMMANDS:
        assert any(ln.split()[:2] == ["loopwright", name] for ln in commands), (name, commands)
    batch = run("batch", "--help", cwd=tmp_path).stdout
    assert batch.startswith("usage: loopwright batch [-h]") and "commands:" not in batch  # (its own usage)


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_a_page_says_how_loopwright_gets_on_path_before_its_first_bare_command(page: str) -> None:
    """The two commands install into .venv and run `.venv/bin/loopwright`; a reader who then types the
    tour's `loopwright -p ...` got "command not found" unless the page had said to activate the venv."""
    import re

    text = (Path(__file__).resolve().parents[2] / page).read_text()
    first = re.search(r"^(?:[A-Z_]+=\S+ )*loopwright ", text, re.M)  # a command line typed as `loopwright ...`
    assert first is not None
    assert "source .venv/bin/activate" in text[:first.start()], page


def test_a_mistyped_settings_key_names_the_key_it_looks_like(tmp_path: Path) -> None:
    """`"permisions": {...}` in settings.json was "unknown settings (ignored): permisions": the rules in
    it do nothing, and nothing said which key was meant."""
    home = tmp_path / "home" / ".loopwright"
    home.mkdir(parents=True)
    (home / "settings.json").write_text('{"permisions": {"allow": ["Bash"]}, "modle": "x", "zzqqxx": 1, '
                                        '"permissions": {"alow": ["Read"]}}')
    p = run("-p", "hi", "--model", f"scripted:{EXAMPLE}", cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 0, p.stderr
    [line] = [ln for ln in p.stderr.splitlines() if "unknown settings" in ln]
    assert line.endswith("unknown settings (ignored): permisions (did you mean permissions?), modle (did you "
                         "mean model?), zzqqxx, permissions.alow (did you mean permissions.allow?)"), line


def test_a_mistyped_hook_event_names_the_event_it_looks_like(tmp_path: Path) -> None:
    home = tmp_path / "home" / ".loopwright"
    home.mkdir(parents=True)
    (home / "settings.json").write_text('{"hooks": {"PreTool": [{"matcher": "Bash", "hooks": '
                                        '[{"type": "command", "command": "true"}]}]}}')
    p = run("-p", "hi", "--model", f"scripted:{EXAMPLE}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    [line] = [ln for ln in p.stderr.splitlines() if "unknown hook event" in ln]
    assert line.endswith("unknown hook event 'PreTool' (not one of Claude Code's; did you mean PreToolUse?); its "
                         "hooks will not run"), line


def test_the_advice_for_a_project_mcp_server_to_approve_works_as_written(tmp_path: Path) -> None:
    """"approve it with enableAllProjectMcpServers or enabledMcpjsonServers in settings" named two keys,
    not their values nor which file; the line now says both, and following it approves the server."""
    import json
    import re

    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"fs": {"command": "no-such-mcp-server"}}}')
    p = run("-p", "hi", "--model", f"scripted:{EXAMPLE}", cwd=tmp_path, LOOPWRIGHT_TRUSTED_DIRS=str(tmp_path))
    [line] = [ln for ln in p.stderr.splitlines() if "MCP server fs" in ln]
    advice = re.search(r"approve it with (\{.*?\}) in (\S+?)(?: |$)", line)
    assert advice is not None, line
    target = tmp_path / advice[2]
    target.parent.mkdir(exist_ok=True)
    target.write_text(json.dumps(json.loads(advice[1])))
    p = run("-p", "hi", "--model", f"scripted:{EXAMPLE}", cwd=tmp_path, LOOPWRIGHT_TRUSTED_DIRS=str(tmp_path))
    [line] = [ln for ln in p.stderr.splitlines() if "MCP server fs" in ln]
    assert "command not found: no-such-mcp-server" in line, line  # approved: it was started
