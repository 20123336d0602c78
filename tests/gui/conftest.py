"""GUI test fixtures: dialogs answered by the test (the demo copy is tests/conftest.py's demo_copy)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox


class Answers:
    """Records the dialogs shown and answers them as the test says."""

    def __init__(self, monkeypatch) -> None:
        self.shown: list[tuple[str, str]] = []
        self.question = QMessageBox.StandardButton.Discard
        self.save_path: str = ""
        self.open_path: str = ""
        for name in ("warning", "critical", "information"):
            monkeypatch.setattr(QMessageBox, name, self._record(name))
        monkeypatch.setattr(QMessageBox, "question", self._question)
        monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (self.save_path, ""))
        monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (self.open_path, ""))

    def _record(self, kind):
        def show(parent, title, text, *args, **kwargs):
            self.shown.append((kind, f"{title}: {text}"))
            return QMessageBox.StandardButton.Ok
        return show

    def _question(self, parent, title, text, *args, **kwargs):
        self.shown.append(("question", f"{title}: {text}"))
        return self.question


@pytest.fixture
def answers(monkeypatch):
    return Answers(monkeypatch)


def _shown_settings_window(qtbot, project=None):
    """A shown Settings window (on `project`), its simulation (if a test started one) stopped after the
    test and its changes given up."""
    from sear.gui.settings.window import SettingsWindow

    w = SettingsWindow(project)
    qtbot.addWidget(w)
    w.show()
    yield w
    w.dirty = False
    w.stop(wait=True)


@pytest.fixture
def window(qtbot, answers):
    """A shown Settings window on no project (_shown_settings_window). Test modules with a window of their
    own define `window` themselves."""
    yield from _shown_settings_window(qtbot)


@pytest.fixture
def demo_window(qtbot, answers, demo_copy):
    """A shown Settings window on a copy of the demo project (_shown_settings_window)."""
    from sear.project import Project

    yield from _shown_settings_window(qtbot, Project.load(demo_copy / "demo.prj"))


@pytest.fixture
def wizard(qtbot, tmp_path, answers):
    """A shown Sensor Wizard on a new project "w" saved in `tmp_path`. Test modules narrow it by overriding
    `wizard` with this one as their argument."""
    from sear.gui.wizard import SensorWizard
    from sear.project import Project

    project = Project(name="w")
    project.save(tmp_path / "w.prj")
    w = SensorWizard(project)
    qtbot.addWidget(w)
    w.show()
    return w
