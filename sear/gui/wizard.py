"""The Sensor Wizard (SPEC §2): one tab per registered sensor type, filled from datasheets or presets.

Everything on a tab comes from the type's declaration (sear.sensors.registry): its title, and for each
field of its definition the label, unit, limits (so the form refuses what loading would), tooltip,
group (datasheet or noise) and visibility hints, plus the drawing the type supplies (`Sensor.preview`,
e.g. the cone of rays of a range sensor). Added sensors are listed on the left, where they can be
selected to edit, duplicated or removed. Save and Close writes the sensors file through `save_sensors`.
"""

from __future__ import annotations

import copy
import json
import re
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenuBar,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sear.errors import SearError
from sear.fields import FieldInfo, field_info, fields_of
from sear.gui.geometry import restore_window, save_window, scrolling
from sear.gui.widgets import IntField, NumberField, UndoHistory, WindowUndoKeys, cross_marks, wrap_tooltips
from sear.project import Project
from sear.resources import packaged
from sear.sensors import registry
from sear.sensors.base import Sensor
from sear.sensors.config import COMMON_FIELDS, Pose, SensorConfig, consistency_problems
from sear.sensors.files import load_sensors, save_sensors

PRESETS_FILE = packaged("sensor_presets.json")
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

    def __init__(self, model: type[Sensor], presets: list[dict]) -> None:
        super().__init__()
        self._filling = False
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
        for info in self.infos.values():
            if info.name in COMMON_FIELDS:
                continue
            editor = self._editor(info)
            self.editors[info.name] = editor
            label = QLabel(info.label + ":")
            target = noise_form if info.group == "noise" else form
            target.addRow(label, editor)
            self.rows[info.name] = (label, editor)
        left.addWidget(datasheet)
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
        self.type_names = list(registry.models())
        """The sensor type of each tab."""
        for type_name, model in registry.models().items():
            form = SensorForm(model, presets)
            page = QWidget()
            layout = QVBoxLayout(page)
            layout.addWidget(scrolling(form), 1)  # scrolls when the window is smaller than the form
            row = QHBoxLayout()
            add = QPushButton(f"Add {title_of(type_name)}")
            add.clicked.connect(self.add_current)
            clear = QPushButton("Clear All Fields")
            clear.clicked.connect(form.clear_fields)
            form.edited.connect(self.record)
            row.addWidget(add)
            row.addWidget(clear)
            row.addStretch(1)
            layout.addLayout(row)
            self.tabs.addTab(page, title_of(type_name))
            self.forms.append(form)
            self.add_buttons.append(add)
        self._last_tab = 0
        self.tabs.currentChanged.connect(self._tab_changed)

        self.list = QListWidget()
        self.list.setWordWrap(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.itemClicked.connect(self._select)
        self.edit_button = QPushButton("Edit")
        self.duplicate_button = QPushButton("Duplicate")
        self.remove_button = QPushButton("Remove")
        self.edit_button.clicked.connect(lambda: self._select(self.list.currentItem()))
        self.duplicate_button.clicked.connect(self.duplicate)
        self.remove_button.clicked.connect(self.remove)
        side = QWidget()
        side.setMinimumWidth(220)
        side_layout = QVBoxLayout(side)
        side_layout.addWidget(QLabel("Sensors added:"))
        side_layout.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        for b in (self.edit_button, self.duplicate_button, self.remove_button):
            buttons.addWidget(b)
        side_layout.addLayout(buttons)

        splitter = QSplitter()
        splitter.setChildrenCollapsible(False)
        self.splitter = splitter
        splitter.addWidget(side)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([280, 1000])
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
        restore_window(self, "wizard", QSize(1300, 760), {"splitter": splitter})

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

        self.history = UndoHistory(self._snapshot, self._restore, self)
        """Undo/Redo of every change in the wizard: fields, presets, sensors added, updated, duplicated,
        removed; its clean state is the wizard as opened (the title shows * away from it)."""
        self.history.cleanChanged.connect(self._clean_changed)
        self.setWindowTitle("SEAR Sensor Wizard[*]")
        self._build_menus(layout)
        self._undo_keys = WindowUndoKeys(self)
        self._undo_keys.watch(self)
        wrap_tooltips(self)

    def _clean_changed(self, clean: bool) -> None:
        self.setWindowModified(not clean)

    def _build_menus(self, layout: QVBoxLayout) -> None:
        from sear.gui import help as help_

        bar = QMenuBar(self)
        layout.setMenuBar(bar)
        edit = bar.addMenu("&Edit")
        undo = self.history.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.history.createRedoAction(self, "&Redo")
        redo.setShortcuts([QKeySequence(QKeySequence.StandardKey.Redo), QKeySequence("Ctrl+Y")])
        edit.addAction(undo)
        edit.addAction(redo)
        edit.addSeparator()
        duplicate = edit.addAction("&Duplicate Sensor", self.duplicate)
        duplicate.setShortcut(QKeySequence("Ctrl+D"))
        remove = edit.addAction("Re&move Sensor", self.remove)
        remove.setShortcut(QKeySequence("Ctrl+Delete"))
        clear = edit.addAction("&Clear All Fields", lambda: self.form.clear_fields())
        for action in (undo, redo, duplicate, remove, clear):
            self.addAction(action)
        self.commands = {"undo": undo, "redo": redo, "duplicate": duplicate, "remove": remove, "clear": clear}
        """The wizard's menu actions by name."""
        self.commands.update(help_.add_help_menu(self, bar, page="sensors.md"))

    # --- undo ---------------------------------------------------------------------------------------------

    def _snapshot(self) -> tuple:
        """What an edit can change: the sensors, which one is edited, and each tab's fields and note."""
        return copy.deepcopy((self.sensors, self.editing,
                              tuple((f.config(), f.loaded, f.source.text()) for f in self.forms)))

    def _restore(self, state: tuple) -> None:
        sensors, editing, forms = state
        tab = None
        for index, (form, (config, loaded, note)) in enumerate(zip(self.forms, forms, strict=True)):
            if form.config() != config:
                tab = index
            form.set_config(config)
            form.loaded = loaded
            form.source.setText(note)
        self.sensors = sensors
        self._refresh_list()
        self._set_editing(editing)
        if tab is None and editing is not None:
            tab = self.type_names.index(sensors[editing].TYPE)
        if tab is not None:
            self.tabs.blockSignals(True)
            self.tabs.setCurrentIndex(tab)
            self.tabs.blockSignals(False)
            self._last_tab = tab

    def record(self, what: str) -> bool:
        """Make the change just made one undo step named `what`."""
        return self.history.record(what)

    @property
    def form(self) -> SensorForm:
        return self.forms[self.tabs.currentIndex()]

    def _refresh_list(self) -> None:
        self.list.clear()
        for i, sensor in enumerate(self.sensors):
            text = f"{sensor.name}  —  {title_of(sensor.TYPE)}" + (f"\n      {sensor.model_number}"
                                                               if sensor.model_number else "")
            item = QListWidgetItem(text)
            item.setToolTip(text.replace("\n     ", ""))
            item.setData(Qt.ItemDataRole.UserRole, i)
            self.list.addItem(item)
        for b in (self.edit_button, self.duplicate_button, self.remove_button):
            b.setEnabled(bool(self.sensors))

    def _set_editing(self, index: int | None) -> None:
        self.editing = index
        for button, type_name in zip(self.add_buttons, self.type_names, strict=True):
            button.setText(f"Update {self.sensors[index].name}" if index is not None and
                           type_name == self.sensors[index].TYPE else f"Add {title_of(type_name)}")

    def add_current(self) -> bool:
        """Add (or update, when editing one) the sensor in the current tab's fields."""
        form = self.form
        problems = form.problems()
        config = form.config()
        clash = [i for i, s in enumerate(self.sensors) if s.name == config.name and i != self.editing]
        if clash:
            problems.append(f"A sensor named {config.name!r} exists already ({title_of(self.sensors[clash[0]].TYPE)}); "
                            "sensor names must be unique.")
        updating = self.editing is not None and self.sensors[self.editing].TYPE == config.TYPE
        if problems:
            QMessageBox.warning(self, "Cannot update this sensor" if updating else "Cannot add this sensor",
                                "\n".join(problems))
            return False
        if updating:
            assert self.editing is not None
            self.sensors[self.editing] = config
        else:
            self.sensors.append(config)
        self._set_editing(None)
        self._refresh_list()
        form.clear()
        self.record(f"{'Update' if updating else 'Add'} {config.name}")
        return True

    def _select(self, item: QListWidgetItem | None, *, step: bool = True) -> None:
        """Edit the sensor of `item`: its tab, its values in the form (an undo step unless `step` is False)."""
        if item is None:
            return
        index = item.data(Qt.ItemDataRole.UserRole)
        sensor = self.sensors[index]
        tab = self.type_names.index(sensor.TYPE)
        self.tabs.setCurrentIndex(tab)
        if self.tabs.currentIndex() != tab:
            return  # the user chose to stay with unsaved fields
        self.forms[tab].set_config(copy.deepcopy(sensor))
        self._set_editing(index)
        self.list.setCurrentRow(index)
        if step:
            self.record(f"Edit {sensor.name}")

    def duplicate(self) -> None:
        """Add a copy of the selected sensor (named name_2, name_3, ...) and edit the copy."""
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
        self._select(self.list.item(len(self.sensors) - 1), step=False)
        self.record(f"Duplicate as {sensor.name}")

    def remove(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        index = item.data(Qt.ItemDataRole.UserRole)
        name = self.sensors[index].name
        del self.sensors[index]
        if self.editing == index:
            self._set_editing(None)
        elif self.editing is not None and self.editing > index:
            self._set_editing(self.editing - 1)
        self._refresh_list()
        self.record(f"Remove {name}")

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
                self.record(f"Discard the {self.tabs.tabText(self._last_tab)} fields")
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
        clicked = box.clickedButton()
        return "add" if clicked is add else "discard" if clicked is discard else "stay"

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

    def done(self, result: int) -> None:
        """Close (saved, cancelled or discarded): remember the window's size and its splitter first."""
        save_window(self, "wizard", {"splitter": self.splitter})
        super().done(result)
