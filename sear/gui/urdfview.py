"""The Robot Body tab's part for a robot described by a URDF (issue 17 items 1 and 2).

`UrdfPanel` shows what a `.urdf` describes: the tree of links and joints (types, limits, masses), the
continuous joints the user marks as left or right wheels (SEAR's proposal prefilled), the folders
`package://` mesh paths are looked up in, and the collision report. It only shows and emits: the settings
window writes what the user chose into the project and redraws the preview, whose selected link is
highlighted (`MeshPreview.highlight`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sear.models.robotdesc.report import MAX_LINK_MASS

if TYPE_CHECKING:
    import trimesh

    from sear.models.robotdesc.model import RobotDescription

MARKS = ("left", "right", "steering")
"""What a joint can be marked as: a left or right (driven) wheel, or a steering joint (car drive); a joint
not marked is none of them."""


@dataclass(frozen=True)
class LinkRow:
    """A link as the tree shows it."""

    name: str
    mass: float | None
    """kg; None when the link has no <inertial>."""


@dataclass(frozen=True)
class JointRow:
    """A joint as the tree and the wheel table show it."""

    name: str
    type: str
    """URDF joint type: revolute, continuous, prismatic, fixed, floating or planar."""
    parent: str
    child: str
    axis: tuple[float, float, float] = (1.0, 0.0, 0.0)
    """In the joint's frame (URDF's default is x)."""
    lower: float | None = None
    """rad (revolute) or m (prismatic); None when the joint has no such limit."""
    upper: float | None = None
    effort: float | None = None
    """N·m (revolute, continuous) or N (prismatic)."""
    velocity: float | None = None
    """rad/s or m/s."""


@dataclass(frozen=True)
class Finding:
    """One line of the collision report and the links it is about (highlighted when it is clicked)."""

    text: str
    links: tuple[str, ...] = ()


@dataclass
class RobotRows:
    """What the panel shows of one URDF: its links and joints, SEAR's wheel proposal and its report."""

    path: Path
    robot: str
    """The <robot name>."""
    base: str
    """The root link."""
    links: list[LinkRow]
    joints: list[JointRow]
    proposal: dict[str, str] = field(default_factory=dict)
    """Joint name -> 'left', 'right' (wheels) or 'steering', as SEAR proposes from the joints' axes and names."""
    report: list[Finding] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    """Joints that look like wheels SEAR did not propose, and why (their axle is not across the robot)."""


def rolls(joint: JointRow) -> bool:
    """Whether `joint` turns without limit (continuous, or revolute without limits): it can be a wheel."""
    return joint.type == "continuous" or (joint.type == "revolute" and joint.lower is None and joint.upper is None)


def turns(joint: JointRow) -> bool:
    """Whether `joint` turns (continuous or revolute): a wheel or a steering joint, as the user marks it."""
    return joint.type in ("continuous", "revolute")


def limits_text(joint: JointRow) -> str:
    """A joint's limits as one line with units ('−1.00 … 1.00 rad, 10 N·m, 100 rad/s')."""
    if joint.type in ("fixed", "floating", "planar"):
        return ""
    linear = joint.type == "prismatic"
    unit, effort_unit, speed_unit = ("m", "N", "m/s") if linear else ("rad", "N·m", "rad/s")
    parts = []
    if joint.type == "continuous" or joint.lower is None or joint.upper is None:
        parts.append("unlimited")
    else:
        parts.append(f"{joint.lower:g} … {joint.upper:g} {unit}")
        if not linear:
            parts[-1] += f" ({math.degrees(joint.lower):.0f}° … {math.degrees(joint.upper):.0f}°)"
    if joint.effort is not None:
        parts.append(f"{joint.effort:g} {effort_unit}")
    if joint.velocity is not None:
        parts.append(f"{joint.velocity:g} {speed_unit}")
    return ", ".join(parts)


def mass_text(link: LinkRow) -> str:
    return "no inertia" if link.mass is None else f"{link.mass:g} kg"


KIND_ROLE = Qt.ItemDataRole.UserRole
"""Tree items keep ('link' | 'joint', name) under this role."""


class UrdfPanel(QWidget):
    """Links and joints, wheels, package roots and collision report of the URDF robot of the Robot Body tab."""

    linkSelected = Signal(object)
    """The link chosen in the tree or the wheel table (str), the links a finding of the report names (a tuple
    of str), or None when none is."""
    wheelsChanged = Signal(object)
    """The user marked a joint: joint name -> 'left', 'right' or 'steering' for every joint marked (dict), or
    None when they chose SEAR's proposal (Use SEAR's Proposal)."""
    rootsChanged = Signal(list)
    """The package roots (list of Path), after one was added or removed."""
    checkRequested = Signal()
    """The user asked for the collision report again (Check Again)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: RobotRows | None = None
        self.selected_link: str | tuple[str, ...] | None = None
        """What linkSelected last said (a link, the links of a finding, or None), for the preview to highlight
        again when it is drawn anew."""
        self._marks: dict[str, str] = {}
        self._roots: list[Path] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.summary = QLabel("No robot description loaded.")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.pages = QTabWidget()
        layout.addWidget(self.pages, 1)

        self.tree = QTreeWidget()
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["Link / joint", "Type", "Limits", "Mass"])
        self.tree.setToolTip("The robot's links, each with the joints that hang children on it. Select a link "
                             "(or a joint: its child link) to highlight it in the preview.")
        self.tree.setMinimumHeight(220)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.currentItemChanged.connect(self._tree_chosen)
        self.pages.addTab(self.tree, "Links and joints")

        self.wheel_table = QTableWidget(0, 4)
        self.wheel_table.setHorizontalHeaderLabels(["Joint", "Axis", "Link", "Wheel"])
        self.wheel_table.verticalHeader().hide()
        self.wheel_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.wheel_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.wheel_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.wheel_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.wheel_table.horizontalHeader().setStretchLastSection(True)
        self.wheel_table.setToolTip("The joints that turn: mark the driven wheels as left or right, and for car "
                                    "drive the steering joints (SEAR proposes them from the joints' axes and "
                                    "names).")
        self.wheel_table.currentCellChanged.connect(self._wheel_row_chosen)
        self.wheel_combos: dict[str, QComboBox] = {}
        wheels = QWidget()
        wl = QVBoxLayout(wheels)
        self.wheel_note = QLabel()
        self.wheel_note.setWordWrap(True)
        wl.addWidget(self.wheel_note)
        wl.addWidget(self.wheel_table, 1)
        propose = QPushButton("Use SEAR's Proposal")
        propose.setToolTip("Mark the wheels and steering joints as SEAR proposes them from the joints' axes and "
                           "names (and keep doing so when the URDF changes).")
        propose.clicked.connect(self.use_proposal)
        self.propose_button = propose
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(propose)
        wl.addLayout(row)
        self.pages.addTab(wheels, "Wheels")

        roots = QWidget()
        rl = QVBoxLayout(roots)
        note = QLabel("Mesh paths are looked up beside the URDF, then in these folders: package://NAME/PATH in "
                      "FOLDER/NAME/PATH (and FOLDER/PATH when FOLDER is the package itself).")
        note.setWordWrap(True)
        rl.addWidget(note)
        self.roots_list = QListWidget()
        self.roots_list.setToolTip("Folders that package:// mesh paths are resolved against, in order.")
        rl.addWidget(self.roots_list, 1)
        row = QHBoxLayout()
        self.add_root_button = QPushButton("Add Folder…")
        self.add_root_button.clicked.connect(lambda: self.add_root())
        self.remove_root_button = QPushButton("Remove")
        self.remove_root_button.clicked.connect(self.remove_root)
        self.roots_list.currentRowChanged.connect(lambda r: self.remove_root_button.setEnabled(r >= 0))
        self.remove_root_button.setEnabled(False)
        row.addWidget(self.add_root_button)
        row.addWidget(self.remove_root_button)
        row.addStretch(1)
        rl.addLayout(row)
        self.pages.addTab(roots, "Package roots")

        report = QWidget()
        cl = QVBoxLayout(report)
        self.report_list = QListWidget()
        self.report_list.setWordWrap(True)
        self.report_list.setToolTip("Click a finding to highlight the link it names.")
        self.report_list.currentItemChanged.connect(self._finding_chosen)
        cl.addWidget(self.report_list, 1)
        row = QHBoxLayout()
        self.check_button = QPushButton("Check Again")
        self.check_button.setToolTip("Read the URDF and its meshes again and make the report anew.")
        self.check_button.clicked.connect(self.checkRequested.emit)
        row.addStretch(1)
        row.addWidget(self.check_button)
        cl.addLayout(row)
        self.pages.addTab(report, "Collision report")

    # --- what is shown ----------------------------------------------------------------------------------------

    def clear(self, message: str = "No robot description loaded.") -> None:
        """Show nothing but `message` (no file, or one that cannot be read: the message says why)."""
        self.rows = None
        self.selected_link = None
        self.summary.setText(message)
        self.tree.clear()
        for combo in self.wheel_combos.values():
            combo.hide()
        self.wheel_table.setRowCount(0)
        self.wheel_combos = {}
        self._update_wheel_note()
        self.report_list.clear()
        self.pages.setTabText(3, "Collision report")
        # the package roots (a missing mesh is found by adding one) and Check Again stay usable
        for widget in (self.tree, self.wheel_table, self.propose_button, self.report_list):
            widget.setEnabled(False)

    def set_rows(self, rows: RobotRows, marks: Mapping[str, str] | None) -> None:
        """Show `rows`; `marks` are the wheels the project marks (None: none yet, so SEAR's proposal)."""
        self.rows = rows
        for widget in (self.tree, self.wheel_table, self.propose_button, self.report_list):
            widget.setEnabled(True)
        previous = self.selected_link if isinstance(self.selected_link, str) else None
        self._fill_tree(rows)
        self._marks = dict(rows.proposal if marks is None else marks)
        self._fill_wheels(rows)
        self.set_report(rows.report)
        wheels = sum(1 for j in rows.joints if rolls(j))
        self.summary.setText(f"Robot '{rows.robot}' from {rows.path.name}: {len(rows.links)} links, "
                             f"{len(rows.joints)} joints ({wheels} that turn without limit), base link "
                             f"'{rows.base}'.")
        self.selected_link = None
        if previous is not None:  # the same link stays chosen when the file is read again
            self.select_link(previous)

    def _fill_tree(self, rows: RobotRows) -> None:
        self.tree.blockSignals(True)
        self.tree.clear()
        links = {link.name: link for link in rows.links}
        children: dict[str, list[JointRow]] = {}
        for joint in rows.joints:
            children.setdefault(joint.parent, []).append(joint)

        def link_item(parent: QTreeWidget | QTreeWidgetItem, name: str, seen: set[str]) -> None:
            link = links.get(name, LinkRow(name, None))
            item = QTreeWidgetItem(parent, [name, "link", "", mass_text(link)])
            item.setData(0, KIND_ROLE, ("link", name))
            if link.mass is None:
                item.setForeground(3, Qt.GlobalColor.gray)
            elif link.mass <= 0 or link.mass > MAX_LINK_MASS:
                item.setForeground(3, Qt.GlobalColor.darkRed)
                item.setToolTip(3, "A suspicious mass: see the collision report.")
            for joint in children.get(name, []):
                j = QTreeWidgetItem(item, [joint.name, f"{joint.type} joint", limits_text(joint), ""])
                j.setData(0, KIND_ROLE, ("joint", joint.name))
                j.setToolTip(0, f"Joint {joint.name}: {joint.parent} → {joint.child}, axis "
                             + " ".join(f"{a:g}" for a in joint.axis))
                if joint.child not in seen:  # a loop is refused on load; never recurse for ever here
                    link_item(j, joint.child, seen | {joint.child})

        link_item(self.tree, rows.base, {rows.base})
        self.tree.expandAll()
        for column in range(1, 4):
            self.tree.resizeColumnToContents(column)
        self.tree.blockSignals(False)

    def _fill_wheels(self, rows: RobotRows) -> None:
        self.wheel_table.blockSignals(True)
        for combo in self.wheel_combos.values():
            combo.hide()  # replaced below; Qt deletes it later, and a hidden one is not drawn meanwhile
        turning = [j for j in rows.joints if turns(j)]
        self.wheel_table.setRowCount(len(turning))
        self.wheel_combos = {}
        for r, joint in enumerate(turning):
            self.wheel_table.setItem(r, 0, QTableWidgetItem(joint.name))
            self.wheel_table.setItem(r, 1, QTableWidgetItem(" ".join(f"{a:g}" for a in joint.axis)))
            self.wheel_table.setItem(r, 2, QTableWidgetItem(joint.child))
            combo = QComboBox()
            combo.addItem("—", None)
            combo.addItem("left wheel", "left")
            combo.addItem("right wheel", "right")
            combo.addItem("steering", "steering")
            combo.setCurrentIndex(max(0, combo.findData(self._marks.get(joint.name))))
            combo.currentIndexChanged.connect(lambda _i, name=joint.name: self._mark_changed(name))
            self.wheel_table.setCellWidget(r, 3, combo)
            self.wheel_combos[joint.name] = combo
        self.wheel_table.blockSignals(False)
        self._update_wheel_note()

    def _update_wheel_note(self) -> None:
        left, right, steering = ([n for n, s in self._marks.items() if s == mark] for mark in MARKS)
        if not self.wheel_combos:
            self.wheel_note.setText("This robot has no joint that turns: it has no wheel SEAR can drive.")
        elif not left or not right:
            text = ("Mark at least one left and one right wheel: SEAR drives the robot through "
                    f"them ({len(left)} left, {len(right)} right now).")
            refused = self.rows.refused if self.rows is not None else []
            if refused:
                (_first, why), others = refused[0], [name for name, _ in refused[1:]]
                text += f" Not proposed: {why}" + (f" The same holds for {', '.join(others)}." if others else "")
            self.wheel_note.setText(text)
        else:
            self.wheel_note.setText(f"Driven wheels: left {', '.join(left)}; right {', '.join(right)}. Steering "
                                    f"(car drive): {', '.join(steering) or 'none'}.")

    def set_marks(self, marks: Mapping[str, str]) -> None:
        """Show `marks` (joint name -> 'left', 'right' or 'steering') without emitting wheelsChanged."""
        self._marks = {n: s for n, s in marks.items() if s in MARKS}
        for name, combo in self.wheel_combos.items():
            combo.blockSignals(True)
            combo.setCurrentIndex(max(0, combo.findData(self._marks.get(name))))
            combo.blockSignals(False)
        self._update_wheel_note()

    def marks(self) -> dict[str, str]:
        """The joints marked now: joint name -> 'left', 'right' or 'steering'."""
        return dict(self._marks)

    def use_proposal(self) -> None:
        """Mark the joints as SEAR proposes (emits wheelsChanged(None))."""
        if self.rows is None:
            return
        self.set_marks(self.rows.proposal)
        self.wheelsChanged.emit(None)

    def _mark_changed(self, joint: str) -> None:
        side = self.wheel_combos[joint].currentData()
        if side is None:
            self._marks.pop(joint, None)
        else:
            self._marks[joint] = side
        self._update_wheel_note()
        self.wheelsChanged.emit(self.marks())

    def set_roots(self, roots: Iterable[Path]) -> None:
        """Show `roots` without emitting rootsChanged."""
        self._roots = [Path(r) for r in roots]
        self.roots_list.clear()
        for root in self._roots:
            item = QListWidgetItem(str(root))
            if not root.is_dir():
                item.setForeground(Qt.GlobalColor.darkRed)
                item.setToolTip("This folder does not exist.")
            self.roots_list.addItem(item)

    def roots(self) -> list[Path]:
        return list(self._roots)

    def add_root(self, folder: str | Path | None = None) -> bool:
        """Add a package root (asks for the folder when none is given); False when nothing was added."""
        if folder is None:
            start = str(self._roots[-1] if self._roots else (self.rows.path.parent if self.rows else Path.cwd()))
            folder = QFileDialog.getExistingDirectory(self, "Choose a folder that holds ROS packages", start)
            if not folder:
                return False
        path = Path(folder)
        if path in self._roots:
            return False
        self.set_roots([*self._roots, path])
        self.rootsChanged.emit(self.roots())
        return True

    def remove_root(self) -> bool:
        row = self.roots_list.currentRow()
        if row < 0 or row >= len(self._roots):
            return False
        self.set_roots(self._roots[:row] + self._roots[row + 1:])
        self.rootsChanged.emit(self.roots())
        return True

    def set_report(self, findings: list[Finding]) -> None:
        """Show the collision report (an empty one says so)."""
        self.report_list.blockSignals(True)
        self.report_list.clear()
        for finding in findings:
            item = QListWidgetItem(finding.text)
            item.setData(KIND_ROLE, finding.links)
            self.report_list.addItem(item)
        if not findings:
            item = QListWidgetItem("Nothing found: no links overlap at the zero pose, every link has a "
                                   "plausible mass and the collision meshes are closed.")
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.report_list.addItem(item)
        self.report_list.blockSignals(False)
        self.pages.setTabText(3, f"Collision report ({len(findings)})" if findings else "Collision report")

    # --- selection ---------------------------------------------------------------------------------------------

    def select_link(self, name: str | None) -> bool:
        """Make link `name` the tree's current item (emits linkSelected); False when there is none."""
        if name is None:
            self.tree.clearSelection()
            self.tree.setCurrentIndex(self.tree.rootIndex())  # no current item: emits linkSelected(None)
            return True
        for item in self._tree_items():
            if item.data(0, KIND_ROLE) == ("link", name):
                self.tree.setCurrentItem(item)
                return True
        return False

    def _tree_items(self) -> list[QTreeWidgetItem]:
        out: list[QTreeWidgetItem] = []
        stack = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        while stack:
            item = stack.pop()
            if item is not None:
                out.append(item)
                stack.extend(item.child(i) for i in range(item.childCount()))
        return out

    def _tree_chosen(self, item: QTreeWidgetItem | None, _previous: object = None) -> None:
        name = None
        if item is not None and self.rows is not None:
            kind, name = item.data(0, KIND_ROLE)
            if kind == "joint":
                name = next((j.child for j in self.rows.joints if j.name == name), None)
        self.selected_link = name
        self.linkSelected.emit(name)

    def _wheel_row_chosen(self, row: int, *_args: object) -> None:
        cell = self.wheel_table.item(row, 2) if row >= 0 else None
        if cell is not None:
            self.select_link(cell.text())

    def _finding_chosen(self, item: QListWidgetItem | None, _previous: object = None) -> None:
        links = item.data(KIND_ROLE) if item is not None else None
        if links:
            self.select_link(links[0])  # shown in the tree
            if len(links) > 1:  # and every link it names highlighted
                self.selected_link = tuple(links)
                self.linkSelected.emit(tuple(links))



# --- from the pure model (sear.models.robotdesc) ---------------------------------------------------------------------

BODY_COLOUR = (0.55, 0.6, 0.75)
"""RGB of the links in the preview (as a mesh body's)."""
WHEEL_COLOUR = (0.2, 0.2, 0.22)
"""RGB of the wheel links (marked or proposed) in the preview (as mesh wheels')."""


def robot_rows(desc: RobotDescription, *, report: bool = True) -> RobotRows:
    """What the panel shows of `desc`: its links and joints, SEAR's wheel proposal and (with `report`) the
    collision report."""
    from sear.models.robotdesc.report import collision_report
    from sear.models.robotdesc.wheels import propose_wheels

    proposal = propose_wheels(desc)
    marks = ({w.joint: "left" for w in proposal.left} | {w.joint: "right" for w in proposal.right}
             | dict.fromkeys(proposal.steering, "steering"))
    return RobotRows(
        path=desc.path, robot=desc.name, base=desc.root,
        links=[LinkRow(link.name, link.inertial.mass if link.inertial is not None else None)
               for link in desc.links.values()],
        joints=[JointRow(j.name, j.type, j.parent, j.child, j.axis, j.lower, j.upper, j.effort, j.velocity)
                for j in desc.joints.values()],
        proposal=marks, refused=list(proposal.refused),
        report=[Finding(f.message, f.links) for f in collision_report(desc)] if report else [])


def robot_parts(desc: RobotDescription, wheel_links: Iterable[str] = ()
                ) -> list[tuple[str, trimesh.Trimesh, tuple[float, float, float]]]:
    """The preview's parts: each link's visual shapes (its collision shapes when it has none) placed in the
    base link's frame at the zero pose (every joint at 0), m, named by the link; wheel links darker. A mesh
    that cannot be read is left out (the load or the report names it)."""
    from sear.errors import SearError

    wheels = set(wheel_links)
    poses = desc.link_poses()
    parts = []
    for link in desc.links.values():
        for geometry in link.visuals or link.collisions:
            try:
                mesh = geometry.shape()
            except SearError:
                continue
            mesh.apply_transform(poses[link.name])
            parts.append((link.name, mesh, WHEEL_COLOUR if link.name in wheels else BODY_COLOUR))
    return parts
