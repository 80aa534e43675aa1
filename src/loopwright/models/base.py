"""Room: bases. Owns the Model protocol, requests, responses and events; may import data types only.

The model protocol: one streaming call from (system, tools, messages) to a response.

A model is M of seed Def 3.1. `stream()` yields optional progress events
(`StreamEvent` partials, `SystemMessage("api_retry")`) and ends with exactly one
`ModelResponse`. Providers raise `ModelError` when a call fails for good.

A tool call whose input the model wrote as text that is not a JSON object (or that was cut
off at max_tokens) keeps that text in a typed marker, `ToolUseBlock.invalid` (`tool_use`), and
an empty input: the call is answered with an is_error tool_result the model can correct
(`invalid_input_error`, used by the executor), never run, and the run goes on. A tool input
dict is only ever the model's own input.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ..blocks import MAX_INPUT_DEPTH, Block, InvalidInput, ToolUseBlock, WireMessage, too_deep
from ..messages import StreamEvent, SystemMessage
from ..usage import Usage

STOP_REASONS = frozenset(
    {
        "end_turn",
        "tool_use",
        "max_tokens",
        "stop_sequence",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
    }
)
CUT_OFF = (
    "Not run: your response hit max_tokens before this tool call was complete, so its input "
    "was cut off. Re-issue the call (split large inputs if needed)."
)


def _no_constant(name: str) -> Any:
    """json.loads' parse_constant: NaN, Infinity and -Infinity are not JSON (Python's json reads them;
    taken into a tool input, every later request carried them and the Messages API refused each)."""
    raise ValueError(f"{name} is not a JSON value")


def parse_input(raw: str, cut_off: bool = False) -> dict[str, Any] | InvalidInput:
    """A tool call's input from the JSON text the model streamed: the object, or an
    `InvalidInput` for text that is not a JSON object. `cut_off`: this is the call the model
    was writing when its response hit max_tokens; unless its JSON object is whole, it is an
    `InvalidInput(cut_off=True)`, answered with CUT_OFF, never run (the turn's complete calls
    run as usual)."""
    if cut_off:
        try:
            whole = json.loads(raw, parse_constant=_no_constant) if raw.strip() else None
        except (ValueError, RecursionError):
            whole = None
        return whole if isinstance(whole, dict) and too_deep(whole) is None else InvalidInput(raw, cut_off=True)
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except ValueError as e:
        return InvalidInput(raw, f"not valid JSON: {e}")
    except RecursionError:  # (deeper than the parser goes: it ended the run)
        return InvalidInput(raw, f"nested more than {MAX_INPUT_DEPTH} levels deep")
    if not isinstance(value, dict):
        return InvalidInput(raw, f"a JSON {type(value).__name__}, not an object")
    deep = too_deep(value)
    return value if deep is None else InvalidInput(raw, deep)


def tool_use(use_id: str, name: str, raw: str, cut_off: bool = False) -> ToolUseBlock:
    """A tool call from the JSON text the model streamed for its input (see `parse_input`)."""
    value = parse_input(raw, cut_off)
    if isinstance(value, InvalidInput):
        return ToolUseBlock(use_id, name, {}, invalid=value)
    return ToolUseBlock(use_id, name, value)


def invalid_input_error(use: ToolUseBlock) -> str | None:
    """The is_error text for a call whose input was not a JSON object or was cut off, else None."""
    bad = use.invalid
    if bad is None:
        return None
    if bad.cut_off:
        return CUT_OFF
    shown = bad.text if len(bad.text) <= 300 else bad.text[:300] + f"... ({len(bad.text)} characters)"
    return (f"Error: the input of this tool call is {bad.error or 'not valid JSON'}, so the tool was not run. "
            f"The input was: {shown}\nCall the tool again with a JSON object that matches its input schema.")


@dataclass(slots=True, eq=False)  # (identity: it holds the live history)
class ModelRequest:
    """One model call's input: the system prompt, the tool definitions and the history (seed Def 3.1's M(h))."""

    system: str | None
    tools: list[dict[str, Any]]
    # The live history (append-only, owned by the loop): read it, never mutate it.
    messages: list[WireMessage]
    max_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # How hard to think (models/reasoning.py): each provider sends them as its model family takes them.
    effort: str | None = None
    thinking: dict[str, Any] | None = None


@dataclass(slots=True)
class ModelResponse:
    """One model call's answer: its blocks, stop reason, usage and the model that answered."""

    content: list[Block]
    stop_reason: str | None
    usage: Usage
    model: str
    # Set by models that know their own cost (the scripted model); else the price table is used.
    cost_usd: float | None = None
    # The text of an answer whose text blocks were all blank (whitespace), which the loop leaves out
    # of `content` (loop/model_call.sendable): such an answer's result, as Claude Code gives it.
    blank_text: str = ""


ModelEvent: TypeAlias = StreamEvent | SystemMessage | ModelResponse


class ModelError(Exception):
    """A model call that failed for good (after any retries)."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


@runtime_checkable
class Model(Protocol):
    """What the loop calls: a `name` (for prices, usage and the catalog's window) and `stream(request)`,
    which yields progress events and then exactly one ModelResponse. Every provider is one
    (AnthropicModel, OpenAICompatModel, OpenAIResponsesModel, ScriptedModel); write your own to
    plug in anything else."""

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Yield progress events, then exactly one ModelResponse."""
        ...


# Optional features a model declares by having them (checked with isinstance, in one place):

@runtime_checkable
class Closeable(Protocol):
    """A model holding connections: the run that made it closes it when the run ends."""

    async def aclose(self) -> None: ...


@runtime_checkable
class ReportsCost(Protocol):
    """A model that knows its own cost (`ModelResponse.cost_usd`), so needs no price."""

    has_own_cost: bool


@runtime_checkable
class ModelChain(Protocol):
    """A model that answers with one of several (FallbackModel): each may need a price."""

    names: list[str]


def model_names(model: Model) -> list[str]:
    """The models that may answer for `model`: its chain's, or itself."""
    return list(model.names) if isinstance(model, ModelChain) else [model.name]


def has_own_cost(model: object) -> bool:
    return isinstance(model, ReportsCost) and bool(model.has_own_cost)


def api_key_source(model: object) -> str:
    """Where the credential of the Anthropic model that answers for `model` (itself or the first of
    its chain) comes from, in the words of Claude Code's init line (`apiKeySource`): an API key
    ("ANTHROPIC_API_KEY": the environment's or one given in the options), the settings'
    apiKeyHelper ("apiKeyHelper"), else "none" (a bearer token, another provider, a scripted model)."""
    for m in [model, *getattr(model, "models", [])]:
        if getattr(m, "env_api_key", None) == "ANTHROPIC_API_KEY":
            if getattr(m, "api_key", None):
                return "ANTHROPIC_API_KEY"
            return "apiKeyHelper" if getattr(m, "key_helper", None) is not None else "none"
    return "none"


async def close_model(model: object) -> None:
    if isinstance(model, Closeable):
        await model.aclose()


async def complete(model: Model, request: ModelRequest) -> ModelResponse:
    """Run one call to the end, ignoring progress events."""
    response: ModelResponse | None = None
    async for ev in model.stream(request):
        if isinstance(ev, ModelResponse):
            response = ev
    if response is None:
        raise ModelError(f"model {model.name!r} ended its stream without a response")
    return response
