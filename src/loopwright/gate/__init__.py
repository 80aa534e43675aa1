"""Room: bases (the gate). Owns the gate g of seed Def 3.1 (rules, order, verdicts, advice); its modules may import workspace, ignore, bashcheck and bashparse only.

The gate decides, per tool call, run or refuse.

Rules follow Claude Code: `Tool` or `Tool(specifier)` in three lists. Evaluation order
(written once, in `Judge.order`):

    deny rules -> ask rules -> mode -> allow rules (and built-in safe cases) -> can_use_tool

The first list with a match decides. "Ask" means: the `can_use_tool` callback decides;
with no callback (a headless run), or in `dontAsk` mode, the call is refused with a
message that says how to allow it. A refusal becomes an is_error tool_result carrying
its message (seed Prop 3.5) and is listed in the result's `permission_denials`.

`mode=None` (the library default) keeps the gate out of the way: deny/ask/allow rules
still apply when given, anything else goes to `can_use_tool`, and with no callback runs.

One idea per module: `rules` (rule syntax and matching), `verdict` (what the gate answers),
`judge` (the order and path checks), `bash` (Bash verdicts), `advice` (how a refusal says to
allow the call), `decide` (`Permissions`, the gate itself). What a path really names, the
working directories and protected paths live in `workspace`; what a shell command reads,
writes and runs lives in `bashcheck` (on top of `bashparse`). When either cannot be sure,
the verdict is "ask" (headless: refused with a hint), never "allow".
"""

from .decide import Permissions
from .rules import PERMISSION_MODES, PermissionMode, Rule, command_matches, path_rule_matches
from .verdict import (
    Allow,
    CanUseTool,
    Decision,
    Deny,
    PermissionResultAllow,
    PermissionResultDeny,
    RuleSource,
    Verdict,
    to_decision,
)

__all__ = ["PERMISSION_MODES", "Allow", "CanUseTool", "Decision", "Deny", "PermissionMode", "PermissionResultAllow",
           "PermissionResultDeny", "Permissions", "Rule", "RuleSource", "Verdict", "command_matches", "path_rule_matches",
           "to_decision"]
