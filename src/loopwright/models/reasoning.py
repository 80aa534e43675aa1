"""Room: models (data only). Owns effort levels and thinking settings, checked, and how each
provider's request carries them for a model family; imports models.catalog only.

The user says `effort` ("low" | "medium" | "high" | "xhigh" | "max") and/or `thinking`
(`{"type": "enabled", "budget_tokens": N}`, `{"type": "adaptive"}`, `{"type": "disabled"}`), as
the Agent SDK does. What the Messages API accepts depends on the model family (Anthropic's
extended- and adaptive-thinking and effort pages, checked 2026-12):

- Claude 4.7 and later (Opus 4.7/4.8, every 5.x model): adaptive thinking only (`enabled` is a
  400, so a budget becomes `adaptive`; `disabled` is left out); `output_config.effort` takes all
  five levels.
- Claude 4.6 (Opus 4.6, Sonnet 4.6): adaptive or enabled (enabled is deprecated but accepted);
  effort low..high and max (xhigh, an Opus 4.7 level, is sent as high).
- Opus 4.5: enabled thinking; effort low..high (xhigh and max are sent as high) with the
  `effort-2025-11-24` beta header.
- Claude 4.x up to 4.5 and 3.7 Sonnet: enabled thinking only (adaptive becomes a budget from the
  effort); no effort parameter, so effort picks the thinking budget. Claude 4 models get the
  `interleaved-thinking-2025-05-14` beta so they think between tool calls (the budget may then
  exceed max_tokens); 3.7 Sonnet needs max_tokens above the budget, so max_tokens is raised.
- Older Claude models (3.5, 3): no thinking; both are left out.
- An id this table does not know is sent what the newest models take.

OpenAI-compatible servers get `reasoning_effort` (low | medium | high; xhigh for the GPT-5.2+
and codex-max models that take it, else high); a thinking budget alone picks the level.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypeAlias

from .catalog import normalize

Effort: TypeAlias = Literal["low", "medium", "high", "xhigh", "max"]
EFFORT_LEVELS: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")
THINKING_TYPES = ("enabled", "adaptive", "disabled")
MIN_BUDGET = 1024  # the API's smallest budget_tokens
# A thinking budget for models that take a budget, not an effort (none for "low": no thinking).
EFFORT_BUDGET = {"medium": 4_096, "high": 16_000, "xhigh": 24_000, "max": 32_000}
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
EFFORT_BETA = "effort-2025-11-24"


def check_effort(effort: Any, field: str = "effort") -> None:
    """ValueError naming `field` unless `effort` is None or one of EFFORT_LEVELS."""
    if effort is not None and effort not in EFFORT_LEVELS:
        raise ValueError(f"{field} must be one of {', '.join(EFFORT_LEVELS)}, not {effort!r}")


def check_thinking(thinking: Any, field: str = "thinking") -> None:
    """TypeError/ValueError naming the field unless `thinking` is None or a thinking setting."""
    if thinking is None:
        return
    if not isinstance(thinking, dict):
        raise TypeError(f'{field} must be a dict such as {{"type": "adaptive"}} or {{"type": "enabled", '
                        f'"budget_tokens": 8000}}, not {type(thinking).__name__}')
    kind = thinking.get("type")
    if kind not in THINKING_TYPES:
        raise ValueError(f"{field}['type'] must be one of {', '.join(THINKING_TYPES)}, not {kind!r}")
    budget = thinking.get("budget_tokens")
    if kind == "enabled":
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < MIN_BUDGET:
            raise ValueError(f"{field}: type 'enabled' needs budget_tokens, an integer >= {MIN_BUDGET}, "
                             f"not {budget!r}")
    elif budget is not None:
        raise ValueError(f"{field}: budget_tokens goes with type 'enabled' only (type {kind!r} takes none; "
                         "set effort to say how much to think)")


def parse_thinking_arg(value: str) -> dict[str, Any]:
    """`--thinking adaptive|disabled|N` (N: a budget in tokens) as a thinking setting."""
    v = value.strip().lower()
    if v in ("adaptive", "disabled"):
        return {"type": v}
    if v.isdigit():
        out = {"type": "enabled", "budget_tokens": int(v)}
        check_thinking(out, "--thinking")
        return out
    raise ValueError(f"--thinking must be adaptive, disabled or a budget in tokens (>= {MIN_BUDGET}), not {value!r}")


_VERSION = r"^claude-(?:(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d))?(?!\d)|(\d)-(\d)-(\w+))"  # (strings: compiled at first use, in re's cache)


def claude_family(model: str) -> tuple[str, tuple[int, int]] | None:
    """(kind, (major, minor)) of a Claude id: ("opus", (4, 6)), ("sonnet", (3, 7)); None if unknown."""
    m = re.match(_VERSION, normalize(model))
    if m is None:
        return None
    if m.group(1):
        return m.group(1), (int(m.group(2)), int(m.group(3) or 0))
    return m.group(6), (int(m.group(4)), int(m.group(5)))


def anthropic_params(model: str, effort: str | None, thinking: dict[str, Any] | None,
                     max_tokens: int, has_tools: bool) -> tuple[dict[str, Any], list[str]]:
    """The body fields (`thinking`, `output_config`, maybe a larger `max_tokens`) and the beta
    headers for this model family; ({}, []) when neither is set."""
    if effort is None and thinking is None:
        return {}, []
    fam = claude_family(model)
    kind, version = fam if fam is not None else ("", (99, 0))
    mode = (thinking or {}).get("type")
    if version < (3, 7) or (version == (3, 7) and kind != "sonnet"):
        return {}, []  # no thinking, no effort
    out: dict[str, Any] = {}
    betas: list[str] = []
    if version >= (4, 7):  # adaptive only
        if thinking is not None and mode != "disabled":
            out["thinking"] = {**{k: v for k, v in thinking.items() if k != "budget_tokens"}, "type": "adaptive"}
        if effort is not None:
            out["output_config"] = {"effort": effort}
        return out, betas
    if version >= (4, 6):  # adaptive or enabled
        if effort is not None:
            out["output_config"] = {"effort": "high" if effort == "xhigh" else effort}
        if mode == "adaptive":
            out["thinking"] = dict(thinking or {})
            return out, betas
    budget: int | None = None  # 4.6 with a budget, and the budget-only models
    if mode == "enabled":
        budget = int((thinking or {})["budget_tokens"])
    elif version < (4, 6) and (mode == "adaptive" or (mode is None and not (kind == "opus" and version == (4, 5)))):
        budget = EFFORT_BUDGET.get(effort or "high")
    if budget is not None:
        out["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if version >= (4, 0) and has_tools:
            betas.append(INTERLEAVED_BETA)  # think between tool calls; the budget may exceed max_tokens
        elif budget >= max_tokens:
            out["max_tokens"] = budget + 4_096
    if effort is not None and kind == "opus" and version == (4, 5):
        out["output_config"] = {"effort": effort if effort in ("low", "medium", "high") else "high"}
        betas.append(EFFORT_BETA)
    return out, betas


_OPENAI_XHIGH = r"^(?:gpt-5-(?:[2-9]|\d\d)|gpt-5\.(?:[2-9]|\d\d)|gpt-[6-9]|.*codex-max)"


def openai_params(model: str, effort: str | None, thinking: dict[str, Any] | None) -> dict[str, Any]:
    """`reasoning_effort` for an OpenAI-compatible server ({} when neither is set or thinking is off)."""
    kind_of = (thinking or {}).get("type")
    level: str | None = effort
    if level is None:
        if kind_of == "enabled":
            budget = int((thinking or {})["budget_tokens"])
            level = "low" if budget < 4_096 else "medium" if budget < 16_000 else "high"
        else:
            return {}
    if kind_of == "disabled" and effort is None:
        return {}
    if level in ("xhigh", "max"):
        level = "xhigh" if re.match(_OPENAI_XHIGH, normalize(model)) else "high"
    return {"reasoning_effort": level}


__all__ = ["EFFORT_LEVELS", "Effort", "anthropic_params", "check_effort", "check_thinking", "claude_family",
           "openai_params", "parse_thinking_arg"]
