"""Errors a user can cause, carrying where (file, line, field) and what to do.

The command line prints them without a traceback and exits 1; the GUI shows them in a dialog.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


def _located(message: str, file: Path | None, line: int | None, field: str | None) -> str:
    """'FILE, line N, field 'F': message', leaving out what is not known."""
    where = []
    if file is not None:
        where.append(str(file))
    if line:
        where.append(f"line {line}")
    if field:
        where.append(f"field '{field}'")
    return (", ".join(where) + ": " if where else "") + message


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
        return _located(self.message, self.file, self.line, self.field)


class ProjectError(SearError):
    """A project (.prj), sensors XML or model file that cannot be used as it is."""


class UserCodeError(SearError):
    """The user's control code failed to load, raised, or did not return in time."""


class StuckHookError(UserCodeError):
    """A hook of the user code did not return within its time-out. Its thread cannot be stopped (Python
    cannot kill a thread), so the run ends: the loop recognises this error by its class."""


SETTINGS_TABS = {
    "terrain": "Terrain Model", "body": "Robot Body Model", "wheels": "Wheel Models",
    "dynamics": "Vehicle Dynamics", "code": "Code Setup", "simulation": "Code Setup",
}
"""The settings window's tab for each section of a project (the first part of a dotted field name)."""


@dataclass(frozen=True)
class Problem:
    """One thing that stops a project from simulating, with where it is, so a user (or the settings
    window, which focuses the field) can go straight to it.

    Printed (str) as one line: "TAB: LABEL: message" when it is about a field chosen in the settings
    window (a model file not there or not readable), else "FILE, line N, field 'DETAIL': message" like a
    SearError.
    """

    message: str
    """A sentence the user can act on."""
    file: Path | None = None
    """The file the problem is in (the project, sensors, user code or a model file)."""
    line: int | None = None
    """Line in `file`, from 1."""
    field: str | None = None
    """The project field it is about, dotted: 'dynamics.mass', 'wheels.left_front.file', 'code.sensors'."""
    tab: str | None = None
    """The settings window tab that shows `field`."""
    label: str | None = None
    """How the printed line names the field on its tab ('left front wheel file'); None to locate the
    problem by file and line instead."""
    detail: str | None = None
    """A field inside `file` when that is not the project (a sensor's element), for the printed line."""

    def __str__(self) -> str:
        if self.label is not None:
            return f"{self.tab}: {self.label}: {self.message}" if self.tab else f"{self.label}: {self.message}"
        return _located(self.message, self.file, self.line, self.detail)

    @classmethod
    def from_error(cls, error: SearError, *, field: str | None = None, tab: str | None = None) -> Problem:
        """The problem an error describes, printed as the error is. `field` (default: the error's own,
        which for the project file is the dotted project field) says which field to focus."""
        field = error.field if field is None else field
        if tab is None and field:
            tab = SETTINGS_TABS.get(field.split(".")[0])
        return cls(error.message, file=error.file, line=error.line, field=field, tab=tab, detail=error.field)
