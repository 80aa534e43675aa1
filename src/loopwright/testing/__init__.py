"""Room: testing (beside the core). Owns the test helpers' exports; may import data types and the testing modules.

Test helpers: a loopback server speaking the Anthropic and OpenAI APIs from a script.

Nothing here is imported by `import loopwright`."""

from __future__ import annotations

from ..tokens import estimate_tokens
from .chat_wire import openai_to_anthropic
from .faults import Fault
from .prompt_cache import PromptCache, strip_cache_control
from .script import RecordedRequest
from .server import ScriptedServer, load_script_file, serve_main

__all__ = [
    "Fault", "PromptCache", "RecordedRequest", "ScriptedServer", "estimate_tokens", "load_script_file",
    "openai_to_anthropic", "serve_main", "strip_cache_control",
]
