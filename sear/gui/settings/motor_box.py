"""The Vehicle Dynamics tab's Wheel motors box: a DC gearmotor on each driven wheel (sear.motors), chosen from
the presets or typed in from a datasheet (its stall torque and no-load speed, or its constants kt, ke and R),
or none (the drive inputs are forces).

The no-load speed is shown in RPM, the datasheet unit, and stored in rad/s (the project's SI); the other
figures are shown in the project's units."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QGridLayout, QGroupBox, QLabel, QWidget

from sear.fielddocs import field_docs
from sear.fields import field_info
from sear.gui.settings.tab import label
from sear.gui.widgets import NumberField
from sear.motors import CONSTANT_FIELDS, CURVE_FIELDS, MOTOR_FIELDS, PRESETS, RPM, motor_of, motor_problem
from sear.project import Dynamics

if TYPE_CHECKING:
    from sear.gui.settings.tab import SettingsTab

NONE, CUSTOM = "none", "custom"
"""The motor list's entries besides the presets: no motor, and figures that are no preset's."""
DATASHEET_FIELDS = ("motor_stall_torque", "motor_no_load_speed", "motor_rated_voltage")
"""The figures a preset gives."""
CURVE, CONSTANTS = "curve", "constants"
"""The two ways of giving a motor: its stall torque and no-load speed, or its constants kt, ke and R."""


class MotorBox(QGroupBox):
    """The motor fields of the chosen robot's dynamics, edited through `tab` (its undo steps and robot)."""

    def __init__(self, tab: SettingsTab) -> None:
        super().__init__("Wheel motors (DC gearmotor on each driven wheel)")
        self.tab = tab
        grid = QGridLayout(self)
        right = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        self.choice = QComboBox()
        self.choice.addItem("None: the drive inputs are forces", NONE)
        for index, preset in enumerate(PRESETS):
            self.choice.addItem(preset.name, index)
            self.choice.setItemData(self.choice.count() - 1, preset.source, Qt.ItemDataRole.ToolTipRole)
        self.choice.addItem("Custom: figures from a datasheet", CUSTOM)
        self.choice.setToolTip("A DC gearmotor's torque falls linearly with its speed, from its stall torque to "
                               "nothing at its no-load speed; the drive inputs set its duty. Each preset's "
                               "tooltip names its datasheet.")
        self.choice.currentIndexChanged.connect(lambda _i: self._chosen())
        grid.addWidget(QLabel("Motor:"), 0, 0, right)
        grid.addWidget(self.choice, 0, 1, 1, 3)
        self.source = QLabel()
        self.source.setWordWrap(True)
        grid.addWidget(self.source, 1, 1, 1, 3)
        self.form = QComboBox()
        self.form.addItem("Stall torque and no-load speed", CURVE)
        self.form.addItem("Constants kt, ke and R", CONSTANTS)
        self.form.setToolTip("How the datasheet gives the motor: the two ends of its torque-speed line, or its "
                             "torque constant, back-EMF constant and winding resistance (stall torque kt·V/R, "
                             "no-load speed V/ke at the rated voltage V). The other form's fields show the same "
                             "motor, greyed (converted with kt = ke, as for an ideal motor in SI units).")
        self.form.currentIndexChanged.connect(lambda _i: self._form_chosen())
        grid.addWidget(QLabel("Given as:"), 2, 0, right)
        grid.addWidget(self.form, 2, 1, 1, 3)
        self.fields: dict[str, NumberField] = {}
        for index, name in enumerate(MOTOR_FIELDS):
            info = field_info(Dynamics, name)
            rpm = name == "motor_no_load_speed"
            help_text = field_docs(Dynamics)[name] + (" Shown in RPM, stored in rad/s." if rpm else "")
            field = NumberField("RPM" if rpm else info.unit, info.bounds(),
                                decimals=2 if rpm else 6 if name in CONSTANT_FIELDS else 4,
                                tooltip=help_text)
            field.valueChanged.connect(lambda value, n=name: self._edited(n, float(value)))
            self.fields[name] = field
            # Three columns: the datasheet's line, the motor's constants, the drive train.
            row, column = 3 + index % 3, 2 * (index // 3)
            text = label(Dynamics, name).removeprefix("Motor ")
            grid.addWidget(QLabel(text[:1].upper() + text[1:] + ":"), row, column, right)
            grid.addWidget(field, row, column + 1)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        grid.setColumnStretch(5, 1)

    def _dynamics(self) -> Dynamics:
        return self.tab.robot.dynamics

    def _edited(self, name: str, value: float) -> None:
        """A figure typed in: stored in SI, the list then showing the preset it matches or Custom."""
        self.tab.set_field("dynamics", name, value * RPM if name == "motor_no_load_speed" else value)
        self.refresh()

    def _chosen(self) -> None:
        """A list entry chosen: none clears every motor field, a preset writes its figures (one undo step),
        Custom keeps the figures (or starts from the first preset's) for editing."""
        data = self.choice.currentData()
        dynamics = self._dynamics()
        before = {name: getattr(dynamics, name) for name in MOTOR_FIELDS}
        if data == NONE:
            for name in MOTOR_FIELDS:
                setattr(dynamics, name, None)
            step = "No wheel motors"
        else:
            preset = PRESETS[data if data != CUSTOM else 0]
            if data != CUSTOM or not any(getattr(dynamics, name) is not None for name in MOTOR_FIELDS):
                for name in CONSTANT_FIELDS:
                    setattr(dynamics, name, None)
                dynamics.motor_stall_torque = preset.stall_torque
                dynamics.motor_no_load_speed = preset.no_load_speed
                dynamics.motor_rated_voltage = preset.rated_voltage
            step = f"Motor {preset.name}" if data != CUSTOM else "Custom motor"
        if {name: getattr(dynamics, name) for name in MOTOR_FIELDS} != before:
            self.tab.edited.emit(step, False)
        self.refresh(custom=data == CUSTOM)

    def _form_chosen(self) -> None:
        """The other form chosen: the motor's figures written in it (one undo step), the same motor: stall
        torque kt·V/R and no-load speed V/ke from the constants; from the line, ke = V/ω_0, kt = ke (an
        ideal motor's, in SI units) and R = kt·V/T_s, which give the line back."""
        dynamics = self._dynamics()
        figures = self.equivalents()
        wanted = self.form.currentData()
        if not figures or (wanted == CONSTANTS) == (dynamics.motor_torque_constant is not None):
            self.refresh()
            return
        for name in CONSTANT_FIELDS + CURVE_FIELDS:
            setattr(dynamics, name, figures[name] if name in (CONSTANT_FIELDS if wanted == CONSTANTS
                                                              else CURVE_FIELDS) else None)
        self.tab.edited.emit("Motor figures as constants" if wanted == CONSTANTS else
                             "Motor figures as stall torque and no-load speed", False)
        self.refresh()

    def equivalents(self) -> dict[str, float]:
        """The robot's motor in both forms (field name: SI value), the given form's figures as they are; {}
        without a whole motor."""
        dynamics = self._dynamics()
        if motor_problem(dynamics) is not None:
            return {}
        motor = motor_of(dynamics)
        if motor is None:
            return {}
        rated = motor.rated_voltage
        kt, ke, resistance = (dynamics.motor_torque_constant, dynamics.motor_back_emf_constant,
                              dynamics.motor_resistance)
        if kt is None or ke is None or resistance is None:  # given by its line (motor_problem: all or none)
            ke = rated / motor.no_load_speed
            kt, resistance = ke, ke * rated / motor.stall_torque
        return {"motor_stall_torque": motor.stall_torque, "motor_no_load_speed": motor.no_load_speed,
                "motor_torque_constant": kt, "motor_back_emf_constant": ke, "motor_resistance": resistance}

    def preset_index(self) -> int | None:
        """The preset whose figures the robot's motor has (to 1e-9), or None."""
        dynamics = self._dynamics()
        for index, preset in enumerate(PRESETS):
            figures = (preset.stall_torque, preset.no_load_speed, preset.rated_voltage)
            if all(getattr(dynamics, name) is not None and abs(getattr(dynamics, name) - value) <= 1e-9 * value
                   for name, value in zip(DATASHEET_FIELDS, figures, strict=True)):
                return index
        return None

    def refresh(self, custom: bool = False) -> None:
        """Show the robot's motor: the list entry, its source, and the figures (greyed without a motor; the
        supply voltage, gear ratio and efficiency show their defaults while unset)."""
        dynamics = self._dynamics()
        has_motor = any(getattr(dynamics, name) is not None for name in MOTOR_FIELDS)
        index = self.preset_index()
        data = NONE if not has_motor else CUSTOM if custom or index is None else index
        self.choice.blockSignals(True)
        self.choice.setCurrentIndex(max(0, self.choice.findData(data)))
        self.choice.blockSignals(False)
        self.source.setText(f"Source: {PRESETS[index].source}" if has_motor and index is not None else "")
        self.source.setVisible(has_motor and index is not None)
        form = CONSTANTS if dynamics.motor_torque_constant is not None else CURVE
        self.form.blockSignals(True)
        self.form.setCurrentIndex(self.form.findData(form))
        self.form.blockSignals(False)
        self.form.setEnabled(has_motor)
        inactive = CURVE_FIELDS if form == CONSTANTS else CONSTANT_FIELDS
        defaults = {"motor_supply_voltage": dynamics.motor_rated_voltage, "motor_gear_ratio": 1.0,
                    "motor_efficiency": 1.0, **self.equivalents()}
        for name, field in self.fields.items():
            value = getattr(dynamics, name)
            value = defaults.get(name) if value is None else value
            field.blockSignals(True)
            if value is not None:
                field.set(value / RPM if name == "motor_no_load_speed" else float(value))
            field.blockSignals(False)
            field.setEnabled(has_motor and name not in inactive)

    def widget_for(self, field: str) -> QWidget | None:
        """The editor of a dotted motor field ('dynamics.motor_stall_torque'), or None."""
        return self.fields.get(field.rpartition(".")[2])
