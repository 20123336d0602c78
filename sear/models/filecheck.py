"""What stops SEAR from reading a file a project refers to (check_choice, special_file), as Problems naming
the field, the tab and the label the settings window shows (sear.project.FileChoice).

Beside the model readers, which check each file with it before reading it; sear.loading checks the user
code and sensors files with it too, so every file is refused with the same sentences.
"""

from __future__ import annotations

import stat
from pathlib import Path

from sear.errors import Problem
from sear.models.meshfiles import file_suffix
from sear.project import FileChoice


def check_choice(choice: FileChoice, *, allowed: tuple[str, ...], required: bool = True) -> list[Problem]:
    """Problems with one referenced file: unset, missing, a folder, unreadable or of a type not in
    `allowed` (file_suffix), each naming where the settings window chooses it (the choice's tab, label
    and field)."""
    path = choice.path

    def problem(message: str) -> list[Problem]:
        return [Problem(message, file=path, field=choice.field, tab=choice.tab, label=choice.label)]

    if path is None:
        return problem("no file chosen; choose one in the settings window.") if required else []
    if not path.exists():
        return problem(f"{path} does not exist; choose the file again or restore it.")
    if path.is_dir():
        return problem(f"{path} is a folder, not a file.")
    special = special_file(path)
    if special:
        return problem(special)
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        return problem(f"{path} cannot be read ({exc.strerror}).")
    if allowed and file_suffix(path) not in allowed:
        return problem(f"{path.name} is not a supported type; use one of {', '.join(allowed)}.")
    return []


def special_file(path: Path) -> str | None:
    """Why `path` is not a regular file that can be read without waiting (a FIFO, a device, a socket:
    opening a FIFO blocks until something writes to it), as a sentence; None for a regular file or one
    that does not exist."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    what = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return f"{path} is {what}, not a file SEAR can read; choose a regular file."
