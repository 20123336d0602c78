"""A value typed into a field counts at once, before the command that uses it (issue 24 item 1): Save,
Save As, Simulate (F5), Quit (Ctrl+Q), switching tabs and Undo in the Project Settings window, and Save
and Close, Close (Esc), switching tabs and Undo in the Sensor Wizard, each tried as a user does it: the
real application (`sear PROJECT.prj`, tests/gui/x11_settings.py) on a 1366x768 screen of its own, a
click into the field, the value typed with xdotool and the command's key pressed while the field still
has the keyboard focus."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sear.project import Project
from sear.sensors.files import load_sensors
from tests import xserver
from tests.xserver import xdotool

pytestmark = [
    pytest.mark.gl,
    pytest.mark.skipif(not shutil.which("xdotool"), reason="xdotool is not installed (make test installs it with "
                       "packaging/install-system-deps.sh)"),
    pytest.mark.skipif(not xserver.available(), reason="needs Xvfb for a 1366x768 screen"),
]

HELPER = Path(__file__).with_name("x11_settings.py")
MASS_TAB = 3
"""The Vehicle Dynamics tab's place (View > Ctrl+4)."""


class App:
    """The settings window's process on a display of its own, and what its reports say."""

    def __init__(self, project: Path, report: Path, display: str) -> None:
        self.project, self.report, self.env = project, report, {**os.environ, "DISPLAY": display}
        self.process = subprocess.Popen([sys.executable, str(HELPER), str(report), str(project)], env=self.env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def xdotool(self, *args: str) -> None:
        xdotool(*args, env=self.env)

    def key(self, *keys: str) -> None:
        self.xdotool("key", "--delay", "50", *keys)

    def latest(self) -> dict:
        if self.process.poll() is not None:
            raise AssertionError(f"the application ended ({self.process.returncode}): "
                                 f"{self.process.stderr.read() if self.process.stderr else ''}")
        return json.loads(self.report.read_text()) if self.report.exists() else {}

    def when(self, condition: Callable[[dict], bool], what: str, timeout: float = 60.0) -> dict:
        """The first report for which `condition` holds (a report whose parts are missing does not)."""
        deadline = time.monotonic() + timeout
        data: dict = {}
        while time.monotonic() < deadline:
            data = self.latest()
            try:
                if condition(data):
                    return data
            except (KeyError, TypeError):
                pass
            time.sleep(0.1)
        raise AssertionError(f"{what}: not seen in {timeout} s (last report {data})")

    def focus(self, window_id: int) -> None:
        self.xdotool("windowfocus", "--sync", str(window_id))

    def type_into(self, rect: list[int], text: str) -> None:
        """Click into the field at `rect` (screen x, y, width, height), select its text and type `text`."""
        x, y, width, height = rect
        self.xdotool("mousemove", "--sync", str(x + width // 3), str(y + height // 2))
        self.xdotool("click", "1")
        self.key("ctrl+a")
        self.xdotool("type", "--delay", "50", text)

    def settings(self, condition: Callable[[dict], bool], what: str) -> dict:
        return self.when(lambda r: condition(r["settings"]), what)["settings"]

    def wizard(self, condition: Callable[[dict], bool], what: str) -> dict:
        return self.when(lambda r: condition(r["wizard"]), what)["wizard"]

    def dialog(self, what: str) -> dict:
        return self.when(lambda r: r["dialog"] is not None, what)["dialog"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=30)


@pytest.fixture
def app(demo_copy: Path, tmp_path: Path) -> Iterator[App]:
    """The demo copy open in the settings window on a 1366x768 screen, its Vehicle Dynamics tab shown."""
    with xserver.private_display("1366x768x24") as display:
        application = App(demo_copy / "demo.prj", tmp_path / "report.json", display)
        try:
            window = application.when(lambda r: r["settings"]["mass"] == 20.0, "the window on the demo")["settings"]
            application.focus(window["window_id"])
            application.key("ctrl+4")
            application.settings(lambda s: s["tab"] == MASS_TAB, "the Vehicle Dynamics tab")
            yield application
        finally:
            application.stop()


def _saved_mass(path: Path) -> float:
    return Project.load(path).robots[0].dynamics.mass


def _type_mass(app: App, text: str) -> dict:
    """Type `text` into Mass (the field keeps the focus); the window's state once the field shows it."""
    window = app.latest()["settings"]
    app.type_into(window["mass_field"], text)
    return app.settings(lambda s: s["mass_text"].startswith(text), f"{text} typed in Mass")


# --- the settings window --------------------------------------------------------------------------------------


def test_ctrl_s_saves_the_mass_typed_without_leaving_the_field(app):
    assert _saved_mass(app.project) == 20.0  # the demo's mass: what a lost value would leave in the file
    before = app.project.stat().st_mtime_ns
    typed = _type_mass(app, "30")
    assert typed["mass"] == 20.0  # not yet taken: the field has the focus, nothing left it
    app.key("ctrl+s")
    app.when(lambda r: app.project.stat().st_mtime_ns != before and not r["settings"]["dirty"], "the save")
    assert _saved_mass(app.project) == 30.0
    window = app.settings(lambda s: s["mass"] == 30.0 and not s["dirty"], "the window saved with 30")
    assert window["mass_text"].startswith("30")  # the field kept the value (it went back to 20 before)


def test_save_as_saves_the_mass_typed_without_leaving_the_field(app, tmp_path):
    target = tmp_path / "demo" / "copy.prj"
    _type_mass(app, "30")
    app.key("ctrl+shift+s")
    app.when(lambda r: r["focus"] == "QLineEdit" and r["settings"]["mass_text"], "the Save As dialog")
    time.sleep(0.5)  # the dialog takes its keys once it has drawn itself
    app.key("ctrl+a")
    app.xdotool("type", "--delay", "20", str(target))
    app.key("Return")
    app.when(lambda r: target.exists() and not r["settings"]["dirty"], "the project saved as copy.prj")
    assert _saved_mass(target) == 30.0
    assert _saved_mass(app.project) == 20.0  # positive control: the first file was left as it was


def test_f5_simulates_with_the_mass_typed_without_leaving_the_field(app):
    _type_mass(app, "30")
    app.key("F5")
    started = app.settings(lambda s: s["started"], "the simulation started")["started"]
    assert [run["mass"] for run in started] == [30.0]
    assert _saved_mass(app.project) == 30.0


def test_a_click_on_simulate_runs_with_the_mass_typed_without_leaving_the_field(app):
    window = _type_mass(app, "30")
    x, y, width, height = window["simulate_button"]  # a toolbar button takes no focus from a click
    app.xdotool("mousemove", "--sync", str(x + width // 2), str(y + height // 2))
    app.xdotool("click", "1")
    started = app.settings(lambda s: s["started"], "the simulation started")["started"]
    assert [run["mass"] for run in started] == [30.0]


def test_ctrl_q_after_typing_the_project_name_asks_about_the_unsaved_change(app):
    window = app.latest()["settings"]
    app.type_into(window["name_field"], "Renamed")
    app.settings(lambda s: s["name_text"] == "Renamed", "the name typed")
    app.key("ctrl+q")
    dialog = app.dialog("the unsaved-changes question")
    assert dialog["title"] == "Unsaved changes" and "'Renamed'" in dialog["text"]
    app.key("Escape")  # Cancel: the window stays, with the name
    window = app.when(lambda r: r["dialog"] is None, "the question answered")["settings"]
    assert window["name"] == "Renamed" and window["dirty"]


def test_ctrl_q_with_nothing_changed_quits_without_asking(app):
    """The control of the test above: the question comes from the typed name, not from every Quit."""
    app.key("ctrl+q")
    assert app.process.wait(timeout=60) == 0


def test_switching_tabs_keeps_the_mass_typed_without_leaving_the_field(app):
    _type_mass(app, "30")
    app.key("ctrl+1")
    window = app.settings(lambda s: s["tab"] == 0, "the Terrain tab")
    assert window["mass"] == 30.0 and window["dirty"]
    app.key("ctrl+4")
    window = app.settings(lambda s: s["tab"] == MASS_TAB, "back on Vehicle Dynamics")
    assert window["mass_text"].startswith("30") and window["mass"] == 30.0


def test_ctrl_z_after_typing_undoes_the_typed_mass_not_the_edit_before(app):
    window = app.latest()["settings"]
    app.type_into(window["mass_field"], "25")
    app.key("Tab")  # an earlier edit, finished: one undo step
    app.settings(lambda s: s["mass"] == 25.0 and s["undo_steps"] == 1, "the mass of 25 taken")
    _type_mass(app, "30")
    app.key("ctrl+z")
    window = app.settings(lambda s: s["mass_text"].startswith("25"), "the field back at 25")
    assert window["mass"] == 25.0
    app.key("Tab")  # leaving the field now changes nothing more
    window = app.settings(lambda s: not s["mass_focus"], "the focus moved on")
    assert window["mass"] == 25.0 and window["mass_text"].startswith("25")
    app.key("shift+Tab", "ctrl+z")  # back in Mass, Undo: the earlier edit is still there to undo
    window = app.settings(lambda s: s["mass"] == 20.0, "the edit to 25 undone")
    assert window["mass_text"].startswith("20")


# --- the Sensor Wizard ------------------------------------------------------------------------------------------


@pytest.fixture
def wizard(app) -> App:
    """The Sensor Wizard open over the settings window (F7), on its first tab."""
    app.key("F7")
    shown = app.wizard(lambda w: w["tab"] == 0, "the Sensor Wizard")
    app.focus(shown["window_id"])
    return app


def _type_number(app: App, text: str) -> dict:
    shown = app.latest()["wizard"]
    app.type_into(shown["number_field"], text)
    return app.wizard(lambda w: w["number_text"].startswith(text), f"{text} typed in the wizard")


def test_wizard_save_and_close_adds_the_number_typed_without_leaving_the_field(wizard):
    app = wizard
    shown = app.latest()["wizard"]
    app.type_into(shown["sensor_name_field"], "typed_ir")
    app.key("Tab")
    app.wizard(lambda w: w["sensor_name"] == "typed_ir", "the sensor name")
    typed = _type_number(app, "2.5")
    app.key("ctrl+s")  # Save and Close
    dialog = app.dialog("the question about fields not added")
    assert dialog["title"] == "Fields not added"
    app.key("Return")  # Yes: add them
    app.when(lambda r: r["wizard"] is None, "the wizard closed")
    sensors_file = Project.load(app.project).robots[0].code.sensors
    assert sensors_file is not None
    saved = {s.name: s for s in load_sensors(sensors_file)}
    assert getattr(saved["typed_ir"], typed["number_name"]) == 2.5


def test_wizard_escape_after_typing_asks_before_discarding(wizard):
    app = wizard
    _type_number(app, "2.5")
    app.key("Escape")
    dialog = app.dialog("the question about discarding")
    assert dialog["title"] == "Discard the sensor changes?"


def test_wizard_escape_with_nothing_typed_closes_without_asking(wizard):
    """The control of the test above."""
    wizard.key("Escape")
    report = wizard.when(lambda r: r["wizard"] is None, "the wizard closed")
    assert report["dialog"] is None


def test_wizard_switching_tabs_after_typing_asks_about_the_fields(wizard):
    app = wizard
    shown = _type_number(app, "2.5")
    x, y, left, top, width, height = shown["second_tab"]  # the tab bar's corner; the tab's rectangle in it
    app.xdotool("mousemove", "--sync", str(x + left + width // 2), str(y + top + height // 2))
    app.xdotool("click", "1")  # a tab bar takes no focus from a click: the field keeps it
    dialog = app.dialog("the question about fields not added")
    assert dialog["title"] == "Fields not added"
    app.key("Escape")  # Stay
    shown = app.when(lambda r: r["dialog"] is None, "the question answered")["wizard"]
    assert shown["tab"] == 0 and shown["number"] == 2.5


def test_wizard_ctrl_z_after_typing_undoes_the_typed_number_not_the_edit_before(wizard):
    app = wizard
    first = app.latest()["wizard"]["number"]
    _type_number(app, "2.5")
    app.key("Tab")
    app.wizard(lambda w: w["number"] == 2.5 and w["undo_steps"] == 1, "2.5 taken")
    _type_number(app, "3.5")
    app.key("ctrl+z")
    shown = app.wizard(lambda w: w["number_text"].startswith("2.5"), "the field back at 2.5")
    assert shown["number"] == 2.5
    app.key("Tab")
    shown = app.wizard(lambda w: not w["number_focus"], "the focus moved on")
    assert shown["number"] == 2.5
    app.key("shift+Tab", "ctrl+z")
    shown = app.wizard(lambda w: w["number"] == first, "the edit to 2.5 undone")
    assert first != 2.5
