"""Room: built-in tools (on tools.base). Owns the default tool set and the built-in tools' definitions;
may import the tools.* modules (the implementations inside handlers only: tools/__init__.py).

The built-in coding tools, with Claude Code's names and input schemas (SPEC §8): here each tool
is what the model and the gate see of it (name, description, input schema, flags); its handler
imports its implementation (tools.read, tools.bash, ...) at its first call. Grep and the web
tools are defined the same way in their packages (tools.grep, tools.web)."""

from __future__ import annotations

import os
from typing import Any

from .base import Tool, ToolContext, ToolOutput
from .grep import make_grep_tool
from .web import make_web_tools

NAMES = ("Read", "Write", "Edit", "MultiEdit", "Bash", "BashOutput", "KillShell", "Glob", "Grep", "TodoWrite",
         "WebFetch", "WebSearch", "NotebookEdit", "AskUserQuestion", "ExitPlanMode")
TASK_NAMES = ("TaskCreate", "TaskGet", "TaskList", "TaskUpdate")


def tasks_enabled() -> bool:
    """Are the Task tools offered by default? Yes, as Claude Code 2.1.332 offers them, unless
    `CLAUDE_CODE_ENABLE_TASKS` is `false` or `0` (which leaves them out there too)."""
    return os.environ.get("CLAUDE_CODE_ENABLE_TASKS", "").strip().lower() not in ("0", "false")


def default_tools(*, tasks: bool | None = None) -> list[Tool]:
    """Fresh Tool instances: Read, Write, Edit, MultiEdit, Bash, BashOutput, KillShell, Glob, Grep, TodoWrite,
    WebFetch, WebSearch, NotebookEdit, AskUserQuestion, ExitPlanMode (NAMES), then the Task tools
    TaskCreate, TaskGet, TaskList, TaskUpdate (TASK_NAMES): the tools Claude Code 2.1.332 offers by
    default, the CLI's and the Agent SDK's `claude_code` preset's set (the Agent tool is added by
    whoever knows the subagents: agents.make_agent_tool). `tasks`: with or without the Task tools
    (None: as `CLAUDE_CODE_ENABLE_TASKS` says, tasks_enabled)."""
    bash, bash_output, kill_shell = make_bash_tools()
    tools = [make_read_tool(), make_write_tool(), make_edit_tool(), make_multi_edit_tool(), bash,
             bash_output, kill_shell, make_glob_tool(), make_grep_tool(), make_todo_tool(),
             *make_web_tools(), make_notebook_edit_tool(), make_ask_user_question_tool(), make_exit_plan_mode_tool()]
    if tasks_enabled() if tasks is None else tasks:
        tools += make_task_tools()
    return tools


# --- Read, Write, Edit, MultiEdit (tools.read, tools.write, tools.edit) ------------------------------

READ_DESCRIPTION = """Reads a file from the local filesystem.

- file_path should be absolute (relative paths resolve against the working directory).
- By default reads up to 2000 lines from the start; for long files pass offset (1-based line number) and limit.
- Lines longer than 2000 characters are cut; one Read returns at most 100,000 characters (then
  a note says which offset to read on from).
- Output is `cat -n` style: line number, tab, line content. The numbers are not part of the file.
- Images (PNG, JPG, GIF, WebP) are returned as images you can see (scaled down when too large).
- PDFs are returned as their text, page by page. Give `pages` (e.g. "1-5", "3", "10-20"; at most
  20 pages per call); it is required for PDFs over 10 pages.
- Jupyter notebooks (.ipynb) are returned as their cells with their outputs.
- Reading a file is required before editing or overwriting it with Edit or Write.
- It can only read files, not directories: use Glob or `ls` via Bash for directories."""
READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The absolute path to the file to read"},
        "offset": {"type": "integer", "minimum": 0,
                   "description": "The line number to start reading from (1-based). Only provide if the file is too large to read at once"},
        "limit": {"type": "integer", "minimum": 1,
                  "description": "The number of lines to read. Only provide if the file is too large to read at once."},
        "pages": {"type": "string",
                  "description": "Page range for PDF files (e.g., \"1-5\", \"3\", \"10-20\"). Only applicable to PDF files. Maximum 20 pages per request."},
    },
    "required": ["file_path"],
    "additionalProperties": False,
}


def _read(inp: dict[str, Any], ctx: ToolContext) -> Any:
    from .read import read_file

    return read_file(inp, ctx)


def make_read_tool() -> Tool:
    return Tool("Read", READ_DESCRIPTION, READ_SCHEMA, _read, read_only=True)


WRITE_DESCRIPTION = """Writes a file to the local filesystem, creating parent directories as needed.

- Overwrites the file if it exists. An existing file must have been read with Read first in this
  session (and not changed since), otherwise this tool fails.
- Prefer Edit for changes to existing files: it sends only the diff.
- An existing file keeps its encoding (UTF-8 BOM, latin-1) and CRLF line endings."""
WRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The absolute path to the file to write (must be absolute, not relative)"},
        "content": {"type": "string", "description": "The content to write to the file"},
    },
    "required": ["file_path", "content"],
    "additionalProperties": False,
}


def _write(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .write import write_file

    return write_file(inp, ctx)


def make_write_tool() -> Tool:
    return Tool("Write", WRITE_DESCRIPTION, WRITE_SCHEMA, _write)


EDIT_DESCRIPTION = """Performs exact string replacements in a file.

- You must Read the file first in this session; editing fails otherwise.
- old_string must match the file exactly (indentation included; do not include the line-number
  prefix of Read's output). It must be unique in the file: give more surrounding context, or set
  replace_all to replace every occurrence (useful for renaming).
- To create a new file, use an empty old_string with a file_path that does not exist yet.
- Line endings and encoding of the file are preserved."""
MULTI_EDIT_DESCRIPTION = """Makes several exact string replacements in one file in one step.

- Same rules as Edit for each edit; edits apply in order, each to the result of the previous one.
- All or nothing: if any edit fails, the file is not changed and the error names that edit.
- Read the file first. An empty old_string in the first edit creates a new file."""
_EDIT_PROPS: dict[str, Any] = {
    "old_string": {"type": "string", "description": "The text to replace"},
    "new_string": {"type": "string", "description": "The text to replace it with (must be different from old_string)"},
    "replace_all": {"type": "boolean", "default": False,
                    "description": "Replace all occurrences of old_string (default false)"},
}
EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
        **_EDIT_PROPS,
    },
    "required": ["file_path", "old_string", "new_string"],
    "additionalProperties": False,
}
MULTI_EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
        "edits": {
            "type": "array",
            "minItems": 1,
            "description": "Array of edit operations to perform sequentially on the file",
            "items": {
                "type": "object",
                "properties": _EDIT_PROPS,
                "required": ["old_string", "new_string"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["file_path", "edits"],
    "additionalProperties": False,
}


def _edit(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .edit import edit_file

    return edit_file(inp, ctx)


def _multi_edit(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .edit import multi_edit_file

    return multi_edit_file(inp, ctx)


def make_edit_tool() -> Tool:
    return Tool("Edit", EDIT_DESCRIPTION, EDIT_SCHEMA, _edit)


def make_multi_edit_tool() -> Tool:
    return Tool("MultiEdit", MULTI_EDIT_DESCRIPTION, MULTI_EDIT_SCHEMA, _multi_edit)


# --- Bash, BashOutput, KillShell (tools.bash) -------------------------------------------------------

BASH_DESCRIPTION = """Executes a bash command and returns its output (stdout and stderr merged) and exit code.

- The working directory persists between calls (`cd` works) while it stays inside the project;
  environment variables and shell state do not persist.
- timeout is in milliseconds (default 120000, max 600000). On timeout the command and every
  process it started are killed.
- stdin is /dev/null: do not run interactive commands. Output over 30000 characters is cut in the middle.
- Processes a command leaves running are stopped when it finishes. For servers, watchers and
  other long-running commands set run_in_background (the command itself must keep running,
  not daemonize) and read output later with BashOutput; stop it with KillShell.
- Prefer Read, Edit, Write, Glob and Grep over cat, sed, find and grep."""
BASH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The command to execute"},
        "timeout": {"type": "number", "description": "Optional timeout in milliseconds (default 120000, max 600000)"},
        "description": {"type": "string",
                        "description": "Clear, concise description of what this command does in 5-10 words"},
        "run_in_background": {"type": "boolean",
                              "description": "Set to true to run this command in the background. Use BashOutput to read the output later."},
        "dangerouslyDisableSandbox": {"type": "boolean",
                                      "description": "Set this to true to dangerously override sandbox mode and run "
                                                     "the command without sandboxing (it then needs the user's "
                                                     "approval). Only after a command failed because of the sandbox."},
    },
    "required": ["command"],
    "additionalProperties": False,
}
BASH_OUTPUT_DESCRIPTION = """Retrieves output from a background bash shell started with run_in_background.

- Returns only the output produced since the last BashOutput call for that shell, and its status.
- filter (optional regex) keeps only matching lines; the other lines are consumed anyway."""
BASH_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "bash_id": {"type": "string", "description": "The ID of the background shell to retrieve output from"},
        "filter": {"type": "string", "description": "Optional regular expression to filter the output lines"},
    },
    "required": ["bash_id"],
    "additionalProperties": False,
}
KILL_SHELL_DESCRIPTION = """Kills a running background bash shell (and every process it started) by its ID."""
KILL_SHELL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"shell_id": {"type": "string", "description": "The ID of the background shell to kill"}},
    "required": ["shell_id"],
    "additionalProperties": False,
}


async def _bash(inp: dict[str, Any], ctx: ToolContext) -> str | ToolOutput:
    from .bash import bash

    return await bash(inp, ctx)


async def _bash_output(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .bash import bash_output

    return await bash_output(inp, ctx)


async def _kill_shell(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .bash import kill_shell

    return await kill_shell(inp, ctx)


def make_bash_tools() -> list[Tool]:
    return [
        Tool("Bash", BASH_DESCRIPTION, BASH_SCHEMA, _bash),
        Tool("BashOutput", BASH_OUTPUT_DESCRIPTION, BASH_OUTPUT_SCHEMA, _bash_output, read_only=True,
             needs_approval=False),
        Tool("KillShell", KILL_SHELL_DESCRIPTION, KILL_SHELL_SCHEMA, _kill_shell, needs_approval=False),
    ]


# --- Glob (tools.glob) ----------------------------------------------------------------------------

GLOB_DESCRIPTION = """Fast file pattern matching for any codebase size.

- Supports glob patterns like "**/*.js" or "src/**/*.ts" (`*` stays within a directory, `**`
  crosses directories, `{a,b}` alternatives, `[abc]` classes). The pattern is relative to path.
- Returns matching file paths (relative to the working directory, as Grep) sorted by modification
  time, newest first (at most 100).
- Files hidden by .gitignore / .ignore are left out, as Grep leaves them out (files git tracks are
  always listed); use Grep to search file contents.
- path: the directory to search in; omit it to use the current working directory."""
GLOB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "The glob pattern to match files against"},
        "path": {"type": "string",
                 "description": "The directory to search in. If not specified, the current working directory will be used. Must be a valid directory path if provided."},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


async def _glob(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .glob import glob_files

    return await glob_files(inp, ctx)


def make_glob_tool() -> Tool:
    return Tool("Glob", GLOB_DESCRIPTION, GLOB_SCHEMA, _glob, read_only=True)


# --- TodoWrite (tools.todo) -----------------------------------------------------------------------

TODO_DESCRIPTION = """Creates and updates a structured task list for the current session.

- Use it for multi-step tasks (3 or more steps) to plan and show progress; skip it for trivial ones.
- Each call replaces the whole list. status is pending, in_progress or completed.
- Keep exactly one task in_progress at a time; mark tasks completed as soon as they are done.
- content is the imperative form ("Run tests"), activeForm the present continuous ("Running tests")."""
TODO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "description": "The updated todo list",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "minLength": 1, "description": "The task, in imperative form"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"],
                               "description": "The task's status"},
                    "activeForm": {"type": "string", "minLength": 1,
                                   "description": "The task in present continuous form, shown while it is in progress"},
                },
                "required": ["content", "status", "activeForm"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["todos"],
    "additionalProperties": False,
}


async def _todo_write(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .todo import todo_write

    return await todo_write(inp, ctx)


def make_todo_tool() -> Tool:
    # read-only in the sense of seed Def 6.1 (it changes the harness's state, never the
    # environment), so it needs no permission, as in Claude Code
    return Tool("TodoWrite", TODO_DESCRIPTION, TODO_SCHEMA, _todo_write, read_only=True, needs_approval=False)


# --- TaskCreate, TaskGet, TaskList, TaskUpdate (tools.tasks) ---------------------------------------

_TASK_STATUSES = ("pending", "in_progress", "completed", "deleted")

TASK_CREATE_DESCRIPTION = """Creates a task in the session's task list, to plan and track multi-step work.
Use it for work with 3 or more distinct steps, or when the user gives several things to do; not for a
single trivial step. Give a short imperative `subject`, a `description` of what needs to be done, and
`activeForm` (present continuous, e.g. "Running tests") for the spinner. New tasks are pending:
mark one in_progress with TaskUpdate before starting it, and completed as soon as it is done."""
TASK_GET_DESCRIPTION = "Retrieves a task of the session's task list by its id: subject, status, description, dependencies."
TASK_LIST_DESCRIPTION = "Lists the session's tasks: id, status, subject, owner and what blocks each."
TASK_UPDATE_DESCRIPTION = """Updates a task of the session's task list: its status (pending, in_progress,
completed, or deleted to remove it), subject, description, activeForm, owner, metadata, and its
dependencies (addBlocks / addBlockedBy: task ids). Mark a task completed only when it is fully done."""

_TASK_IDS = {"type": "array", "items": {"type": "string"}}
_ACTIVE_FORM = {"type": "string",
                "description": "Present continuous form shown in spinner when in_progress (e.g., \"Running tests\")"}
# (Claude Code 2.1.332's schemas: every field described, no field besides these)
TASK_CREATE_SCHEMA = {"type": "object", "properties": {
    "subject": {"type": "string", "description": "A brief title for the task"},
    "description": {"type": "string", "description": "What needs to be done"},
    "activeForm": _ACTIVE_FORM,
    "metadata": {"type": "object", "description": "Arbitrary metadata to attach to the task"},
}, "required": ["subject", "description"], "additionalProperties": False}
TASK_GET_SCHEMA = {"type": "object", "properties": {
    "taskId": {"type": "string", "description": "The ID of the task to retrieve"}},
    "required": ["taskId"], "additionalProperties": False}
TASK_LIST_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
TASK_UPDATE_SCHEMA = {"type": "object", "properties": {
    "taskId": {"type": "string", "description": "The ID of the task to update"},
    "subject": {"type": "string", "description": "New subject for the task"},
    "description": {"type": "string", "description": "New description for the task"},
    "activeForm": _ACTIVE_FORM,
    "status": {"type": "string", "enum": list(_TASK_STATUSES), "description": "New status for the task"},
    "addBlocks": {**_TASK_IDS, "description": "Task IDs that this task blocks"},
    "addBlockedBy": {**_TASK_IDS, "description": "Task IDs that block this task"},
    "owner": {"type": "string", "description": "New owner for the task"},
    "metadata": {"type": "object", "description": "Metadata keys to merge into the task. Set a key to null to delete it."},
}, "required": ["taskId"], "additionalProperties": False}


async def _task_create(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .tasks import task_create

    return await task_create(inp, ctx)


async def _task_get(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .tasks import task_get

    return await task_get(inp, ctx)


async def _task_list(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .tasks import task_list

    return await task_list(inp, ctx)


async def _task_update(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .tasks import task_update

    return await task_update(inp, ctx)


def make_task_tools() -> list[Tool]:
    """Fresh TaskCreate, TaskGet, TaskList and TaskUpdate tools."""
    # TaskCreate and TaskUpdate wait for their hooks: not read-only, so that each runs alone, in
    # emission order (a TaskUpdate of a task made in the same response finds it made)
    return [Tool("TaskCreate", TASK_CREATE_DESCRIPTION, TASK_CREATE_SCHEMA, _task_create, needs_approval=False),
            Tool("TaskGet", TASK_GET_DESCRIPTION, TASK_GET_SCHEMA, _task_get, read_only=True, needs_approval=False),
            Tool("TaskList", TASK_LIST_DESCRIPTION, TASK_LIST_SCHEMA, _task_list, read_only=True, needs_approval=False),
            Tool("TaskUpdate", TASK_UPDATE_DESCRIPTION, TASK_UPDATE_SCHEMA, _task_update, needs_approval=False)]


# --- NotebookEdit (tools.notebook) ------------------------------------------------------------------

NOTEBOOK_DESCRIPTION = """Replaces, inserts, or deletes a single cell in a Jupyter notebook (.ipynb file).

- Read the notebook with Read first in this conversation; this tool fails otherwise.
- notebook_path should be absolute.
- cell_id is the `id` shown in Read's `<cell id="...">` output (cells without an id are shown
  as cell-N, N counting from 0). It is required for replace and delete.
- edit_mode defaults to replace. insert adds a new cell after the cell with cell_id (at the
  beginning when cell_id is omitted); cell_type is required when inserting. delete removes the cell.
- Replacing a code cell clears its outputs and execution count (they belonged to the old source)."""
NOTEBOOK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "notebook_path": {"type": "string",
                          "description": "The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)"},
        "cell_id": {"type": "string",
                    "description": "The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this ID, or at the beginning if not specified."},
        "new_source": {"type": "string", "description": "The new source for the cell"},
        "cell_type": {"type": "string", "enum": ["code", "markdown"],
                      "description": "The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using edit_mode=insert, this is required."},
        "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"],
                      "description": "The type of edit to make (replace, insert, delete). Defaults to replace."},
    },
    "required": ["notebook_path", "new_source"],
    "additionalProperties": False,
}


def _notebook_edit(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .notebook import notebook_edit

    return notebook_edit(inp, ctx)


def make_notebook_edit_tool() -> Tool:
    return Tool("NotebookEdit", NOTEBOOK_DESCRIPTION, NOTEBOOK_SCHEMA, _notebook_edit)


# --- AskUserQuestion, ExitPlanMode (tools.ask) ------------------------------------------------------

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


async def _ask_user_question(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .ask import ask_user_question

    return await ask_user_question(inp, ctx)


async def _exit_plan_mode(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    from .ask import exit_plan_mode

    return await exit_plan_mode(inp, ctx)


def make_ask_user_question_tool() -> Tool:
    return Tool("AskUserQuestion", ASK_DESCRIPTION, ASK_SCHEMA, _ask_user_question, read_only=True)


def make_exit_plan_mode_tool() -> Tool:
    # both change nothing in the workspace: the gate treats them as read-only (they run in plan
    # mode, and never ask for permission)
    return Tool("ExitPlanMode", PLAN_DESCRIPTION, PLAN_SCHEMA, _exit_plan_mode, read_only=True)
