"""Room: models. Owns resolve_model and the models' exports; may import data types and models.*
(providers lazily).

Models: the protocol, the scripted model, and `resolve_model` which turns one string
into a provider. The HTTP providers need no SDK; their HTTP client is imported at the first call."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .base import Model, ModelError, ModelRequest, ModelResponse, complete
from .scripted import ScriptedModel

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
    return turns


def check_model_spec(spec: str, field: str = "model") -> None:
    """Reject a model string `resolve_model` could only fail on (ValueError naming `field` and the fix)."""
    if spec.startswith("scripted:"):
        if not spec.removeprefix("scripted:"):
            raise ValueError(f"{field}='scripted:' needs a file: {field}='scripted:FILE.json'")
        return
    if spec.startswith("openai:"):
        if not spec.removeprefix("openai:"):
            raise ValueError(f"{field}='openai:' needs a model name, e.g. {field}='openai:gpt-4o'")
        return
    if spec.startswith("responses:"):
        if not spec.removeprefix("responses:"):
            raise ValueError(f"{field}='responses:' needs a model name, e.g. {field}='responses:gpt-5'")
        return
    name = spec.removeprefix("anthropic:")
    if not name:
        raise ValueError(f"{field}='anthropic:' needs a model id, e.g. {field}='anthropic:claude-sonnet-5-5'")
    if ":" in spec.split("/", 1)[0] and not spec.startswith("anthropic:"):
        raise ValueError(f"unknown model provider {spec.split(':', 1)[0]!r} in {field}={spec!r}: use "
                         "'claude-<model>' (Anthropic), 'openai:<model>', 'responses:<model>' or 'scripted:FILE.json'")
    if not spec.startswith("anthropic:") and not name.startswith("claude"):
        raise ValueError(f"{field}={spec!r} names no provider: write {field}='openai:{spec}' for an OpenAI(-compatible) "
                         f"model, {field}='anthropic:{spec}' for an Anthropic model id, or pass a Model instance")


def resolve_model(spec: str | Model | None = None, *, base_url: str | None = None, api_key: str | None = None,
                  max_retries: int = 4, max_tokens: int | None = None, include_partial_messages: bool = False,
                  prompt_caching: bool = True) -> Model:
    """A Model instance passes through; a string picks the provider:
    `scripted:<file.json>`, `openai:<model>` (chat completions), `responses:<model>` (OpenAI's
    Responses API), or an Anthropic model id (`claude-...`).
    None: $LOOPWRIGHT_MODEL, else DEFAULT_MODEL."""
    if spec is None:
        spec = os.environ.get("LOOPWRIGHT_MODEL", DEFAULT_MODEL)
    if not isinstance(spec, str):
        return spec
    if spec.startswith("scripted:"):
        return ScriptedModel(load_script(spec.removeprefix("scripted:")), name="scripted")
    if spec.startswith("responses:"):  # OpenAI's Responses API (/v1/responses), on the OpenAI-compatible base URL
        from .openai_responses import OpenAIResponsesModel

        return OpenAIResponsesModel(spec.removeprefix("responses:"), base_url=base_url, api_key=api_key,
                                    max_retries=max_retries, max_tokens=max_tokens,
                                    include_partial_messages=include_partial_messages)
    if spec.startswith("openai:"):
        from .openai_compat import OpenAICompatModel

        return OpenAICompatModel(spec.removeprefix("openai:"), base_url=base_url, api_key=api_key,
                                 max_retries=max_retries, max_tokens=max_tokens,
                                 include_partial_messages=include_partial_messages)
    from .anthropic import AnthropicModel

    return AnthropicModel(spec.removeprefix("anthropic:"), base_url=base_url, api_key=api_key,
                          max_retries=max_retries, max_tokens=max_tokens,
                          include_partial_messages=include_partial_messages, prompt_caching=prompt_caching)
