"""`sear` and `sear PROJECT.prj` open the Project Settings window; without a display they say so."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from sear.gui import app as gui_app
from sear.gui.settings.window import SettingsWindow
from sear.launcher import has_display


@pytest.mark.parametrize(("env", "expected"), [
    ({}, False),
    ({"QT_QPA_PLATFORM": "xcb"}, False),          # xcb needs an X server: Qt would abort
    ({"QT_QPA_PLATFORM": "wayland"}, False),
    ({"QT_QPA_PLATFORM": "offscreen"}, True),     # chosen explicitly, needs no server
    ({"DISPLAY": ":0"}, True),
    ({"WAYLAND_DISPLAY": "wayland-0"}, True),
])
def test_has_display(monkeypatch, env, expected):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert has_display() is expected


@pytest.mark.gl
def test_sear_project_opens_the_settings_window_on_it(qtbot, demo_copy, monkeypatch):
    monkeypatch.setattr(QApplication, "exec", lambda self: 0)

    def shown() -> set[SettingsWindow]:
        return {w for w in QApplication.topLevelWidgets() if isinstance(w, SettingsWindow) and w.isVisible()}

    before = shown()  # an earlier test of this worker process may have left one open
    assert gui_app.run_settings_app(demo_copy / "demo.prj") == 0
    windows = list(shown() - before)
    assert len(windows) == 1
    window = windows[0]
    qtbot.addWidget(window)
    assert window.project.path == demo_copy / "demo.prj"
    assert window.windowTitle().startswith(f"{window.project.name}[*]")
    assert not window.isWindowModified()
    recent = window.settings.value("recent")
    assert str(demo_copy / "demo.prj") in (recent if isinstance(recent, list) else [recent])
    window.close()
