"""Room: models. Owns resolve_model and the models' exports; may import data types and models.*
(providers lazily).

Models: the protocol, the scripted model, and `resolve_model` which turns one string
into a provider. The HTTP providers need no SDK; their HTTP client is imported at the first call."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import Model, ModelError, ModelRequest, ModelResponse, complete
from .scripted import ScriptedModel

if TYPE_CHECKING:
    from ..options import AgentOptions

DEFAULT_MODEL = "claude-sonnet-5-5"

__all__ = ["Model", "ModelError", "ModelRequest", "ModelResponse", "ScriptedModel", "complete", "resolve_model"]


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


def resolve_model(options: AgentOptions) -> Model:
    """A Model instance passes through; a string picks the provider:
    `scripted:<file.json>`, `openai:<model>`, or an Anthropic model id (`claude-...`)."""
    spec = options.model if options.model is not None else os.environ.get("LOOPWRIGHT_MODEL", DEFAULT_MODEL)
    if not isinstance(spec, str):
        return spec
    if spec.startswith("scripted:"):
        return ScriptedModel(load_script(spec.removeprefix("scripted:")), name="scripted")
    if spec.startswith("openai:"):
        from .openai_compat import OpenAICompatModel

        return OpenAICompatModel(spec.removeprefix("openai:"), base_url=options.base_url,
                                 api_key=options.api_key, max_retries=options.max_retries,
                                 max_tokens=options.max_tokens,
                                 include_partial_messages=options.include_partial_messages)
    from .anthropic import AnthropicModel

    return AnthropicModel(spec.removeprefix("anthropic:"), base_url=options.base_url, api_key=options.api_key,
                          max_retries=options.max_retries, max_tokens=options.max_tokens,
                          include_partial_messages=options.include_partial_messages,
                          prompt_caching=options.prompt_caching)
