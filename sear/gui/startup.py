"""The simulation's start-up made visible (issue 24 item 5): a small window, shown as soon as `sear run`
knows it will open the simulation window, that says which stage the start is at (loading the 3-D view,
loading the models, building the world and starting the user code, opening the window) with a bar of the
stages done, until the simulation window shows its first frame.

It imports Qt's widgets only (not pyqtgraph, not the physics), so it appears a fraction of a second after
the process starts; every stage repaints it at once, since the work between stages keeps the event loop
from running.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QProgressBar, QVBoxLayout, QWidget

STAGES = ("Loading the 3-D view", "Loading the models", "Building the world and starting the user code",
          "Opening the simulation window")
"""What `sear run` does before its first frame, in order (StartupProgress.stage names one of them)."""


class StartupProgress(QWidget):
    """The start-up window: the project's name, the stage under way, a bar of the stages done and the
    seconds since the start."""

    def __init__(self, project_name: str) -> None:
        super().__init__(None, Qt.WindowType.SplashScreen | Qt.WindowType.WindowStaysOnTopHint)
        self.setWindowTitle(f"{project_name} — starting the simulation")
        self.started = time.perf_counter()
        layout = QVBoxLayout(self)
        title = QLabel(f"<b>Starting the simulation of {project_name}</b>")
        layout.addWidget(title)
        self.label = QLabel()
        layout.addWidget(self.label)
        self.bar = QProgressBar()
        self.bar.setRange(0, len(STAGES))
        self.bar.setTextVisible(False)
        layout.addWidget(self.bar)
        self.setStyleSheet("StartupProgress { background: #f4f6f8; border: 1px solid #889; }")
        self.setMinimumWidth(460)
        self.done: list[tuple[str, float]] = []
        """(stage, wall seconds since the start) of every stage begun."""

    def stage(self, name: str) -> None:
        """Stage `name` (one of STAGES) begins: say so, and paint it now."""
        elapsed = time.perf_counter() - self.started
        self.done.append((name, elapsed))
        index = STAGES.index(name)
        self.label.setText(f"{name}…  ({index + 1} of {len(STAGES)}, {elapsed:.1f} s)")
        self.bar.setValue(index)
        if not self.isVisible():
            self.adjustSize()
            screen = self.screen().availableGeometry()
            self.move(screen.center() - self.rect().center())
            self.show()
        self.repaint()
        QApplication.processEvents()

    def finish(self) -> None:
        """The simulation window is up: close."""
        self.bar.setValue(len(STAGES))
        self.close()


def show_startup(project_name: str) -> StartupProgress:
    """The application (configured as the simulation window wants it) and a start-up window on the screen,
    at the first stage."""
    from sear.gui.app import configure_qt

    configure_qt()
    if QApplication.instance() is None:
        QApplication([])
    progress = StartupProgress(project_name)
    progress.stage(STAGES[0])
    return progress
