"""The Sensor Wizard (SPEC §2): one tab per sensor type, filled from datasheets or presets.

Each tab's form is built from the sensor definition dataclass (sear.sensors.config): its fields, units
(from the field names), limits (from the sensors schema, so the form refuses what loading would) and
tooltips (the fields' docstrings). Added sensors are listed on the left, where they can be selected to
edit, duplicated or removed. Save and Close writes the sensors file through `save_sensors`.
"""

from __future__ import annotations

import copy
import json
import typing
from dataclasses import fields
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sear.errors import SearError
from sear.fielddocs import field_docs
from sear.fields import fields_of
from sear.gui.widgets import IntField, NumberField, cross_marks, label_of, unit_of
from sear.project import WHEEL_IDS, Project
from sear.sensors.config import SENSOR_TYPES, Pose, SensorConfig, consistency_problems, load_sensors, save_sensors
from sear.sensors.range import cone_directions, ray_count

PRESETS_FILE = Path(__file__).resolve().parent.parent.parent / "assets" / "sensor_presets.json"
TITLES = {"infrared": "Infrared", "ultrasonic": "Ultrasonic", "gps": "GPS", "lidar": "LIDAR",
          "accelerometer": "Accelerometer", "gyroscope": "Gyroscope", "compass": "Compass", "odometer": "Odometer"}
COMMON = {"name", "model_number", "pose", "noise"}
DIGITAL_ONLY = {"switching_distance_cm"}
LABELS = {"layers_deg": "Layers (vertical angles, °)", "sick_format": "SICK LMS2xx packing",
          "resolution_mv_per_g": "Sensitivity", "adc_step_mv": "ADC step", "accuracy_pct": "Accuracy (scale error)",
          "bias_walk_mps2": "Bias random walk (per √s)", "bias_walk_dps": "Drift (bias walk per √s)",
          "ticks_per_rev": "Ticks per revolution", "max_incidence_deg": "Max incidence"}
ANALOG_ONLY = {"min_range_cm", "max_range_cm", "resolution_cm", "noise_stddev_cm"}


def load_presets() -> list[dict]:
    """Datasheet presets (assets/sensor_presets.json); empty when the file is missing."""
    try:
        return json.loads(PRESETS_FILE.read_text(encoding="utf-8"))["presets"]
    except (OSError, ValueError, KeyError):
        return []


def _is_noise(name: str) -> bool:
    return name.startswith(("noise_", "bias_")) or name == "accuracy_pct"


class SensorForm(QWidget):
    """The fields of one sensor type; reads and writes a definition object."""

    def __init__(self, cls: type[SensorConfig], presets: list[dict]) -> None:
        super().__init__()
        self.cls = cls
        self.presets = [p for p in presets if p["type"] == cls.TYPE]
        self.docs = field_docs(cls)
        bounds = {i.name: i.bounds() for i in fields_of(cls) if i.is_number}
        self.editors: dict[str, QWidget] = {}
        self.rows: dict[str, tuple[QLabel, QWidget]] = {}
        hints = typing.get_type_hints(cls)

        outer = QHBoxLayout(self)
        left = QVBoxLayout()
        outer.addLayout(left, 3)
        ident = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText(f"e.g. front_{cls.TYPE}")
        self.name_edit.setToolTip(self.docs.get("name", ""))
        self.model_combo = QComboBox()
        self.model_combo.setEditable(True)
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
        self.noise_check.setToolTip(self.docs.get("noise", ""))
        self.noise_check.toggled.connect(self._update_visibility)
        noise_form.addRow("", self.noise_check)
        for f in fields(cls):
            if f.name in COMMON:
                continue
            tp = hints[f.name]
            editor = self._editor(f.name, tp, bounds.get(f.name))
            self.editors[f.name] = editor
            label = QLabel(LABELS.get(f.name, label_of(f.name)) + ":")
            target = noise_form if _is_noise(f.name) else form
            target.addRow(label, editor)
            self.rows[f.name] = (label, editor)
        left.addWidget(datasheet)
        left.addWidget(noise_box)

        mount = QGroupBox("Mounting on the body (x forward, y left, z up from the body's origin)")
        mount_layout = QHBoxLayout(mount)
        self.pose_fields: dict[str, NumberField] = {}
        for axis in ("x", "y", "z", "roll", "pitch", "yaw"):
            unit = "m" if axis in "xyz" else "°"
            field = NumberField(unit, None, decimals=3, tooltip=f"Mounting {axis}, {unit}.")
            field.setMinimumWidth(80)
            mount_layout.addWidget(QLabel(axis))
            mount_layout.addWidget(field)
            self.pose_fields[axis] = field
        left.addWidget(mount)
        left.addStretch(1)

        self.cone_plot: pg.PlotWidget | None = None
        if cls.TYPE in ("infrared", "ultrasonic"):
            right = QVBoxLayout()
            self.cone_plot = pg.PlotWidget(background="w")
            self.cone_plot.setAspectLocked(True)
            self.cone_plot.setMinimumSize(340, 300)
            self.cone_plot.setTitle("Rays at the end of the beam", color="k")
            self.cone_plot.setLabel("bottom", "y, across the beam (cm)")
            self.cone_plot.setLabel("left", "z, across the beam (cm)")
            self.cone_count = QLabel()
            self.cone_count.setWordWrap(True)
            right.addWidget(self.cone_plot, 1)
            right.addWidget(self.cone_count)
            outer.addLayout(right, 2)
            for name in ("beam_width_cm", "max_range_cm", "resolution_cm", "switching_distance_cm", "output",
                         "update_rate_hz"):
                editor = self.editors.get(name)
                if isinstance(editor, NumberField):
                    editor.valueChanged.connect(lambda _v: self._update_cone())
                elif isinstance(editor, QComboBox):
                    editor.currentIndexChanged.connect(lambda _i: self._update_cone())
        if "output" in self.editors:
            self.editors["output"].currentIndexChanged.connect(lambda _i: self._update_visibility())
        self.set_config(cls())

    def _editor(self, name: str, tp, bounds) -> QWidget:
        tip = self.docs.get(name, "")
        origin = typing.get_origin(tp)
        if origin is typing.Literal:
            combo = QComboBox()
            for option in typing.get_args(tp):
                combo.addItem(option, option)
            combo.setToolTip(tip)
            return combo
        if tp is bool:
            box = QCheckBox()
            box.setToolTip(tip)
            return box
        if tp is int:
            return IntField(1, 10**9, tooltip=tip)
        if tp is float:
            unit = unit_of(name)
            return NumberField(unit, bounds, decimals=5 if unit in ("°/s", "m/s²") else 3, tooltip=tip)
        if name == "axes":
            combo = QComboBox()
            for option in ("xyz", "xy", "xz", "yz", "x", "y", "z"):
                combo.addItem(option, option)
            combo.setToolTip(tip)
            return combo
        if name == "wheels":
            holder = QWidget()
            row = QHBoxLayout(holder)
            row.setContentsMargins(0, 0, 0, 0)
            holder.checks = {}
            for wid in WHEEL_IDS:
                check = QCheckBox(wid.replace("_", " "))
                check.setToolTip(tip)
                row.addWidget(check)
                holder.checks[wid] = check
            return holder
        if name == "north_point":
            holder = QWidget()
            row = QHBoxLayout(holder)
            row.setContentsMargins(0, 0, 0, 0)
            holder.fields = [NumberField("m", None, decimals=1, tooltip=tip) for _ in range(2)]
            for axis, f in zip(("east", "north"), holder.fields, strict=True):
                row.addWidget(QLabel(axis))
                row.addWidget(f)
            return holder
        edit = QLineEdit()  # number lists (LIDAR layers)
        edit.setToolTip(tip + " Numbers separated by spaces.")
        return edit

    # --- values ------------------------------------------------------------------------------------------

    def set_config(self, config: SensorConfig) -> None:
        """Show a definition in the form."""
        self.name_edit.setText(config.name)
        self.model_combo.setEditText(config.model_number)
        self.noise_check.setChecked(config.noise)
        for axis, field in self.pose_fields.items():
            field.set(getattr(config.pose, axis))
        for name, editor in self.editors.items():
            value = getattr(config, name)
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
                for wid, check in editor.checks.items():
                    check.setChecked(wid in value)
            elif hasattr(editor, "fields"):
                for f, v in zip(editor.fields, value, strict=True):
                    f.set(float(v))
            elif isinstance(editor, QLineEdit):
                editor.setText(" ".join(f"{v:g}" for v in value))
        self._update_visibility()
        self._update_cone()
        self.loaded = self.config()

    def config(self) -> SensorConfig:
        """The definition the form shows now (not checked; see problems())."""
        values = {}
        for name, editor in self.editors.items():
            if isinstance(editor, NumberField):
                values[name] = float(editor.value())
            elif isinstance(editor, IntField):
                values[name] = int(editor.value())
            elif isinstance(editor, QComboBox):
                values[name] = editor.currentData()
            elif isinstance(editor, QCheckBox):
                values[name] = editor.isChecked()
            elif hasattr(editor, "checks"):
                values[name] = tuple(w for w, c in editor.checks.items() if c.isChecked())
            elif hasattr(editor, "fields"):
                values[name] = tuple(float(f.value()) for f in editor.fields)
            elif isinstance(editor, QLineEdit):
                try:
                    values[name] = tuple(float(v) for v in editor.text().split()) or (0.0,)
                except ValueError:
                    values[name] = (0.0,)
        pose = Pose(**{axis: float(f.value()) for axis, f in self.pose_fields.items()})
        return self.cls(name=self.name_edit.text().strip(), model_number=self.model_combo.currentText().strip(),
                        pose=pose, noise=self.noise_check.isChecked(), **values)

    def problems(self) -> list[str]:
        config = self.config()
        out = []
        if not config.name:
            out.append("Give the sensor a name (it is how your code reads it: sim.read(\"name\")).")
        if "layers_deg" in self.editors:
            text = self.editors["layers_deg"].text().split()
            try:
                [float(v) for v in text]
            except ValueError:
                out.append("Layers: write the vertical angles as numbers separated by spaces.")
        if "wheels" in self.editors and not config.wheels:
            out.append("Choose at least one wheel for the odometer.")
        out += [sentence for _field, sentence in consistency_problems(config)]
        return out

    def is_modified(self) -> bool:
        return self.config() != self.loaded

    def clear(self) -> None:
        self.set_config(self.cls())
        self.source.setText("")

    def _preset_chosen(self, index: int) -> None:
        if index <= 0:
            self.source.setText("")
            return
        preset = self.presets[index - 1]
        config = self.config()
        for name, value in preset["fields"].items():
            setattr(config, name, tuple(value) if isinstance(value, list) else value)
        config.model_number = preset["model_number"]
        loaded = self.loaded
        self.set_config(config)
        self.loaded = loaded  # a preset fills fields but is not yet added: leaving the tab asks
        self.source.setText(f"From {preset['source']}: {preset['figures']}")

    def _update_visibility(self) -> None:
        digital = "output" in self.editors and self.editors["output"].currentData() == "digital"
        noise = self.noise_check.isChecked()
        for name, (label, editor) in self.rows.items():
            visible = not (digital and name in ANALOG_ONLY) and not (not digital and name in DIGITAL_ONLY)
            label.setVisible(visible)
            editor.setVisible(visible)
            if _is_noise(name):
                editor.setEnabled(noise)

    def _update_cone(self) -> None:
        if self.cone_plot is None:
            return
        cfg = self.config()
        digital = getattr(cfg, "output", "analog") == "digital"
        length_cm = cfg.switching_distance_cm if digital else cfg.max_range_cm
        beam, res = cfg.beam_width_cm / 100.0, cfg.resolution_cm / 100.0
        dirs = cone_directions(beam, length_cm / 100.0, res)
        ends = dirs * length_cm  # cm, the unit of the form's fields
        self.cone_plot.clear()
        # Crosses drawn as line pairs: pyqtgraph's ScatterPlotItem crashes PySide6 6.12 when painted.
        self.cone_plot.plot(*cross_marks(ends[:, 1], ends[:, 2], max(beam / 40.0, 1e-4)),
                            pen=pg.mkPen(31, 119, 180, width=2), connect="pairs")
        circle = np.linspace(0, 2 * np.pi, 90)
        radius_cm = cfg.beam_width_cm / 2
        self.cone_plot.plot(radius_cm * np.cos(circle), radius_cm * np.sin(circle), pen=pg.mkPen((150, 150, 150)))
        count = ray_count(beam, res)
        rate = cfg.update_rate_hz
        self.cone_count.setText(f"{count} rays per sample ({count * rate:,.0f} rays/s at {rate:g} Hz), each "
                                f"{length_cm:g} cm long; the circle is the beam's {cfg.beam_width_cm:g} cm width.")


class SensorWizard(QDialog):
    """Edits the list of sensors of a project and saves it to the project's sensors file."""

    def __init__(self, project: Project, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("SEAR Sensor Wizard")
        self.project = project
        self.saved_path: Path | None = None
        self.sensors: list[SensorConfig] = []
        self.editing: int | None = None
        presets = load_presets()

        self.tabs = QTabWidget()
        self.forms: list[SensorForm] = []
        self.add_buttons: list[QPushButton] = []
        for type_name, cls in SENSOR_TYPES.items():
            form = SensorForm(cls, presets)
            page = QWidget()
            layout = QVBoxLayout(page)
            layout.addWidget(form, 1)
            row = QHBoxLayout()
            add = QPushButton(f"Add {TITLES[type_name]}")
            add.clicked.connect(self.add_current)
            clear = QPushButton("Clear All Fields")
            clear.clicked.connect(form.clear)
            row.addWidget(add)
            row.addWidget(clear)
            row.addStretch(1)
            layout.addLayout(row)
            self.tabs.addTab(page, TITLES[type_name])
            self.forms.append(form)
            self.add_buttons.append(add)
        self._last_tab = 0
        self.tabs.currentChanged.connect(self._tab_changed)

        self.list = QListWidget()
        self.list.itemClicked.connect(self._select)
        self.edit_button = QPushButton("Edit")
        self.duplicate_button = QPushButton("Duplicate")
        self.remove_button = QPushButton("Remove")
        self.edit_button.clicked.connect(lambda: self._select(self.list.currentItem()))
        self.duplicate_button.clicked.connect(self.duplicate)
        self.remove_button.clicked.connect(self.remove)
        side = QWidget()
        side.setMinimumWidth(310)
        side_layout = QVBoxLayout(side)
        side_layout.addWidget(QLabel("Sensors added:"))
        side_layout.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        for b in (self.edit_button, self.duplicate_button, self.remove_button):
            buttons.addWidget(b)
        side_layout.addLayout(buttons)

        splitter = QSplitter()
        splitter.addWidget(side)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([320, 1030])
        bottom = QHBoxLayout()
        self.file_label = QLabel()
        self.file_label.setStyleSheet("color: #555;")
        self.save_button = QPushButton("Save and Close")
        self.save_button.setDefault(True)
        cancel = QPushButton("Cancel")
        self.save_button.clicked.connect(self.save_and_close)
        cancel.clicked.connect(self.reject)
        bottom.addWidget(self.file_label, 1)
        bottom.addWidget(cancel)
        bottom.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addLayout(bottom)
        self.resize(1300, 760)

        if project.code.sensors is not None and project.code.sensors.exists():
            try:
                self.sensors = load_sensors(project.code.sensors)
            except SearError as exc:
                QMessageBox.warning(self, "Sensors file not loaded", f"{exc}\n\nStarting with no sensors; saving "
                                    "will replace the file (its previous version is kept as .bak).")
        self._saved_sensors = copy.deepcopy(self.sensors)
        self.file_label.setText(f"Saves to {project.code.sensors.name}" if project.code.sensors
                                else "Save and Close asks where to save the sensors file.")
        if project.code.sensors:
            self.file_label.setToolTip(str(project.code.sensors))
        self._refresh_list()

    @property
    def form(self) -> SensorForm:
        return self.forms[self.tabs.currentIndex()]

    def _refresh_list(self) -> None:
        self.list.clear()
        for i, sensor in enumerate(self.sensors):
            text = f"{sensor.name}  —  {TITLES[sensor.TYPE]}" + (f" ({sensor.model_number})" if sensor.model_number
                                                               else "")
            item = QListWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, i)
            self.list.addItem(item)
        for b in (self.edit_button, self.duplicate_button, self.remove_button):
            b.setEnabled(bool(self.sensors))

    def _set_editing(self, index: int | None) -> None:
        self.editing = index
        for button, type_name in zip(self.add_buttons, SENSOR_TYPES, strict=True):
            button.setText(f"Update {self.sensors[index].name}" if index is not None and
                           type_name == self.sensors[index].TYPE else f"Add {TITLES[type_name]}")

    def add_current(self) -> bool:
        """Add (or update, when editing one) the sensor in the current tab's fields."""
        form = self.form
        problems = form.problems()
        config = form.config()
        clash = [i for i, s in enumerate(self.sensors) if s.name == config.name and i != self.editing]
        if clash:
            problems.append(f"A sensor named {config.name!r} exists already ({TITLES[self.sensors[clash[0]].TYPE]}); "
                            "sensor names must be unique.")
        if problems:
            QMessageBox.warning(self, "Cannot add this sensor", "\n".join(problems))
            return False
        if self.editing is not None and self.sensors[self.editing].TYPE == config.TYPE:
            self.sensors[self.editing] = config
        else:
            self.sensors.append(config)
        self._set_editing(None)
        self._refresh_list()
        form.clear()
        return True

    def _select(self, item: QListWidgetItem | None) -> None:
        if item is None:
            return
        index = item.data(Qt.ItemDataRole.UserRole)
        sensor = self.sensors[index]
        tab = list(SENSOR_TYPES).index(sensor.TYPE)
        self.tabs.setCurrentIndex(tab)
        if self.tabs.currentIndex() != tab:
            return  # the user chose to stay with unsaved fields
        self.forms[tab].set_config(copy.deepcopy(sensor))
        self._set_editing(index)

    def duplicate(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        sensor = copy.deepcopy(self.sensors[item.data(Qt.ItemDataRole.UserRole)])
        names = {s.name for s in self.sensors}
        base, n = sensor.name, 2
        while f"{base}_{n}" in names:
            n += 1
        sensor.name = f"{base}_{n}"
        self.sensors.append(sensor)
        self._refresh_list()

    def remove(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        index = item.data(Qt.ItemDataRole.UserRole)
        del self.sensors[index]
        if self.editing == index:
            self._set_editing(None)
        self._refresh_list()

    def _tab_changed(self, index: int) -> None:
        previous = self.forms[self._last_tab]
        if self._last_tab != index and previous.is_modified():
            choice = self.ask_leave(self.tabs.tabText(self._last_tab))
            if choice == "add":
                self.tabs.blockSignals(True)
                self.tabs.setCurrentIndex(self._last_tab)
                added = self.add_current()
                if added:
                    self.tabs.setCurrentIndex(index)
                self.tabs.blockSignals(False)
                if not added:
                    return
            elif choice == "discard":
                previous.clear()
                self._set_editing(None)
            else:
                self.tabs.blockSignals(True)
                self.tabs.setCurrentIndex(self._last_tab)
                self.tabs.blockSignals(False)
                return
        self._last_tab = self.tabs.currentIndex()

    def ask_leave(self, tab: str) -> str:
        """Ask what to do with values typed on `tab` but not added: 'add', 'discard' or 'stay'."""
        box = QMessageBox(QMessageBox.Icon.Question, "Fields not added",
                          f"The {tab} tab has values that were not added. Add them as a sensor, discard them, "
                          "or stay on that tab?", parent=self)
        add = box.addButton("Add", QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole)
        stay = box.addButton("Stay", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(stay)
        box.exec()
        return {add: "add", discard: "discard"}.get(box.clickedButton(), "stay")

    def reject(self) -> None:
        """Cancel, Escape or the window's close button: ask before throwing added or typed sensors away."""
        changed = self.sensors != self._saved_sensors or self.form.is_modified()
        if changed and self.saved_path is None:
            answer = QMessageBox.question(
                self, "Discard the sensor changes?",
                "Sensors were added, edited or removed (or typed and not added) since the file was last saved. "
                "Close the wizard and discard those changes?",
                QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Cancel)
            if answer != QMessageBox.StandardButton.Discard:
                return
        super().reject()

    def save_and_close(self) -> None:
        if self.form.is_modified():
            answer = QMessageBox.question(
                self, "Fields not added", "The current tab has values that were not added. Add them before saving?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No | QMessageBox.StandardButton.Cancel)
            if answer == QMessageBox.StandardButton.Cancel:
                return
            if answer == QMessageBox.StandardButton.Yes and not self.add_current():
                return
        path = self.project.code.sensors
        if path is None:
            start = (self.project.path.parent if self.project.path else Path.cwd()) / "sensors.xml"
            chosen, _ = QFileDialog.getSaveFileName(self, "Save the sensors file", str(start),
                                                    "Sensor files (*.xml)")
            if not chosen:
                return
            path = Path(chosen)
        try:
            save_sensors(path, self.sensors)
        except SearError as exc:
            QMessageBox.critical(self, "Not saved", str(exc))
            return
        self.saved_path = path
        self.accept()
