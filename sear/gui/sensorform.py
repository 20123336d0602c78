"""A sensor type's form in the Sensor Wizard: one tab's editors, built from the type's declaration.

Everything on a form comes from sear.sensors.registry: for each field of the type's definition its label,
unit, limits (so the form refuses what loading would), tooltip, group (datasheet or noise) and visibility
hints, its datasheet presets (sear/data/sensor_presets.json), and the drawing the type supplies
(`Sensor.preview`, e.g. the cone of rays of a range sensor), and for a type that casts rays what a sensor
so defined costs (sear.sensors.cost), restated as each field changes. The wizard (sear.gui.wizard) holds a form per
tab and the list of added sensors.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from sear.fields import FieldInfo, field_info, fields_of
from sear.gui.widgets import IntField, NumberField, cross_marks
from sear.resources import packaged
from sear.sensors import registry
from sear.sensors.base import Sensor
from sear.sensors.config import COMMON_FIELDS, Pose, SensorConfig, consistency_problems
from sear.sensors.cost import RAY_CASTER_COST, casts_rays, describe, ray_cost

PRESETS_FILE = packaged("sensor_presets.json")
COST_STYLE = "color: #555;"
"""How a ray sensor's cost is shown."""
COST_WARNING_STYLE = "color: #b3261e; font-weight: bold;"
"""How it is shown when it is heavy (sear.sensors.cost.RayCost.heavy): red, bold."""
AXES_OPTIONS = ("xyz", "xy", "xz", "yz", "x", "y", "z")
"""What an `axes` field offers (subsets of the sensor's axes)."""


def load_presets() -> list[dict]:
    """Datasheet presets (sear/data/sensor_presets.json); empty when the file is missing."""
    try:
        return json.loads(PRESETS_FILE.read_text(encoding="utf-8"))["presets"]
    except (OSError, ValueError, KeyError):
        return []


def title_of(type_name: str) -> str:
    """The tab title of a sensor type (its TYPE when it declares none)."""
    model = registry.model(type_name)
    return (model.TITLE if model is not None else "") or type_name


class SensorForm(QWidget):
    """The fields of one sensor type; reads and writes a definition object."""

    edited = Signal(str)
    """The user changed a field (its label is sent; not sent while `set_config` fills the form)."""

    def __init__(self, model: type[Sensor], presets: list[dict], physics_hz: float | None = None) -> None:
        """`physics_hz`: the project's physics rate (Hz), which caps a sensor's rate in the cost shown."""
        super().__init__()
        self._filling = False
        self.physics_hz = physics_hz
        self.model = model
        self.cls: type[SensorConfig] = model.DEFINITION
        cls = self.cls
        self.presets = [p for p in presets if p["type"] == cls.TYPE]
        self.infos = {info.name: info for info in fields_of(cls)}
        self.editors: dict[str, QWidget] = {}
        self.rows: dict[str, tuple[QLabel, QWidget]] = {}

        outer = QHBoxLayout(self)
        left = QVBoxLayout()
        outer.addLayout(left, 3)
        ident = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText(f"e.g. front_{cls.TYPE}")
        self.name_edit.setToolTip(self.infos["name"].help)
        self.model_combo = QComboBox()
        self.model_combo.setEditable(True)
        self.model_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)  # a typed part number is no preset
        self.model_combo.addItem("")
        for preset in self.presets:
            self.model_combo.addItem(preset["model_number"])
        self.model_combo.setToolTip("Pick a part to fill in its datasheet figures, or type your own part number.")
        self.model_combo.activated.connect(self._preset_chosen)
        self.source = QLabel()
        self.source.setWordWrap(True)
        self.source.setStyleSheet("color: #555;")
        ident.addRow("Sensor name:", self.name_edit)
        ident.addRow("Model number:", self.model_combo)
        ident.addRow("", self.source)
        left.addLayout(ident)

        datasheet = QGroupBox("Datasheet")
        form = QFormLayout(datasheet)
        noise_box = QGroupBox("Noise")
        noise_form = QFormLayout(noise_box)
        self.noise_check = QCheckBox("Simulate this part's noise (off: exact readings)")
        self.noise_check.setToolTip(self.infos["noise"].help)
        self.noise_check.toggled.connect(self._update_visibility)
        self.noise_check.toggled.connect(lambda _on: self._edited("Noise"))
        self.name_edit.editingFinished.connect(lambda: self._edited("Sensor name"))
        line = self.model_combo.lineEdit()
        if line is not None:
            line.editingFinished.connect(lambda: self._edited("Model number"))
        noise_form.addRow("", self.noise_check)
        shared = {f.name for f in dataclasses.fields(SensorConfig)} - set(COMMON_FIELDS)
        # Fields every type has beyond the common ones (the latency) after the type's own.
        for info in sorted(self.infos.values(), key=lambda info: info.name in shared):
            if info.name in COMMON_FIELDS:
                continue
            editor = self._editor(info)
            self.editors[info.name] = editor
            label = QLabel(info.label + ":")
            target = noise_form if info.group == "noise" else form
            target.addRow(label, editor)
            self.rows[info.name] = (label, editor)
        left.addWidget(datasheet)
        self.cost_label = QLabel()
        """What a sensor so defined costs: its rays per second and share of a core (types that cast rays)."""
        self.cost_label.setWordWrap(True)
        self.cost_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if casts_rays(cls.TYPE):
            self.cost_label.setToolTip(
                "Rays one sample casts × samples per second, and the CPU time they take: "
                f"{RAY_CASTER_COST.per_sample_s * 1e3:.2f} ms per sample + {RAY_CASTER_COST.per_ray_s * 1e6:.2f} µs "
                "per ray, as bench/bench_rays.py measured SEAR's ray caster on a 2-core machine. 100 % is a "
                "whole core: above it, this sensor alone keeps a run on one core below real time.")
            left.addWidget(self.cost_label)
        else:
            self.cost_label.hide()
        left.addWidget(noise_box)

        mount = QGroupBox("Mounting on the body (x forward, y left, z up from the body's origin)")
        mount_layout = QGridLayout(mount)  # position on one row, angles on the next: fits narrow windows
        self.pose_fields: dict[str, NumberField] = {}
        for i, axis in enumerate(("x", "y", "z", "roll", "pitch", "yaw")):
            unit = field_info(Pose, axis).unit
            field = NumberField(unit, None, decimals=3, tooltip=f"Mounting {axis}, {unit}.")
            field.setMinimumWidth(80)
            field.valueChanged.connect(lambda _v, a=axis: self._edited(f"Mounting {a}"))
            label = QLabel(axis)
            label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            mount_layout.addWidget(label, i // 3, 2 * (i % 3))
            mount_layout.addWidget(field, i // 3, 2 * (i % 3) + 1)
            self.pose_fields[axis] = field
        self.link_edit = QLineEdit()  # URDF robots: the link the pose is given on
        self.link_edit.setPlaceholderText("base link")
        self.link_edit.setToolTip(self.infos["link"].help)
        self.link_edit.editingFinished.connect(lambda: self._edited("Link"))
        mount_layout.addWidget(QLabel("link"), 2, 0)
        mount_layout.addWidget(self.link_edit, 2, 1, 1, 5)
        left.addWidget(mount)
        left.addStretch(1)

        self.preview_plot: pg.PlotWidget | None = None
        self.preview_caption = QLabel()
        if model.preview(cls()) is not None:
            right = QVBoxLayout()
            self.preview_plot = pg.PlotWidget(background="w")
            self.preview_plot.setAspectLocked(True)
            self.preview_plot.setMinimumSize(240, 200)
            self.preview_caption.setWordWrap(True)
            right.addWidget(self.preview_plot, 1)
            right.addWidget(self.preview_caption)
            outer.addLayout(right, 2)
        for name, editor in self.editors.items():
            self._on_change(editor, self._changed)
            self._on_change(editor, lambda label=self.infos[name].label: self._edited(label))
        self.set_config(cls())

    @staticmethod
    def _on_change(editor: QWidget, slot: Any) -> None:
        if isinstance(editor, NumberField | IntField):
            editor.valueChanged.connect(lambda _v: slot())
        elif isinstance(editor, QComboBox):
            editor.currentIndexChanged.connect(lambda _i: slot())
        elif isinstance(editor, QCheckBox):
            editor.toggled.connect(lambda _on: slot())
        elif isinstance(editor, QLineEdit):
            editor.editingFinished.connect(slot)
        for check in getattr(editor, "checks", {}).values():
            check.toggled.connect(lambda _on: slot())
        for number in getattr(editor, "fields", ()):
            number.valueChanged.connect(lambda _v: slot())

    def _changed(self) -> None:
        self._update_visibility()
        self._update_preview()
        self._update_cost()

    def _update_cost(self) -> None:
        """State what the sensor in the form costs (nothing for a type that casts no rays)."""
        if not casts_rays(self.cls.TYPE):
            return
        config = self.config()
        cost = ray_cost(config, self.physics_hz)
        heavy = cost is not None and cost.heavy
        if cost is not None:
            text = "Ray cost: " + describe(cost)
        else:
            problems = consistency_problems(config)
            reason = problems[0][1] if problems else "the sensor casts no rays."
            text = "Ray cost: worked out once the fields agree (" + reason.rstrip(".") + ")."
        self.cost_label.setText(text)
        self.cost_label.setProperty("warning", heavy)
        self.cost_label.setStyleSheet(COST_WARNING_STYLE if heavy else COST_STYLE)

    def _edited(self, what: str) -> None:
        if not self._filling:
            self.edited.emit(what)

    def _editor(self, info: FieldInfo) -> QWidget:
        """The editor of one field, as its declaration describes it."""
        tip = " ".join(t for t in (info.help, f"Must be {info.meaning()}." if info.meaning() else "") if t)
        if info.enumeration or info.widget == "axes":
            combo = QComboBox()
            for option in info.enumeration or AXES_OPTIONS:
                combo.addItem(option, option)
            combo.setToolTip(info.help)
            return combo
        if info.type is bool:
            box = QCheckBox()
            box.setToolTip(info.help)
            return box
        if info.type is int:
            lo, hi, open_lo, _meaning = info.bounds()
            return IntField(int(lo) + (1 if open_lo else 0), int(min(hi, 2**31 - 1)), tooltip=tip)
        if info.type is float:
            decimals = info.decimals or (5 if info.unit in ("°/s", "m/s²") else 3)
            number = NumberField(info.unit, info.bounds(), decimals=decimals, tooltip=info.help)
            zero = re.search(r"\b0 = ([^;.]+)", info.help)
            if zero and number.minimum() == 0.0:  # '0 = the simulated wheel's true radius': say so, not 0.000
                number.setSpecialValueText(zero.group(1).strip())
                wide = number.fontMetrics().horizontalAdvance(number.specialValueText()) + 48  # text + arrows
                number.setMaximumWidth(max(number.maximumWidth(), wide))
                number.setMinimumWidth(wide)
            return number
        if info.choices:
            holder = QWidget()
            row = QHBoxLayout(holder)
            row.setContentsMargins(0, 0, 0, 0)
            holder.checks = {}  # type: ignore[attr-defined]
            for choice in info.choices:
                check = QCheckBox(choice.replace("_", " "))
                check.setToolTip(info.help)
                row.addWidget(check)
                holder.checks[choice] = check  # type: ignore[attr-defined]
            row.addStretch(1)
            return holder
        args = typing.get_args(info.type)
        if typing.get_origin(info.type) is tuple and args and Ellipsis not in args:
            holder = QWidget()
            row = QHBoxLayout(holder)
            row.setContentsMargins(0, 0, 0, 0)
            holder.fields = [NumberField(info.unit, None, decimals=1, tooltip=info.help)  # type: ignore[attr-defined]
                             for _ in args]
            names = ("east", "north", "up") if info.widget == "point2" else ("x", "y", "z", "w")
            for axis, f in zip(names, holder.fields, strict=False):  # type: ignore[attr-defined]
                row.addWidget(QLabel(axis))
                row.addWidget(f)
            row.addStretch(1)  # labels stay next to their fields
            return holder
        edit = QLineEdit()
        if typing.get_origin(info.type) is tuple:  # number lists (e.g. LIDAR layers)
            edit.setToolTip(info.help + " Numbers separated by spaces.")
        else:
            edit.setToolTip(info.help)
        return edit

    # --- values ------------------------------------------------------------------------------------------

    def set_config(self, config: SensorConfig) -> None:
        """Show a definition in the form (and the datasheet note of its part, when it is a preset)."""
        self._filling = True
        try:
            self._fill(config)
        finally:
            self._filling = False
        self.loaded = self.config()

    def preset_note(self, model_number: str) -> str:
        """The note under the model number: where the preset's figures come from ('' for another part)."""
        for preset in self.presets:
            if preset["model_number"] == model_number:
                return f"From {preset['source']}: {preset['figures']}"
        return ""

    def _fill(self, config: SensorConfig) -> None:
        self.source.setText(self.preset_note(config.model_number))
        self.name_edit.setText(config.name)
        self.link_edit.setText(config.link or "")
        self.model_combo.setEditText(config.model_number)
        self.noise_check.setChecked(config.noise)
        for axis, field in self.pose_fields.items():
            field.set(getattr(config.pose, axis))
        for name, editor in self.editors.items():
            value = getattr(config, name)
            editor.blockSignals(True)
            if isinstance(editor, NumberField):
                editor.set(float(value))
            elif isinstance(editor, IntField):
                editor.set(int(value))
            elif isinstance(editor, QComboBox):
                index = editor.findData(value)
                if index < 0:
                    editor.addItem(value, value)
                    index = editor.findData(value)
                editor.setCurrentIndex(index)
            elif isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif hasattr(editor, "checks"):
                for choice, check in editor.checks.items():
                    check.setChecked(choice in value)
            elif hasattr(editor, "fields"):
                for f, v in zip(editor.fields, value, strict=True):
                    f.set(float(v))
            elif isinstance(editor, QLineEdit):
                is_list = typing.get_origin(self.infos[name].type) is tuple
                editor.setText(" ".join(f"{v:g}" for v in value) if is_list else str(value))
            editor.blockSignals(False)
        self._changed()

    def _value(self, name: str, editor: QWidget) -> Any:
        if isinstance(editor, NumberField):
            return float(editor.value())
        if isinstance(editor, IntField):
            return int(editor.value())
        if isinstance(editor, QComboBox):
            return editor.currentData()
        if isinstance(editor, QCheckBox):
            return editor.isChecked()
        if hasattr(editor, "checks"):
            return tuple(w for w, c in editor.checks.items() if c.isChecked())
        if hasattr(editor, "fields"):
            return tuple(float(f.value()) for f in editor.fields)
        text = editor.text()  # type: ignore[attr-defined]
        if typing.get_origin(self.infos[name].type) is not tuple:
            return text
        try:
            return tuple(float(v) for v in text.split()) or (0.0,)
        except ValueError:
            return (0.0,)

    def config(self) -> SensorConfig:
        """The definition the form shows now (not checked; see problems())."""
        values = {name: self._value(name, editor) for name, editor in self.editors.items()}
        pose = Pose(**{axis: float(f.value()) for axis, f in self.pose_fields.items()})
        return self.cls(name=self.name_edit.text().strip(), model_number=self.model_combo.currentText().strip(),
                        pose=pose, link=self.link_edit.text().strip() or None, noise=self.noise_check.isChecked(),
                        **values)

    def problems(self) -> list[str]:
        config = self.config()
        out = []
        if not config.name:
            out.append("Give the sensor a name (it is how your code reads it: sim.read(\"name\")).")
        for name, editor in self.editors.items():
            info = self.infos[name]
            if isinstance(editor, QLineEdit) and typing.get_origin(info.type) is tuple:
                try:
                    [float(v) for v in editor.text().split()]
                except ValueError:
                    out.append(f"{info.label}: write numbers separated by spaces.")
            if info.choices and not getattr(config, name):
                out.append(f"{info.label}: choose at least one.")
        out += [sentence for _field, sentence in consistency_problems(config)]
        return out

    def is_modified(self) -> bool:
        return self.config() != self.loaded

    def clear(self) -> None:
        """Show the type's defaults, as a form nothing was typed in."""
        self.set_config(self.cls())

    def clear_fields(self) -> None:
        """The Clear All Fields button: the type's defaults, as an edit (undone by Edit > Undo)."""
        self.clear()
        self._edited("Clear All Fields")

    def _preset_chosen(self, index: int) -> None:
        if index <= 0 or index > len(self.presets):
            self.source.setText(self.preset_note(self.model_combo.currentText().strip()))
            return
        preset = self.presets[index - 1]
        config = self.config()
        for name, value in preset["fields"].items():
            setattr(config, name, tuple(value) if isinstance(value, list) else value)
        config.model_number = preset["model_number"]
        loaded = self.loaded
        self.set_config(config)
        self.loaded = loaded  # a preset fills fields but is not yet added: leaving the tab asks
        self._edited(f"Preset {preset['model_number']}")

    def _update_visibility(self) -> None:
        noise = self.noise_check.isChecked()
        for name, (label, editor) in self.rows.items():
            info = self.infos[name]
            visible = all(self._value(other, self.editors[other]) == wanted
                          for other, wanted in info.visible_when.items() if other in self.editors)
            label.setVisible(visible)
            editor.setVisible(visible)
            if info.group == "noise":
                editor.setEnabled(noise)

    def _update_preview(self) -> None:
        if self.preview_plot is None:
            return
        preview = self.model.preview(self.config())
        if preview is None:
            return
        plot = self.preview_plot
        plot.clear()
        plot.setTitle(preview.title, color="k")
        plot.setLabel("bottom", preview.x_label)
        plot.setLabel("left", preview.y_label)
        points = np.asarray(preview.points, dtype=float).reshape(-1, 2)
        span = float(np.ptp(points, axis=0).max()) if len(points) else 1.0
        # Crosses drawn as line pairs: pyqtgraph's ScatterPlotItem crashes PySide6 6.12 when painted.
        plot.plot(*cross_marks(points[:, 0], points[:, 1], max(span / 40.0, 1e-4)),
                  pen=pg.mkPen(31, 119, 180, width=2), connect="pairs")
        outline = np.asarray(preview.outline, dtype=float).reshape(-1, 2)
        if len(outline):
            plot.plot(outline[:, 0], outline[:, 1], pen=pg.mkPen((150, 150, 150)))
        self.preview_caption.setText(preview.caption)
