"""Room: data types. Owns the "ask the user" ports (questions, plan review) and their answers;
imports nothing of loopwright.

A front end that has a user (the interactive CLI, the SDK protocol's client, an ACP client)
gives the run two async callbacks, through `AgentOptions(ask_user=..., review_plan=...)`; the
tools reach them through their ToolContext (never the Run). With no callback (a headless run)
the tools answer the model themselves: AskUserQuestion with an is_error result that says nobody
can answer, ExitPlanMode by ending the run with the plan as its result.

    AskUser    = async (questions: tuple[Question, ...]) -> Answered | Declined
    ReviewPlan = async (plan: str) -> PlanApproved | PlanRefused

Both may take as long as the user takes; an interrupt cancels the awaiting tool call as any
other (the callback sees asyncio.CancelledError)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias


@dataclass(frozen=True, slots=True)
class QuestionOption:
    """One option of a question the model asks the user (AskUserQuestion)."""

    label: str
    description: str = ""
    preview: str | None = None  # shown while the option is focused (code, a mockup), when given


@dataclass(frozen=True, slots=True)
class Question:
    """One of AskUserQuestion's questions. `header`: a chip of at most 12 characters."""

    question: str
    header: str
    options: tuple[QuestionOption, ...]
    multi_select: bool = False

    @classmethod
    def from_input(cls, q: dict[str, Any]) -> Question:
        """From the tool's input item {question, header, options: [{label, description, preview?}], multiSelect}."""
        opts = tuple(QuestionOption(str(o["label"]), str(o.get("description", "")), o.get("preview"))
                     for o in q["options"])
        return cls(str(q["question"]), str(q["header"]), opts, bool(q.get("multiSelect", False)))


@dataclass(frozen=True, slots=True)
class Answered:
    """The user's answers: question text -> the chosen label, the chosen labels joined by ", "
    (multiSelect), or the user's own words (the "Other" choice). A question left out of the
    dict was not answered."""

    answers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Declined:
    """The user dismissed the questions; `message` (if any) is what they said instead."""

    message: str = ""


QuestionReply: TypeAlias = Answered | Declined
AskUser: TypeAlias = Callable[[tuple[Question, ...]], Awaitable[QuestionReply]]


@dataclass(frozen=True, slots=True)
class PlanApproved:
    """Go ahead: the run leaves plan mode for `mode` (a permission mode other than "plan")."""

    mode: Literal["default", "acceptEdits", "bypassPermissions", "dontAsk"] = "default"


@dataclass(frozen=True, slots=True)
class PlanRefused:
    """Not this plan: the run stays in plan mode and the model reads `feedback`."""

    feedback: str = ""


PlanReply: TypeAlias = PlanApproved | PlanRefused
ReviewPlan: TypeAlias = Callable[[str], Awaitable[PlanReply]]


__all__ = ["AskUser", "Answered", "Declined", "PlanApproved", "PlanRefused", "PlanReply", "Question",
           "QuestionOption", "QuestionReply", "ReviewPlan"]
