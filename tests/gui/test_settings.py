"""The Project Settings window, driven through its widgets (pytest-qt, under Xvfb)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QProcess, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from sear.codecheck import check_user_code
from sear.gui.settings.window import SettingsWindow
from sear.loading import check_project, load_project
from sear.project import DEFAULT_DYNAMICS, Project

pytestmark = pytest.mark.gl


def _type_path(field, path: Path) -> None:
    field.edit.setText(str(path))
    field.edit.editingFinished.emit()


def test_every_tab_filled_through_the_widgets_round_trips(window, demo_copy, tmp_path, answers, qtbot):
    w = window
    _type_path(w.terrain_tab.terrain_file, demo_copy / "terrain.obj")
    w.field_widget("terrain.latitude").setValue(-33.9)
    w.field_widget("terrain.longitude").setValue(151.2)
    w.field_widget("terrain.altitude").setValue(12.5)
    _type_path(w.body_tab.body_file, demo_copy / "body.stl")
    w.body_tab.absolute_radio.setChecked(True)
    w.field_widget("body.start_latitude").setValue(-33.8999)
    w.field_widget("body.start_abs_altitude").setValue(14.0)
    w.body_tab.rotation_fields[2].setValue(0.6)  # a unit quaternion exactly, as loading normalises
    w.body_tab.rotation_fields[3].setValue(0.8)
    for wid, name in (("left_front", "wheel_lf.obj"), ("right_front", "wheel_rf.obj"),
                      ("left_rear", "wheel_lr.ply"), ("right_rear", "wheel_rr.ply")):
        _type_path(w.wheels_tab.wheel_files[wid], demo_copy / name)
        w.wheels_tab.wheel_offsets[wid].setChecked(True)
        w.wheels_tab.wheel_positions[wid][0].setValue(0.22 if "front" in wid else -0.22)
        w.wheels_tab.wheel_positions[wid][1].setValue(0.25 if "left" in wid else -0.25)
        w.wheels_tab.wheel_positions[wid][2].setValue(-0.08)
    w.field_widget("dynamics.mass").setValue(25.0)
    w.field_widget("dynamics.engine_force").setValue(60.0)
    w.field_widget("dynamics.suspension_damping").setValue(2.0)
    w.field_widget("dynamics.rolling_resistance").setValue(0.05)
    w.dynamics_tab.drive_type.setCurrentIndex(w.dynamics_tab.drive_type.findData("skid"))
    w.dynamics_tab.cog_fields[2].setValue(-0.02)
    w.dynamics_tab.auto_suspension["suspension_rest_length"].setChecked(False)
    w.field_widget("dynamics.suspension_rest_length").setValue(0.12)
    _type_path(w.code_tab.code_file, demo_copy / "demo_code.py")
    _type_path(w.code_tab.sensors_file, demo_copy / "sensors.xml")
    w.code_tab.debug_shapes.setChecked(True)
    w.field_widget("code.hook_timeout").setValue(2.5)
    w.name_edit.setText("Rover trial")
    w.name_edit.editingFinished.emit()
    assert w.dirty and w.isWindowModified()

    answers.save_path = str(tmp_path / "mine.prj")
    assert w.save()
    assert not w.isWindowModified()

    fresh = SettingsWindow()
    qtbot.addWidget(fresh)
    answers.open_path = str(tmp_path / "mine.prj")
    assert fresh.open_project()
    assert fresh.project == w.project
    p = fresh.project
    assert (p.terrain.latitude, p.body.start_mode, p.dynamics.drive_type) == (-33.9, "absolute", "skid")
    assert p.wheels["right_rear"].position == pytest.approx((-0.22, -0.25, -0.08))
    assert p.dynamics.suspension_rest_length == pytest.approx(0.12)
    assert p.dynamics.rolling_resistance == pytest.approx(0.05)
    assert p.code.debug_shapes and p.code.hook_timeout == 2.5
    assert fresh.field_widget("dynamics.mass").value() == 25.0
    assert p.name == "Rover trial" and fresh.name_edit.text() == "Rover trial"
    assert fresh.windowTitle().startswith("Rover trial") and fresh.path_label.toolTip() == str(tmp_path / "mine.prj")


def test_impossible_values_cannot_be_entered_and_say_why(window, qtbot):
    mass = window.field_widget("dynamics.mass")
    window.tabs.setCurrentIndex(3)
    mass.setFocus()
    mass.selectAll()
    qtbot.keyClicks(mass.lineEdit(), "-")
    assert "Must be a number greater than 0 (at most 1e9)." in window.statusBar().currentMessage()
    mass.setValue(-5.0)
    assert mass.value() > 0 and window.project.dynamics.mass > 0
    assert "greater than 0" in mass.toolTip()
    rolling = window.field_widget("dynamics.rolling_resistance")
    rolling.setValue(2.0)
    assert rolling.value() == 0.5 and "0 to 0.5" in rolling.toolTip()
    latitude = window.field_widget("terrain.latitude")
    latitude.setValue(123.0)
    assert latitude.value() == 90.0
    assert "-90 to 90" in latitude.toolTip()


def test_typing_an_impossible_value_is_refused_and_the_status_bar_says_why(window, qtbot):
    window.tabs.setCurrentIndex(3)
    mass = window.field_widget("dynamics.mass")
    mass.setFocus()
    mass.lineEdit().selectAll()
    qtbot.keyClicks(mass.lineEdit(), "-5")
    qtbot.keyClick(mass.lineEdit(), Qt.Key.Key_Return)
    assert mass.value() == 5.0 and window.project.dynamics.mass == 5.0  # the minus sign never got in
    assert "greater than 0" in window.statusBar().currentMessage()
    window.tabs.setCurrentIndex(0)
    latitude = window.field_widget("terrain.latitude")
    latitude.setFocus()
    latitude.lineEdit().selectAll()
    qtbot.keyClicks(latitude.lineEdit(), "123")
    qtbot.keyClick(latitude.lineEdit(), Qt.Key.Key_Return)
    assert latitude.value() == 12.0 and window.project.terrain.latitude == 12.0
    assert "'123' is not accepted" in window.statusBar().currentMessage()
    assert "-90 to 90" in window.statusBar().currentMessage()


def test_reset_defaults_restores_the_thesis_vehicle(window, answers):
    window.field_widget("dynamics.mass").setValue(3.0)
    window.field_widget("dynamics.suspension_stiffness").setValue(9.0)
    answers.question = QMessageBox.StandardButton.Reset
    window.dynamics_tab.reset_button.click()
    assert window.project.dynamics == DEFAULT_DYNAMICS
    assert window.field_widget("dynamics.mass").value() == 400.0
    assert window.field_widget("dynamics.brake_force").value() == 1.0


def test_unsaved_changes_are_asked_about(window, answers, demo_copy):
    window.field_widget("dynamics.mass").setValue(33.0)
    answers.question = QMessageBox.StandardButton.Cancel
    answers.open_path = str(demo_copy / "demo.prj")
    assert not window.open_project()
    assert window.project.dynamics.mass == 33.0 and any(k == "question" for k, _ in answers.shown)
    answers.question = QMessageBox.StandardButton.Discard
    assert window.open_project()
    assert window.project.name == "SEAR demo" and not window.dirty


def test_closing_with_unsaved_changes_can_be_cancelled(qtbot, answers):
    w = SettingsWindow()
    qtbot.addWidget(w)
    w.show()
    w.field_widget("dynamics.mass").setValue(12.0)
    answers.question = QMessageBox.StandardButton.Cancel
    w.close()
    assert w.isVisible()
    answers.question = QMessageBox.StandardButton.Discard
    w.close()
    assert not w.isVisible()


def test_create_new_user_code_gives_a_file_validate_accepts(window, answers, tmp_path):
    answers.save_path = str(tmp_path / "code" / "robot.py")
    (tmp_path / "code").mkdir()
    created = window.code_tab.create_from_template("user_code.py")
    assert created == tmp_path / "code" / "robot.py" and created.exists()
    assert window.project.code.user_code == created
    assert check_user_code(created) == []
    answers.save_path = str(tmp_path / "code" / "script.py")
    script = window.code_tab.create_from_template("simulator_script.py")
    assert check_user_code(script) == []
    assert window.project.code.user_code == created  # a full script is not the project's user code


def test_missing_files_are_shown_and_the_preview_says_why(window, tmp_path, demo_copy):
    window.tabs.setCurrentIndex(1)
    _type_path(window.body_tab.body_file, tmp_path / "nope.stl")
    assert window.body_tab.body_file.status.text() == "file not found"
    assert "does not exist" in window.body_tab.body_preview.message.text()
    assert window.body_tab.body_preview.stack.currentWidget() is window.body_tab.body_preview.message
    _type_path(window.body_tab.body_file, demo_copy / "body.stl")
    assert window.body_tab.body_file.status.text() == ""
    assert window.body_tab.body_preview.stack.currentWidget() is window.body_tab.body_preview.view
    assert len(window.body_tab.body_preview._items) == 2  # the body and the ground grid


def test_recent_projects_persist(window, answers, demo_copy):
    answers.open_path = str(demo_copy / "demo.prj")
    window.open_project()
    recent = window.settings.value("recent")
    assert str(demo_copy / "demo.prj") in (recent if isinstance(recent, list) else [recent])
    assert any(a.text() == str(demo_copy / "demo.prj") for a in window.recent_menu.actions())


def test_a_single_recent_project_read_back_as_text_stays_one_entry(window, answers, demo_copy, tmp_path):
    # After a restart QSettings reads a one-entry list back as a plain string.
    other = tmp_path / "elsewhere.prj"
    window.settings.setValue("recent", str(other))
    window._update_recent_menu()
    assert [a.text() for a in window.recent_menu.actions()] == [str(other)]
    answers.open_path = str(demo_copy / "demo.prj")
    window.open_project()
    assert [a.text() for a in window.recent_menu.actions()] == [str(demo_copy / "demo.prj"), str(other)]


def test_simulate_runs_the_demo_in_its_own_process_and_stop_ends_it(window, answers, demo_copy, qtbot):
    answers.open_path = str(demo_copy / "demo.prj")
    window.open_project()
    assert window.simulate()
    # The demo's init() prints its route as soon as the simulation process has loaded the project.
    qtbot.waitUntil(lambda: "demo: route of 4 corners" in window.console.toPlainText(), timeout=90_000)
    assert window.sim_process.process.state() != QProcess.ProcessState.NotRunning
    assert window.isEnabled() and not window.simulate_button.isEnabled()
    window.stop_button.click()
    qtbot.waitUntil(lambda: window.sim_process.process.state() == QProcess.ProcessState.NotRunning, timeout=60_000)
    assert "Simulation stopped" in window.console.toPlainText()
    assert window.simulate_button.isEnabled()


def test_simulate_with_broken_user_code_shows_the_error_and_starts_nothing(window, answers, demo_copy):
    (demo_copy / "demo_code.py").write_text("def main_loop(sim):\n    return (\n")
    answers.open_path = str(demo_copy / "demo.prj")
    window.open_project()
    assert not window.simulate()
    assert window.sim_process.process is None
    kind, text = answers.shown[-1]
    assert kind == "warning" and "demo_code.py, line 2" in text and "syntax error" in text
    assert check_project(Project.load(demo_copy / "demo.prj"))  # the project itself is untouched


def test_shortcuts_and_buttons_on_every_tab(window):
    assert window.commands["save"].shortcut().toString() == "Ctrl+S"
    assert window.commands["open"].shortcut().toString() == "Ctrl+O"
    assert window.commands["quit"].shortcut().toString() == "Ctrl+Q"
    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        for button in (window.simulate_button, window.wizard_button, window.save_button, window.load_button):
            assert button.isVisible()
    assert window.tabs.tabText(3) == "Vehicle Dynamics"
    assert Qt.WindowType.Window & window.windowFlags()


def test_a_crashing_simulation_is_reported_and_the_window_carries_on(window, answers, demo_copy, qtbot):
    code = demo_copy / "demo_code.py"
    # User code runs in a process of its own, whose crash the simulation survives: to crash the simulation
    # itself, the user code kills its parent (after a moment, so the simulation has shown the print).
    code.write_text("import os\nimport signal\nimport time\n\n\ndef init(sim):\n    print('about to crash')\n"
                    "    time.sleep(1.0)\n    os.kill(os.getppid(), signal.SIGKILL)\n\n\ndef main_loop(sim):\n"
                    "    pass\n")
    before = (demo_copy / "demo.prj").read_bytes()
    answers.open_path = str(demo_copy / "demo.prj")
    window.open_project()
    assert window.simulate()
    qtbot.waitUntil(lambda: window.simulate_button.isEnabled(), timeout=60_000)
    text = window.console.toPlainText()
    assert "about to crash" in text and "The simulation crashed" in text
    assert (demo_copy / "demo.prj").read_bytes() == before and not window.dirty
    assert window.isVisible() and window.simulate_button.isEnabled() and not window.stop_button.isEnabled()


def test_open_in_editor_uses_visual(window, answers, tmp_path, monkeypatch, qtbot):
    opened = tmp_path / "opened.txt"
    editor = tmp_path / "fake-editor"
    editor.write_text(f"#!/bin/sh\necho \"$1\" > '{opened}'\n")
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", f"{editor}")
    monkeypatch.setenv("EDITOR", "false")
    answers.save_path = str(tmp_path / "robot.py")
    created = window.code_tab.create_from_template("user_code.py")
    assert window.code_tab.edit_button.isEnabled()
    window.code_tab.edit_button.click()
    qtbot.waitUntil(lambda: opened.exists() and opened.read_text().strip() != "", timeout=60_000)
    assert opened.read_text().strip() == str(created)


# --- the problem list: a click goes to the field ---------------------------------------------------

def _click_problem(window, qtbot, row: int) -> None:
    item = window.problem_list.item(row)
    rect = window.problem_list.visualItemRect(item)
    qtbot.mouseClick(window.problem_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _active(window, qtbot) -> None:
    window.activateWindow()
    window.raise_()
    qtbot.waitUntil(window.isActiveWindow, timeout=60_000)


@pytest.mark.parametrize(("damage", "tab", "words"), [
    ("missing wheel", "Wheel Models", "Wheel Models: right front wheel file:"),
    ("broken body", "Robot Body Model", "Robot Body Model: body file:"),
    ("syntax error", "Code Setup", "line 2: syntax error"),
])
def test_clicking_a_problem_focuses_its_field_on_its_tab(window, answers, demo_copy, qtbot, damage, tab, words):
    if damage == "missing wheel":
        (demo_copy / "wheel_rf.obj").unlink()
    elif damage == "broken body":
        (demo_copy / "body.stl").write_bytes(b"")
    else:
        (demo_copy / "demo_code.py").write_text("def main_loop(sim):\n    return (\n")
    answers.open_path = str(demo_copy / "demo.prj")
    window.open_project()
    expected = {"missing wheel": window.wheels_tab.wheel_files["right_front"].edit,
                "broken body": window.body_tab.body_file.edit, "syntax error": window.code_tab.code_file.edit}[damage]
    assert not window.simulate() and window.sim_process.process is None
    assert window.problem_dock.isVisible() and window.problem_list.count() == 1
    assert words in window.problem_list.item(0).text()
    window.tabs.setCurrentIndex(0 if tab != "Terrain Model" else 1)
    _active(window, qtbot)
    assert QApplication.focusWidget() is not expected
    _click_problem(window, qtbot, 0)
    assert window.tabs.tabText(window.tabs.currentIndex()) == tab
    qtbot.waitUntil(lambda: QApplication.focusWidget() is expected, timeout=60_000)


def test_a_field_value_problem_focuses_the_number_field(window, demo_copy, qtbot):
    prj = demo_copy / "demo.prj"
    prj.write_text(prj.read_text().replace("<mass>20.0</mass>", "<mass>-20</mass>"))
    loaded = load_project(prj)
    (problem,) = loaded.problems
    assert problem.field == "dynamics.mass" and problem.tab == "Vehicle Dynamics" and problem.file == prj
    window.show_problems(loaded.problems)
    assert window.problem_list.item(0).text() == str(problem)
    _active(window, qtbot)
    _click_problem(window, qtbot, 0)
    assert window.tabs.tabText(window.tabs.currentIndex()) == "Vehicle Dynamics"
    mass = window.field_widget("dynamics.mass")
    qtbot.waitUntil(lambda: mass.hasFocus(), timeout=60_000)


def test_the_problem_list_goes_once_the_problems_are_fixed(window, answers, demo_copy, demo_dir):
    (demo_copy / "wheel_rf.obj").unlink()
    answers.open_path = str(demo_copy / "demo.prj")
    window.open_project()
    assert not window.simulate() and window.problem_dock.isVisible()
    shutil.copyfile(demo_dir / "wheel_rf.obj", demo_copy / "wheel_rf.obj")
    assert window.simulate()
    assert not window.problem_dock.isVisible() and window.problem_list.count() == 0
    window.stop(wait=True)


def test_the_console_keeps_only_the_last_lines_of_a_flood_of_output(window):
    from sear.gui.settings.simulation_process import SIMULATION_OUTPUT_LINES

    assert SIMULATION_OUTPUT_LINES == 5000  # the number the placeholder and the docs state
    window.sim_process.append("".join(f"line {i}\n" for i in range(12_000)))
    window.sim_process.append("the end\n", error=True)
    lines = window.console.toPlainText().splitlines()
    assert 4_000 < len(lines) <= SIMULATION_OUTPUT_LINES  # bounded, and not emptied
    assert lines[-1] == "the end" and lines[-2] == "line 11999"
    assert "line 0" not in lines  # the oldest scrolled away
