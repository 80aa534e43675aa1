"""Room: batch (a front end, beside cli). Owns a batch's task list (reading and checking it) and
its results file (appended atomically, read back tolerating a torn last line)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Required, TypedDict, cast

from ..event_types import PermissionDenial
from ..home import open_private, private_dir
from ..options import AgentOptions

Isolation = Literal["none", "copy", "worktree"]
ISOLATIONS: tuple[str, ...] = ("none", "copy", "worktree")
# AgentOptions fields a task line may not set: they are objects, or the batch's own business.
NOT_PER_TASK = frozenset({"tools", "can_use_tool", "hooks", "session_store", "resume", "fork_session",
                          "continue_conversation", "session_id", "persist_session", "agents"})
RETRY_BASE_S = 1.0


class BatchResult(TypedDict, total=False):
    """One line of RESULTS.jsonl, as `lw.batch` yields it too: the task's `-p` JSON result
    (ResultMessage.to_json(), Claude Code's field names) and the batch's own fields after it."""

    id: Required[str]
    type: str
    subtype: str
    is_error: bool
    duration_ms: int  # the whole task, every attempt (the batch's, not the last run's)
    duration_api_ms: int
    num_turns: int
    model_calls: int
    subagent_model_calls: int
    result: str | None
    stop_reason: str | None
    session_id: str
    total_cost_usd: float  # every attempt's
    usage: dict[str, Any]
    modelUsage: dict[str, Any]
    permission_denials: list[PermissionDenial]
    errors: list[str]
    structured_output: Any
    terminal_reason: str  # why the run ended, in Claude Code's words (ResultMessage.terminal_reason)
    attempts: int
    worker: str  # host:pid
    task_sha256: str
    workspace: str  # with isolation: where it ran, its diff and (worktree) its patch
    diff_stat: str
    patch: str


def result_line(task_id: str, fields: Mapping[str, Any], **batch_fields: Any) -> BatchResult:
    """A result line: the task's id first, then its result's fields, then the batch's."""
    return cast(BatchResult, {"id": task_id, **fields, **batch_fields})


class BatchError(ValueError):
    """Bad input to a batch (each problem with its line number); nothing was run."""


@dataclass
class RunSpec:
    """Everything a worker needs to run one task (picklable, for Ray)."""

    task: Task
    options: AgentOptions
    isolate: Isolation = "none"
    timeout_s: float | None = None
    retries: int = 0
    workdir: Path | None = None  # where copies and patches go (beside RESULTS)
    retry_base_s: float = RETRY_BASE_S
    # Session ids are derived from the results file and the task, so a rerun can find the
    # transcript of an attempt that was killed, and --resume-sessions continues it.
    session_seed: str | None = None
    resume_sessions: bool = False
    own_system_prompt: bool = False  # the CLI's default prompt: it names the cwd, so a workspace gets its own
    trace: dict[str, str] = field(default_factory=dict)  # telemetry: the batch span's context (and OTEL_*)
    results: Path | None = None  # RESULTS (resolved): never inside a task's copy

    def session_id(self, attempt: int) -> str | None:
        if self.session_seed is None:
            return None
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.session_seed}#{self.task.id}#{self.task.fingerprint}#{attempt}"))



# --- tasks ----------------------------------------------------------------------------------------

@dataclass
class Task:
    """One line of TASKS.jsonl: `id`, `prompt`, `cwd` and per-task AgentOptions overrides."""

    id: str
    prompt: str
    cwd: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    line: int = 0

    @property
    def fingerprint(self) -> str:
        """Ties a result line to the task it answers (a different task list is detected)."""
        body = json.dumps({"prompt": self.prompt, "cwd": self.cwd, "options": self.options}, sort_keys=True,
                          default=lambda o: type(o).__name__)  # a Model or Tool object given in Python
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], line: int = 0) -> Task:
        rest = {k: v for k, v in obj.items() if k not in ("id", "prompt", "cwd")}
        return cls(id=obj["id"], prompt=obj["prompt"], cwd=obj.get("cwd"), options=rest, line=line)


def _option_names() -> set[str]:
    return {f.name for f in dataclasses.fields(AgentOptions)} - NOT_PER_TASK


def check_tasks(raw: Iterable[tuple[int, Any]], base_cwd: Path | None = None,
                problems: list[str] | None = None) -> list[Task]:
    """Every task checked before anything runs; all problems (with those of `problems`, found
    before) reported at once, by line."""
    problems = list(problems or [])
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    names = _option_names()
    for line, obj in raw:
        where = f"line {line}"
        if not isinstance(obj, dict):
            problems.append(f"{where}: a task must be a JSON object")
            continue
        tid = obj.get("id")
        if not isinstance(tid, str | int) or isinstance(tid, bool) or str(tid) == "":
            problems.append(f"{where}: \"id\" is missing (a non-empty string)")
        elif str(tid) in seen:
            problems.append(f"{where}: duplicate id {str(tid)!r} (first on line {seen[str(tid)]})")
        else:
            seen[str(tid)] = line
        if not isinstance(obj.get("prompt"), str) or not obj["prompt"].strip():
            problems.append(f"{where}: \"prompt\" is missing (a non-empty string)")
        cwd = obj.get("cwd")
        if cwd is not None:
            p = Path(str(cwd)).expanduser()
            p = p if p.is_absolute() or base_cwd is None else base_cwd / p
            if not isinstance(cwd, str) or not p.is_dir():
                problems.append(f"{where}: cwd {cwd!r} is not a directory")
            else:
                obj = {**obj, "cwd": str(p.resolve())}
        unknown = sorted(k for k in obj if k not in ("id", "prompt", "cwd") and k not in names)
        if unknown:
            problems.append(f"{where}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                            "(per-task options are AgentOptions field names in snake_case, e.g. model, max_turns)")
        if not problems or problems[-1].split(":")[0] != where:
            tasks.append(Task.from_json({**obj, "id": str(obj["id"])}, line))
    if problems:
        problems.sort(key=lambda p: int(p.split(":")[0].split()[1]))  # in line order (stable)
        raise BatchError("bad task list, nothing was run:\n  " + "\n  ".join(problems))
    return tasks


def read_tasks(path: str | Path) -> list[Task]:
    """TASKS.jsonl: one JSON object a line (blank lines and `#` comments skipped)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise BatchError(f"{path}: cannot read the task list ({e})") from None
    raw: list[tuple[int, Any]] = []
    bad: list[str] = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            raw.append((i, json.loads(line)))
        except ValueError as e:
            bad.append(f"line {i}: not JSON ({e.args[0] if e.args else e})")
    tasks = check_tasks(raw, p.resolve().parent, bad)
    if not tasks:
        raise BatchError(f"{path}: no tasks")
    return tasks


# --- the results file -----------------------------------------------------------------------------

class ResultsFile:
    """RESULTS.jsonl: one line per finished task, appended with one write each and fsynced, so a
    batch killed at any instant leaves whole lines (at most a torn last one, healed on reopen)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def read(self) -> dict[str, BatchResult]:
        """The last result of each task id; a torn or corrupt line is skipped."""
        out: dict[str, BatchResult] = {}
        if not self.path.exists():
            return out
        for raw in self.path.read_bytes().split(b"\n"):
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("id"), str):
                out[obj["id"]] = cast(BatchResult, obj)
        return out

    def open(self) -> None:
        if not self.path.parent.is_dir():
            private_dir(self.path.parent)
        self._fd = open_private(self.path)  # the results hold the agents' answers: 0600
        size = os.fstat(self._fd).st_size
        if size:
            with open(self.path, "rb") as f:
                f.seek(size - 1)
                if f.read(1) != b"\n":  # a torn last line: end it so ours starts whole
                    os.write(self._fd, b"\n")

    def append(self, result: Mapping[str, Any]) -> None:
        assert self._fd is not None
        os.write(self._fd, (json.dumps(result, ensure_ascii=False, default=str) + "\n").encode())
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def finished(result: Mapping[str, Any]) -> bool:
    """A result that ends its task for good (a skipped task is run by the next rerun)."""
    return result.get("subtype") != "skipped_budget"
