"""The Wheel Models tab: the chosen robot's four wheel models and where each sits on the body."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QCheckBox, QGridLayout, QGroupBox, QLabel, QVBoxLayout, QWidget

from sear.fielddocs import field_docs
from sear.gui.preview import MeshPreview
from sear.gui.settings.tab import MESH_FILTER, EditedProject, SettingsTab, with_preview
from sear.gui.widgets import FileField, NumberField
from sear.models.robotdesc.parse import is_urdf
from sear.project import WHEEL_IDS, Wheel, wheel_label


class WheelsTab(SettingsTab):
    TITLE = "Wheel Models"
    SECTIONS = ("wheels",)

    def __init__(self, source: EditedProject, show_robot: Callable[[MeshPreview], None]) -> None:
        """`show_robot` draws the chosen robot, body and wheels, in a preview (the Robot Body Model tab's)."""
        super().__init__(source)
        self._show_robot = show_robot
        box = QWidget()
        layout = QVBoxLayout(box)
        intro = QLabel("Four wheel models, each with its centre relative to the body's origin "
                       "(x forward, y left, z up, metres). Untick 'Offset' to use the position the "
                       "model was exported at.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.wheels_urdf_note = QLabel("This robot is described by a URDF: its wheels are joints of it, marked "
                                       "left or right on the Robot Body Model tab (Wheels). The models below are "
                                       "not used.")
        self.wheels_urdf_note.setWordWrap(True)
        self.wheels_urdf_note.setStyleSheet("color: #8a4b00;")
        layout.addWidget(self.wheels_urdf_note)
        self.wheel_groups: list[QGroupBox] = []
        self.wheel_files: dict[str, FileField] = {}
        self.wheel_offsets: dict[str, QCheckBox] = {}
        self.wheel_positions: dict[str, list[NumberField]] = {}
        for wid in WHEEL_IDS:
            group = QGroupBox(wid.replace("_", " ").title() + " wheel")
            grid = QGridLayout(group)
            file_field = FileField(f"Choose the {wheel_label(wid)} wheel model", MESH_FILTER,
                                   tooltip=field_docs(Wheel)["file"])
            file_field.changed.connect(lambda path, w=wid: self._set_wheel_file(w, path))
            grid.addWidget(QLabel("Model file:"), 0, 0)
            grid.addWidget(file_field, 0, 1, 1, 7)
            offset = QCheckBox("Offset")
            offset.setToolTip(field_docs(Wheel)["position"])
            offset.toggled.connect(lambda on, w=wid: self._set_wheel_offset(w, on))
            grid.addWidget(offset, 1, 0)
            fields_ = []
            for i, axis in enumerate("xyz"):
                f = NumberField("m", None, decimals=3, tooltip=f"Wheel centre {axis}, body frame, metres.")
                f.valueChanged.connect(lambda value, w=wid, i=i: self._set_wheel_position(w, i, float(value)))
                grid.addWidget(QLabel(axis + ":"), 1, 1 + 2 * i)
                grid.addWidget(f, 1, 2 + 2 * i)
                fields_.append(f)
            self.wheel_files[wid], self.wheel_offsets[wid], self.wheel_positions[wid] = file_field, offset, fields_
            self.wheel_groups.append(group)
            layout.addWidget(group)
        layout.addStretch(1)
        self.wheels_preview = MeshPreview()
        with_preview(box, self.wheels_preview, self)

    def _set_wheel_file(self, wid: str, path: Path | None) -> None:
        if self.robot.wheels[wid].file != path:
            self.robot.wheels[wid].file = path
            self.edited.emit(f"{wheel_label(wid)} wheel model file", True)

    def _set_wheel_offset(self, wid: str, on: bool) -> None:
        for f in self.wheel_positions[wid]:
            f.setEnabled(on)
        x, y, z = (float(f.value()) for f in self.wheel_positions[wid])
        position = (x, y, z) if on else None
        if self.robot.wheels[wid].position != position:
            self.robot.wheels[wid].position = position
            self.edited.emit(f"{wheel_label(wid)} wheel offset", True)

    def _set_wheel_position(self, wid: str, index: int, value: float) -> None:
        position = self.robot.wheels[wid].position
        if position is None:
            return
        p = list(position)
        p[index] = value
        self.robot.wheels[wid].position = (p[0], p[1], p[2])
        self.edited.emit(f"{wheel_label(wid)} wheel position", True)

    def refresh(self) -> None:
        super().refresh()
        base = self.project.path.parent if self.project.path else None
        for wid in WHEEL_IDS:
            wheel = self.robot.wheels[wid]
            self.wheel_files[wid].base = base
            self.wheel_files[wid].set(wheel.file)
            self.wheel_offsets[wid].blockSignals(True)
            self.wheel_offsets[wid].setChecked(wheel.position is not None)
            self.wheel_offsets[wid].blockSignals(False)
            for i, f in enumerate(self.wheel_positions[wid]):
                f.set(wheel.position[i] if wheel.position is not None else 0.0)
                f.setEnabled(wheel.position is not None)

    def update_enabled(self) -> None:
        """A URDF robot's wheels are its joints: the wheel models are not used."""
        urdf = is_urdf(self.robot.body.file)
        self.wheels_urdf_note.setVisible(urdf)
        for group in self.wheel_groups:
            group.setEnabled(not urdf)

    def update_preview(self) -> None:
        self._show_robot(self.wheels_preview)

    def field_widget(self, field: str) -> QWidget | None:
        parts = field.split(".")
        if len(parts) == 3 and parts[0] == "wheels" and parts[1] in self.wheel_files:
            return self.wheel_files[parts[1]].edit if parts[2] == "file" else self.wheel_offsets[parts[1]]
        return super().field_widget(field)
