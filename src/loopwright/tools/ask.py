"""Room: built-in tools (on tools.base). Owns AskUserQuestion and ExitPlanMode; may import data
types and tools.base.

Both reach the user only through the ports on their ToolContext (interaction.py), never the run:

- AskUserQuestion {questions: [{question, header, options: [{label, description}], multiSelect}]}:
  the answers, or an is_error result when nobody can answer (a headless run) or the user
  declined. Answers already in the input (`answers`, as an Agent SDK client's can_use_tool
  fills them through updatedInput) are taken as given, without asking again.
- ExitPlanMode {plan}: in plan mode, the plan goes to the user; approved, the run goes on in
  the permission mode they chose; refused, it stays in plan mode and the model reads their
  feedback (an is_error result). With nobody to review it, the run ends with the plan as its
  result. Both tools change nothing in the workspace: the gate treats them as read-only (they
  run in plan mode, and never ask for permission)."""

from __future__ import annotations

from typing import Any

from .base import Tool, ToolContext, ToolError, ToolOutput

_OPTION = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "description": "The display text for this option that the user will see and select. Should be concise (1-5 words) and clearly describe the choice."},
        "description": {"type": "string", "description": "Explanation of what this option means or what will happen if chosen. Useful for providing context about trade-offs or implications."},
        "preview": {"type": "string", "description": "Optional preview content shown when this option is focused (a code snippet, a mockup) to help the user compare options."},
    },
    "required": ["label", "description"],
    "additionalProperties": False,
}

ASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array", "minItems": 1, "maxItems": 4,
            "description": "Questions to ask the user (1-4 questions)",
            "items": {
                "type": "object",
                "properties": {
                    "question": {"type": "string", "description": "The complete question to ask the user. Should be clear, specific, and end with a question mark."},
                    "header": {"type": "string", "description": "Very short label displayed as a chip/tag (max 12 chars). Examples: \"Auth method\", \"Library\", \"Approach\"."},
                    "options": {"type": "array", "minItems": 2, "maxItems": 4, "items": _OPTION,
                                "description": "The available choices for this question (2-4). There should be no 'Other' option: the user can always answer in their own words."},
                    "multiSelect": {"type": "boolean", "default": False, "description": "Set to true to allow the user to select multiple options instead of just one. Use when choices are not mutually exclusive."},
                },
                "required": ["question", "header", "options", "multiSelect"],
                "additionalProperties": False,
            },
        },
        "answers": {"type": "object", "additionalProperties": {"type": "string"},
                    "description": "User answers collected by the permission component"},
        "annotations": {"type": "object", "description": "Optional per-question annotations from the user (e.g., notes on preview selections). Keyed by question text.",
                        "additionalProperties": {"type": "object", "additionalProperties": False, "properties": {
                            "preview": {"type": "string", "description": "The preview content of the selected option, if the question used previews."},
                            "notes": {"type": "string", "description": "Free-text notes the user added to their selection."}}}},
        "metadata": {"type": "object", "description": "Optional metadata for tracking and analytics purposes. Not displayed to user.",
                     "properties": {"source": {"type": "string", "description": "Optional identifier for the source of this question. Used for analytics tracking."}},
                     "additionalProperties": False},
    },
    "required": ["questions"],
    "additionalProperties": False,
}

ASK_DESCRIPTION = """Asks the user multiple-choice questions when you need their decision or preferences to go on.

- 1-4 questions per call, each with 2-4 options; the user may also answer in their own words.
- Use multiSelect: true when several options can be chosen together.
- Use it to settle ambiguous requirements or choices between approaches; do not use it to ask
  for permission to run a tool, or to ask whether your plan is good (use ExitPlanMode in plan mode).
- When nobody can answer (a non-interactive run), the call fails: decide yourself and say what you assumed."""

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "plan": {"type": "string", "description": "The plan you came up with, that you want to run by the user for approval. Supports markdown. The plan should be pretty concise."},
    },
    "required": ["plan"],
    "additionalProperties": False,
}

PLAN_DESCRIPTION = """Use this tool when you are in plan mode and have finished planning: it presents your plan to the user for approval.

- Call it only for tasks that need writing code or changing files, once the plan is ready; not for research.
- If the user approves, you leave plan mode and can start; if they refuse, you stay in plan mode:
  revise the plan with their feedback and present it again."""

PLAN_REMINDER = ("<system-reminder>Plan mode is active: research with read-only tools only (no edits, no "
                 "commands that change anything) and, when the plan is ready, present it with the ExitPlanMode "
                 "tool. The user approves it (then you carry it out) or asks for changes.</system-reminder>")

NOBODY = ("Nobody can answer questions in this run (it is not interactive). Do not ask again: decide "
          "yourself, say what you assumed, and go on; or end your turn with the question.")


def _answer_text(answers: dict[str, str]) -> str:
    pairs = ", ".join(f'"{q}"="{a}"' for q, a in answers.items())
    return f"User has answered your questions: {pairs}. You can now continue with the user's answers in mind."


async def ask_user_question(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from ..interaction import Answered, Question  # (imported when the tool runs: start-up)

    questions = tuple(Question.from_input(q) for q in inp["questions"])
    texts = [q.question for q in questions]
    if len(set(texts)) != len(texts):
        raise ToolError("Each question must be different: the answers are keyed by the question text.")
    for q in questions:
        labels = [o.label for o in q.options]
        if len(set(labels)) != len(labels):
            raise ToolError(f"The options of {q.question!r} must have different labels.")
    given = inp.get("answers")
    if given:  # a client already asked the user (the Agent SDK's can_use_tool, through updatedInput)
        return ToolOutput(_answer_text({t: str(given[t]) for t in texts if t in given}))
    if ctx.ask_user is None:
        return ToolOutput(NOBODY, is_error=True)
    reply = await ctx.ask_user(questions)
    if isinstance(reply, Answered):
        if not reply.answers:
            return ToolOutput("The user did not answer any of the questions.", is_error=True)
        return ToolOutput(_answer_text({t: reply.answers[t] for t in texts if t in reply.answers}))
    said = f" They said: {reply.message}" if reply.message else ""
    return ToolOutput(f"The user declined to answer the questions.{said}", is_error=True)


async def exit_plan_mode(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from ..interaction import PlanApproved

    plan = inp["plan"].strip()
    if not plan:
        raise ToolError("The plan is empty: write the plan you want the user to approve.")
    mode = ctx.permission_mode() if ctx.permission_mode is not None else "default"
    if mode != "plan":
        raise ToolError(f"You are not in plan mode (the permission mode is {mode}): go ahead with the task.")
    if ctx.review_plan is None:
        if ctx.finish is not None:
            ctx.finish(plan)
        return ToolOutput("Nobody can approve the plan in this run (it is not interactive): the run ends here, "
                          "with the plan as its result.")
    reply = await ctx.review_plan(plan)
    if isinstance(reply, PlanApproved):
        if reply.mode == "plan":  # type: ignore[comparison-overlap]  # a front end's mistake, not the user's
            raise ToolError("The plan was approved into plan mode, which changes nothing: stay in plan mode.")
        if ctx.set_permission_mode is not None:
            ctx.set_permission_mode(reply.mode)
        return ToolOutput(f"User has approved your plan. You can now start coding (permission mode: {reply.mode}). "
                          "Start with updating your todo list if applicable.")
    said = f" Their feedback: {reply.feedback}" if reply.feedback else " Ask them what to change."
    return ToolOutput(f"The user refused the plan; you are still in plan mode (read-only).{said} Revise the plan "
                      "and present it again with ExitPlanMode.", is_error=True)


def make_ask_user_question_tool() -> Tool:
    return Tool("AskUserQuestion", ASK_DESCRIPTION, ASK_SCHEMA, ask_user_question, read_only=True)


def make_exit_plan_mode_tool() -> Tool:
    return Tool("ExitPlanMode", PLAN_DESCRIPTION, PLAN_SCHEMA, exit_plan_mode, read_only=True)
