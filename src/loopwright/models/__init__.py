"""Room: providers (on models.base). Owns resolve_model and the models' exports; may import data types and models.*
(providers lazily).

Models: the protocol, the scripted model, and `resolve_model` which turns one string
into a provider. The HTTP providers need no SDK; their HTTP client is imported at the first call."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .base import Model, ModelError, ModelRequest, ModelResponse, complete

if TYPE_CHECKING:
    from .scripted import ScriptedModel as ScriptedModel


def __getattr__(name: str) -> Any:
    if name == "ScriptedModel":  # (imported when asked for: a run on a real model never needs it)
        from .scripted import ScriptedModel

        return ScriptedModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

DEFAULT_MODEL = "claude-sonnet-5-5"

__all__ = ["Model", "ModelError", "ModelRequest", "ModelResponse", "ScriptedModel", "check_model_spec", "complete", "resolve_model"]


def load_script(path: str | Path) -> list[Any]:
    """Read a JSON file of turns for `scripted:<file.json>` (a list, or {"turns": [...]})."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read scripted model file {path}: {e}") from None
    turns = data.get("turns") if isinstance(data, dict) else data
    if not isinstance(turns, list):
        raise ValueError(f"scripted model file {path} must hold a list of turns or {{\"turns\": [...]}}")
    from .scripted import check_script

    try:
        check_script(turns)
    except ValueError as e:
        raise ValueError(f"scripted model file {path}: {e}") from None
    return turns


Provider = Literal["scripted", "openai", "responses", "anthropic"]


@dataclass(slots=True)  # (not frozen: never changed nor hashed, and frozen doubles what declaring it costs every start, issue 41)
class ModelSpec:
    """A model string, parsed: `provider` and the `name` after its prefix (a file for scripted).
    `problem` says why it cannot be used: "empty" (a prefix with nothing after it), "provider"
    (an unknown `xyz:` prefix), "no-provider" (a bare name that is no Claude id); else None."""

    spec: str
    provider: Provider
    name: str
    problem: Literal["empty", "provider", "no-provider"] | None = None


def parse_model_spec(spec: str) -> ModelSpec:
    """The one reading of a model string: `scripted:FILE.json`, `openai:<model>` (chat
    completions), `responses:<model>` (OpenAI's Responses API), or an Anthropic id (`claude-...`
    or `anthropic:<id>`)."""
    for provider in ("scripted", "openai", "responses"):
        if spec.startswith(f"{provider}:"):
            name = spec.removeprefix(f"{provider}:")
            return ModelSpec(spec, provider, name, None if name else "empty")
    name = spec.removeprefix("anthropic:")
    if spec.startswith("anthropic:"):
        return ModelSpec(spec, "anthropic", name, None if name else "empty")
    if ":" in spec.split("/", 1)[0]:
        return ModelSpec(spec, "anthropic", name, "provider")
    if name.startswith("claude"):
        return ModelSpec(spec, "anthropic", name)
    from .catalog import resolve_alias

    alias = resolve_alias(name)  # ("sonnet": Claude Code's aliases, in Python as on the command line)
    return ModelSpec(spec, "anthropic", alias, None if alias != name else "no-provider" if name else "empty")


def check_model_spec(spec: str, field: str = "model") -> None:
    """Reject a model string `resolve_model` could only fail on (ValueError naming `field` and the fix)."""
    m = parse_model_spec(spec)
    if m.problem == "empty":
        raise ValueError({"scripted": f"{field}='scripted:' needs a file: {field}='scripted:FILE.json'",
                          "openai": f"{field}='openai:' needs a model name, e.g. {field}='openai:gpt-4o'",
                          "responses": f"{field}='responses:' needs a model name, e.g. {field}='responses:gpt-5'",
                          "anthropic": f"{field}='anthropic:' needs a model id, e.g. "
                                       f"{field}='anthropic:claude-sonnet-5-5'"}[m.provider])
    if m.problem == "provider":
        raise ValueError(f"unknown model provider {spec.split(':', 1)[0]!r} in {field}={spec!r}: use "
                         "'claude-<model>' (Anthropic), 'openai:<model>', 'responses:<model>' or 'scripted:FILE.json'")
    if m.problem == "no-provider":
        raise ValueError(f"{field}={spec!r} names no provider: write {field}='openai:{spec}' for an OpenAI(-compatible) "
                         f"model, {field}='anthropic:{spec}' for an Anthropic model id, or pass a Model instance")


def resolve_model(spec: str | Model | None = None, *, base_url: str | None = None, api_key: str | None = None,
                  max_retries: int = 4, max_tokens: int | None = None, include_partial_messages: bool = False,
                  prompt_caching: bool = True, timeout: float | None = None) -> Model:
    """A Model instance passes through; a string picks the provider:
    `scripted:<file.json>`, `openai:<model>` (chat completions), `responses:<model>` (OpenAI's
    Responses API), or an Anthropic model id (`claude-...`).
    None: $LOOPWRIGHT_MODEL, else DEFAULT_MODEL. `timeout`: an HTTP provider's longest wait in
    seconds (None: API_TIMEOUT_MS, else 600)."""
    if spec is None:
        spec = os.environ.get("LOOPWRIGHT_MODEL", DEFAULT_MODEL)
    if not isinstance(spec, str):
        return spec
    m = parse_model_spec(spec)
    if m.provider == "scripted":
        from .scripted import ScriptedModel

        return ScriptedModel(load_script(m.name), name="scripted")
    if m.provider == "responses":  # OpenAI's Responses API (/v1/responses), on the OpenAI-compatible base URL
        from .openai_responses import OpenAIResponsesModel

        return OpenAIResponsesModel(m.name, base_url=base_url, api_key=api_key, max_retries=max_retries,
                                    max_tokens=max_tokens, include_partial_messages=include_partial_messages,
                                    timeout=timeout)
    if m.provider == "openai":
        from .openai_compat import OpenAICompatModel

        return OpenAICompatModel(m.name, base_url=base_url, api_key=api_key,
                                 max_retries=max_retries, max_tokens=max_tokens,
                                 include_partial_messages=include_partial_messages, timeout=timeout)
    from .anthropic import AnthropicModel

    return AnthropicModel(m.name, base_url=base_url, api_key=api_key,
                          max_retries=max_retries, max_tokens=max_tokens,
                          include_partial_messages=include_partial_messages, prompt_caching=prompt_caching,
                          timeout=timeout)
