"""Room: loop. What each step says comes next: Finish(result) | Continue() | RunTools(a, uses)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..blocks import ToolUseBlock, WireMessage
    from ..messages import ResultMessage, UserMessage
    from ..models.base import ModelResponse


# (eq=False: a step is said once and acted on, never compared; docs/architecture.md)
@dataclass(slots=True, eq=False)
class Finish:
    """The run ends with `result`, its last message (None: the step yielded it already)."""

    result: ResultMessage | None = None


@dataclass(slots=True, eq=False)
class Continue:
    """Call the model again: its next input is in h already. `shown`: a user message the loop
    added to h that the run's reader sees too (the reminder after an empty answer)."""

    shown: UserMessage | None = None


@dataclass(slots=True, eq=False)
class RunTools:
    """Run the tool calls `uses` of the response `a` (seed Def 3.1 steps 3 and 4); `said` is `a` as
    the history takes it (steps.said)."""

    a: ModelResponse
    uses: list[ToolUseBlock]
    said: WireMessage


Step = Finish | Continue | RunTools
