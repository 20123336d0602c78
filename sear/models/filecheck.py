"""What stops SEAR from reading a file a project refers to (check_choice, special_file), as Problems naming
the field, the tab and the label the settings window shows (sear.project.FileChoice).

Beside the model readers, which check each file with it before reading it; sear.loading checks the user
code and sensors files with it too, so every file is refused with the same sentences.
"""

from __future__ import annotations

import os
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
    too_long = path_too_long(path)
    if too_long:
        return problem(too_long)
    try:
        exists, folder = path.exists(), path.is_dir()
    except OSError as exc:  # what the length check cannot foresee (a loop of links, a lost mount)
        return problem(f"{path} cannot be read ({exc.strerror}).")
    if not exists:
        return problem(f"{path} does not exist; choose the file again or restore it.")
    if folder:
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


NAME_MAX = 255
"""Bytes a file or folder name may have: the limit of Linux's and macOS's file systems (Windows: 255
characters). Opening a longer one fails with 'File name too long'."""
PATH_MAX = 4095
"""Bytes a whole path may have (Linux's PATH_MAX of 4,096 with its closing 0 byte)."""


def _shortened(name: str) -> str:
    return name if len(name) <= 60 else f"{name[:40]}...{name[-12:]}"


def path_too_long(path: Path) -> str | None:
    """Why no file system can hold `path` (a name of more than NAME_MAX bytes, or more than PATH_MAX bytes in
    all), as a sentence; None when its length is fine. Checked before the path is looked at: the system
    refuses it with an error (errno 36) that pathlib lets through even from exists()."""
    for part in path.parts:
        size = len(os.fsencode(part))
        if size > NAME_MAX:
            return (f"the name '{_shortened(part)}' in the path is {size:,} bytes long; a file or folder name can have "
                    f"at most {NAME_MAX} bytes; use a shorter name.")
    size = len(os.fsencode(str(path.absolute())))
    if size > PATH_MAX:
        return (f"the path '{_shortened(str(path))}' is {size:,} bytes long; a path can have at most {PATH_MAX:,} "
                "bytes; use a shorter path.")
    return None


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
