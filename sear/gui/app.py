"""Starting the Project Settings window (`sear` and `sear PROJECT.prj`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from sear.errors import SearError
from sear.project import Project
from sear.resources import packaged


def configure_qt() -> None:
    """Settings that must precede the QApplication: the 3-D views share one OpenGL context group, since
    pyqtgraph compiles its shader programs once for all views; the windows' class is "sear" (X11 WM_CLASS
    instance and class, Wayland app id), matching packaging/sear.desktop."""
    QApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    os.environ.setdefault("RESOURCE_NAME", "sear")  # WM_CLASS instance; Qt takes it from argv[0] otherwise
    QApplication.setApplicationName("sear")  # WM_CLASS class
    QGuiApplication.setDesktopFileName("sear")


def set_window_icon() -> None:
    """Give every window SEAR's icon (packaging/make_icon.py draws it); once the QApplication exists."""
    QGuiApplication.setWindowIcon(QIcon(str(packaged("sear.png"))))


def run_settings_app(project_path: Path | None = None) -> int:
    """Open the settings window (on `project_path` if given) and run Qt until it closes."""
    from sear.gui.settings.window import SettingsWindow

    configure_qt()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    set_window_icon()
    app.setOrganizationName("SEAR")
    project = None
    error = None
    if project_path is not None:
        try:
            project = Project.load(project_path)
        except SearError as exc:
            error = exc
    window = SettingsWindow(project)
    if project is not None:
        window._remember(project.path)
    window.show()
    if error is not None:
        QMessageBox.critical(window, "Cannot open the project", str(error))
    status = app.exec()
    window.stop(wait=True)  # a simulation still running in its own process ends with the window
    return status
