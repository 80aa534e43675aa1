"""Room: providers (on models.base). Owns ScriptedModel; may import data types and models.base.

ScriptedModel: a model whose answers are given in advance (seed §9.1 `scripted(h)`).

Either a list of turns used in order, or a function of the wire-format messages.
A turn is a list of wire content blocks, or a dict with `content` and optionally
`stop_reason`, `usage` and `delay` (seconds to wait, for interrupt tests); an
exception instance in the list is raised when its turn comes. A tool_use whose `input` is a
string is the JSON text the model wrote, parsed as a provider parses a stream (text that is
not a JSON object, or the last call of a max_tokens turn cut short, is answered with an error).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ..blocks import Block, WireMessage, block_from_wire, blocks_from_wire, tool_uses
from ..history import FrozenList
from ..tokens import estimate_tokens
from ..usage import Usage
from .base import ModelError, ModelEvent, ModelRequest, ModelResponse, tool_use

if TYPE_CHECKING:
    from .replay import ReplayModel

Turn: TypeAlias = list[dict[str, Any]] | dict[str, Any] | BaseException
TurnFunction: TypeAlias = Callable[[list[WireMessage]], Any]


# The block types a model's answer holds: a script's unknown type close to one of these is a typo
# (an unknown type far from them passes, as a newer API's block would).
_ANSWER_TYPES = ("text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result")


def check_script(turns: list[Any]) -> None:
    """Refuse a hand-written script whose turns would play as something else (a turn's blocks given
    as the list of turns, a block type mistyped, a block missing a field): ValueError naming the
    turn and block, so a file is checked when read, as settings are."""
    for i, turn in enumerate(turns, 1):
        if isinstance(turn, dict):
            if "content" not in turn:
                raise ValueError(f'turn {i} is an object without "content": a turn is a list of blocks or '
                                 '{"content": [...]} (a script of one turn is [[...]])')
            turn = turn["content"]
        if isinstance(turn, str):
            continue  # one text block
        if not isinstance(turn, list):
            raise ValueError(f'turn {i} must be a list of blocks or {{"content": [...]}}, got {type(turn).__name__}')
        for j, b in enumerate(turn, 1):
            kind = b.get("type") if isinstance(b, dict) else None
            try:
                if not (kind == "tool_use" and isinstance(b.get("input"), str)):  # (JSON text: parsed when played)
                    block_from_wire(b)
            except ValueError as e:
                raise ValueError(f"turn {i}, block {j}: {e}") from None
            if isinstance(kind, str) and kind not in _ANSWER_TYPES and kind != "image":
                import difflib

                near = difflib.get_close_matches(kind, _ANSWER_TYPES, 1)
                if near:
                    raise ValueError(f"turn {i}, block {j}: unknown block type {kind!r} (did you mean {near[0]}?)")


def _blocks(wire: Any, max_tokens: bool) -> list[Block]:
    if not isinstance(wire, list):
        return blocks_from_wire(wire)  # a string: one text block (or the error it deserves)
    out: list[Block] = []
    for i, b in enumerate(wire):
        if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("input"), str):
            out.append(tool_use(str(b.get("id", "")), str(b.get("name", "")), b["input"],
                                max_tokens and i == len(wire) - 1))
        else:
            out.append(block_from_wire(b))
    return out


class ScriptedModel:
    """`ScriptedModel(turns_or_function, cost_per_call_usd=None, name="scripted")`.

    `cost_per_call_usd` is a number, or a function of the call number k (1-based),
    giving each call's exact cost; by default calls are free. Usage is estimated per
    message and counted incrementally, so n_k = s + sum(a_i + r_i) holds exactly."""

    has_own_cost = True

    def __init__(
        self,
        turns_or_function: Sequence[Turn] | TurnFunction,
        cost_per_call_usd: float | Callable[[int], float] | None = None,
        name: str = "scripted",
    ) -> None:
        self.name = name
        if callable(turns_or_function):
            self._fn: TurnFunction | None = turns_or_function
            self._turns: list[Turn] = []
        else:
            self._fn = None
            self._turns = list(turns_or_function)
            for i, t in enumerate(self._turns[:1], 1):  # (the first: one turn's blocks given as the turns)
                if isinstance(t, dict) and "type" in t and "content" not in t:
                    raise TypeError(f"turn {i} is a content block (type {t['type']!r}), not a turn: write "
                                    "ScriptedModel([[{...}]]) (a list of turns, each a list of blocks)")
        self._cost = cost_per_call_usd
        self._flat_cost = 0.0 if callable(cost_per_call_usd) else float(cost_per_call_usd or 0.0)
        self.calls = 0
        # incremental token count of a History: (the History itself, its generation, messages
        # counted, their sum). The list is held, not its id(): a new list could reuse a freed id.
        self._seen: tuple[list[WireMessage] | None, int | None, int, int] = (None, None, 0, 0)
        self._fixed: tuple[list[dict[str, Any]], str | None, int] | None = None  # (tools, system, tokens)

    @staticmethod
    def from_session(path_or_id: str | Path, sessions_dir: str | Path | None = None,
                     on_divergence: Literal["stop", "continue"] = "stop") -> ReplayModel:
        """Replay a recorded session (loopwright's transcript, or Claude Code's) offline: its model
        responses in order, each call's new input (tool results, ...) checked against the
        recording's; a divergence names the call and both inputs (models/replay.py). `path_or_id`:
        a transcript's path, or a session id (loopwright's sessions, then ~/.claude/projects)."""
        from .replay import from_session

        return from_session(path_or_id, sessions_dir, on_divergence)

    def _fixed_tokens(self, req: ModelRequest) -> int:
        """s_0: the tokens of the system prompt and tool definitions, counted once per run (for a
        run's frozen definitions; a caller's plain list may have changed in place: each call)."""
        if (self._fixed is None or self._fixed[0] is not req.tools or self._fixed[1] != req.system
                or type(req.tools) is not FrozenList):
            s0 = (estimate_tokens(req.system) if req.system else 0) + (
                estimate_tokens(req.tools) if req.tools else 0
            )
            self._fixed = (req.tools, req.system, s0)
        return self._fixed[2]

    def _history_tokens(self, h: list[WireMessage]) -> int:
        """The history's tokens: only its new messages counted when it is the History counted last
        time, only appended to since (history.py: a rewrite bumps its generation; a plain list, or
        a History rewritten to the same length, was taken as only appended to: issue 41)."""
        seen, generation, counted, total = self._seen
        gen = getattr(h, "generation", None)
        if seen is not h or gen is None or gen != generation or counted > len(h):
            counted, total = 0, 0
        for m in h[counted:]:
            total += estimate_tokens(m)
        self._seen = (h, gen, len(h), total)
        return total

    def _next_turn(self, h: list[WireMessage]) -> Any:
        fn = self._fn  # (a local: Python 3.11 does not specialize calling an attribute as a method)
        if fn is not None:
            return fn(h)
        k = self.calls - 1
        if k >= len(self._turns):
            raise ModelError(f"scripted model has no turn {k + 1} (the script has {len(self._turns)})")
        return self._turns[k]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Answer with the next turn (or the function's answer to the messages), its usage counted
        so that n_k = s + sum(a_i + r_i) holds; a turn that is an exception is raised."""
        self.calls += 1
        turn = self._next_turn(request.messages)
        if isinstance(turn, BaseException):
            raise turn
        spec: dict[str, Any] = turn if isinstance(turn, dict) else {"content": turn}
        if spec.get("delay"):
            await asyncio.sleep(float(spec["delay"]))
        stop = spec.get("stop_reason")
        content = _blocks(spec.get("content", []), stop == "max_tokens")
        if not stop:
            stop = "tool_use" if tool_uses(content) else "end_turn"
        if "usage" in spec:
            usage = Usage.from_json(spec["usage"])
        else:
            usage = Usage(
                input_tokens=self._fixed_tokens(request) + self._history_tokens(request.messages),
                output_tokens=estimate_tokens({"role": "assistant", "content": spec.get("content", [])}),
            )
        cost = self._cost(self.calls) if callable(self._cost) else self._flat_cost
        yield ModelResponse(content, stop, usage, self.name, cost)  # (positional: a keyword costs ~1,000 instructions)
