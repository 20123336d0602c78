"""The World tab: the project's <world> (sear.scene) and every robot's start, built with the mouse.

A palette adds a box, wall, table, tree or shelf at the middle of the view (moved east until it stands
clear of the others); the 3-D editor (world_view.py) selects by clicking, moves by dragging an object and
turns it by dragging the knob on its ring; the scene tree lists every object with its fields, and the
property panel beside it edits the selected one with typed values. Objects stand on the terrain (the
simulation puts their feet on the ground under them, sear.physics.world; the editor draws them there)
and, with Snap on, their centres keep to the grid and their headings to 15° steps. Delete removes the
selected obstacle, Duplicate copies it; every change is one step of the window's Undo/Redo.

Robots are not held in <world>: each robot's start pose stays in its <body> (one source of truth), and
dragging a robot here edits those fields (start_east, start_north, rotation).
"""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from sear.errors import SearError
from sear.fields import field_info
from sear.gui.preview import lit_mesh_item
from sear.gui.settings.body_tab import mesh_robot_parts
from sear.gui.settings.tab import EditedProject, SettingsTab
from sear.gui.settings.world_view import Key, Placement, WorldView
from sear.gui.widgets import IntField, NumberField
from sear.models.robotdesc.parse import is_urdf
from sear.project import Body
from sear.scene import KINDS, Box, Placed, Scene, Tree, kind_of, parts

COLOURS = {"box": (0.65, 0.45, 0.25), "wall": (0.75, 0.72, 0.68), "table": (0.55, 0.38, 0.22),
           "tree": (0.2, 0.55, 0.2), "shelf": (0.62, 0.5, 0.36), "robot": (0.25, 0.45, 0.8)}
"""RGB of each kind in the editor (the simulation window's colours)."""
SELECTED = (1.0, 0.55, 0.05)
ROBOT_PARTS = [((0.0, 0.0, 0.1), (0.6, 0.4, 0.2)), ((0.33, 0.0, 0.08), (0.08, 0.16, 0.1))]
"""A robot's marker at its start when its models cannot be drawn (a URDF robot, a model not chosen or not
readable): a 0.6 m x 0.4 m block with a nose at its front (its body x axis)."""
VIEW_SIZE = 12.0
"""m: the editor first shows this much of the terrain round its centre (the wheel zooms out)."""
KNOB = 0.2
"""Half the edge of the turning knob on the selected object's ring, m."""
TURN_STEP = math.radians(15.0)
"""With Snap on, headings keep to multiples of this, rad."""


def yaw_of(rotation: tuple[float, float, float, float]) -> float:
    """The heading (rad from east) of a body frame's x axis turned by quaternion (x, y, z, w)."""
    x, y, z, w = rotation
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def turned(rotation: tuple[float, float, float, float], yaw: float) -> tuple[float, float, float, float]:
    """`rotation` turned about the vertical so that its heading becomes `yaw` (roll and pitch kept)."""
    delta = (yaw - yaw_of(rotation)) / 2.0
    qz, qw = math.sin(delta), math.cos(delta)
    x, y, z, w = rotation
    return (qw * x - qz * y, qw * y + qz * x, qw * z + qz * w, qw * w - qz * z)


class WorldTab(SettingsTab):
    TITLE = "World"
    SECTIONS = ("world",)

    def __init__(self, source: EditedProject) -> None:
        super().__init__(source)
        self.view = WorldView()
        self.view.knob = KNOB
        self.view.snap = self._snap
        self.view.snap_yaw = self._snap_yaw
        self.view.picked.connect(self.select)
        self.view.moved.connect(self._dragged)
        self.view.turned.connect(self._turned)
        self.view.dropped.connect(self._dropped)
        self.selected: Key | None = None
        self._before_drag: str | None = None
        self._terrain_key: object = None
        self._terrain: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        """The terrain's triangles (F, 3, 3) and their boxes' lower and upper x, y corners (world frame, m);
        None without a terrain."""
        self._terrain_items: list = []
        self._items: list = []
        self._heights: dict[tuple[float, float], float] = {}
        """Ground heights already worked out, by point (m): a redraw during a drag asks again for every
        object that did not move."""
        self._robot_models: dict[object, list | None] = {}
        """Each mesh robot's body and wheel models (mesh, RGB), their lowest point at z = 0, by what they are
        read from; None when they cannot be read (the robot is drawn as a marker)."""

        palette = QHBoxLayout()
        palette.addWidget(QLabel("Add:"))
        self.palette_buttons: dict[str, QPushButton] = {}
        for kind, cls in KINDS.items():
            button = QPushButton(kind.capitalize())
            button.setObjectName(f"add_{kind}")
            button.setToolTip(f"Add a {kind} at the middle of the view. {(cls.__doc__ or '').splitlines()[0]}")
            button.clicked.connect(lambda _=False, k=kind: self.add(k))
            palette.addWidget(button)
            self.palette_buttons[kind] = button
        palette.addSpacing(16)
        self.delete_action = self._action("Delete", QKeySequence(QKeySequence.StandardKey.Delete), self.delete)
        self.duplicate_action = self._action("Duplicate", QKeySequence("Ctrl+D"), self.duplicate)
        for action in (self.delete_action, self.duplicate_action):
            button = QPushButton(action.text())
            button.setToolTip(action.toolTip())
            button.clicked.connect(action.trigger)
            action.changed.connect(lambda b=button, a=action: b.setEnabled(a.isEnabled()))
            palette.addWidget(button)
        palette.addSpacing(16)
        self.snap_box = QCheckBox("Snap to grid")
        self.snap_box.setChecked(True)
        self.snap_box.setToolTip("Dragged objects keep their centres on the grid and turn in 15° steps.")
        palette.addWidget(self.snap_box)
        self.grid = NumberField("m", (0.01, 100.0, False, "a grid spacing from 0.01 to 100 m"), decimals=2,
                                tooltip="Spacing of the grid objects snap to, m (a setting of the editor, not saved).")
        self.grid.set(0.5)
        self.grid.valueChanged.connect(lambda _v: self.update_preview())
        palette.addWidget(self.grid)
        palette.addStretch(1)

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Object", "Kind", "East (m)", "North (m)", "Yaw (°)"])
        for column, width in enumerate((130, 90, 70, 70, 50)):
            self.tree.setColumnWidth(column, width)
        self.tree.setRootIsDecorated(True)
        self.tree.setToolTip("Every object of the world: the robots at their starts and the obstacles. "
                             "Click one to select it.")
        self.tree.itemSelectionChanged.connect(self._tree_selected)
        self.properties = QGroupBox("Selected object")
        self.property_form = QFormLayout(self.properties)
        self.property_form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)

        self.tree.setMinimumHeight(150)
        panel = QScrollArea()
        panel.setWidgetResizable(True)
        panel.setWidget(self.properties)
        panel.setFrameShape(QFrame.Shape.NoFrame)
        side = QSplitter(Qt.Orientation.Vertical)
        side.addWidget(self.tree)
        side.addWidget(panel)
        side.setSizes([230, 330])
        side.setMinimumWidth(330)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.view)
        split.addWidget(side)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([600, 400])
        layout = QVBoxLayout(self)
        layout.addLayout(palette)
        layout.addWidget(split, 1)
        hint = QLabel("Click an object to select it; drag it to move it, drag the knob on its ring to turn it; "
                      "drag elsewhere to orbit (Ctrl: pan; wheel: zoom).")
        hint.setStyleSheet("color: #555;")
        layout.addWidget(hint)

    def _action(self, text: str, keys: QKeySequence, slot) -> QAction:
        action = QAction(text, self)
        action.setShortcut(keys)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.setToolTip(f"{text} the selected obstacle ({keys.toString()})")
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    # --- the model ----------------------------------------------------------------------------------------

    @property
    def scene(self) -> Scene:
        """The project's <world>, made when the first obstacle is added."""
        if self.project.world is None:
            self.project.world = Scene()
        return self.project.world

    def obstacle(self, key: Key | None) -> Placed | None:
        if key is None or key[0] != "obstacle" or self.project.world is None:
            return None
        found: Placed | None = self.project.world.find(key[1])
        return found

    def robot_body(self, key: Key | None) -> Body | None:
        if key is None or key[0] != "robot":
            return None
        index = int(key[1])
        robots = self.project.robots
        return robots[index].body if index < len(robots) else None

    def robot_xy(self, body: Body) -> tuple[float, float]:
        """A robot's start, m east and north of the terrain centre (an absolute start converted)."""
        if body.start_mode == "relative":
            return body.start_east, body.start_north
        from sear.geo import geodetic_to_enu

        t = self.project.terrain
        east, north, _ = geodetic_to_enu(body.start_latitude, body.start_longitude, 0.0, t.latitude, t.longitude, 0.0)
        return east, north

    def add(self, kind: str) -> Placed:
        """Add an obstacle of `kind` at the middle of the view (on the grid), east of anything there."""
        centre = self.view.opts["center"]
        x, y = self._snap(float(centre.x()), float(centre.y()))
        item: Placed = KINDS[kind](name=self.scene.free_name(kind), x=x, y=y)
        step = max(self.grid.value(), 0.5) if self.snap_box.isChecked() else 0.5
        while self._overlaps(item):
            item.x += step
        self.scene.add(item)
        self.selected = ("obstacle", item.name)
        self.refresh()
        self.edited.emit(f"Add {kind}", True)
        return item

    def _overlaps(self, item: Placed) -> bool:
        """Whether `item`'s ring would overlap another object's (robots included)."""
        mine = self._placement(("obstacle", item.name), item)
        others = [self._placement(k, None) for k in self._keys()]
        return any(math.hypot(mine.x - o.x, mine.y - o.y) < mine.radius() + o.radius() - 0.6 for o in others)

    def delete(self) -> None:
        """Delete the selected obstacle (robots are removed in the robot list)."""
        item = self.obstacle(self.selected)
        if item is None:
            self.message.emit("Select an obstacle to delete (robots are removed with the robot list).", 5000)
            return
        self.scene.remove(item.name)
        self.selected = None
        self.refresh()
        self.edited.emit(f"Delete {item.name}", True)

    def duplicate(self) -> None:
        """Copy the selected obstacle one grid step (at least 1 m) east, under a new name."""
        item = self.obstacle(self.selected)
        if item is None:
            self.message.emit("Select an obstacle to duplicate (robots are duplicated in the robot list).", 5000)
            return
        copy = self.scene.duplicate(item.name, offset=max(1.0, self.grid.value()))
        self.selected = ("obstacle", copy.name)
        self.refresh()
        self.edited.emit(f"Duplicate {item.name}", True)

    def _move(self, key: Key, x: float, y: float) -> None:
        """Put object `key`'s centre (a robot's start) at (x, y) m, without an undo step (a drag's)."""
        item = self.obstacle(key)
        if item is not None:
            item.x, item.y = x, y
            return
        body = self.robot_body(key)
        if body is not None:
            body.start_mode = "relative"
            body.start_east, body.start_north = x, y

    def _turn(self, key: Key, yaw: float) -> None:
        item = self.obstacle(key)
        if item is not None and hasattr(item, "yaw"):
            item.yaw = yaw
        body = self.robot_body(key)
        if body is not None:
            body.rotation = turned(body.rotation, yaw)

    def _state(self, key: Key) -> str:
        return repr(self.obstacle(key) or self.robot_body(key))

    def _dragged(self, key: Key, x: float, y: float) -> None:
        if self._before_drag is None:
            self._before_drag = self._state(key)
        self._move(key, x, y)
        self.update_preview()

    def _turned(self, key: Key, yaw: float) -> None:
        if self._before_drag is None:
            self._before_drag = self._state(key)
        self._turn(key, yaw)
        self.update_preview()

    def _dropped(self, key: Key) -> None:
        """A drag ended: one undo step, when it changed something."""
        before, self._before_drag = self._before_drag, None
        if before is not None and before != self._state(key):
            self.edited.emit(f"Move {self._name(key)}", True)
            self._fill_properties()

    def _name(self, key: Key) -> str:
        return key[1] if key[0] == "obstacle" else self.project.robots[int(key[1])].name

    def _snap(self, x: float, y: float) -> tuple[float, float]:
        if not self.snap_box.isChecked():
            return x, y
        g = self.grid.value()
        return round(x / g) * g, round(y / g) * g

    def _snap_yaw(self, yaw: float) -> float:
        return round(yaw / TURN_STEP) * TURN_STEP if self.snap_box.isChecked() else yaw

    # --- the terrain: drawing and the ground's height -------------------------------------------------------

    def _load_terrain(self) -> None:
        t = self.project.terrain
        key = (t.file, t.scale, t.heightmap_size, t.heightmap_height)
        if key == self._terrain_key:
            return
        self._terrain_key = key
        self._terrain = None
        self._heights.clear()
        for item in self._terrain_items:
            self.view.removeItem(item)
        self._terrain_items = []
        if t.file is None:
            return
        from sear.models.meshfiles import load_terrain  # reads models: trimesh is loaded only now

        try:
            mesh = load_terrain(t).preview_mesh()  # a large grid's surface with fewer samples
        except SearError as exc:
            self.message.emit(f"World tab: the terrain cannot be drawn: {exc}", 8000)
            return
        tri = np.asarray(mesh.vertices, dtype=float)[np.asarray(mesh.faces)]
        self._terrain = (tri, tri[:, :, :2].min(axis=1), tri[:, :, :2].max(axis=1))
        item = lit_mesh_item(mesh, (0.55, 0.7, 0.45))
        self.view.addItem(item)
        self._terrain_items.append(item)
        lo, hi = mesh.bounds
        self.view.look_at((0.0, 0.0, float(self.heights(np.zeros((1, 2)))[0])),
                          float(min(max(hi[0] - lo[0], hi[1] - lo[1]), VIEW_SIZE)))

    def heights(self, xy: np.ndarray) -> np.ndarray:
        """The terrain's height (its highest surface) at points (N, 2), m; 0 where there is none."""
        out = np.zeros(len(xy))
        if self._terrain is None:
            return out
        tri, lo, hi = self._terrain
        if len(self._heights) > 100_000:  # a long session of drags: start afresh
            self._heights.clear()
        for i, (px, py) in enumerate(xy):
            known = self._heights.get((float(px), float(py)))
            if known is not None:
                out[i] = known
                continue
            near = tri[(lo[:, 0] <= px) & (px <= hi[:, 0]) & (lo[:, 1] <= py) & (py <= hi[:, 1])]
            a, b, c = near[:, 0], near[:, 1], near[:, 2]
            d = (b[:, 1] - c[:, 1]) * (a[:, 0] - c[:, 0]) + (c[:, 0] - b[:, 0]) * (a[:, 1] - c[:, 1])
            flat = np.abs(d) < 1e-12
            d = np.where(flat, 1.0, d)
            u = ((b[:, 1] - c[:, 1]) * (px - c[:, 0]) + (c[:, 0] - b[:, 0]) * (py - c[:, 1])) / d
            v = ((c[:, 1] - a[:, 1]) * (px - c[:, 0]) + (a[:, 0] - c[:, 0]) * (py - c[:, 1])) / d
            inside = ~flat & (u >= -1e-9) & (v >= -1e-9) & (u + v <= 1 + 1e-9)
            if inside.any():
                z = u * a[:, 2] + v * b[:, 2] + (1 - u - v) * c[:, 2]
                out[i] = float(z[inside].max())
            self._heights[(float(px), float(py))] = float(out[i])
        return out

    # --- drawing --------------------------------------------------------------------------------------------

    def _keys(self) -> list[Key]:
        keys: list[Key] = [("robot", str(i)) for i in range(len(self.project.robots))]
        if self.project.world is not None:
            keys += [("obstacle", o.name) for o in self.project.world.obstacles()]
        return keys

    def robot_model(self, index: int) -> list | None:
        """Robot `index`'s body and wheel models as (mesh, RGB) with their lowest point at z = 0 (read once
        per file, scale and wheel placement), or None for a URDF robot or models that cannot be read."""
        robot = self.project.robots[index]
        if robot.body.file is None or is_urdf(robot.body.file):
            return None
        key = (robot.body.file, robot.body.scale, tuple((w.file, w.position) for w in robot.wheels.values()))
        if key not in self._robot_models:
            try:
                meshes = mesh_robot_parts(robot)
            except SearError:
                self._robot_models[key] = None
            else:
                lowest = min(float(m.bounds[0][2]) for m, _ in meshes)
                self._robot_models[key] = [(m.copy().apply_translation((0.0, 0.0, -lowest)), c) for m, c in meshes]
        return self._robot_models[key]

    def _placement(self, key: Key, item: Placed | None) -> Placement:
        """How the view draws and picks object `key` (`item`: an obstacle not yet in the world)."""
        item = item if item is not None else self.obstacle(key)
        if item is None:
            body = self.robot_body(key)
            assert body is not None
            x, y = self.robot_xy(body)
            ground = float(self.heights(np.array([[x, y]]))[0])
            lift = body.start_altitude if body.start_mode == "relative" else 0.0
            model = self.robot_model(int(key[1]))
            boxes = ROBOT_PARTS
            if model is not None:  # its models' bounding box, for picking
                lo = np.min([m.bounds[0] for m, _ in model], axis=0)
                hi = np.max([m.bounds[1] for m, _ in model], axis=0)
                boxes = [(tuple((lo + hi) / 2.0), tuple(hi - lo))]
            return Placement(key, boxes, x, y, ground + lift, yaw_of(body.rotation))
        boxes = parts(item)
        yaw = float(getattr(item, "yaw", 0.0))
        c, s = math.cos(yaw), math.sin(yaw)
        corners = [(sx * d[0] / 2 + p[0], sy * d[1] / 2 + p[1]) for p, d in boxes for sx in (-1, 1) for sy in (-1, 1)]
        if isinstance(item, Tree):
            corners = [(0.15 * math.cos(a), 0.15 * math.sin(a)) for a in np.linspace(0, 2 * math.pi, 8)]
        xy = np.array([(item.x + c * u - s * v, item.y + s * u + c * v) for u, v in corners] + [(item.x, item.y)])
        under = self.heights(xy)
        if isinstance(item, Box):
            feet = float(under.max()) if item.z is None else item.z - item.size / 2.0
        else:
            feet = float(under.min())
        return Placement(key, boxes, item.x, item.y, feet, yaw, turnable=not isinstance(item, Tree))

    def update_preview(self) -> None:
        """Draw the terrain (when it changed), every object where the project puts it, and the selection."""
        import pyqtgraph.opengl as gl
        import trimesh

        self._load_terrain()
        for old in self._items:
            self.view.removeItem(old)
        self._items = []
        self.view.placements = {key: self._placement(key, None) for key in self._keys()}
        self.view.selected = self.selected
        for key, placed in self.view.placements.items():
            kind = "robot" if key[0] == "robot" else kind_of(self.obstacle(key))  # type: ignore[arg-type]
            model = self.robot_model(int(key[1])) if kind == "robot" else None
            if model is not None:
                for mesh, colour in model:
                    self._add_mesh(mesh, placed, SELECTED if key == self.selected else colour)
                continue
            if kind == "tree":
                from sear.models.meshfiles import make_tree

                mesh = make_tree()
            else:
                boxes = [trimesh.creation.box(extents=d).apply_translation(p) for p, d in placed.parts]
                mesh = trimesh.Trimesh(np.concatenate([b.vertices for b in boxes]),
                                       np.concatenate([b.faces + 8 * i for i, b in enumerate(boxes)]), process=False)
            self._add_mesh(mesh, placed, SELECTED if key == self.selected else COLOURS[kind])
        placed_sel = self.view.placements.get(self.selected) if self.selected else None
        if placed_sel is not None and placed_sel.turnable:
            r = placed_sel.radius()
            angles = np.linspace(0, 2 * math.pi, 97)
            ring = np.column_stack([placed_sel.x + r * np.cos(angles), placed_sel.y + r * np.sin(angles),
                                    np.full(97, placed_sel.z + 0.05)])
            line = gl.GLLinePlotItem(pos=ring, color=(*SELECTED, 1.0), width=2.0, antialias=True)
            size = KNOB
            knob = lit_mesh_item(trimesh.creation.box(extents=(2 * size,) * 3).apply_translation(placed_sel.knob()),
                                 SELECTED)
            for extra in (line, knob):
                self.view.addItem(extra)
                self._items.append(extra)
        self._fill_tree_rows()

    def _add_mesh(self, mesh, placed: Placement, colour: tuple[float, float, float]) -> None:
        """Draw `mesh` (in an object's frame: feet at z = 0) where `placed` puts that object."""
        import trimesh

        matrix = trimesh.transformations.rotation_matrix(placed.yaw, (0, 0, 1))
        matrix[:3, 3] = (placed.x, placed.y, placed.z)
        item = lit_mesh_item(mesh.copy().apply_transform(matrix), colour)
        self.view.addItem(item)
        self._items.append(item)

    # --- the scene tree and the property panel ---------------------------------------------------------------

    def refresh(self) -> None:
        """Rebuild the tree and the property panel from the project (after a load, an undo, an add)."""
        if self.selected is not None and self.selected not in self._keys():
            self.selected = None
        self.tree.blockSignals(True)
        self.tree.clear()
        robots = QTreeWidgetItem(self.tree, ["Robots"])
        obstacles = QTreeWidgetItem(self.tree, ["Obstacles"])
        for key in self._keys():
            row = QTreeWidgetItem(robots if key[0] == "robot" else obstacles)
            row.setData(0, Qt.ItemDataRole.UserRole, key)
            for field_row in self._field_rows(key):
                QTreeWidgetItem(row, field_row)
        robots.setExpanded(True)
        obstacles.setExpanded(True)
        self.tree.blockSignals(False)
        self._fill_tree_rows()
        self._fill_properties()
        self.update_enabled()

    def _field_rows(self, key: Key) -> list[list[str]]:
        """The child rows of an object in the tree: one per field not in the columns (name, value)."""
        item = self.obstacle(key)
        shown = {"name", "x", "y", "yaw"}
        if item is None:
            body = self.robot_body(key)
            return [["start mode", body.start_mode if body else ""]]
        return [[f.name, _text(getattr(item, f.name))] for f in fields(item) if f.name not in shown]

    def _object_rows(self) -> list[QTreeWidgetItem]:
        """The tree's rows of objects (under the Robots and Obstacles groups)."""
        rows = []
        for group in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(group)
            if top is not None:
                top.setText(1, f"{top.childCount()}")
                rows += [row for index in range(top.childCount()) if (row := top.child(index)) is not None]
        return rows

    def _fill_tree_rows(self) -> None:
        """Write every object's columns (and select the selected one) without rebuilding the tree."""
        self.tree.blockSignals(True)
        valid = set(self._keys())
        for row in self._object_rows():
            data = row.data(0, Qt.ItemDataRole.UserRole)
            key: Key = (str(data[0]), str(data[1]))
            if key not in valid:
                continue  # an object just removed: the tree is rebuilt next
            placed = self.view.placements.get(key) or self._placement(key, None)
            item = self.obstacle(key)
            row.setText(0, self._name(key))
            row.setText(1, "robot" if item is None else kind_of(item))
            row.setText(2, f"{placed.x:.2f}")
            row.setText(3, f"{placed.y:.2f}")
            row.setText(4, f"{math.degrees(placed.yaw):.0f}" if placed.turnable else "")
            children = [child for i in range(row.childCount()) if (child := row.child(i)) is not None]
            for child, (name, value) in zip(children, self._field_rows(key), strict=False):
                child.setText(0, name)
                child.setText(1, value)
            row.setSelected(key == self.selected)
        self.tree.blockSignals(False)

    def _tree_selected(self) -> None:
        chosen = [i.data(0, Qt.ItemDataRole.UserRole) for i in self.tree.selectedItems()]
        keys: list[Key] = [(str(k[0]), str(k[1])) for k in chosen if k is not None]
        if keys:
            self.select(keys[0])

    def select(self, key: Key | None) -> None:
        """Make object `key` the selected one (None: none), in the view, the tree and the property panel."""
        self.selected = key
        self.update_preview()
        self._fill_properties()
        self.update_enabled()

    def update_enabled(self) -> None:
        has = self.obstacle(self.selected) is not None
        self.delete_action.setEnabled(has)
        self.duplicate_action.setEnabled(has)

    def _fill_properties(self) -> None:
        """The selected object's fields as editors (typed values), each change one undo step."""
        while self.property_form.rowCount():
            self.property_form.removeRow(0)
        self.property_fields: dict[str, QWidget] = {}
        item = self.obstacle(self.selected)
        body = self.robot_body(self.selected)
        if item is not None:
            self.properties.setTitle(f"Selected: {kind_of(item)} {item.name}")
            name_edit = QLineEdit(item.name)
            name_edit.editingFinished.connect(lambda e=name_edit, i=item: self._rename(i, e))
            self._row("name", "Name", name_edit)
            for f in fields(item):
                if f.name != "name":
                    self._row(f.name, field_info(type(item), f.name).label, self._editor(item, f.name))
        elif body is not None:
            assert self.selected is not None
            self.properties.setTitle(f"Selected: robot {self._name(self.selected)}")
            x, y = self.robot_xy(body)
            for name, label, value in (("start_east", "East", x), ("start_north", "North", y)):
                editor = self._number(Body, name, value)
                editor.valueChanged.connect(lambda v, n=name, b=body: self._set_robot(b, n, float(v)))
                self._row(name, label, editor)
            yaw = NumberField("rad", (-math.pi, math.pi, False, "a heading from -π to π rad"), decimals=4,
                              tooltip="Heading of the robot's front at its start, rad counter-clockwise from east.")
            yaw.set(yaw_of(body.rotation))
            yaw.valueChanged.connect(lambda v, b=body: self._set_robot(b, "rotation", turned(b.rotation, float(v))))
            self._row("yaw", "Yaw", yaw)
            self.property_form.addRow(QLabel("Its start pose is in its Robot Body Model fields."))
        else:
            self.properties.setTitle("Selected object")
            self.property_form.addRow(QLabel("Click an object in the view or the list."))

    def _row(self, name: str, label: str, editor: QWidget) -> None:
        self.property_fields[name] = editor
        self.property_form.addRow(label + ":", editor)

    def _number(self, cls: type, name: str, value: float) -> NumberField:
        info = field_info(cls, name)
        editor = NumberField(info.unit, info.bounds(), decimals=info.decimals or 3, tooltip=info.help)
        editor.set(float(value))
        editor.refused.connect(lambda text: self.message.emit(text, 8000))
        return editor

    def _editor(self, item: Placed, name: str) -> QWidget:
        """An editor of one field of an obstacle, as its declaration says (number, whole number, yes/no)."""
        info = field_info(type(item), name)
        value = getattr(item, name)
        if info.type is bool:
            box = QCheckBox(info.help.split(" (")[0] if name != "fixed" else "fixed in place")
            box.setChecked(bool(value))
            box.toggled.connect(lambda on, i=item, n=name: self._set(i, n, bool(on)))
            return box
        if info.type is int:
            spin = IntField(int(info.minimum or 0), int(info.maximum or 1_000_000), tooltip=info.help)
            spin.set(int(value))
            spin.valueChanged.connect(lambda v, i=item, n=name: self._set(i, n, int(v)))
            return spin
        number = self._number(type(item), name, 0.0 if value is None else value)
        if not info.optional:
            number.valueChanged.connect(lambda v, i=item, n=name: self._set(i, n, float(v)))
            return number
        holder = QWidget()
        row = QHBoxLayout(holder)
        row.setContentsMargins(0, 0, 0, 0)
        ground = QCheckBox("on the ground")
        ground.setChecked(value is None)
        number.setEnabled(value is not None)
        ground.toggled.connect(lambda on, i=item, n=name, e=number: self._set(i, n, None if on else e.value()))
        number.valueChanged.connect(lambda v, i=item, n=name: self._set(i, n, float(v)))
        row.addWidget(ground)
        row.addWidget(number)
        return holder

    def _set(self, item: Placed, name: str, value: object) -> None:
        if getattr(item, name) == value:
            return
        setattr(item, name, value)
        self.edited.emit(f"{field_info(type(item), name).label} of {item.name}", True)
        if name == "z" or isinstance(value, bool) or value is None:
            self._fill_properties()

    def _set_robot(self, body: Body, name: str, value: object) -> None:
        if name in ("start_east", "start_north") and body.start_mode != "relative":
            x, y = self.robot_xy(body)
            body.start_mode, body.start_east, body.start_north = "relative", x, y
        if getattr(body, name) == value:
            return
        setattr(body, name, value)
        self.edited.emit("Start pose", True)

    def _rename(self, item: Placed, editor: QLineEdit) -> None:
        name = editor.text().strip()
        if name == item.name:
            return
        problem = None
        if not name or not (name[0].isalpha() and all(ch.isalnum() or ch in "_-" for ch in name)) or len(name) > 40:
            problem = f"{name!r} is not a name: use letters, digits, _ and - , starting with a letter (at most 40)."
        elif self.scene.find(name) is not None:
            problem = f"another obstacle is already named {name!r}; choose another name."
        if problem is not None:
            self.message.emit(problem, 8000)
            editor.setText(item.name)
            return
        old = item.name
        item.name = name
        self.selected = ("obstacle", name)
        self.refresh()
        self.edited.emit(f"Rename {old}", True)


def _text(value: object) -> str:
    """A field's value as the scene tree shows it."""
    if value is None:
        return "on the ground"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
