"""The Robot Body Model tab: the chosen robot's body (a model or a URDF robot description, with its links,
joints, wheels and collision report), its start pose, and its gripper."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from sear.errors import SearError
from sear.fielddocs import field_docs
from sear.gui.geometry import scrolling
from sear.gui.preview import MeshPreview
from sear.gui.settings.tab import MESH_FILTER, EditedProject, SettingsTab, label, with_preview
from sear.gui.urdfview import BODY_COLOUR, MARKS, WHEEL_COLOUR, UrdfPanel
from sear.gui.widgets import FileField, NumberField
from sear.models.meshfiles import MESH_SUFFIXES
from sear.models.robotdesc.parse import URDF_SUFFIXES, is_urdf, package_root_paths
from sear.project import WHEEL_IDS, Body, Gripper, Robot, joint_names

if TYPE_CHECKING:
    import trimesh

    from sear.gui.urdfview import RobotRows
    from sear.models.robotdesc.drive import DriveProposal
    from sear.models.robotdesc.model import RobotDescription

BODY_FILTER = ("Robot bodies (" + " ".join(f"*{s}" for s in URDF_SUFFIXES + MESH_SUFFIXES)
               + ");;URDF robot descriptions (" + " ".join(f"*{s}" for s in URDF_SUFFIXES) + ");;" + MESH_FILTER)


def mesh_robot_parts(robot: Robot) -> list[tuple[trimesh.Trimesh, tuple[float, float, float]]]:
    """A robot built from a body model and wheel models, as (mesh in its body frame, RGB) parts: its body,
    then each wheel whose file exists, placed where the project puts it. SearError when a model cannot be
    read; the body must be chosen (and not a URDF)."""
    from sear.models.meshfiles import load_mesh  # reads models: trimesh is loaded only now

    assert robot.body.file is not None
    parts = [(load_mesh(robot.body.file, scale=robot.body.scale, tab="Robot Body Model"), (0.55, 0.6, 0.75))]
    for wid in WHEEL_IDS:
        wheel = robot.wheels[wid]
        if wheel.file is None or not wheel.file.exists():
            continue
        mesh = load_mesh(wheel.file, scale=robot.body.scale, tab="Wheel Models")
        if wheel.position is not None:
            mesh.apply_translation(-(mesh.bounds[0] + mesh.bounds[1]) / 2 + wheel.position)
        parts.append((mesh, (0.2, 0.2, 0.22)))
    return parts


class BodyTab(SettingsTab):
    TITLE = "Robot Body Model"
    SECTIONS = ("body",)

    def __init__(self, source: EditedProject) -> None:
        super().__init__(source)
        self._urdf_key: tuple | None = None
        """What the URDF shown was read from (file, time stamp, package roots): it is read again when that
        changes."""
        self._urdf: tuple[RobotDescription, RobotRows, list] | SearError | None = None
        box = QWidget()
        layout = QVBoxLayout(box)
        self.body_file = FileField("Choose the robot body model or URDF", BODY_FILTER, tooltip=field_docs(Body)["file"])
        self.body_file.changed.connect(self._set_body_file)
        files = QFormLayout()
        files.addRow("Body model or URDF:", self.body_file)
        files.addRow("Scale:", self.number("body", Body, "scale"))
        layout.addLayout(files)
        # A URDF's links, joints and wheels right under the file they come from (shown for a .urdf only)
        self.body_preview = MeshPreview()
        self.urdf_panel = UrdfPanel()
        self.urdf_panel.linkSelected.connect(self.body_preview.highlight)
        self.urdf_panel.wheelsChanged.connect(self._set_urdf_marks)
        self.urdf_panel.rootsChanged.connect(self._set_package_roots)
        self.urdf_panel.checkRequested.connect(self.check_urdf)
        self.urdf_group = QGroupBox("Robot description (URDF)")
        QVBoxLayout(self.urdf_group).addWidget(self.urdf_panel)
        self.urdf_group.setVisible(False)
        layout.addWidget(self.urdf_group, 1)
        layout.addWidget(self._start_box())
        rotation = QGroupBox("Start rotation (quaternion x y z w, world frame; 0 0 0 1 faces east)")
        row = QHBoxLayout(rotation)
        self.rotation_fields = []
        for i, axis in enumerate("xyzw"):
            field = NumberField("", (-1.0, 1.0, False, "a number from -1 to 1"), decimals=4,
                                tooltip=field_docs(Body)["rotation"])
            field.valueChanged.connect(lambda value, i=i: self._set_rotation(i, float(value)))
            row.addWidget(QLabel(axis + ":"))
            row.addWidget(field)
            self.rotation_fields.append(field)
        layout.addWidget(rotation)
        layout.addWidget(self._gripper_box())
        layout.addStretch(1)
        # the form scrolls on its own (a URDF's box makes it tall), the preview stays in view beside it
        with_preview(scrolling(box), self.body_preview, self)

    def _start_box(self) -> QGroupBox:
        """The start position group: relative to the terrain centre, or geographic."""
        start = QGroupBox("Start position (the robot starts at rest on the terrain there)")
        grid = QGridLayout(start)
        self.relative_radio = QRadioButton("Relative to the terrain centre")
        self.absolute_radio = QRadioButton("Absolute (geographic)")
        group = QButtonGroup(self)
        group.addButton(self.relative_radio)
        group.addButton(self.absolute_radio)
        self.relative_radio.toggled.connect(
            lambda on: self.set_field("body", "start_mode", "relative" if on else "absolute", preview=True))
        grid.addWidget(self.relative_radio, 0, 0)
        grid.addWidget(self.absolute_radio, 0, 1)
        rel = QWidget()
        rel.setLayout(self.form("body", Body, ["start_north", "start_east", "start_altitude"]))
        ab = QWidget()
        ab.setLayout(self.form("body", Body, ["start_latitude", "start_longitude", "start_abs_altitude"]))
        self.relative_box, self.absolute_box = rel, ab
        grid.addWidget(rel, 1, 0)
        grid.addWidget(ab, 1, 1)
        self.drop_start = QCheckBox("Drop start: drop the robot from the altitude above (the original SEAR's "
                                    "start: it bounces until its dampers settle it)")
        self.drop_start.setToolTip(field_docs(Body)["drop_start"])
        self.drop_start.toggled.connect(lambda on: self.set_field("body", "drop_start", bool(on)))
        grid.addWidget(self.drop_start, 2, 0, 1, 2)
        return start

    def _gripper_box(self) -> QGroupBox:
        """The Gripper group: whether the robot has one, and its sizes and forces."""
        box = QGroupBox("Gripper (a paddle gripper with a lift at the robot's front)")
        layout = QVBoxLayout(box)
        self.gripper_check = QCheckBox("This robot has a gripper (keys G, T, B; sim.gripper; sensor \"gripper\")")
        self.gripper_check.setToolTip(field_docs(Body)["gripper"] + " " + (Gripper.__doc__ or "").split("\n\n")[1]
                                      .replace("\n", " ").strip())
        self.gripper_check.toggled.connect(self._set_gripper)
        layout.addWidget(self.gripper_check)
        self.gripper_fields = QWidget()
        self.gripper_fields.setLayout(self.form("body.gripper", Gripper, [
            "max_opening", "paddle_length", "paddle_height", "lift_travel", "grip_force", "lift_force"]))
        layout.addWidget(self.gripper_fields)
        return box

    # --- edits ----------------------------------------------------------------------------------------------

    def _set_body_file(self, path: Path | None) -> None:
        """The body file chosen (typed or through Browse). For a URDF, SEAR's drive proposal for its wheels
        (sear.models.robotdesc.drive: drive type and acceleration force) is written to the Vehicle Dynamics
        tab in the same undo step, so the robot drives and turns as chosen; the status bar says so."""
        body = self.robot.body
        if body.file == path:
            return
        body.file = path
        proposal = self._urdf_drive_proposal() if is_urdf(path) else None
        if proposal is not None:
            self.robot.dynamics.drive_type = proposal.drive_type
            self.robot.dynamics.engine_force = proposal.engine_force
        self.edited.emit(self.field_label("body", "file"), True)
        if proposal is not None:
            self.message.emit(f"Vehicle Dynamics set from the URDF: {proposal.reason} Acceleration force "
                              f"{proposal.engine_force:g} N (Edit > Undo takes it back).", 15000)

    def _urdf_drive_proposal(self) -> DriveProposal | None:
        """SEAR's drive for the project's URDF with the wheels it marks (or SEAR's proposal), or None when the
        URDF cannot be read or has no wheel on a side (the Robot Body tab explains why)."""
        from sear.models.robotdesc.drive import drive_facts, propose_drive
        from sear.models.robotdesc.wheels import choose_wheels

        read = self._read_urdf()
        if read is None or isinstance(read, SearError):
            return None
        body = self.robot.body
        try:
            wheels = choose_wheels(read[0], joint_names(body.left_wheels), joint_names(body.right_wheels),
                                   joint_names(body.steering_joints))
        except SearError:
            return None
        return propose_drive(drive_facts(read[0], wheels))

    def _set_gripper(self, on: bool) -> None:
        """The Gripper check box: a gripper with the default sizes, or none."""
        if (self.robot.body.gripper is not None) == on:
            return
        self.robot.body.gripper = Gripper() if on else None
        self.edited.emit("Gripper", False)
        self.refresh()

    def _set_rotation(self, index: int, value: float) -> None:
        q = list(self.robot.body.rotation)
        q[index] = value
        self.set_field("body", "rotation", tuple(q))

    def _set_urdf_marks(self, marks: dict[str, str] | None) -> None:
        """The user marked joints (None: they chose SEAR's proposal, which the project then leaves out)."""
        body = self.robot.body
        values = (None, None, None) if marks is None else \
            tuple(" ".join(n for n, m in marks.items() if m == mark) for mark in MARKS)
        if (body.left_wheels, body.right_wheels, body.steering_joints) == values:
            return
        body.left_wheels, body.right_wheels, body.steering_joints = values
        self.edited.emit("Wheel joints", True)

    def _set_package_roots(self, roots: list[Path]) -> None:
        """The user added or removed a package root: kept relative to the project's folder when inside it."""
        folder = self.project.path.parent if self.project.path else None
        entries = []
        for root in roots:
            inside = folder is not None and root.is_relative_to(folder)
            entries.append(str(root.relative_to(folder)) if inside and folder is not None else str(root))
        text = ";".join(entries) or None
        if text == self.robot.body.package_roots:
            return
        self.robot.body.package_roots = text
        self.edited.emit(label(Body, "package_roots"), True)

    def check_urdf(self) -> None:
        """Check Again: read the URDF and its meshes anew and make the collision report again."""
        if not is_urdf(self.robot.body.file):
            return
        read = self._read_urdf(again=True)
        self.update_preview()
        if read is None or isinstance(read, SearError):
            self.message.emit(f"The URDF cannot be used: {read}", 8000)
        else:
            found = len(read[1].report)
            self.message.emit(f"Collision report made again: {found or 'nothing'} found", 6000)

    # --- model -> editors -----------------------------------------------------------------------------------

    def refresh(self) -> None:
        super().refresh()
        body = self.robot.body
        self.gripper_check.blockSignals(True)
        self.gripper_check.setChecked(body.gripper is not None)
        self.gripper_check.blockSignals(False)
        self.gripper_fields.setEnabled(body.gripper is not None)
        for f, v in zip(self.rotation_fields, body.rotation, strict=True):
            f.set(v)
        self.body_file.base = self.project.path.parent if self.project.path else None
        self.body_file.set(body.file)
        for w in (self.relative_radio, self.absolute_radio):
            w.blockSignals(True)
        self.relative_radio.setChecked(body.start_mode == "relative")
        self.absolute_radio.setChecked(body.start_mode == "absolute")
        for w in (self.relative_radio, self.absolute_radio):
            w.blockSignals(False)
        self.drop_start.blockSignals(True)
        self.drop_start.setChecked(body.drop_start)
        self.drop_start.blockSignals(False)

    def update_enabled(self) -> None:
        relative = self.robot.body.start_mode == "relative"
        self.relative_box.setEnabled(relative)
        self.absolute_box.setEnabled(not relative)
        urdf = is_urdf(self.robot.body.file)
        # The altitudes place a drop start only; the rest applies either way.
        dropped = self.robot.body.drop_start
        self.numbers[("body", "start_altitude")].setEnabled(dropped)
        self.numbers[("body", "start_abs_altitude")].setEnabled(dropped)
        self.urdf_group.setVisible(urdf)
        self.numbers[("body", "scale")].setEnabled(not urdf)  # a URDF gives its meshes' scales itself

    def update_preview(self) -> None:
        self.show_robot(self.body_preview)

    def field_widget(self, field: str) -> QWidget | None:
        widget = {"body.file": self.body_file.edit, "body.drop_start": self.drop_start,
                  "body.left_wheels": self.urdf_panel.wheel_table,
                  "body.right_wheels": self.urdf_panel.wheel_table,
                  "body.steering_joints": self.urdf_panel.wheel_table,
                  "body.package_roots": self.urdf_panel.roots_list}.get(field)
        return widget if widget is not None else super().field_widget(field)

    def reveal(self, widget: QWidget) -> None:
        """A page of the URDF panel holding `widget`: show it."""
        inner = self.urdf_panel.pages
        for index in range(inner.count()):
            page = inner.widget(index)
            if page is not None and (page is widget or page.isAncestorOf(widget)):
                inner.setCurrentIndex(index)

    # --- the robot drawn in a preview (this tab's and the Wheel Models tab's) --------------------------------

    def show_robot(self, preview: MeshPreview) -> None:
        """Draw the chosen robot in `preview`: its body model and wheel models where the project puts them,
        or its URDF's links (wheels darker); a message when there is nothing to draw or it cannot be read."""
        robot = self.robot
        try:
            if is_urdf(robot.body.file):
                self._show_urdf(preview)
                return
            if robot.body.file is None:
                preview.show_message("Choose a body model to see it here.")
                return
            preview.show_meshes(mesh_robot_parts(robot))
        except SearError as exc:
            preview.show_message(str(exc))

    def _urdf_roots(self) -> list[Path]:
        folder = self.project.path.parent if self.project.path else None
        return package_root_paths(self.robot.body.package_roots, folder)

    def _read_urdf(self, again: bool = False) -> tuple[RobotDescription, RobotRows, list] | SearError | None:
        """The project's URDF as read (description, the panel's rows with the collision report, the preview's
        parts), read again only when the file, its time stamp or the package roots changed (or `again`)."""
        from sear.gui.urdfview import robot_parts, robot_rows
        from sear.models.robotdesc.parse import load_urdf

        path = self.robot.body.file
        assert path is not None
        roots = self._urdf_roots()
        try:
            stamp: float | None = path.stat().st_mtime
        except OSError:
            stamp = None
        key = (path, stamp, tuple(roots))
        if again or key != self._urdf_key:
            self._urdf_key = key
            try:
                desc = load_urdf(path, roots)
                self._urdf = (desc, robot_rows(desc), robot_parts(desc))
            except SearError as exc:
                self._urdf = exc
        return self._urdf

    def _urdf_marks(self, proposal: dict[str, str]) -> dict[str, str]:
        """The joints the project marks as left/right wheels and steering; SEAR's proposal for a kind the
        project leaves out."""
        body = self.robot.body
        marks: dict[str, str] = {}
        for mark, text in zip(MARKS, (body.left_wheels, body.right_wheels, body.steering_joints), strict=True):
            names = joint_names(text)
            marks.update(dict.fromkeys(names if names is not None else
                                       [n for n, m in proposal.items() if m == mark], mark))
        return marks

    def _show_urdf(self, preview: MeshPreview) -> None:
        """Show the project's URDF in the panel and in `preview`: its links at the zero pose, wheels darker,
        the link chosen in the panel highlighted."""
        self.urdf_panel.set_roots(self._urdf_roots())
        read = self._read_urdf()
        if read is None or isinstance(read, SearError):
            self.urdf_panel.clear(f"The URDF cannot be used: {read}")
            preview.show_message(str(read))
            return
        _desc, rows, parts = read
        marks = self._urdf_marks(rows.proposal)
        if self.urdf_panel.rows is not rows:
            self.urdf_panel.set_rows(rows, marks)
        elif self.urdf_panel.marks() != marks:
            self.urdf_panel.set_marks(marks)
        wheels = {j.child for j in rows.joints if marks.get(j.name) in ("left", "right")}
        preview.show_parts([(link, mesh, WHEEL_COLOUR if link in wheels else BODY_COLOUR)
                            for link, mesh, _colour in parts])
        if preview is self.body_preview:
            preview.highlight(self.urdf_panel.selected_link)
