"""Room: data types. Owns the type variables of the public generics; imports nothing of loopwright.

`DepsT`: the type of a run's dependencies (AgentOptions.deps), so that `ToolContext[Deps]` (alias
`RunContext[Deps]`), `ToolPermissionContext[Deps]` and `HookContext[Deps]` type `.deps` for mypy.
`OutputT`: the type of a run's answer (AgentOptions.output_type), so that `ResultMessage[T].output`
is a T. Both default to Any (PEP 696): an unparameterized class is what it was before.
(typing_extensions for mypy only: importing it costs ~20 ms of start-up, and 3.11's TypeVar has
no default.)
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    DepsT = TypeVar("DepsT", default=Any)
    OutputT = TypeVar("OutputT", default=Any)
else:
    DepsT = typing.TypeVar("DepsT")
    OutputT = typing.TypeVar("OutputT")

__all__ = ["DepsT", "OutputT"]
