"""Room: testing (beside the core). Owns the test helpers' exports; may import data types and testing.server.

Test helpers: a loopback server speaking the Anthropic and OpenAI APIs from a script.

Nothing here is imported by `import loopwright`."""

from __future__ import annotations

from ..tokens import estimate_tokens
from .server import (
    Fault,
    PromptCache,
    RecordedRequest,
    ScriptedServer,
    load_script_file,
    openai_to_anthropic,
    serve_main,
    strip_cache_control,
)

__all__ = [
    "Fault", "PromptCache", "RecordedRequest", "ScriptedServer", "estimate_tokens", "load_script_file",
    "openai_to_anthropic", "serve_main", "strip_cache_control",
]
