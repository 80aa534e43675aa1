"""Room: data types (imports nothing of loopwright). Owns the errors the Python API raises by
name, with the Agent SDK's names, so that `except CLIConnectionError:` ports by renaming.

`LoopwrightError` (the SDK's ClaudeSDKError) is the base. `CLIConnectionError`: the client
could not connect, i.e. its model could not be made (no API key, an unknown model string).
`ProcessError`: a run ended in an exception instead of a ResultMessage (a broken model or
tool raised past the loop's own handling). Run failures that the loop reports (a model error,
a limit) are ResultMessages, never these.
"""

from __future__ import annotations


class LoopwrightError(Exception):
    """Every error of the client API (the Agent SDK's ClaudeSDKError)."""


class CLIConnectionError(LoopwrightError):
    """The client could not connect: its model could not be made."""


class CLINotFoundError(CLIConnectionError):
    """The SDK's name for a missing CLI binary; loopwright needs none, so it is never raised."""


class ProcessError(LoopwrightError):
    """A run ended in an exception, not a ResultMessage. `exit_code` and `stderr` are the SDK's
    fields (None and "" here: the run is in this process)."""

    def __init__(self, message: str, exit_code: int | None = None, stderr: str | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr or ""
