"""The Vehicle Dynamics tab: the chosen robot's mass, forces, suspension, tyres and drive model."""

from __future__ import annotations

import copy
from dataclasses import fields

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QGroupBox, QHBoxLayout, QLabel, QMessageBox, QPushButton, QWidget

from sear.drives import registry as drive_registry
from sear.fielddocs import field_docs
from sear.gui.settings.tab import EditedProject, SettingsTab, label
from sear.gui.widgets import NumberField, rich_tip
from sear.project import DEFAULT_DYNAMICS, Dynamics


class DynamicsTab(SettingsTab):
    TITLE = "Vehicle Dynamics"
    SECTIONS = ("dynamics",)

    def __init__(self, source: EditedProject) -> None:
        super().__init__(source)
        layout = QHBoxLayout(self)
        main = QGroupBox("Vehicle dynamics (Bullet raycast vehicle)")
        form = self.form("dynamics", Dynamics, ["mass", "engine_force", "brake_force", "suspension_stiffness",
                                                 "suspension_compression", "suspension_damping"])
        reset = QPushButton("Reset Defaults")
        reset.setToolTip("The thesis's workable vehicle: mass 400, force 400, brake 1, stiffness 120, "
                         "compression 0.2, damping 0.3, and Bullet's defaults for the rest.")
        reset.clicked.connect(self.reset_defaults)
        self.reset_button = reset
        form.addRow("", reset)
        main.setLayout(form)
        more = QGroupBox("More")
        form2 = self.form("dynamics", Dynamics, ["friction_slip", "rolling_resistance", "max_steering"])
        # The drive models registered when the window opens, each with its help as its tooltip.
        self.drive_type = QComboBox()
        models = drive_registry.models().values()
        for model in models:
            self.drive_type.addItem(model.LABEL, model.NAME)
            self.drive_type.setItemData(self.drive_type.count() - 1, rich_tip(model.HELP), Qt.ItemDataRole.ToolTipRole)
        self.drive_type.setToolTip("\n\n".join([field_docs(Dynamics)["drive_type"],
                                                *(f"{model.LABEL}: {model.HELP}" for model in models)]))
        self.drive_type.currentIndexChanged.connect(
            lambda _i: self.set_field("dynamics", "drive_type", self.drive_type.currentData()))
        form2.addRow("Drive type:", self.drive_type)
        self.cog_fields = []
        cog_row = QHBoxLayout()
        for i, axis in enumerate("xyz"):
            f = NumberField("m", None, decimals=3, tooltip=field_docs(Dynamics)["cog_offset"])
            f.valueChanged.connect(lambda value, i=i: self._set_cog(i, float(value)))
            cog_row.addWidget(QLabel(axis))
            cog_row.addWidget(f)
            self.cog_fields.append(f)
        form2.addRow("Centre of gravity offset:", cog_row)
        self.auto_suspension: dict[str, QCheckBox] = {}
        for name in ("suspension_rest_length", "max_suspension_travel"):
            row = QHBoxLayout()
            number = self.number("dynamics", Dynamics, name)
            number.setSpecialValueText("auto")  # shown while the value sits at the minimum
            auto = QCheckBox("from the wheel size")
            auto.toggled.connect(lambda on, n=name: self._set_auto(n, on))
            row.addWidget(number)
            row.addWidget(auto)
            self.auto_suspension[name] = auto
            form2.addRow(label(Dynamics, name) + ":", row)
        more.setLayout(form2)
        layout.addWidget(main, 1)
        layout.addWidget(more, 1)

    def _set_cog(self, index: int, value: float) -> None:
        c = list(self.robot.dynamics.cog_offset)
        c[index] = value
        self.set_field("dynamics", "cog_offset", tuple(c))

    def _set_auto(self, name: str, auto: bool) -> None:
        number = self.numbers[("dynamics", name)]
        number.setEnabled(not auto)
        if auto:
            number.set(number.minimum())
        elif number.value() == number.minimum():
            number.set(0.1)
        self.set_field("dynamics", name, None if auto else float(number.value()))

    def reset_defaults(self) -> bool:
        """Reset Defaults, once the user says so (Edit > Undo takes it back)."""
        if self.robot.dynamics == DEFAULT_DYNAMICS:
            self.message.emit(f"The {self.TITLE} tab has its default values already", 4000)
            return False
        answer = QMessageBox.question(
            self, "Reset Defaults",
            f"Reset every field of the {self.TITLE} tab to its default value?\n\nEdit > Undo (Ctrl+Z) takes it back.",
            QMessageBox.StandardButton.Reset | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel)
        if answer != QMessageBox.StandardButton.Reset:
            return False
        for f in fields(Dynamics):
            setattr(self.robot.dynamics, f.name, copy.deepcopy(getattr(DEFAULT_DYNAMICS, f.name)))
        self.edited.emit(f"Reset Defaults of {self.TITLE}", False)
        self.refresh()
        self.message.emit(f"{self.TITLE} reset to the defaults (Ctrl+Z undoes it)", 4000)
        return True

    def refresh(self) -> None:
        super().refresh()
        dynamics = self.robot.dynamics
        for f, v in zip(self.cog_fields, dynamics.cog_offset, strict=True):
            f.set(v)
        self.drive_type.blockSignals(True)
        self.drive_type.setCurrentIndex(max(0, self.drive_type.findData(dynamics.drive_type)))
        self.drive_type.blockSignals(False)
        for name, auto in self.auto_suspension.items():
            auto.blockSignals(True)
            auto.setChecked(getattr(dynamics, name) is None)
            auto.blockSignals(False)
            number = self.numbers[("dynamics", name)]
            number.setEnabled(getattr(dynamics, name) is not None)
            if getattr(dynamics, name) is None:
                number.set(number.minimum())

    def field_widget(self, field: str) -> QWidget | None:
        widget = {"dynamics.drive_type": self.drive_type, "dynamics.cog_offset": self.cog_fields[0]}.get(field)
        return widget if widget is not None else super().field_widget(field)
