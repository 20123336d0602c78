"""The settings window's number editors take their unit, limits and label from the field declarations."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QFormLayout, QLabel

from sear.gui.settings.window import SettingsWindow

pytestmark = pytest.mark.gl


@pytest.fixture
def window(qtbot, answers):
    w = SettingsWindow()
    qtbot.addWidget(w)
    yield w
    w.dirty = False


def _label_of(editor) -> str:
    form = editor.parentWidget().layout()
    assert isinstance(form, QFormLayout)
    label = form.labelForField(editor)
    assert isinstance(label, QLabel)
    return label.text()


@pytest.mark.parametrize(("section", "name", "suffix", "lowest", "highest", "label"), [
    # Expected figures as the file format defines them (docs/project-format.md), not read from the code.
    ("dynamics", "mass", " kg", 0.0001, 1e9, "Mass:"),                       # > 0
    ("dynamics", "engine_force", " N", 0.0, 1e9, "Acceleration force:"),     # >= 0
    ("terrain", "latitude", " °", -90.0, 90.0, "Latitude:"),
    ("terrain", "longitude", " °", -180.0, 180.0, "Longitude:"),
    ("simulation", "physics_hz", " Hz", 120.0, 1000.0, "Physics rate:"),   # 120 to 1000
    ("code", "hook_timeout", " s", 0.01, 3600.0, "Hook time-out:"),        # 0.01 to 3600
])
def test_editor_limits_units_and_labels(window, section, name, suffix, lowest, highest, label):
    editor = window.field_widget(f"{section}.{name}")
    assert editor.suffix() == suffix
    assert editor.minimum() == pytest.approx(lowest, abs=1e-6) and editor.maximum() == highest
    assert _label_of(editor) == label
    editor.setValue(lowest - 1.0)  # refused: held at the limit
    assert editor.value() == pytest.approx(lowest, abs=1e-6)
    editor.setValue(lowest + 1.0)  # positive control: a value inside the limits is kept
    assert editor.value() == pytest.approx(lowest + 1.0)
