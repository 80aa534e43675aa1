"""loopwright as the client of MCP's conformance suite (`conformance client --command ...`).

The suite starts a scenario's server, then runs `python tests/mcp/conformance_client.py URL` with
MCP_CONFORMANCE_SCENARIO (the scenario's name) and, for some, MCP_CONFORMANCE_CONTEXT (JSON: the
pre-registered client's id and secret, a private key, ...). This script does what a user would:
writes an `--mcp-config` naming the server (its `oauth` keys from the context), and runs
`loopwright -p` on a scripted model that calls the scenario's tool. It exits 0 when the run
connected to the server and the call succeeded, else 1 (the suite also judges from the server side).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

# The tool each scenario's server offers, with the arguments to call it with (None: connect only).
TOOLS: dict[str, tuple[str, dict[str, Any]] | None] = {
    "initialize": None,
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "sse-retry": ("test_reconnection", {}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
}
CIMD_URL = "https://conformance-test.local/client-metadata.json"  # the scenarios' client metadata document
ROOT = Path(__file__).resolve().parents[2]


def server_config(url: str, scenario: str, ctx: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """The server's `--mcp-config` entry, as a user would write it for this server."""
    entry: dict[str, Any] = {"type": "http", "url": url}
    oauth: dict[str, Any] = {}
    if scenario.startswith("auth/"):
        oauth["clientMetadataUrl"] = CIMD_URL  # used only where the server supports it (else DCR)
    if "client_id" in ctx:
        oauth["clientId"] = ctx["client_id"]
    if "client_secret" in ctx:
        oauth["clientSecret"] = ctx["client_secret"]
    if scenario.startswith("auth/client-credentials"):
        oauth["grantType"] = "client_credentials"
    if "private_key_pem" in ctx:
        key = tmp / "client-key.pem"
        key.write_text(ctx["private_key_pem"])
        key.chmod(0o600)
        oauth["privateKeyFile"] = str(key)
        if ctx.get("signing_algorithm"):
            oauth["signingAlgorithm"] = ctx["signing_algorithm"]
    if scenario == "auth/cross-app-access-complete-flow":
        oauth.update(grantType="jwt_bearer", idpTokenEndpoint=ctx["idp_token_endpoint"],
                     idpClientId=ctx["idp_client_id"], idpIdToken=ctx["idp_id_token"])
    if oauth:
        entry["oauth"] = oauth
    return entry


def main(argv: list[str]) -> int:
    url = argv[1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    ctx = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    tool = TOOLS.get(scenario, ("test-tool", {}) if scenario.startswith("auth/") else None)
    with tempfile.TemporaryDirectory(prefix="lw-conformance-") as d:
        tmp = Path(d)
        home = tmp / "home"
        config = tmp / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"srv": server_config(url, scenario, ctx, tmp)}}))
        turns: list[Any] = []
        if tool is not None:
            turns.append([{"type": "tool_use", "id": "c1", "name": f"mcp__srv__{tool[0]}", "input": tool[1]}])
        turns.append([{"type": "text", "text": "done"}])
        (tmp / "turns.json").write_text(json.dumps(turns))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOPWRIGHT_", "MCP_CONFORMANCE"))}
        env.update(HOME=str(home), LOOPWRIGHT_HOME=str(home / ".loopwright"),
                   LOOPWRIGHT_MCP_AUTHORIZE="browser",  # this run may do the login's browser step itself
                   BROWSER=f"{sys.executable} {ROOT / 'tests' / 'mcp' / 'headless_browser.py'} %s")
        p = subprocess.run([sys.executable, "-m", "loopwright", "-p", "go", "--model", f"scripted:{tmp / 'turns.json'}",
                            "--mcp-config", str(config), "--allowedTools", "mcp__srv",
                            "--output-format", "stream-json", "--verbose"],
                           cwd=tmp, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        sys.stderr.write(p.stderr)
        sys.stdout.write(p.stdout)
        return 0 if p.returncode == 0 and ok(p.stdout, tool is not None) else 1


def ok(stream: str, called: bool) -> bool:
    """The server connected and (when the scenario has a tool) the call was not an error."""
    lines = [json.loads(x) for x in stream.splitlines() if x.strip()]
    init = next((x for x in lines if x.get("type") == "system" and x.get("subtype") == "init"), None)
    if init is None or any(s["status"] != "connected" for s in init.get("mcp_servers", [])):
        return False
    results = [b for x in lines if x.get("type") == "user" for b in x["message"]["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    return not called or (len(results) == 1 and not results[0].get("is_error"))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
