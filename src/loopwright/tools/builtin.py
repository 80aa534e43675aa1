"""Room: built-in tools (on tools.base). Owns the default tool set; may import the tools.* modules.

The built-in coding tools, with Claude Code's names and input schemas (SPEC §8)."""

from __future__ import annotations

from .ask import make_ask_user_question_tool, make_exit_plan_mode_tool
from .base import Tool
from .bash import make_bash_tools
from .edit import make_edit_tool, make_multi_edit_tool
from .glob import make_glob_tool
from .grep import make_grep_tool
from .notebook import make_notebook_edit_tool
from .read import make_read_tool
from .todo import make_todo_tool
from .web import make_web_tools
from .write import make_write_tool

NAMES = ("Read", "Write", "Edit", "MultiEdit", "Bash", "BashOutput", "KillShell", "Glob", "Grep", "TodoWrite",
         "WebFetch", "WebSearch", "NotebookEdit", "AskUserQuestion", "ExitPlanMode")


def default_tools() -> list[Tool]:
    """Fresh Tool instances: Read, Write, Edit, MultiEdit, Bash, BashOutput, KillShell, Glob, Grep, TodoWrite,
    WebFetch, WebSearch, NotebookEdit, AskUserQuestion, ExitPlanMode."""
    bash, bash_output, kill_shell = make_bash_tools()
    return [make_read_tool(), make_write_tool(), make_edit_tool(), make_multi_edit_tool(), bash,
            bash_output, kill_shell, make_glob_tool(), make_grep_tool(), make_todo_tool(),
            *make_web_tools(), make_notebook_edit_tool(), make_ask_user_question_tool(), make_exit_plan_mode_tool()]
