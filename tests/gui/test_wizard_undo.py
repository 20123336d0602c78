"""The Sensor Wizard's undo, menus and the small points of issue 13 item 12 (duplicate edits the copy,
update errors, list entries, what 0 means, the north point's labels, the datasheet note)."""

from __future__ import annotations

import copy

import pytest
from PySide6.QtCore import Qt

from sear.gui.widgets import NumberField
from sear.gui.wizard import SensorWizard
from sear.sensors.registry import definitions

pytestmark = pytest.mark.gl
TYPES = list(definitions())


@pytest.fixture
def wizard(wizard, monkeypatch):
    """conftest's wizard, throwing away the fields left on a tab when another is chosen."""
    monkeypatch.setattr(wizard, "ask_leave", lambda tab: "discard")
    return wizard


def _tab(wizard: SensorWizard, type_name: str):
    index = TYPES.index(type_name)
    wizard.tabs.setCurrentIndex(index)
    assert wizard.tabs.currentIndex() == index
    return wizard.forms[index]


def _add(wizard: SensorWizard, type_name: str, name: str) -> None:
    form = _tab(wizard, type_name)
    form.name_edit.setText(name)
    form.name_edit.editingFinished.emit()
    assert wizard.add_current()


def _state(wizard: SensorWizard):
    return copy.deepcopy((wizard.sensors, [f.config() for f in wizard.forms]))


def _step(wizard: SensorWizard, edit) -> None:
    """One edit is one step: Undo puts back exactly the state before it, Redo the state after."""
    before, index = _state(wizard), wizard.history.index()
    edit()
    after = _state(wizard)
    assert after != before and wizard.history.index() == index + 1
    wizard.commands["undo"].trigger()
    now = _state(wizard)
    assert now == before, [(a, b) for a, b in zip(now[1] + now[0], before[1] + before[0], strict=False) if a != b]
    wizard.commands["redo"].trigger()
    assert _state(wizard) == after


def test_undo_of_each_kind_of_edit_in_the_wizard(wizard):
    _add(wizard, "compass", "north")
    form = _tab(wizard, "compass")
    _step(wizard, lambda: form.editors["accuracy_deg"].setValue(0.75))                       # a number field
    _step(wizard, lambda: form.editors["output_unit"].setCurrentIndex(1))                      # a choice
    _step(wizard, lambda: form.editors["north_point"].fields[1].setValue(500.0))              # a point field
    _step(wizard, lambda: form.noise_check.setChecked(not form.noise_check.isChecked()))       # a check box
    _step(wizard, lambda: form.pose_fields["z"].setValue(0.3))                                 # the mounting
    _step(wizard, lambda: (form.name_edit.setText("south"), form.name_edit.editingFinished.emit()))
    _step(wizard, form.clear_fields)                                                           # Clear All Fields
    preset = form.model_combo.findText("Honeywell HMC5883L")
    assert preset > 0
    _step(wizard, lambda: (form.model_combo.setCurrentIndex(preset), form.model_combo.activated.emit(preset)))
    assert "HMC5883L" in form.source.text()
    form.name_edit.setText("second")
    form.name_edit.editingFinished.emit()  # as when the focus leaves the field for the Add button
    _step(wizard, wizard.add_current)                                                          # add
    wizard.list.setCurrentRow(0)
    _step(wizard, wizard.duplicate)                                                            # duplicate
    wizard.list.setCurrentRow(1)
    _step(wizard, wizard.remove)                                                               # remove
    odometer = _tab(wizard, "odometer")
    _step(wizard, lambda: odometer.editors["wheels"].checks["left_front"].setChecked(True))    # a wheel choice
    wizard.list.setCurrentRow(0)
    wizard._select(wizard.list.item(0))
    _step(wizard, lambda: wizard.form.editors["bandwidth_hz"].setValue(7.0))
    _step(wizard, wizard.add_current)                                                          # update
    assert wizard.sensors[0].bandwidth_hz == 7.0
    wizard.commands["undo"].trigger()
    assert wizard.sensors[0].bandwidth_hz != 7.0 and wizard.form.editors["bandwidth_hz"].value() == 7.0


def test_undo_all_the_way_back_is_the_wizard_as_opened(wizard):
    opened = _state(wizard)
    assert not wizard.isWindowModified()
    _add(wizard, "gps", "gps")
    _add(wizard, "lidar", "scan")
    wizard.list.setCurrentRow(0)
    wizard.duplicate()
    assert wizard.isWindowModified() and len(wizard.sensors) == 3
    while wizard.history.canUndo():
        wizard.commands["undo"].trigger()
    assert _state(wizard) == opened and wizard.sensors == [] and not wizard.isWindowModified()


def test_ctrl_z_in_the_wizard(wizard, qtbot):
    form = _tab(wizard, "gyroscope")
    wizard.activateWindow()
    qtbot.waitUntil(wizard.isActiveWindow)
    field = next(e for e in form.editors.values() if isinstance(e, NumberField) and e.isEnabled())
    old = field.value()
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    field.selectAll()
    qtbot.keyClicks(field, "9")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert field.value() == 9.0 != old
    qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert field.value() == old
    qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert field.value() == 9.0


def test_menus(wizard):
    menus = [a.text().replace("&", "") for a in wizard.layout().menuBar().actions()]
    assert menus == ["Edit", "Help"]
    assert wizard.commands["undo"].shortcut().toString() == "Ctrl+Z"
    assert wizard.commands["user_guide"].shortcut().toString() == "F1"


def test_duplicate_edits_the_duplicate(wizard):
    _add(wizard, "ultrasonic", "sonar")
    wizard.list.setCurrentRow(0)
    wizard.duplicate()
    assert [s.name for s in wizard.sensors] == ["sonar", "sonar_2"]
    assert wizard.editing == 1 and wizard.form.name_edit.text() == "sonar_2"
    assert wizard.add_buttons[TYPES.index("ultrasonic")].text() == "Update sonar_2"
    assert wizard.list.currentRow() == 1
    wizard.form.pose_fields["y"].setValue(-0.1)
    assert wizard.add_current()
    assert wizard.sensors[1].pose.y == -0.1 and wizard.sensors[0].pose.y == 0.0


def test_an_update_error_says_update_and_an_add_error_says_add(wizard, answers):
    _add(wizard, "gps", "gps")
    _add(wizard, "gps", "gps2")
    wizard._select(wizard.list.item(1))
    wizard.form.name_edit.setText("gps")  # clashes with the first
    assert not wizard.add_current()
    kind, text = answers.shown[-1]
    assert kind == "warning" and text.startswith("Cannot update this sensor") and "unique" in text
    wizard.form.clear()
    wizard._set_editing(None)
    wizard.form.name_edit.setText("gps")
    assert not wizard.add_current()
    assert answers.shown[-1][1].startswith("Cannot add this sensor")


def test_list_entries_fit_the_list(wizard):
    form = _tab(wizard, "odometer")
    preset = max(range(1, form.model_combo.count()), key=lambda i: len(form.model_combo.itemText(i)))
    form.model_combo.setCurrentIndex(preset)
    form.model_combo.activated.emit(preset)
    form.name_edit.setText("odometer")
    assert wizard.add_current()
    item = wizard.list.item(0)
    assert form.model_combo.itemText(preset) in item.text()
    rect = wizard.list.visualItemRect(item)
    metrics = wizard.list.fontMetrics()
    widest = max(metrics.horizontalAdvance(line) for line in item.text().splitlines())
    assert widest < wizard.list.viewport().width() and rect.right() <= wizard.list.viewport().width()


def test_a_zero_that_means_something_says_what(wizard, qtbot):
    radius = _tab(wizard, "odometer").editors["wheel_radius_m"]
    assert radius.value() == 0.0 and "wheel" in radius.text() and "0.000" not in radius.text()
    qtbot.waitUntil(radius.isVisible)
    assert radius.lineEdit().width() >= radius.fontMetrics().horizontalAdvance(radius.text())  # not cut off
    radius.setValue(0.05)
    assert radius.text().startswith("0.050")


def test_north_point_labels_sit_beside_their_fields(wizard):
    from PySide6.QtWidgets import QLabel

    holder = _tab(wizard, "compass").editors["north_point"]
    labels = [w for w in holder.findChildren(QLabel) if w.text() in ("east", "north")]
    assert len(labels) == 2
    for label, field in zip(labels, holder.fields, strict=True):
        gap = field.geometry().left() - label.geometry().right()
        assert 0 <= gap <= 20, (label.text(), gap)


def test_the_datasheet_note_stays_while_editing(wizard):
    form = _tab(wizard, "infrared")
    preset = form.model_combo.findText("Sharp GP2D12")
    form.model_combo.setCurrentIndex(preset)
    form.model_combo.activated.emit(preset)
    note = form.source.text()
    assert note.startswith("From ")
    form.editors["beam_width_cm"].setValue(9.0)
    assert form.source.text() == note
    form.name_edit.setText("ir")
    assert wizard.add_current() and form.source.text() == ""
    wizard._select(wizard.list.item(0))  # editing the sensor shows its part's note again
    assert form.source.text() == note


def test_every_long_tooltip_is_wrapped(wizard, qtbot):
    from PySide6.QtWidgets import QWidget

    from sear.gui.settings.window import SettingsWindow

    settings = SettingsWindow()
    qtbot.addWidget(settings)
    tips = [w.toolTip() for root in (wizard, settings) for w in root.findChildren(QWidget) if w.toolTip()]
    long_tips = [t for t in tips if len(t) > 80]
    assert len(long_tips) > 50  # the field explanations
    plain = [t for t in long_tips if not t.startswith("<")]
    assert plain == []


@pytest.mark.parametrize("field", ["number", "model number", "sensor name"])
def test_edit_undo_takes_the_value_being_typed_as_the_step_it_undoes(wizard, qtbot, field):
    """Edit > Undo with a value still being typed (a spin box, the editable Model number box, a text
    field): the typed value becomes a step first and is the one undone, not the step before it."""
    wizard.activateWindow()
    qtbot.waitUntil(wizard.isActiveWindow)
    form = _tab(wizard, "lidar")
    number = next(e for e in form.editors.values() if isinstance(e, NumberField) and e.isVisibleTo(form))
    editor = {"number": number, "model number": form.model_combo, "sensor name": form.name_edit}[field]
    _add(wizard, "gps", "earlier")  # the step before: must survive the Undo
    form = _tab(wizard, "lidar")
    before = form.config()
    editor.setFocus()
    qtbot.waitUntil(editor.hasFocus)
    qtbot.keyClick(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(editor, "7")
    assert form.config() != before or field == "number"  # a spin box's value changes only once taken
    steps = wizard.history.index()
    wizard.commands["undo"].trigger()
    assert [s.name for s in wizard.sensors] == ["earlier"]
    assert form.config() == before and wizard.history.index() == steps  # the typed step, then undone
    wizard.commands["redo"].trigger()
    assert form.config() != before  # the typed value, back
