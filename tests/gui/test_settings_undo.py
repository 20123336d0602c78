"""Undo/Redo in the Project Settings window (issue 13 item 9): every kind of edit is one step that puts
back the exact previous value; Reset Defaults and closing during a run ask first; the menus."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from PySide6.QtCore import QProcess, Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from sear.gui.settings.window import SettingsWindow
from sear.project import DEFAULT_DYNAMICS, Project

pytestmark = pytest.mark.gl


@pytest.fixture
def window(qtbot, answers, demo_copy):
    w = SettingsWindow(Project.load(demo_copy / "demo.prj"))
    qtbot.addWidget(w)
    w.show()
    yield w
    w.dirty = False
    w.stop(wait=True)


def _type_path(field, path: Path | str) -> None:
    field.edit.setText(str(path))
    field.edit.editingFinished.emit()


def _undo_redo_round_trip(w: SettingsWindow, edit, read) -> None:
    """Make one edit; Undo gives back exactly the value before it (model and widget), Redo the value after."""
    before, steps = copy.deepcopy(read()), w.history.index()
    edit()
    after = copy.deepcopy(read())
    assert after != before, "the edit must change something"
    assert w.history.index() == steps + 1 and w.isWindowModified()
    w.commands["undo"].trigger()
    assert read() == before
    w.commands["redo"].trigger()
    assert read() == after
    w.commands["undo"].trigger()
    assert read() == before


def test_undo_of_a_number_field_restores_model_and_widget(window):
    mass = window.field_widget("dynamics.mass")
    old = window.project.dynamics.mass
    assert old == 20.0  # the demo's
    _undo_redo_round_trip(window, lambda: mass.setValue(31.25), lambda: window.project.dynamics.mass)
    assert mass.value() == old and window.tabs.currentIndex() == 3  # Undo shows the tab it changed


def test_undo_of_every_kind_of_edit(window, demo_copy):
    w = window
    cases = [
        (lambda: _type_path(w.terrain_tab.terrain_file, demo_copy / "other.obj"), lambda: w.project.terrain.file),
        (lambda: _type_path(w.body_tab.body_file, ""), lambda: w.project.body.file),
        (lambda: _type_path(w.wheels_tab.wheel_files["left_rear"], demo_copy / "wheel_lf.obj"),
         lambda: w.project.wheels["left_rear"].file),
        (lambda: w.wheels_tab.wheel_offsets["right_front"].setChecked(
            not w.wheels_tab.wheel_offsets["right_front"].isChecked()),
         lambda: w.project.wheels["right_front"].position),
        (lambda: w.body_tab.absolute_radio.setChecked(True), lambda: w.project.body.start_mode),
        (lambda: w.body_tab.rotation_fields[2].setValue(0.6), lambda: w.project.body.rotation),
        (lambda: w.dynamics_tab.drive_type.setCurrentIndex(w.dynamics_tab.drive_type.findData("skid")),
         lambda: w.project.dynamics.drive_type),
        (lambda: w.dynamics_tab.cog_fields[1].setValue(0.015), lambda: w.project.dynamics.cog_offset),
        (lambda: w.dynamics_tab.auto_suspension["max_suspension_travel"].setChecked(False),
         lambda: w.project.dynamics.max_suspension_travel),
        (lambda: w.code_tab.debug_shapes.setChecked(not w.code_tab.debug_shapes.isChecked()),
         lambda: w.project.code.debug_shapes),
        (lambda: _type_path(w.code_tab.sensors_file, demo_copy / "other.xml"), lambda: w.project.code.sensors),
        (lambda: w.field_widget("simulation.physics_hz").setValue(480.0), lambda: w.project.simulation.physics_hz),
        (lambda: (w.name_edit.setText("Renamed"), w.name_edit.editingFinished.emit()), lambda: w.project.name),
    ]
    for edit, read in cases:
        _undo_redo_round_trip(w, edit, read)
    # Every step undone: the project is the saved one again, and the window says so.
    assert w.project == Project.load(demo_copy / "demo.prj") and not w.dirty and not w.isWindowModified()
    assert w.field_widget("simulation.physics_hz").value() == w.project.simulation.physics_hz
    assert w.name_edit.text() == "SEAR demo" and w.terrain_tab.terrain_file.path() == demo_copy / "terrain.obj"


def test_a_wheel_position_step_restores_the_exact_coordinate(window):
    w = window
    wid = next(wid for wid in w.wheels_tab.wheel_offsets if w.project.wheels[wid].position is not None)
    _undo_redo_round_trip(w, lambda: w.wheels_tab.wheel_positions[wid][0].setValue(0.333),
                          lambda: w.project.wheels[wid].position)
    assert w.wheels_tab.wheel_positions[wid][0].value() == w.project.wheels[wid].position[0]


def test_the_clean_state_is_the_saved_project(window, answers):
    w = window
    assert not w.isWindowModified() and not w.commands["undo"].isEnabled()
    w.field_widget("dynamics.mass").setValue(21.0)
    w.field_widget("dynamics.mass").setValue(22.0)
    assert w.dirty and w.isWindowModified() and w.commands["undo"].text() == "&Undo Mass"
    assert w.save()
    assert not w.dirty and not w.isWindowModified()
    w.commands["undo"].trigger()  # away from the saved state, in the other direction
    assert w.project.dynamics.mass == 21.0 and w.dirty and w.isWindowModified()
    w.commands["redo"].trigger()
    assert w.project.dynamics.mass == 22.0 and not w.dirty and not w.isWindowModified()


def test_opening_a_project_starts_a_new_history(window, answers, demo_copy):
    window.field_widget("dynamics.mass").setValue(21.0)
    answers.question = QMessageBox.StandardButton.Discard
    assert window.open_project(demo_copy / "demo.prj")
    assert window.history.count() == 0 and not window.commands["undo"].isEnabled() and not window.dirty


def test_reset_defaults_asks_naming_the_tab_and_is_undoable(window, answers):
    w = window
    before = copy.deepcopy(w.project.dynamics)
    assert before != DEFAULT_DYNAMICS
    answers.question = QMessageBox.StandardButton.Cancel
    w.dynamics_tab.reset_button.click()
    kind, text = answers.shown[-1]
    assert kind == "question" and "Vehicle Dynamics" in text
    assert w.project.dynamics == before and w.history.count() == 0  # cancelled: nothing changed
    answers.question = QMessageBox.StandardButton.Reset
    w.commands["reset_dynamics"].trigger()
    assert w.project.dynamics == DEFAULT_DYNAMICS and w.field_widget("dynamics.mass").value() == 400.0
    w.commands["undo"].trigger()
    assert w.project.dynamics == before and w.field_widget("dynamics.mass").value() == before.mass
    auto_rest = w.dynamics_tab.auto_suspension["suspension_rest_length"]
    assert auto_rest.isChecked() == (before.suspension_rest_length is None)


def _focus_mass(w, qtbot):
    """The Vehicle Dynamics tab's mass field with the keyboard focus and its text selected, as a user who
    clicked into it would have it."""
    mass = w.field_widget("dynamics.mass")
    w.tabs.setCurrentIndex(3)
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow)
    mass.setFocus()
    qtbot.waitUntil(mass.hasFocus)
    mass.selectAll()
    return mass


def test_ctrl_z_undoes_while_the_edited_number_field_has_the_focus(window, qtbot):
    w = window
    mass = _focus_mass(w, qtbot)
    qtbot.keyClicks(mass, "35")
    qtbot.keyClick(mass, Qt.Key.Key_Return)
    assert w.project.dynamics.mass == 35.0
    qtbot.keyClick(mass, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert w.project.dynamics.mass == 20.0 and mass.value() == 20.0
    qtbot.keyClick(mass, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
    assert w.project.dynamics.mass == 35.0
    qtbot.keyClick(mass, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert w.project.dynamics.mass == 35.0  # nothing more to redo
    qtbot.keyClick(mass, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(mass, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert w.project.dynamics.mass == 35.0


def test_typing_0_for_the_mass_and_tab_says_why_it_was_not_taken(window, qtbot):
    w = window
    mass = _focus_mass(w, qtbot)
    qtbot.keyClicks(mass, "0")
    qtbot.keyClick(mass, Qt.Key.Key_Tab)
    message = w.statusBar().currentMessage()
    assert "'0' is not accepted" in message and "greater than 0" in message and "Kept 20.0000 kg" in message
    assert w.project.dynamics.mass == 20.0 and not w.dirty


def test_closing_while_a_simulation_runs_offers_to_stop_it_or_cancel(window, answers, qtbot):
    w = window
    process = QProcess(w)
    process.start("sleep", ["30"])
    assert process.waitForStarted(10_000)
    w.sim_process.process = process
    answers.question = QMessageBox.StandardButton.Cancel
    w.close()
    kind, text = answers.shown[-1]
    assert kind == "question" and "simulation" in text and "running" in text
    assert w.isVisible() and process.state() == QProcess.ProcessState.Running
    answers.question = QMessageBox.StandardButton.Yes
    w.close()
    assert not w.isVisible() and process.state() == QProcess.ProcessState.NotRunning


def test_closing_with_no_simulation_running_does_not_ask_about_one(window, answers):
    window.close()
    assert not window.isVisible() and not any("simulation" in text for _kind, text in answers.shown)


def test_menus_and_their_shortcuts(window):
    bar = window.menuBar()
    assert [a.text().replace("&", "") for a in bar.actions()] == ["File", "Edit", "View", "Simulation", "Help"]
    shortcuts = {key: window.commands[key].shortcut().toString() for key in
                 ("undo", "redo", "simulate", "stop", "wizard", "user_guide", "tab1", "tab5")}
    assert shortcuts == {"undo": "Ctrl+Z", "redo": "Ctrl+Shift+Z", "simulate": "F5", "stop": "Shift+F5",
                         "wizard": "F7", "user_guide": "F1", "tab1": "Ctrl+1", "tab5": "Ctrl+5"}
    assert "Ctrl+Y" in [k.toString() for k in window.commands["redo"].shortcuts()]
    edit_menu = bar.actions()[1].menu()
    assert window.commands["undo"] in edit_menu.actions() and window.commands["redo"] in edit_menu.actions()


def test_one_row_of_buttons(window):
    """The toolbar is the only row of Simulate/Save/Open buttons (item 12: no second row below the tabs)."""
    from PySide6.QtWidgets import QAbstractButton

    texts = [b.text() for b in window.findChildren(QAbstractButton) if b.isVisible()]
    for text in ("Simulate", "Save", "Sensor Wizard"):
        assert sum(t.rstrip("…") == text for t in texts) == 1, texts
    assert window.simulate_button.isVisible() and window.simulate_button.text() == "Simulate"


def test_field_tooltips_are_wrapped(window, qtbot):
    from PySide6.QtWidgets import QToolTip

    mass = window.field_widget("dynamics.mass")
    window.tabs.setCurrentIndex(3)
    tip = mass.toolTip()
    assert tip.startswith("<p>") and "greater than 0" in tip
    QToolTip.showText(mass.mapToGlobal(mass.rect().center()), tip + " " + "a long explanation " * 30, mass)
    labels = [w for w in QApplication.topLevelWidgets() if w.objectName() == "qtooltip_label" and w.isVisible()]
    assert labels
    em = labels[0].fontMetrics().horizontalAdvance("M")
    assert labels[0].width() <= 60 * em and labels[0].height() > 3 * labels[0].fontMetrics().height()
    QToolTip.hideText()
