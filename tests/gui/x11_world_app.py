"""`sear PROJECT.prj` (the Project Settings window), exactly as the command runs, plus a report for a test
that drives its World tab with real X events (xdotool): every 0.2 s a JSON file (the first argument) says
where the World tab's title, the palette's buttons and the 3-D view lie on the screen, the view's camera
matrix (so the test projects world points to pixels itself), the window's X id, the obstacles of the
project's <world> as the model holds them, the selected object, and whether the project is saved. Nothing of
the application is changed.

    python tests/gui/x11_world_app.py REPORT.json PROJECT.prj
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

from PySide6.QtCore import QPoint
from x11_app import report_every  # this script's folder is on the path, as it runs as a script

from sear.cli import main
from sear.gui.settings import window as settings_window
from sear.scene import kind_of


def _rect(widget) -> list[int]:
    corner = widget.mapToGlobal(QPoint(0, 0))
    return [corner.x(), corner.y(), widget.width(), widget.height()]


def _reporter(window: settings_window.SettingsWindow, report: Path) -> None:
    tab = window.world_tab

    def data() -> dict:
        bar = window.tabs.tabBar()
        index = window.tab_pages.index(tab)
        title = bar.tabRect(index)
        corner = bar.mapToGlobal(title.topLeft())
        world = window.project.world
        mvp = tab.view.mvp()
        return {
            "window_id": int(window.winId()),
            "world_tab": [corner.x(), corner.y(), title.width(), title.height()],
            "current_tab": window.tabs.currentIndex() == index,
            "palette": {kind: _rect(button) for kind, button in tab.palette_buttons.items()},
            "view": _rect(tab.view),
            "mvp": [mvp.row(r).toTuple() for r in range(4)],
            "obstacles": [] if world is None else [dict(asdict(o), kind=kind_of(o)) for o in world.obstacles()],
            "selected": tab.selected,
            "dirty": window.dirty,
            "undo_steps": window.history.index(),
        }

    report_every(window, report, data)


def _with_report(report: Path):
    build = settings_window.SettingsWindow._build

    def built(self: settings_window.SettingsWindow) -> None:
        build(self)
        _reporter(self, report)

    return built


if __name__ == "__main__":
    settings_window.SettingsWindow._build = _with_report(Path(sys.argv[1]))  # type: ignore[method-assign]
    sys.exit(main(sys.argv[2:]))
