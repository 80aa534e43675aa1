"""Room: skills and memory. Owns output styles: Claude Code's built-in ones and the user's and project's
style files, and how a style changes a run's system prompt; may import skills and below.

An output style changes how the agent answers (Claude Code's `/output-style`, `"outputStyle"` in
settings, `AgentOptions.output_style`). The built-ins are Claude Code's own (2.1.332, their text
taken from its requests): default (no change), Proactive, Concise, Explanatory, Learning. Style
files are Markdown with front matter `name`, `description`, `keep-coding-instructions` (body = the
style's instructions) in `~/.claude/output-styles/`, `~/.loopwright/output-styles/` (user),
`.claude/output-styles/` and `.loopwright/output-styles/` (project), and plugins' `output-styles/`.

What a style does to a run, as Claude Code does it: its instructions join the system prompt under
`# Output Style: NAME`; a style that does not keep the coding instructions
(`keep-coding-instructions: false`, the default for style files) replaces loopwright's own
coding instructions, keeping the environment lines. A style's reminder (Claude Code's
"... output style is active") ends the system text, so it holds for every turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .configdirs import config_dirs
from .skills import read_text_capped, split_front_matter

DEFAULT = "default"
INTRO = ('You are an interactive agent that helps users according to your "Output Style", which describes how '
         "you should respond to user queries. Use the instructions below and the tools available to you to assist "
         "the user.")
KNOWN_KEYS = ("name", "description", "keep-coding-instructions")


@dataclass
class OutputStyle:
    """One style: its name, description, instructions (None: the default, no change), where it
    comes from ("built-in", "user", "project", "plugin:NAME"), whether loopwright's coding
    instructions stay, and the reminder of every turn."""

    name: str
    description: str
    prompt: str | None
    source: str = "built-in"
    keep_coding_instructions: bool = False
    reminder: str = ""

    def reminder_text(self) -> str:
        return self.reminder or f"{self.name} output style is active. Remember to follow the specific guidelines for this style."


BUILT_IN: dict[str, OutputStyle] = {
    DEFAULT: OutputStyle(DEFAULT, "Claude completes coding tasks efficiently and provides concise responses", None,
                         "built-in", True),
    "Proactive": OutputStyle(
        "Proactive", "Claude executes immediately, minimizes interruptions, and prefers action over planning",
        "You are an interactive CLI tool that helps users with software engineering tasks. You should work proactively and autonomously, executing immediately and minimizing interruptions.\n\n# Proactive Style Active\nThe user chose continuous, autonomous execution. You should:\n\n1. **Execute immediately** — Start implementing right away. Make reasonable assumptions and proceed on low-risk work.\n2. **Minimize interruptions** — Prefer making reasonable assumptions over asking questions for routine decisions.\n3. **Prefer action over planning** — Do not enter plan mode unless the user explicitly asks. When in doubt, start coding.\n4. **Expect course corrections** — The user may provide suggestions or course corrections at any point; treat those as normal input.\n5. **Do not take overly destructive actions** — This is not a license to destroy. Anything that deletes data or modifies shared or production systems still needs explicit user confirmation. If you reach such a decision point, ask and wait, or course correct to a safer method instead.\n6. **Avoid data exfiltration** — Post even routine messages to chat platforms or work tickets only if the user has directed you to. You must not share secrets (e.g. credentials, internal documentation) unless the user has explicitly authorized both that specific secret and its destination.",
        "built-in", True, "Proactive output style is active. Execute autonomously, minimize interruptions, prefer action over planning."),
    "Concise": OutputStyle(
        "Concise", "Claude responds tersely, leading with results and skipping preamble and narration",
        "You are an interactive CLI tool that helps users with software engineering tasks. Keep your responses short and direct while doing the work just as thoroughly.\n\n# Concise Style Active\nThe user chose brevity over narration. You should:\n\n1. **Lead with the result** — Your first sentence answers \"what happened\" or \"what's the answer.\" No preamble (\"Let me...\", \"Now I'll...\") and no closing recap of what you already said.\n2. **Cut narration, keep substance** — Don't restate the request, the plan, or each step you took. Report outcomes, decisions, and anything the user must act on.\n3. **Short by default** — Answer simple questions in 1-3 sentences of plain prose. Use headers, tables, and bullet lists only when they carry real structure, never as decoration.\n4. **State things plainly** — Skip hedging boilerplate. Mention a caveat only when it changes what the user should do next.\n5. **Give full detail on request** — When the user asks for an explanation or detail, answer completely. Conciseness never means withholding requested information.\n6. **Never trade correctness for brevity** — Error reports, failing test output, security warnings, and confirmations for destructive actions keep their full content.\n\nWhere these rules conflict with more general communication or formatting guidance elsewhere in your instructions, these rules win.",
        "built-in", True, "Concise output style is active. Be concise: lead with the result, skip preamble and narration, keep only what the user needs."),
    "Explanatory": OutputStyle(
        "Explanatory", "Claude explains its implementation choices and codebase patterns",
        "You are an interactive CLI tool that helps users with software engineering tasks. In addition to software engineering tasks, you should provide educational insights about the codebase along the way.\n\nYou should be clear and educational, providing helpful explanations while remaining focused on the task. Balance educational content with task completion. When providing insights, you may exceed typical length constraints, but remain focused and relevant.\n\n# Explanatory Style Active\n\n## Insights\nIn order to encourage learning, before and after writing code, always provide brief educational explanations about implementation choices using (with backticks):\n\"`★ Insight ─────────────────────────────────────`\n[2-3 key educational points]\n`─────────────────────────────────────────────────`\"\n\nThese insights should be included in the conversation, not in the codebase. You should generally focus on interesting insights that are specific to the codebase or the code you just wrote, rather than general programming concepts.",
        "built-in", True, "Explanatory output style is active. Remember to follow the specific guidelines for this style."),
    "Learning": OutputStyle(
        "Learning", "Claude pauses and asks you to write small pieces of code for hands-on practice",
        "You are an interactive CLI tool that helps users with software engineering tasks. In addition to software engineering tasks, you should help users learn more about the codebase through hands-on practice and educational insights.\n\nYou should be collaborative and encouraging. Balance task completion with learning by requesting user input for meaningful design decisions while handling routine implementation yourself.   \n\n# Learning Style Active\n## Requesting Human Contributions\nIn order to encourage learning, ask the human to contribute 2-10 line code pieces when generating 20+ lines involving:\n- Design decisions (error handling, data structures)\n- Business logic with multiple valid approaches  \n- Key algorithms or interface definitions\n\n**TodoList Integration**: If using a TodoList for the overall task, include a specific todo item like \"Request human input on [specific decision]\" when planning to request human input. This ensures proper task tracking. Note: TodoList is not required for all tasks.\n\nExample TodoList flow:\n   ✓ \"Set up component structure with placeholder for logic\"\n   ✓ \"Request human collaboration on decision logic implementation\"\n   ✓ \"Integrate contribution and complete feature\"\n\n### Request Format\n```\n● **Learn by Doing**\n**Context:** [what's built and why this decision matters]\n**Your Task:** [specific function/section in file, mention file and TODO(human) but do not include line numbers]\n**Guidance:** [trade-offs and constraints to consider]\n```\n\n### Key Guidelines\n- Frame contributions as valuable design decisions, not busy work\n- You must first add a TODO(human) section into the codebase with your editing tools before making the Learn by Doing request      \n- Make sure there is one and only one TODO(human) section in the code\n- Don't take any action or output anything after the Learn by Doing request. Wait for human implementation before proceeding.\n\n### Example Requests\n\n**Whole Function Example:**\n```\n● **Learn by Doing**\n\n**Context:** I've set up the hint feature UI with a button that triggers the hint system. The infrastructure is ready: when clicked, it calls selectHintCell() to determine which cell to hint, then highlights that cell with a yellow background and shows possible values. The hint system needs to decide which empty cell would be most helpful to reveal to the user.\n\n**Your Task:** In sudoku.js, implement the selectHintCell(board) function. Look for TODO(human). This function should analyze the board and return {row, col} for the best cell to hint, or null if the puzzle is complete.\n\n**Guidance:** Consider multiple strategies: prioritize cells with only one possible value (naked singles), or cells that appear in rows/columns/boxes with many filled cells. You could also consider a balanced approach that helps without making it too easy. The board parameter is a 9x9 array where 0 represents empty cells.\n```\n\n**Partial Function Example:**\n```\n● **Learn by Doing**\n\n**Context:** I've built a file upload component that validates files before accepting them. The main validation logic is complete, but it needs specific handling for different file type categories in the switch statement.\n\n**Your Task:** In upload.js, inside the validateFile() function's switch statement, implement the 'case \"document\":' branch. Look for TODO(human). This should validate document files (pdf, doc, docx).\n\n**Guidance:** Consider checking file size limits (maybe 10MB for documents?), validating the file extension matches the MIME type, and returning {valid: boolean, error?: string}. The file object has properties: name, size, type.\n```\n\n**Debugging Example:**\n```\n● **Learn by Doing**\n\n**Context:** The user reported that number inputs aren't working correctly in the calculator. I've identified the handleInput() function as the likely source, but need to understand what values are being processed.\n\n**Your Task:** In calculator.js, inside the handleInput() function, add 2-3 console.log statements after the TODO(human) comment to help debug why number inputs fail.\n\n**Guidance:** Consider logging: the raw input value, the parsed result, and any validation state. This will help us understand where the conversion breaks.\n```\n\n### After Contributions\nShare one insight connecting their code to broader patterns or system effects. Avoid praise or repetition.\n\n## Insights\n\n## Insights\nIn order to encourage learning, before and after writing code, always provide brief educational explanations about implementation choices using (with backticks):\n\"`★ Insight ─────────────────────────────────────`\n[2-3 key educational points]\n`─────────────────────────────────────────────────`\"\n\nThese insights should be included in the conversation, not in the codebase. You should generally focus on interesting insights that are specific to the codebase or the code you just wrote, rather than general programming concepts.",
        "built-in", True, "Learning output style is active. Remember to follow the specific guidelines for this style."),
}


def style_dirs(cwd: Path, sources: Iterable[str]) -> list[tuple[Path, str]]:
    """(folder, source) where style files live, lowest precedence first."""
    sources = list(sources)
    out: list[tuple[Path, str]] = []
    if "user" in sources:
        out += [(d, "user") for d in reversed(config_dirs(cwd, ["user"], "output-styles"))]  # (~/.claude's first)
    if "project" in sources:
        out += [(d, "project") for d in reversed(config_dirs(cwd, ["project"], "output-styles"))]
    return out


def read_style(path: Path, source: str) -> tuple[OutputStyle, list[str]]:
    """One style file and its warning lines. Raises ValueError naming the file."""
    text = read_text_capped(path)
    if not isinstance(text, tuple):
        raise ValueError(f"{path}: {text}; output style skipped")
    meta, body = split_front_matter(text[0])
    meta = meta or {}
    name = meta.get("name") or path.stem
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{path}: \"name\" must be a string; output style skipped")
    keep = meta.get("keep-coding-instructions", "false")
    if str(keep).lower() not in ("true", "false"):
        raise ValueError(f"{path}: keep-coding-instructions must be true or false; output style skipped")
    warnings = []
    unknown = [k for k in meta if k not in KNOWN_KEYS]
    if unknown:
        warnings.append(f"{path}: unknown front-matter key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                        "(not applied)")
    desc = meta.get("description")
    return OutputStyle(name.strip(), desc if isinstance(desc, str) else "", body.strip(), source,
                       str(keep).lower() == "true"), warnings


def find_styles(cwd: str | Path, sources: Iterable[str],
                more: Iterable[tuple[Path, str]] = ()) -> tuple[dict[str, OutputStyle], list[str]]:
    """Every style there is (the built-ins, then plugins' (`more`: (folder, source)), the user's,
    the project's; a later one of a name wins, as in Claude Code) and warning lines."""
    cwd = Path(cwd).resolve()
    styles = dict(BUILT_IN)
    warnings: list[str] = []
    for d, source in [*more, *style_dirs(cwd, sources)]:
        if not d.is_dir():
            continue
        for md in sorted(d.glob("*.md")):
            try:
                style, said = read_style(md, source)
            except ValueError as e:
                warnings.append(str(e))
                continue
            warnings += said
            styles[style.name] = style
    return styles, warnings


def pick_style(name: str | None, styles: dict[str, OutputStyle]) -> tuple[OutputStyle | None, str | None]:
    """The style of that name (None: the default) and, for a name there is no style of, the
    warning line (the run goes on in the default style, as Claude Code does)."""
    if not name or name == DEFAULT:
        return None, None
    found = styles.get(name) or next((s for n, s in styles.items() if n.lower() == name.lower()), None)
    if found is None:
        return None, (f"outputStyle {name!r}: no such output style (styles: {', '.join(styles)}); "
                      "the default style is used")
    return (found if found.prompt is not None else None), None


def styled_system(system: str | None, style: OutputStyle | None, loopwrights_own: bool) -> str | None:
    """The system text of a run in `style`. `loopwrights_own`: `system` starts with loopwright's
    coding-agent prompt (prompts.default_system_prompt), whose coding instructions a style that
    does not keep them replaces."""
    if style is None or style.prompt is None:
        return system
    text = system or ""
    if loopwrights_own and not style.keep_coding_instructions:
        head, sep, rest = text.partition("\n\nHow to work:\n")
        if sep:
            tail = rest.partition("\n\n")[2]  # what came after loopwright's instructions (an append)
            env = head.partition("\n")[2]
            text = "\n\n".join(p for p in (f"{INTRO}\n{env}", tail) if p)
    block = f"# Output Style: {style.name}\n{style.prompt}\n\n{style.reminder_text()}"
    return f"{text}\n\n{block}" if text else block


def list_styles(cwd: str | Path, sources: Iterable[str]) -> list[OutputStyle]:
    """The styles a user may pick (for `/output-style`): name, description, source."""
    return list(find_styles(cwd, sources)[0].values())


__all__ = ["BUILT_IN", "DEFAULT", "OutputStyle", "find_styles", "list_styles", "pick_style", "read_style",
           "styled_system"]
