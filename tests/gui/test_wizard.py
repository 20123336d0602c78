"""The Sensor Wizard, driven through its widgets."""

from __future__ import annotations

import json

import pytest

from sear.gui.sensorform import PRESETS_FILE
from sear.gui.widgets import IntField, NumberField
from sear.project import Project
from sear.sensors.files import load_sensors
from sear.sensors.range import ray_count
from sear.sensors.registry import definitions

pytestmark = pytest.mark.gl


def _fill(form, name: str) -> dict:
    """Type a name and change every number on the form (within its limits); return what was set."""
    form.name_edit.setText(name)
    changed = {}
    for field, editor in form.editors.items():
        if isinstance(editor, NumberField) and editor.isEnabled():
            value = round(min(editor.maximum(), editor.value() * 1.5 + 1.0), 3)
            if field == "min_range_cm":
                value = 5.0
            if field == "accuracy_pct":
                value = 7.5
            editor.setValue(value)
            changed[field] = value
        elif isinstance(editor, IntField):
            value = min(720, editor.maximum())  # an ADC's bits stop at 24
            editor.setValue(value)
            changed[field] = value
    form.pose_fields["x"].setValue(0.123)
    form.pose_fields["yaw"].setValue(-45.0)
    return changed


def test_every_sensor_type_round_trips_through_the_widgets(wizard, tmp_path, answers):
    expected = {}
    for index, type_name in enumerate(definitions()):
        wizard.tabs.setCurrentIndex(index)
        form = wizard.form
        expected[f"my_{type_name}"] = (type_name, _fill(form, f"my_{type_name}"))
        wizard.add_buttons[index].click()
    assert wizard.list.count() == len(definitions())
    answers.save_path = str(tmp_path / "sensors.xml")
    wizard.save_and_close()
    assert wizard.saved_path == tmp_path / "sensors.xml"
    loaded = load_sensors(tmp_path / "sensors.xml")
    assert [s.name for s in loaded] == list(expected)
    for sensor in loaded:
        type_name, changed = expected[sensor.name]
        assert type_name == sensor.TYPE
        assert sensor.pose.x == pytest.approx(0.123) and sensor.pose.yaw == pytest.approx(-45.0)
        for field, value in changed.items():
            assert getattr(sensor, field) == pytest.approx(value), (sensor.name, field)


def test_names_must_be_unique_and_present(wizard, answers):
    wizard.tabs.setCurrentIndex(2)  # GPS
    wizard.form.name_edit.setText("")
    assert not wizard.add_current()
    assert "Give the sensor a name" in answers.shown[-1][1]
    wizard.form.name_edit.setText("nav")
    assert wizard.add_current()
    wizard.form.name_edit.setText("nav")
    assert not wizard.add_current()
    assert "named 'nav' exists" in answers.shown[-1][1]
    assert len(wizard.sensors) == 1


def test_inconsistent_ranges_are_refused_with_the_reason(wizard, answers):
    form = wizard.forms[0]
    form.name_edit.setText("ir")
    form.editors["min_range_cm"].setValue(90.0)
    assert not wizard.add_current()
    assert "minimum range" in answers.shown[-1][1]


def test_leaving_a_tab_with_unadded_values_asks(wizard, monkeypatch):
    choices = iter(["stay", "discard", "add"])
    asked = []
    monkeypatch.setattr(wizard, "ask_leave", lambda tab: asked.append(tab) or next(choices))
    wizard.tabs.setCurrentIndex(0)
    wizard.form.name_edit.setText("left_ir")
    wizard.tabs.setCurrentIndex(1)                       # stay
    assert wizard.tabs.currentIndex() == 0 and asked == ["Infrared"]
    wizard.tabs.setCurrentIndex(1)                       # discard
    assert wizard.tabs.currentIndex() == 1 and wizard.forms[0].name_edit.text() == "" and not wizard.sensors
    wizard.form.name_edit.setText("sonar")
    wizard.tabs.setCurrentIndex(2)                       # add
    assert wizard.tabs.currentIndex() == 2 and [s.name for s in wizard.sensors] == ["sonar"]
    wizard.tabs.setCurrentIndex(3)                       # nothing typed on GPS: no question
    assert len(asked) == 3


def test_presets_fill_the_datasheet_fields(wizard):
    presets = json.loads(PRESETS_FILE.read_text())["presets"]
    names = {p["model_number"] for p in presets}
    for part in ("Sharp GP2D12", "Sharp GP2D15", "Sharp GP2Y0A02YK0F", "MaxBotix LV-MaxSonar-EZ1", "SICK LMS200",
                 "Hokuyo URG-04LX", "Analog Devices ADXL335", "InvenSense MPU-6050 (gyroscope)",
                 "InvenSense MPU-6050 (accelerometer)", "Honeywell HMC5883L", "u-blox NEO-6M", "Velodyne VLP-16",
                 "Velodyne HDL-32E", "Intel RealSense D435 (depth, 424×240)"):
        assert part in names
    for preset in presets:
        assert preset["source"] and preset["figures"]
        index = list(definitions()).index(preset["type"])
        wizard.tabs.blockSignals(True)
        wizard.tabs.setCurrentIndex(index)
        wizard.tabs.blockSignals(False)
        form = wizard.forms[index]
        combo_index = form.model_combo.findText(preset["model_number"])
        form.model_combo.setCurrentIndex(combo_index)
        form.model_combo.activated.emit(combo_index)
        config = form.config()
        for field, value in preset["fields"].items():
            got = getattr(config, field)
            if isinstance(value, list):  # a list of numbers (LIDAR layers), a tuple in the definition
                got, value = list(got), pytest.approx(value)
            assert got == (pytest.approx(value) if isinstance(value, float) else value), (preset["model_number"], field)
        assert preset["figures"][:20] in form.source.text()


def test_digital_infrared_shows_only_its_fields_and_the_cone_is_drawn(wizard):
    form = wizard.forms[0]
    assert "55 rays per sample" in form.preview_caption.text()  # GP2D12 defaults: 6 cm beam, 1 cm resolution
    output = form.editors["output"]
    output.setCurrentIndex(output.findData("digital"))
    assert not form.editors["max_range_cm"].isVisible() and form.editors["switching_distance_cm"].isVisible()
    form.editors["beam_width_cm"].setValue(10.0)
    assert f"{ray_count(0.10, 0.01)} rays per sample" in form.preview_caption.text()


def test_select_edit_duplicate_remove(wizard):
    wizard.tabs.setCurrentIndex(6)  # compass
    wizard.form.name_edit.setText("north")
    wizard.add_current()
    wizard.list.setCurrentRow(0)
    wizard.duplicate()
    assert [s.name for s in wizard.sensors] == ["north", "north_2"]
    wizard._select(wizard.list.item(1))
    assert wizard.add_buttons[6].text() == "Update north_2"
    wizard.form.editors["accuracy_deg"].setValue(0.5)
    wizard.add_current()
    assert wizard.sensors[1].accuracy_deg == 0.5 and len(wizard.sensors) == 2
    wizard.list.setCurrentRow(0)
    wizard.remove()
    assert [s.name for s in wizard.sensors] == ["north_2"]


def test_save_links_the_file_to_the_project(qtbot, tmp_path, answers, demo_dir):
    from sear.gui.settings.window import SettingsWindow

    window = SettingsWindow(Project(name="link"))
    qtbot.addWidget(window)
    answers.save_path = str(tmp_path / "link.prj")
    window.save()

    def run_wizard(self):
        self.tabs.setCurrentIndex(2)
        self.form.name_edit.setText("gps")
        self.add_current()
        answers.save_path = str(tmp_path / "link_sensors.xml")
        self.save_and_close()
        return self.result()

    import sear.gui.wizard as wizard_module

    original = wizard_module.SensorWizard.exec
    wizard_module.SensorWizard.exec = run_wizard
    try:
        window.code_tab.open_wizard()
    finally:
        wizard_module.SensorWizard.exec = original
    assert window.project.code.sensors == tmp_path / "link_sensors.xml"
    assert window.code_tab.sensors_file.path() == tmp_path / "link_sensors.xml"
    assert [s.name for s in load_sensors(tmp_path / "link_sensors.xml")] == ["gps"]
    window.dirty = False


def test_cancel_with_added_sensors_asks_before_discarding(wizard, answers):
    from PySide6.QtWidgets import QMessageBox

    wizard.reject()  # nothing changed: closes without asking
    assert not wizard.isVisible() and answers.shown == []
    wizard.show()
    wizard.tabs.setCurrentIndex(2)  # GPS
    wizard.form.name_edit.setText("gps")
    assert wizard.add_current()
    answers.question = QMessageBox.StandardButton.Cancel
    wizard.close()
    assert wizard.isVisible() and [s.name for s in wizard.sensors] == ["gps"]
    assert answers.shown[-1][0] == "question" and "discard" in answers.shown[-1][1].lower()
    answers.question = QMessageBox.StandardButton.Discard
    wizard.reject()
    assert not wizard.isVisible() and wizard.saved_path is None
