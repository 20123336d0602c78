"""The Vehicle Dynamics tab: the chosen robot's mass, forces, suspension, tyres and drive model. For a robot
from a URDF, the URDF's mass and tyre friction are shown read-only (the simulation uses them), with the
fields that do not apply greyed, and SEAR's drive proposal for it (sear.models.robotdesc.drive) one click
away."""

from __future__ import annotations

import copy
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from sear.drives import registry as drive_registry
from sear.fielddocs import field_docs
from sear.gui.settings.motor_box import MotorBox
from sear.gui.settings.tab import EditedProject, SettingsTab, label
from sear.gui.widgets import NumberField, rich_tip
from sear.models.robotdesc.parse import is_urdf, package_root_paths
from sear.project import DEFAULT_DYNAMICS, Dynamics, joint_names
from sear.suspension import LOW_DAMPING_RATIO, damping_coefficient, damping_ratio

if TYPE_CHECKING:
    from sear.models.robotdesc.drive import DriveFacts

RATIO_TIP = ("Damping ratio ζ of the chassis bouncing on its four springs, were both dampers this one: "
             "coefficient / √stiffness (four wheels: coefficient·√4 / (2·√stiffness); both fields are per kg "
             "of chassis mass). 1 is critical damping (no overshoot); road vehicles have 0.2-0.5. Typing a "
             "ratio sets the coefficient that gives it.")
RATIO_WARNING = (f"A damping ratio under {LOW_DAMPING_RATIO:g} lets the robot bounce for many swings after every "
                 "bump (the thesis's defaults are about 0.03); 0.3-0.5 settles it in one or two.")
URDF_FIXED = ("mass", "friction_slip", "suspension_stiffness", "suspension_compression", "suspension_damping",
              "suspension_rest_length", "max_suspension_travel", "caster_trail")
"""The fields a URDF robot does not use: its URDF gives the mass and friction; its wheels are bodies on joints,
not a raycast vehicle's (sear.physics.urdf), and its casters are its own links."""
OPTIONAL = {"suspension_rest_length": ("from the wheel size", 0.1),
            "max_suspension_travel": ("from the wheel size", 0.1), "caster_trail": ("ball transfers", 0.02)}
"""Fields left empty (None) by ticking a box: the box's text, and the value an untick starts from."""


class DynamicsTab(SettingsTab):
    TITLE = "Vehicle Dynamics"
    SECTIONS = ("dynamics",)

    def __init__(self, source: EditedProject) -> None:
        super().__init__(source)
        page = QVBoxLayout(self)
        self._facts_key: tuple | None = None
        self._facts: DriveFacts | None = None
        self.urdf_box = QGroupBox("Robot from a URDF")
        urdf_row = QHBoxLayout(self.urdf_box)
        self.urdf_note = QLabel()
        self.urdf_note.setWordWrap(True)
        urdf_row.addWidget(self.urdf_note, 1)
        self.proposal_button = QPushButton("Use SEAR's Proposal")
        self.proposal_button.setToolTip("Set the drive type and the acceleration force to what SEAR proposes for "
                                        "this URDF's wheels, mass and friction (Edit > Undo takes it back).")
        self.proposal_button.clicked.connect(self.use_proposal)
        urdf_row.addWidget(self.proposal_button)
        self.urdf_box.setVisible(False)
        page.addWidget(self.urdf_box)
        layout = QHBoxLayout()
        page.addLayout(layout, 1)
        main = QGroupBox("Vehicle dynamics (Bullet raycast vehicle)")
        form = self.form("dynamics", Dynamics, ["mass", "engine_force", "brake_force", "suspension_stiffness"])
        self.ratios: dict[str, NumberField] = {}
        """Each damper's damping ratio ζ beside its coefficient (sear.suspension), by field name."""
        self.ratio_warnings: dict[str, QLabel] = {}
        for name in ("suspension_compression", "suspension_damping"):
            row = QHBoxLayout()
            row.addWidget(self.number("dynamics", Dynamics, name))
            ratio = NumberField("", (0.0, 100.0, False, "0 or more"), decimals=3, tooltip=RATIO_TIP)
            ratio.setMinimumWidth(90)
            ratio.valueChanged.connect(lambda value, n=name: self._set_ratio(n, float(value)))
            warning = QLabel(f"⚠ ζ < {LOW_DAMPING_RATIO:g}: it rings")
            warning.setStyleSheet("color: #b35900")
            warning.setToolTip(rich_tip(RATIO_WARNING))
            row.addWidget(QLabel("ζ"))
            row.addWidget(ratio)
            row.addWidget(warning)
            row.addStretch(1)
            self.ratios[name], self.ratio_warnings[name] = ratio, warning
            form.addRow(label(Dynamics, name) + ":", row)
        for name in ("suspension_stiffness", "suspension_compression", "suspension_damping"):
            self.numbers[("dynamics", name)].valueChanged.connect(lambda _v: self._show_ratios())
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
        for name, (text, _start) in OPTIONAL.items():
            row = QHBoxLayout()
            number = self.number("dynamics", Dynamics, name)
            number.setSpecialValueText("auto" if name != "caster_trail" else "none")  # shown at the minimum
            auto = QCheckBox(text)
            auto.toggled.connect(lambda on, n=name: self._set_auto(n, on))
            row.addWidget(number)
            row.addWidget(auto)
            self.auto_suspension[name] = auto
            form2.addRow(label(Dynamics, name) + ":", row)
        more.setLayout(form2)
        layout.addWidget(main, 1)
        layout.addWidget(more, 1)
        self.motor_box = MotorBox(self)
        page.addWidget(self.motor_box)

    def _show_ratios(self) -> None:
        """Each damper's ζ from the fields as they are, and its warning when it is under LOW_DAMPING_RATIO."""
        dynamics = self.robot.dynamics
        for name, ratio in self.ratios.items():
            zeta = damping_ratio(getattr(dynamics, name), dynamics.suspension_stiffness)
            ratio.blockSignals(True)
            ratio.set(zeta)
            ratio.blockSignals(False)
            self.ratio_warnings[name].setVisible(zeta < LOW_DAMPING_RATIO)

    def _set_ratio(self, name: str, zeta: float) -> None:
        """A damping ratio typed: the damper's coefficient that gives it (kept within the field's bounds)."""
        number = self.numbers[("dynamics", name)]
        number.set(min(damping_coefficient(zeta, self.robot.dynamics.suspension_stiffness), number.maximum()))
        self.set_field("dynamics", name, float(number.value()))
        self._show_ratios()

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
            number.set(OPTIONAL[name][1])
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
        self._show_ratios()
        for f, v in zip(self.cog_fields, dynamics.cog_offset, strict=True):
            f.set(v)
        self.drive_type.blockSignals(True)
        self.drive_type.setCurrentIndex(max(0, self.drive_type.findData(dynamics.drive_type)))
        self.drive_type.blockSignals(False)
        self.motor_box.refresh()
        for name, auto in self.auto_suspension.items():
            auto.blockSignals(True)
            auto.setChecked(getattr(dynamics, name) is None)
            auto.blockSignals(False)
            number = self.numbers[("dynamics", name)]
            number.setEnabled(getattr(dynamics, name) is not None)
            if getattr(dynamics, name) is None:
                number.set(number.minimum())

    # --- a robot from a URDF ------------------------------------------------------------------------------

    def urdf_facts(self) -> DriveFacts | None:
        """The chosen robot's URDF as the simulation will have it (mass, tyre friction, wheels), or None for a
        mesh body or a URDF that cannot be read (the Robot Body tab says why). Read again only when the file,
        its time stamp, the package roots or the wheel marks change."""
        from sear.errors import SearError
        from sear.models.robotdesc.drive import drive_facts
        from sear.models.robotdesc.parse import load_urdf
        from sear.models.robotdesc.wheels import UrdfWheels, choose_wheels

        body = self.robot.body
        if not is_urdf(body.file) or body.file is None:
            return None
        path = Path(body.file)
        try:
            stamp: float | None = path.stat().st_mtime
        except OSError:
            stamp = None
        folder = self.project.path.parent if self.project.path else None
        key = (path, stamp, body.package_roots, folder, body.left_wheels, body.right_wheels, body.steering_joints)
        if key != self._facts_key:
            self._facts_key = key
            try:
                desc = load_urdf(path, package_root_paths(body.package_roots, folder))
            except SearError:
                self._facts = None
                return None
            try:
                wheels = choose_wheels(desc, joint_names(body.left_wheels), joint_names(body.right_wheels),
                                       joint_names(body.steering_joints))
            except SearError:
                wheels = UrdfWheels()  # no wheels to drive: the mass and friction still hold
            self._facts = drive_facts(desc, wheels)
        return self._facts

    def use_proposal(self) -> bool:
        """Use SEAR's Proposal: the drive type and acceleration force SEAR proposes for the URDF (one undo
        step); False when there is none (a mesh body, or a URDF without a wheel a side)."""
        from sear.models.robotdesc.drive import propose_drive

        facts = self.urdf_facts()
        proposal = propose_drive(facts) if facts is not None else None
        if proposal is None:
            return False
        dynamics = self.robot.dynamics
        if (dynamics.drive_type, dynamics.engine_force) != (proposal.drive_type, proposal.engine_force):
            dynamics.drive_type, dynamics.engine_force = proposal.drive_type, proposal.engine_force
            self.edited.emit("SEAR's drive proposal", False)
        self.refresh()
        self.update_enabled()
        return True

    def update_enabled(self) -> None:
        """For a URDF robot: the URDF's mass and tyre friction in their (greyed) fields, the fields it does not
        use greyed, and the note with SEAR's proposal; for a mesh body, all editable with the project's values.
        The drive type and force are shown anew too (choosing a URDF on the Robot Body tab sets them)."""
        from sear.models.robotdesc.drive import GROUND_FRICTION, propose_drive

        dynamics = self.robot.dynamics
        urdf = is_urdf(self.robot.body.file)
        facts = self.urdf_facts() if urdf else None
        self.urdf_box.setVisible(urdf)
        for name in URDF_FIXED:
            self.numbers[("dynamics", name)].setEnabled(not urdf and (
                name not in self.auto_suspension or getattr(dynamics, name) is not None))
        for auto in self.auto_suspension.values():
            auto.setEnabled(not urdf)
        for name, ratio in self.ratios.items():
            ratio.setEnabled(not urdf)
            if urdf:
                self.ratio_warnings[name].setVisible(False)
        for f in self.cog_fields:
            f.setEnabled(not urdf)
        shown = {"mass": facts.mass if facts is not None else dynamics.mass,
                 "friction_slip": facts.friction if facts is not None else dynamics.friction_slip,
                 "engine_force": dynamics.engine_force}
        for name, value in shown.items():
            self.numbers[("dynamics", name)].set(float(value))
        self.drive_type.blockSignals(True)
        self.drive_type.setCurrentIndex(max(0, self.drive_type.findData(dynamics.drive_type)))
        self.drive_type.blockSignals(False)
        if not urdf:
            return
        file = self.robot.body.file.name if self.robot.body.file is not None else ""
        if facts is None:
            self.urdf_note.setText(f"{file} cannot be read (the Robot Body Model tab says why).")
            self.proposal_button.setEnabled(False)
            return
        proposal = propose_drive(facts)
        text = (f"{file} gives this robot's mass, {facts.mass:.1f} kg (every link's &lt;inertial&gt;, 1 kg for each "
                f"link without one), and its tyre friction, μ {facts.friction:.2f} (its wheels' lateral_friction "
                f"{facts.wheel_friction:g} × the ground's {GROUND_FRICTION:g}): "
                "both shown greyed. Suspension, centre of gravity and friction slip do not apply to it.")
        if proposal is not None:
            text += f"<br><b>SEAR's proposal</b>, {proposal.engine_force:g} N: {proposal.reason}"
        else:
            text += "<br>No wheel a side: mark its wheels on the Robot Body Model tab."
        self.urdf_note.setText(text)
        self.proposal_button.setEnabled(proposal is not None and (dynamics.drive_type, dynamics.engine_force)
                                        != (proposal.drive_type, proposal.engine_force))

    def field_widget(self, field: str) -> QWidget | None:
        widget = {"dynamics.drive_type": self.drive_type, "dynamics.cog_offset": self.cog_fields[0]}.get(field)
        widget = widget if widget is not None else self.motor_box.widget_for(field)
        return widget if widget is not None else super().field_widget(field)
