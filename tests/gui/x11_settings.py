"""`sear PROJECT.prj` (the Project Settings window), plus a report for a test that drives it with real X
events (xdotool): every 0.1 s a JSON file (the first argument) says where the fields a test types into lie
on the screen, what the project and the fields hold, which dialog is open, and, when the Sensor Wizard is
open, the same of its first tab. Simulate does not start a process here: it records the project file it
would run and that file's first robot's mass at that moment (what the run would read). Nothing else of
the application is changed.

    python tests/gui/x11_settings.py REPORT.json PROJECT.prj
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from PySide6.QtCore import QPoint, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from sear.cli import main
from sear.gui.app import configure_qt
from sear.gui.settings import simulation_process
from sear.gui.settings.window import SettingsWindow
from sear.gui.widgets import NumberField
from sear.gui.wizard import SensorWizard
from sear.project import Project

STARTED: list[dict] = []
"""The runs Simulate started: the project file and the mass it held then."""


def _record_start(self: simulation_process.SimulationProcess, path: Path) -> None:
    STARTED.append({"path": str(path), "mass": Project.load(path).robots[0].dynamics.mass})


def _rect(widget: QWidget) -> list[int]:
    corner = widget.mapToGlobal(QPoint(0, 0))
    return [corner.x(), corner.y(), widget.width(), widget.height()]


def _window(window: SettingsWindow) -> dict:
    mass = window.dynamics_tab.numbers[("dynamics", "mass")]
    return {
        "window_id": int(window.winId()),
        "name_field": _rect(window.name_edit),
        "name_text": window.name_edit.text(),
        "mass_field": _rect(mass),
        "mass_text": mass.text(),
        "mass_focus": mass.hasFocus(),
        "simulate_button": _rect(window.simulate_button),
        "name": window.project.name,
        "mass": window.project.robots[0].dynamics.mass,
        "dirty": window.dirty,
        "tab": window.tabs.currentIndex(),
        "undo_steps": window.history.index(),
        "undo_text": window.history.undoText(),
        "started": STARTED,
    }


def _wizard(wizard: SensorWizard) -> dict:
    form = wizard.forms[0]
    name, number = next((n, e) for n, e in form.editors.items() if isinstance(e, NumberField) and e.isVisibleTo(form))
    return {
        "window_id": int(wizard.winId()),
        "tab": wizard.tabs.currentIndex(),
        "second_tab": [*_rect(wizard.tabs.tabBar())[:2], *wizard.tabs.tabBar().tabRect(1).getRect()],
        "sensor_name_field": _rect(form.name_edit),
        "number_name": name,
        "number_field": _rect(number),
        "number_text": number.text(),
        "number_focus": number.hasFocus(),
        "number": float(getattr(form.config(), name)),
        "sensor_name": form.config().name,
        "undo_steps": wizard.history.index(),
        "undo_text": wizard.history.undoText(),
        "sensors": [s.name for s in wizard.sensors],
        "saved_path": str(wizard.saved_path) if wizard.saved_path else None,
    }


def _write(report: Path) -> None:
    tops = QApplication.topLevelWidgets()
    data: dict = {"settings": None, "wizard": None, "dialog": None}
    for widget in tops:
        if isinstance(widget, SettingsWindow):
            data["settings"] = _window(widget)
        elif isinstance(widget, SensorWizard) and widget.isVisible():
            data["wizard"] = _wizard(widget)
    modal = QApplication.activeModalWidget()
    if isinstance(modal, QMessageBox):
        data["dialog"] = {"title": modal.windowTitle(), "text": modal.text(), "window_id": int(modal.winId())}
    focus = QApplication.focusWidget()
    data["focus"] = type(focus).__name__ if focus is not None else None
    partial = report.with_suffix(".part")
    partial.write_text(json.dumps(data))
    os.replace(partial, report)  # the test never reads half a file


if __name__ == "__main__":
    simulation_process.SimulationProcess.start = _record_start  # type: ignore[method-assign]
    configure_qt()
    app = QApplication(sys.argv[:1])
    timer = QTimer()
    timer.timeout.connect(lambda: _write(Path(sys.argv[1])))
    timer.start(100)
    sys.exit(main(sys.argv[2:]))
