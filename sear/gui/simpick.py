"""The objects of the simulation window: clicking one in the 3-D view says what it is and where (its pose,
from the simulation), dragging a movable one pulls it with a force (sear.physics.picking.Pull), and the
Objects dock lists every object, obstacles user code added included, with its pose as the run goes on.

A plain drag pulls a movable obstacle (a box with mass); Shift + drag pulls anything movable, a robot too
(a plain drag on a robot orbits the camera, as on the terrain). The pull acts on the physics steps, so
while the simulation is paused the body waits for the next step (N, or Pause unticked) to move.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph.opengl as gl
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem

from sear.physics.picking import Picked, Pull, body_mass, body_pose, pick
from sear.state import quaternion_to_euler

if TYPE_CHECKING:
    from sear.gui.simview import SimView
    from sear.runtime.simulation import Simulation

PULL_COLOUR = (1.0, 0.85, 0.1, 1.0)
"""RGBA of the line from a pulled body's grabbed point to the mouse."""
ROBOT_KINDS = ("robot", "gripper")
"""Picked kinds that are (part of) a robot: Shift + drag pulls them."""


def _number(value: float, decimals: int) -> str:
    """`value` to `decimals` places, never '-0.0' (a value that rounds to zero reads 0)."""
    text = f"{value:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0.0 else text


def pose_text(position: np.ndarray, orientation: np.ndarray) -> str:
    """'x 1.00  y -2.00  z 0.50 m, yaw 30.0°' (roll and pitch too when either is over half a degree)."""
    roll, pitch, yaw = (math.degrees(a) for a in quaternion_to_euler(orientation))
    turn = f"yaw {_number(yaw, 1)}°"
    if abs(roll) > 0.5 or abs(pitch) > 0.5:
        turn = f"roll {_number(roll, 1)}°  pitch {_number(pitch, 1)}°  " + turn
    x, y, z = (_number(float(c), 2) for c in position)
    return f"x {x}  y {y}  z {z} m, {turn}"


class Picker:
    """Clicks and drags in the 3-D view (SimView.mouse): the selected object, shown in `label` with its
    pose, and the pull under way, applied before every tick (before_tick)."""

    def __init__(self, view: SimView, simulation: Simulation, label: QLabel) -> None:
        self.view = view
        self.simulation = simulation
        self.label = label
        self.selected: tuple[str, int] | None = None
        """(kind, index) of the object shown in the label, None when none is."""
        self.terrain_point: np.ndarray | None = None
        """Where the terrain was clicked (m), when the terrain is selected."""
        self.pull: Pull | None = None
        self._plane_z = 0.0
        self.selection_changed: Callable[[tuple[str, int] | None], None] = lambda _selected: None
        """Told when a click in the view selects an object (the Objects dock follows)."""
        self.line = gl.GLLinePlotItem(pos=np.zeros((2, 3), dtype=np.float32), mode="lines", color=PULL_COLOUR,
                                      width=3.0, antialias=False)
        self.line.setVisible(False)
        view.addItem(self.line)
        view.mouse = self

    # --- the view's mouse ------------------------------------------------------------------------------

    def _pick(self, x: float, y: float) -> Picked | None:
        start, end = self.view.ray_at(x, y)
        return pick(self.simulation.world, start, end)

    def press(self, x: float, y: float, shift: bool) -> bool:
        """A movable obstacle (or with Shift anything movable) under the mouse: start pulling it."""
        found = self._pick(x, y)
        if found is None or found.kind == "terrain" or (found.kind in ROBOT_KINDS and not shift):
            return False
        if body_mass(self.simulation.world, found.body_id) <= 0.0:
            return False
        self.pull = self.simulation.start_pull(found.body_id, found.point)  # put on the body before every step
        self._plane_z = float(found.point[2])
        self.select(found.kind, found.index)
        self.selection_changed(self.selected)
        return True

    def move(self, x: float, y: float) -> None:
        """Pull towards where the mouse ray meets the level plane through the grabbed point."""
        if self.pull is None:
            return
        start, end = self.view.ray_at(x, y)
        direction = end - start
        if abs(direction[2]) < 1e-9:
            return
        along = (self._plane_z - start[2]) / direction[2]
        if not 0.0 < along <= 1.0:  # the plane is behind the eye or beyond the far end
            return
        target = start + along * direction
        reach = max(50.0, 20.0 * float(self.view.opts["distance"]))
        offset = target - self.pull.grabbed_point()
        if np.linalg.norm(offset) > reach:  # near the horizon: keep the target within reach
            target = self.pull.grabbed_point() + offset * (reach / np.linalg.norm(offset))
        self.simulation.pull_to(target)
        self.refresh()

    def release(self) -> None:
        self.simulation.release_pull()
        self.pull = None
        self.line.setVisible(False)

    def click(self, x: float, y: float) -> None:
        """Select what is under the mouse (nothing: clear the selection)."""
        found = self._pick(x, y)
        if found is None:
            self.select(None)
        else:
            self.select(found.kind, found.index)
            if found.kind == "terrain":
                self.terrain_point = found.point
        self.selection_changed(self.selected)
        self.refresh()

    # --- selection and drawing -------------------------------------------------------------------------

    def select(self, kind: str | None, index: int = 0) -> None:
        """Show object (kind, index) in the label (None: hide it)."""
        self.selected = None if kind is None else (kind, index)
        self.terrain_point = None
        self.refresh()

    def describe(self, kind: str, index: int) -> str:
        """What object (kind, index) is, and its pose now, from the simulation."""
        sim = self.simulation
        world = sim.world
        if kind == "terrain":
            name = sim.project.terrain.file.name if sim.project.terrain.file else "terrain"
            at = self.terrain_point
            where = "" if at is None else f": clicked at x {at[0]:.2f}  y {at[1]:.2f}  z {at[2]:.2f} m"
            return f"<b>Terrain</b> ({name}){where}"
        if kind in ROBOT_KINDS:
            body = world.vehicles[index].body_id if kind == "robot" else world.grippers[index].body_id
            what = f"Robot {sim.robots[index].name}" if kind == "robot" else f"Gripper of {sim.robots[index].name}"
            return (f"<b>{what}</b> ({body_mass(world, body):.1f} kg; Shift + drag pulls it)<br>"
                    f"{pose_text(*body_pose(world, body))}")
        obstacle = world.obstacles[index]
        mass = body_mass(world, obstacle.body_id)
        how = f"movable, {mass:.1f} kg; drag to pull it" if mass > 0 else "fixed"
        size = " × ".join(f"{s:.2f}" for s in obstacle.size)
        return (f"<b>{obstacle.kind.capitalize()} {index}</b> ({size} m, {how})<br>"
                f"{pose_text(*world.obstacle_pose(obstacle))}")

    def refresh(self, *, text: bool = True) -> None:
        """The pull's line (each frame) and, with `text`, the label (with the HUD, a few times a second:
        text over the OpenGL view is costly to repaint), from the simulation as it is now."""
        if self.pull is not None:
            points = np.array([self.pull.grabbed_point(), self.pull.target], dtype=np.float32)
            self.line.setData(pos=points)
            self.line.setVisible(True)
        if not text:
            return
        if self.selected is None:
            self.label.setVisible(False)
            return
        self.label.setText(self.describe(*self.selected))
        self.label.adjustSize()
        self.label.move(12, max(0, self.view.height() - self.label.height() - 12))
        self.label.setVisible(True)


class ObjectsPanel(QTreeWidget):
    """The Objects dock: the terrain, every robot (and gripper) and every obstacle, obstacles user code adds
    while running included, each with its pose; choosing a row selects the object in the view, and a double
    click on a robot drives it and makes the camera follow it (`drive`), as Tab does: with 100 robots Tab
    alone is a long way round. The driven robot's row is in bold and says so."""

    def __init__(self, simulation: Simulation, picker: Picker) -> None:
        super().__init__()
        self.simulation = simulation
        self.picker = picker
        self.setColumnCount(2)
        self.setHeaderLabels(["Object", "Pose"])
        self.setRootIsDecorated(True)
        self.rows: dict[tuple[str, int], QTreeWidgetItem] = {}
        """The row of each object, by (kind, index) as Picker.selected names it."""
        world = simulation.world
        self._add(None, "Terrain", ("terrain", 0))
        self.robots = QTreeWidgetItem(self, ["Robots"])
        for index, run in enumerate(simulation.robots):
            self._add(self.robots, f"{run.name} (robot)", ("robot", index))
            if index in world.grippers:
                self._add(self.robots, f"Gripper of {run.name}", ("gripper", index))
        self.obstacles = QTreeWidgetItem(self, ["Obstacles"])
        self.expandAll()
        self.resizeColumnToContents(0)
        self.itemClicked.connect(self._clicked)
        self.itemDoubleClicked.connect(self._double_clicked)
        self.drive: Callable[[int], None] | None = None
        """What a double click on robot `index` calls (the window's drive_robot); None: nothing."""
        picker.selection_changed = self.show_selected
        self.robots.setToolTip(0, "Double-click a robot to drive it and follow it with the camera (Tab: the next)")
        self.show_driven()
        self.refresh()

    def show_driven(self) -> None:
        """The driven robot's row in bold, its text saying so; the others plain."""
        driven = self.simulation.driven
        for index, run in enumerate(self.simulation.robots):
            item = self.rows[("robot", index)]
            font = item.font(0)
            font.setBold(index == driven)
            item.setFont(0, font)
            item.setText(0, f"{run.name} (robot, driven)" if index == driven and len(self.simulation.robots) > 1
                         else f"{run.name} (robot)")
        self.resizeColumnToContents(0)

    def _double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        key = item.data(0, Qt.ItemDataRole.UserRole)
        if key is not None and key[0] == "robot" and self.drive is not None:
            self.drive(key[1])

    def _add(self, parent: QTreeWidgetItem | None, text: str, key: tuple[str, int]) -> QTreeWidgetItem:
        item = QTreeWidgetItem([text, ""]) if parent is not None else QTreeWidgetItem(self, [text, ""])
        if parent is not None:
            parent.addChild(item)
        item.setData(0, Qt.ItemDataRole.UserRole, key)
        self.rows[key] = item
        return item

    def refresh(self) -> None:
        """New obstacles get a row; every robot's and obstacle's pose is shown as it is now."""
        world = self.simulation.world
        for index, obstacle in enumerate(world.obstacles):
            key = (obstacle.kind, index)
            if key not in self.rows:
                moves = "movable" if obstacle.dynamic else "fixed"
                self._add(self.obstacles, f"{obstacle.kind.capitalize()} {index} ({moves})", key)
                self.obstacles.setExpanded(True)
                self.resizeColumnToContents(0)
        self.obstacles.setText(0, f"Obstacles ({len(world.obstacles)})")
        for (kind, index), item in self.rows.items():
            if kind == "terrain":
                continue
            if kind == "robot":
                position, orientation = body_pose(world, world.vehicles[index].body_id)
            elif kind == "gripper":
                position, orientation = body_pose(world, world.grippers[index].body_id)
            else:
                position, orientation = world.obstacle_pose(world.obstacles[index])
            item.setText(1, pose_text(position, orientation))

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        key = item.data(0, Qt.ItemDataRole.UserRole)
        if key is not None:
            self.picker.select(*key)

    def show_selected(self, key: tuple[str, int] | None) -> None:
        """The row of the object picked in the view (none: no row chosen)."""
        self.refresh()
        item = self.rows.get(key) if key is not None else None
        self.setCurrentItem(item)  # type: ignore[arg-type]
        if item is None:
            self.clearSelection()
