"""Opening a file in the user's text editor (Settings > Open in Editor).

The editor is $VISUAL, else $EDITOR, else the desktop's default application for the file (xdg-open).
When none of them can open it, a dialog says what to set, instead of a traceback on the terminal or a Qt
warning nobody sees. The editor is started detached (QProcess.startDetached forks twice): it outlives
SEAR, and no editor that ends is ever left as a zombie process of SEAR's.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox, QWidget

TERMINAL_EDITORS = frozenset({"vi", "vim", "nvim", "nano", "pico", "micro", "ne", "joe", "jed", "mcedit",
                              "emacs-nox", "mg", "kak", "hx", "helix"})
"""Editors that need a terminal: started in one (x-terminal-emulator -e), since SEAR has none."""
HOW_TO_SET = ("Set the EDITOR environment variable to your editor's command, for example by adding\n"
              "    export EDITOR=gedit\n"
              "to ~/.profile (then log in again, or start SEAR from a terminal where it is set).")


def editor_command(path: Path, environ: dict[str, str] | None = None) -> tuple[str, list[str]] | str | None:
    """The program and arguments that open `path` in the user's editor ($VISUAL, else $EDITOR); a message
    saying what is wrong when that variable cannot be used; None when neither is set."""
    environ = dict(os.environ) if environ is None else environ
    name = "VISUAL" if environ.get("VISUAL", "").strip() else "EDITOR"
    value = environ.get(name, "").strip()
    if not value:
        return None
    try:
        words = shlex.split(value)
    except ValueError as exc:
        return f"${name} is set to “{value}”, which cannot be read as a command ({exc}).\n\n{HOW_TO_SET}"
    program = words[0]
    found = shutil.which(program, path=environ.get("PATH"))
    if found is None:
        return (f"${name} is set to “{value}”, but there is no program “{program}” on your PATH.\n\n"
                f"{HOW_TO_SET}")
    if Path(program).name in TERMINAL_EDITORS:
        terminal = shutil.which("x-terminal-emulator", path=environ.get("PATH"))
        if terminal is None:
            return (f"${name} is “{value}”, an editor that runs in a terminal, and no terminal program "
                    "(x-terminal-emulator) was found to run it in.\n\nSet the VISUAL environment variable to a "
                    "graphical editor, for example\n    export VISUAL=gedit\nin ~/.profile.")
        return terminal, ["-e", found, *words[1:], str(path)]
    return found, [*words[1:], str(path)]


def open_in_editor(parent: QWidget | None, path: Path) -> bool:
    """Open `path` in the user's editor, or the desktop's default application for it; when that cannot
    be done, say why and what to set in a dialog over `parent`. True when an editor was started."""
    command = editor_command(path)
    if isinstance(command, str):
        QMessageBox.warning(parent, "Cannot open the editor", command)
        return False
    if command is not None:
        program, arguments = command
        started, _pid = QProcess.startDetached(program, arguments)
        if not started:
            QMessageBox.warning(parent, "Cannot open the editor",
                                f"“{program}” could not be started to open {path}.\n\n{HOW_TO_SET}")
        return bool(started)
    opener = shutil.which("xdg-open")
    if opener is not None and QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        return True
    QMessageBox.warning(parent, "No editor is set",
                        f"There is no editor to open {path}: neither VISUAL nor EDITOR is set, and the desktop "
                        f"has no default application for it{'' if opener else ' (xdg-open is not installed)'}."
                        f"\n\n{HOW_TO_SET}\n\nOr choose a default application for Python files in your desktop's "
                        "settings (\"Open With\" in the file manager).")
    return False
