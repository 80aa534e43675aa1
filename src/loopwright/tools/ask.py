"""Room: built-in tools (on tools.base). Owns the implementation of AskUserQuestion and ExitPlanMode
(tools.builtin defines them); may import data types and tools.base.

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

from .base import ToolContext, ToolError, ToolOutput

PLAN_REMINDER = ("<system-reminder>Plan mode is active: research with read-only tools only (no edits, no "
                 "commands that change anything) and, when the plan is ready, present it with the ExitPlanMode "
                 "tool. The user approves it (then you carry it out) or asks for changes.</system-reminder>")

NOBODY = ("Nobody can answer questions in this run (it is not interactive). Do not ask again: decide "
          "yourself, say what you assumed, and go on; or end your turn with the question.")


def _answered(inp: dict[str, Any], answers: dict[str, str]) -> ToolOutput:
    """The answers for the model; as `tool_use_result` Claude Code's AskUserQuestionOutput (the
    questions as asked, the answers by question)."""
    pairs = ", ".join(f'"{q}"="{a}"' for q, a in answers.items())
    return ToolOutput(f"User has answered your questions: {pairs}. You can now continue with the user's answers in mind.",
                      details={"questions": inp["questions"], "answers": answers})


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
        return _answered(inp, {t: str(given[t]) for t in texts if t in given})
    if ctx.ask_user is None:
        return ToolOutput(NOBODY, is_error=True)
    reply = await ctx.ask_user(questions)
    if isinstance(reply, Answered):
        if not reply.answers:
            return ToolOutput("The user did not answer any of the questions.", is_error=True)
        return _answered(inp, {t: reply.answers[t] for t in texts if t in reply.answers})
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
    # Claude Code's ExitPlanModeOutput: the plan presented (loopwright keeps no plan file: no
    # filePath); isAgent: whether a subagent presented it (a subagent's hooks carry its agent_id)
    details = {"plan": plan, "isAgent": ctx.ports is not None and getattr(ctx.ports.hooks, "agent_id", None) is not None}
    if ctx.review_plan is None:
        if ctx.finish is not None:
            ctx.finish(plan)
        return ToolOutput("Nobody can approve the plan in this run (it is not interactive): the run ends here, "
                          "with the plan as its result.", details=details)
    reply = await ctx.review_plan(plan)
    if isinstance(reply, PlanApproved):
        if reply.mode == "plan":  # type: ignore[comparison-overlap]  # a front end's mistake, not the user's
            raise ToolError("The plan was approved into plan mode, which changes nothing: stay in plan mode.")
        if ctx.set_permission_mode is not None:
            ctx.set_permission_mode(reply.mode)
        return ToolOutput(f"User has approved your plan. You can now start coding (permission mode: {reply.mode}). "
                          "Start with updating your todo list if applicable.", details=details)
    said = f" Their feedback: {reply.feedback}" if reply.feedback else " Ask them what to change."
    return ToolOutput(f"The user refused the plan; you are still in plan mode (read-only).{said} Revise the plan "
                      "and present it again with ExitPlanMode.", is_error=True)
