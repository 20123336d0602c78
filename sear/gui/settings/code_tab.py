"""The Code Setup tab: the chosen robot's control code and sensors file (written by the Sensor Wizard,
which Simulation > Sensor Wizard opens from here), and how a run goes (debug shapes, the hook time-out, the
physics and control rates)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from sear.fielddocs import field_docs
from sear.gui.editor import open_in_editor
from sear.gui.settings.tab import EditedProject, SettingsTab, label
from sear.gui.widgets import FileField
from sear.project import CodeSetup, SimulationSettings
from sear.resources import packaged

TEMPLATES = packaged("templates")
PY_FILTER = "Python files (*.py);;All files (*)"
XML_FILTER = "Sensor files (*.xml);;All files (*)"


class CodeTab(SettingsTab):
    TITLE = "Code Setup"
    SECTIONS = ("code", "simulation")

    def __init__(self, source: EditedProject) -> None:
        super().__init__(source)
        layout = QVBoxLayout(self)
        code = QGroupBox("Control code")
        form = QFormLayout(code)
        self.code_file = FileField("Choose the user code file", PY_FILTER, tooltip=field_docs(CodeSetup)["user_code"])
        self.code_file.changed.connect(lambda path: self.set_field("code", "user_code", path, preview=True))
        form.addRow("User code file:", self.code_file)
        row = QHBoxLayout()
        self.new_code_button = QPushButton("Create New User Code…")
        self.new_script_button = QPushButton("Create New Full Simulator Script…")
        self.edit_button = QPushButton("Open in Editor")
        for b in (self.new_code_button, self.new_script_button, self.edit_button):
            row.addWidget(b)
        row.addStretch(1)
        self.new_code_button.clicked.connect(lambda: self.create_from_template("user_code.py"))
        self.new_script_button.clicked.connect(lambda: self.create_from_template("simulator_script.py"))
        self.edit_button.clicked.connect(self.open_in_editor)
        form.addRow("", row)
        self.sensors_file = FileField("Choose the sensors file", XML_FILTER, tooltip=field_docs(CodeSetup)["sensors"])
        self.sensors_file.changed.connect(lambda path: self.set_field("code", "sensors", path))
        form.addRow("Sensors file:", self.sensors_file)
        layout.addWidget(code)
        run = QGroupBox("Running")
        form2 = QFormLayout(run)
        self.debug_shapes = QCheckBox("Debug physics shapes (draw collision shapes in the simulation window)")
        self.debug_shapes.toggled.connect(lambda on: self.set_field("code", "debug_shapes", bool(on)))
        form2.addRow("", self.debug_shapes)
        form2.addRow(label(CodeSetup, "hook_timeout") + ":", self.number("code", CodeSetup, "hook_timeout"))
        form2.addRow(label(SimulationSettings, "physics_hz") + ":",
                     self.number("simulation", SimulationSettings, "physics_hz"))
        form2.addRow(label(SimulationSettings, "control_hz") + ":",
                     self.number("simulation", SimulationSettings, "control_hz"))
        layout.addWidget(run)
        layout.addStretch(1)

    def create_from_template(self, template: str) -> Path | None:
        """Copy a template into a folder the user chooses; a new user code file becomes the robot's."""
        start = str(self.project.path.parent if self.project.path else Path.cwd())
        chosen, _ = QFileDialog.getSaveFileName(self, f"Create {template}", str(Path(start) / template), PY_FILTER)
        if not chosen:
            return None
        target = Path(chosen)
        if target.suffix != ".py":
            target = target.with_suffix(".py")
        target.write_bytes(TEMPLATES.joinpath(template).read_bytes())
        if template == "user_code.py":
            self.code_file.set(target)
            self.set_field("code", "user_code", target, preview=True)
        self.message.emit(f"Created {target}", 4000)
        return target

    def open_wizard(self) -> None:
        """The Sensor Wizard on the chosen robot's sensors; the file it saves becomes the robot's sensors file."""
        from sear.gui.wizard import SensorWizard

        # The wizard edits the chosen robot's sensors: a view of the project whose robot parts are that robot's.
        robot = self.robot
        wizard = SensorWizard(replace(self.project, body=robot.body, wheels=robot.wheels, dynamics=robot.dynamics,
                                      code=robot.code), self.window())
        if wizard.exec() and wizard.saved_path is not None:
            if robot.code.sensors != wizard.saved_path:
                robot.code.sensors = wizard.saved_path
                self.edited.emit("Sensors file", False)
            self.sensors_file.set(wizard.saved_path)

    def open_in_editor(self) -> None:
        path = self.robot.code.user_code
        if path is not None:
            open_in_editor(self, path)  # a dialog says what to set when no editor can open it

    def refresh(self) -> None:
        super().refresh()
        code = self.robot.code
        base = self.project.path.parent if self.project.path else None
        for file_field, path in ((self.code_file, code.user_code), (self.sensors_file, code.sensors)):
            file_field.base = base
            file_field.set(path)
        self.debug_shapes.blockSignals(True)
        self.debug_shapes.setChecked(code.debug_shapes)
        self.debug_shapes.blockSignals(False)

    def update_enabled(self) -> None:
        self.edit_button.setEnabled(self.robot.code.user_code is not None)

    def field_widget(self, field: str) -> QWidget | None:
        widget = {"code.user_code": self.code_file.edit, "code.sensors": self.sensors_file.edit,
                  "code.debug_shapes": self.debug_shapes}.get(field)
        return widget if widget is not None else super().field_widget(field)
