"""Room: trust (beside the bases, below memory, skills and commands; imports only home). Owns workspace
trust: the trust store (store.py), the decision for a run and the filter that narrows what a project
configures until the user trusts it (narrow.py); review.py, beside settings, says what a run ignores.

Opening a repository is not consenting to run it. Until the user trusts a workspace, what the
project's own files say (`.loopwright/` and `.claude/` settings, a committed
settings.local.json among them, `.mcp.json`, the allowed-tools of its skills and commands, its
memory files' imports) can only narrow what the user allows:

    kept     permissions.deny and .ask, defaultMode default | plan, the sandbox switched on and
             its deny lists, disabledMcpjsonServers, the web tools' caps and smallFastModel
             (tools/web/config.py lets a workspace only lower those)
    ignored  hooks, env, permissions.allow, any other defaultMode, additionalDirectories,
             mcpServers and .mcp.json servers (and their approvals), sandbox allowances,
             webFetch.allowPrivateNetwork, webSearch.url and .backend,
             skills' and commands' allowed-tools, memory imports from outside the workspace

Each ignored item is an `Ignored` with one line for the user (front ends print them). The user's
own settings (user scope, --settings, flags, AgentOptions) are never narrowed.

The store: `$LOOPWRIGHT_HOME/trust.json` (default ~/.loopwright), the trusted workspaces by real
path; a directory is trusted when it or a directory above it is. `LOOPWRIGHT_TRUSTED_DIRS`
(os.pathsep-separated) trusts more for this process only, as the user's own environment: for CI
and test suites. A run decides once: `AgentOptions.trust_workspace` True / False wins, None asks
the store (`trusted_for`).
"""

from .narrow import NARROW_MODES, Ignored, IgnoredKind, Trust, advice, narrow_settings, narrow_tools
from .store import (
    STORE_NAME,
    TRUSTED_DIRS_ENV,
    TrustError,
    is_trusted,
    revoke_dir,
    store_path,
    trust_dir,
    trusted_for,
    trusted_workspaces,
)

__all__ = ["NARROW_MODES", "STORE_NAME", "TRUSTED_DIRS_ENV", "Ignored", "IgnoredKind", "Trust", "TrustError", "advice",
           "is_trusted", "narrow_settings", "narrow_tools", "revoke_dir", "store_path", "trust_dir", "trusted_for",
           "trusted_workspaces"]
