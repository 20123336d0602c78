"""Opens every window on the demo as the application does and reports, as JSON on stdout, where each window
and each of its buttons lies: run by test_window_fit.py on an Xvfb screen of a chosen size and scale.

    python tests/gui/window_fit_probe.py PROJECT.prj

For each window, and each tab of a window with tabs: the screen's available area, the window's frame, its
smallest size, and every shown push/tool button with its rectangle on screen and whether some parent cuts
it off (a button inside a scroll area's viewport counts as reachable: the area scrolls to it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QAbstractButton, QAbstractScrollArea, QApplication, QTabWidget, QWidget


def _rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def _clipped(button: QWidget, window: QWidget) -> bool:
    """Whether an ancestor (up to the window) cuts part of `button` off, short of a scrolling viewport."""
    widget = button
    while widget is not window and widget.parentWidget() is not None:
        parent = widget.parentWidget()
        area = parent.parentWidget()
        if isinstance(area, QAbstractScrollArea) and area.viewport() is parent:
            return False
        mapped = QRect(button.mapTo(parent, button.rect().topLeft()), button.size())
        if not parent.rect().contains(mapped):
            return True
        widget = parent
    return False


def _report(app: QApplication, window: QWidget, name: str) -> list[dict]:
    pages = []
    tab_widgets = [t for t in window.findChildren(QTabWidget) if t.window() is window]
    tabs = tab_widgets[0] if tab_widgets else None
    for index in range(tabs.count() if tabs is not None else 1):
        if tabs is not None:
            tabs.setCurrentIndex(index)
        for _ in range(5):
            app.processEvents()
        buttons = []
        for button in window.findChildren(QAbstractButton):
            if not button.isVisibleTo(window) or button.window() is not window or button.width() == 0:
                continue
            buttons.append({"text": button.text() or button.toolTip() or type(button).__name__,
                            "global": _rect(QRect(button.mapToGlobal(button.rect().topLeft()), button.size())),
                            "clipped": _clipped(button, window)})
        pages.append({"window": name, "page": tabs.tabText(index) if tabs is not None else "",
                      "available": _rect(window.screen().availableGeometry()),
                      "frame": _rect(window.frameGeometry()),
                      "minimum": [window.minimumSizeHint().width(), window.minimumSizeHint().height()],
                      "buttons": buttons})
    return pages


def main(project_path: Path) -> int:
    from sear.gui.app import configure_qt
    from sear.gui.settings.window import SettingsWindow
    from sear.gui.simwindow import SimulationWindow
    from sear.gui.wizard import SensorWizard
    from sear.project import Project
    from sear.runtime.simulation import Simulation

    configure_qt()
    app = QApplication(sys.argv[:1])
    project = Project.load(project_path)
    report = []
    settings = SettingsWindow(project)
    settings.show()
    report += _report(app, settings, "settings")
    wizard = SensorWizard(project, settings)
    wizard.show()
    report += _report(app, wizard, "wizard")
    wizard.done(0)
    from sear.gui.help import show_user_guide

    guide = show_user_guide(settings)
    if guide is not None:
        report += _report(app, guide, "help")
        guide.close()
    simulation = Simulation(project, seed=0, output=lambda text: None)
    window = SimulationWindow(simulation)
    window.show()
    window.start()
    window.timer.stop()
    report += _report(app, window, "simulation")
    window.close()
    simulation.close()
    settings.dirty = False
    settings.close()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
