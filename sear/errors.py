"""Errors a user can cause, carrying where (file, line, field) and what to do.

The command line prints them without a traceback and exits 1; the GUI shows them in a dialog.
"""

from __future__ import annotations

from pathlib import Path


class SearError(Exception):
    """Base of all user-facing errors: the message is a sentence a user understands."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = Path(file) if file is not None else None
        self.line = line
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(str(self.file))
        if self.line:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field '{self.field}'")
        return (", ".join(where) + ": " if where else "") + self.message


class ProjectError(SearError):
    """A project (.prj), sensors XML or model file that cannot be used as it is."""


class UserCodeError(SearError):
    """The user's control code failed to load, raised, or did not return in time."""


class StuckHookError(UserCodeError):
    """A hook of the user code did not return within its time-out. Its thread cannot be stopped (Python
    cannot kill a thread), so the run ends: the loop recognises this error by its class."""
