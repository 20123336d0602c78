"""The simulation window's 3-D view and what it draws: the terrain (lit, with a ground grid draped over it
and a north arrow), every robot (body, collision hull, wheels) and gripper, the obstacles user code
added, and the driven robot's sensor rays and point clouds.

Scene.draw() places the items where pybullet has the bodies; drawing reads the world and never changes
the simulation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pyqtgraph.opengl as gl
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QMatrix4x4, QQuaternion, QVector3D

from sear.colours import ROBOT_COLOURS, terrain_colours
from sear.gui.preview import lit_mesh_item
from sear.gui.terrainlod import TerrainLod

if TYPE_CHECKING:
    import trimesh

    from sear.physics.world import World
    from sear.runtime.robotrun import RobotRun
    from sear.runtime.simulation import Simulation

HIT, MISS = (1.0, 0.2, 0.15, 0.95), (0.3, 0.85, 0.35, 0.12)
"""RGBA of a sensor ray that hit something and of one that did not."""
GRID_COLOUR = (0.1, 0.12, 0.1, 0.35)
GRID_LIFT = 0.04
"""Metres the ground grid floats above the terrain, so that the surface does not hide its lines."""


MAX_DRAWN_RAYS = 2048
"""The most rays drawn of one sensor's sample (see Scene.visible_rays)."""


def pose_matrix(position: np.ndarray, orientation: np.ndarray) -> QMatrix4x4:
    """The item transform of a body at `position` (m) turned by `orientation` (quaternion x, y, z, w)."""
    m = QMatrix4x4()
    m.translate(float(position[0]), float(position[1]), float(position[2]))
    x, y, z, w = (float(c) for c in orientation)
    m.rotate(QQuaternion(w, x, y, z))
    return m


def terrain_item(mesh: trimesh.Trimesh, colours: np.ndarray | None) -> gl.GLMeshItem:
    """The terrain lit from a fixed sun so slopes read, coloured by its own colours or by height."""
    normals = np.asarray(mesh.vertex_normals)
    sun = np.array([0.3, -0.4, 0.87])
    light = 0.45 + 0.55 * np.clip(normals @ (sun / np.linalg.norm(sun)), 0.0, 1.0)
    base = terrain_colours(np.asarray(mesh.vertices), colours)
    rgba = np.ones((len(mesh.vertices), 4), dtype=np.float32)
    rgba[:, :3] = np.clip(base * light[:, None], 0, 1)
    data = gl.MeshData(vertexes=np.asarray(mesh.vertices, np.float32), faces=np.asarray(mesh.faces, np.int32),
                       vertexColors=rgba)
    # The light is in the colours: no shader, so no normals (pyqtgraph would work them out in Python on the
    # first frame, a fifth of a second for the demo's terrain).
    return gl.GLMeshItem(meshdata=data, smooth=True, shader=None, computeNormals=False, glOptions="opaque")


def ground_grid(world: World) -> np.ndarray:
    """Line segments (pairs of points, m, world frame) of a grid draped over the terrain: lines 1, 2 or 5 ×
    10^k metres apart (10 to 25 across the terrain), each sampled every 1/200 of the terrain's size (a large
    height grid's: every cell or 1/2048 of its size) and lifted
    GRID_LIFT above the ground, so distances and slopes read at a glance."""
    lo, hi = world.terrain.bounds
    size = float(max(hi[0] - lo[0], hi[1] - lo[1]))
    spacing = next(m * 10.0 ** k for k in range(-2, 6) for m in (1, 2, 5) if size / (m * 10.0 ** k) <= 25)
    xs = np.arange(math.ceil(lo[0] / spacing), math.floor(hi[0] / spacing) + 1) * spacing
    ys = np.arange(math.ceil(lo[1] / spacing), math.floor(hi[1] / spacing) + 1) * spacing
    samples = 201
    grid = world.terrain.grid if world.terrain.mesh is None else None
    if grid is not None:  # a large grid: a sample every cell or so (up to 2,049), so lines follow its hills
        samples = max(samples, min(2049, max(grid.rows, grid.cols)))
    along_x = np.linspace(lo[0], hi[0], samples)
    along_y = np.linspace(lo[1], hi[1], samples)
    lines = [np.column_stack([np.full_like(along_y, x), along_y]) for x in xs]
    lines += [np.column_stack([along_x, np.full_like(along_x, y)]) for y in ys]
    points = np.concatenate(lines)
    chunks = np.array_split(points, -(-len(points) // 8000))  # ray batches well under pybullet's limit
    heights = np.concatenate([world.terrain_heights(chunk) for chunk in chunks])
    polylines = np.column_stack([points, heights + GRID_LIFT]).reshape(len(lines), -1, 3)
    # Each polyline as segments: point i to point i + 1.
    return np.stack([polylines[:, :-1], polylines[:, 1:]], axis=2).reshape(-1, 3).astype(np.float32)


def height_colours(z: np.ndarray) -> np.ndarray:
    """(N, 4) float32 RGBA of points by height z (m): blue at the lowest, green halfway, red at the highest
    (over the 2nd to 98th percentile of the heights, so a few tree tops do not wash out the ground)."""
    low, high = np.percentile(z, (2.0, 98.0)) if len(z) else (0.0, 0.0)
    t = np.clip((z - low) / (high - low), 0.0, 1.0) if high - low > 1e-9 else np.full(len(z), 0.5)
    rgba = np.empty((len(z), 4), dtype=np.float32)
    rgba[:, 0] = np.clip(2.0 * t - 1.0, 0.0, 1.0)
    rgba[:, 1] = 1.0 - np.abs(2.0 * t - 1.0)
    rgba[:, 2] = np.clip(1.0 - 2.0 * t, 0.0, 1.0)
    rgba[:, 3] = 1.0
    return rgba


class SimView(gl.GLViewWidget):
    """The 3-D view. `held` are the driving and camera keys held down (sear.gui.simkeys.KeyRouter keeps
    it, whichever widget has the focus); dragging and the wheel call `camera_moved` (zoom only: True).

    The left button is first offered to `mouse` (sear.gui.simpick.Picker): a press it takes (on a movable
    body: a pull) gets the moves and the release instead of the camera; a press it leaves orbits as
    before, and a press released without moving is a click, which picks."""

    CLICK_SLOP = 4
    """Pixels the mouse may move between press and release for the two to count as a click."""

    def __init__(self) -> None:
        super().__init__()
        self.held: set[Qt.Key] = set()
        self.camera_moved: Callable[[bool], None] = lambda _zoom_only: None
        """Told that the user moved the camera with the mouse (sear.gui.simcamera.Cameras sets it)."""
        self.camera_changed: Callable[[], None] = lambda: None
        """Called after the mouse moved the camera, before it is drawn (Cameras keeps it above ground)."""
        self.mouse: MouseTool | None = None
        """Picking and pulling (sear.gui.simpick.Picker sets it)."""
        self.first_frame: Callable[[], None] | None = None
        """Called once, after the first frame is drawn (run_window closes the start-up window with it)."""
        self._pressed_at: QPointF | None = None
        self._pulling = False
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def paintGL(self, *args, **kwargs) -> None:
        """Draw the scene; after the first frame, call `first_frame` (the start-up window closes)."""
        super().paintGL(*args, **kwargs)
        if self.first_frame is not None:
            told, self.first_frame = self.first_frame, None
            told()

    def ray_at(self, x: float, y: float) -> tuple[np.ndarray, np.ndarray]:
        """The segment (start at the eye's near plane, end 1000 view distances away; m, world frame) under
        widget point (x, y) (logical pixels), through the camera as it is drawn."""
        width, height = max(self.width(), 1), max(self.height(), 1)
        inverse, invertible = (self.projectionMatrix((0, 0, width, height), (0, 0, width, height))
                               * self.viewMatrix()).inverted()
        if not invertible:
            raise ValueError("the camera cannot be inverted")
        ndc_x, ndc_y = 2.0 * x / width - 1.0, 1.0 - 2.0 * y / height
        near, far = (inverse.map(QVector3D(ndc_x, ndc_y, depth)) for depth in (-1.0, 1.0))
        return (np.array([near.x(), near.y(), near.z()]), np.array([far.x(), far.y(), far.z()]))

    def mousePressEvent(self, event) -> None:
        self._pressed_at = event.position()
        self._pulling = (event.button() == Qt.MouseButton.LeftButton and self.mouse is not None
                         and self.mouse.press(event.position().x(), event.position().y(),
                                              bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)))
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._pulling and self.mouse is not None:
            self.mouse.move(event.position().x(), event.position().y())
            self.mousePos = event.position()  # pyqtgraph's orbit starts from here after the pull
            return
        if event.buttons() != Qt.MouseButton.NoButton:
            self.camera_moved(False)
        super().mouseMoveEvent(event)
        if event.buttons() != Qt.MouseButton.NoButton:
            self.camera_changed()

    def mouseReleaseEvent(self, event) -> None:
        pressed, self._pressed_at = self._pressed_at, None
        if self._pulling and self.mouse is not None:
            self._pulling = False
            self.mouse.release()
        moved = pressed is None or (event.position() - pressed).manhattanLength() > self.CLICK_SLOP
        if event.button() == Qt.MouseButton.LeftButton and not moved and self.mouse is not None:
            self.mouse.click(event.position().x(), event.position().y())
        super().mouseReleaseEvent(event)

    def wheelEvent(self, event) -> None:
        self.camera_moved(True)
        super().wheelEvent(event)
        self.camera_changed()


class MouseTool(Protocol):
    """What the 3-D view asks about its left button (sear.gui.simpick.Picker)."""

    def press(self, x: float, y: float, shift: bool) -> bool:
        """The button went down at (x, y): True to take the moves and the release (a pull)."""

    def move(self, x: float, y: float) -> None:
        """The mouse moved to (x, y) during a press this tool took."""

    def release(self) -> None:
        """The button was let go after a press this tool took."""

    def click(self, x: float, y: float) -> None:
        """A press and release at (x, y) without moving between them."""


class Scene:
    """The items of a simulation in the 3-D view: built once (obstacles as user code adds them), placed
    by draw(). The sensor rays and point clouds are the driven robot's (`run` of draw())."""

    def __init__(self, view: SimView, simulation: Simulation, *, debug_shapes: bool) -> None:
        world = simulation.world
        self.view = view
        self.world = world
        self.lod: TerrainLod | None = None
        """A terrain too large for one mesh (a height grid), drawn in levels of detail around the camera's
        centre; None when the terrain is one mesh."""
        if world.terrain.mesh is not None:
            view.addItem(terrain_item(world.terrain.mesh, world.terrain.vertex_colors))
        else:
            assert world.terrain.grid is not None
            self.lod = TerrainLod(view, world.terrain.grid)
            centre = view.opts["center"]
            self.lod.update(float(centre.x()), float(centre.y()))
        lo, hi = world.terrain.bounds
        self.grid_item = gl.GLLinePlotItem(pos=ground_grid(world), mode="lines", color=GRID_COLOUR, width=1.0,
                                           antialias=False, glOptions="translucent")
        view.addItem(self.grid_item)
        self._add_north_arrow(float(max(hi[0] - lo[0], hi[1] - lo[1])), float(hi[2]))
        self.robot_items: list[tuple[gl.GLMeshItem, gl.GLMeshItem, dict[str, gl.GLMeshItem]]] = []
        """Each robot's body, collision hull and wheel items, in Simulation.robots' order."""
        for index, vehicle in enumerate(world.vehicles):
            body_item = lit_mesh_item(vehicle.body_mesh, ROBOT_COLOURS[index % len(ROBOT_COLOURS)])
            view.addItem(body_item)
            hull_item = lit_mesh_item(vehicle.body_mesh.convex_hull, (1.0, 0.5, 0.1), edges=True)
            hull_item.setGLOptions("translucent")
            view.addItem(hull_item)
            wheel_items = {}
            for wid, mesh in vehicle.wheel_meshes.items():
                item = lit_mesh_item(mesh, (0.15, 0.15, 0.17))
                view.addItem(item)
                wheel_items[wid] = item
            self.robot_items.append((body_item, hull_item, wheel_items))
        self.gripper_items: dict[int, list[gl.GLMeshItem]] = {}
        """Each gripper's parts (World.grippers: by robot index)."""
        for index, gripper in world.grippers.items():
            self.gripper_items[index] = []
            for mesh in gripper.meshes():
                item = lit_mesh_item(mesh, (0.85, 0.65, 0.15))
                view.addItem(item)
                self.gripper_items[index].append(item)
        self.obstacle_items: dict[int, gl.GLMeshItem] = {}
        """An item per obstacle, by its index in World.obstacles, added when first drawn."""
        self.rays_item = gl.GLLinePlotItem(mode="lines", width=1.0, antialias=False)
        self.rays_item.setVisible(False)
        self._drawn_rays: tuple[np.ndarray, np.ndarray] | None = None
        view.addItem(self.rays_item)
        self.cloud_items: dict[str, gl.GLScatterPlotItem] = {}
        """A point cloud per name of the robots' sensors whose readings are clouds (multi-layer LIDARs): it
        shows the driven robot's sensor of that name (nothing when it has none)."""
        for run in simulation.robots:
            for sensor in run.sensors.sensors:
                if sensor.draws_cloud and sensor.name not in self.cloud_items:
                    item = gl.GLScatterPlotItem(pos=np.zeros((0, 3)), size=2.0, pxMode=True)
                    item.setGLOptions("opaque")
                    view.addItem(item)
                    self.cloud_items[sensor.name] = item
        self._cloud_drawn: dict[str, tuple[int, float | None] | None] = dict.fromkeys(self.cloud_items)
        """(robot index, sample time) of the scan each cloud shows."""
        self.set_debug_shapes(debug_shapes)

    def _add_north_arrow(self, size: float, top: float) -> None:
        x, y, z = size * 0.42, size * 0.30, top + 0.5
        length = size * 0.1
        pts = np.array([[x, y, z], [x, y + length, z], [x, y + length, z], [x - length * 0.25, y + length * 0.7, z],
                        [x, y + length, z], [x + length * 0.25, y + length * 0.7, z]])
        # The letter N above the arrow's tip, as three strokes (text items repaint with QPainter each frame).
        h, w, base = length * 0.3, length * 0.2, y + length * 1.1
        letter = np.array([[x - w / 2, base, z], [x - w / 2, base + h, z], [x - w / 2, base + h, z],
                           [x + w / 2, base, z], [x + w / 2, base, z], [x + w / 2, base + h, z]])
        self.view.addItem(gl.GLLinePlotItem(pos=np.vstack([pts, letter]), mode="lines", color=(0.8, 0.1, 0.1, 1.0),
                                            width=3))

    def set_debug_shapes(self, on: bool) -> None:
        """Show the robots' collision hulls and the obstacles' edges, or hide them."""
        self.debug_shapes = on
        for _body, hull_item, _wheels in self.robot_items:
            hull_item.setVisible(on)
        for item in self.obstacle_items.values():
            item.opts["drawEdges"] = on
            item.update()

    def set_clouds_visible(self, on: bool) -> None:
        """Show or hide the point clouds (shown again: redrawn from the latest scans)."""
        for item in self.cloud_items.values():
            item.setVisible(on)
        if on:
            self._cloud_drawn = dict.fromkeys(self._cloud_drawn)

    def draw(self, run: RobotRun) -> None:
        """Every robot, gripper and obstacle where pybullet has it; `run`'s (the driven robot's) rays, when
        shown, and point clouds."""
        world = self.world
        if self.lod is not None:
            centre = self.view.opts["center"]
            self.lod.update(float(centre.x()), float(centre.y()))
        for vehicle, (body_item, hull_item, wheel_items) in zip(world.vehicles, self.robot_items, strict=True):
            pose = pose_matrix(*vehicle.pose())
            body_item.setTransform(pose)
            hull_item.setTransform(pose)
            for wid, (pos, orn) in vehicle.wheel_transforms().items():
                wheel_items[wid].setTransform(pose_matrix(pos, orn))
        for index, gripper in world.grippers.items():
            for item, (pos, orn, _size) in zip(self.gripper_items[index], gripper.part_poses(), strict=True):
                item.setTransform(pose_matrix(pos, orn))
        for index, obstacle in enumerate(world.obstacles):
            item = self.obstacle_items.get(index)
            if item is None:
                item = lit_mesh_item(obstacle.mesh, obstacle.colour[:3], edges=self.debug_shapes)
                self.view.addItem(item)
                self.obstacle_items[index] = item
                item.setTransform(pose_matrix(*world.obstacle_pose(obstacle)))
            elif obstacle.dynamic:
                item.setTransform(pose_matrix(*world.obstacle_pose(obstacle)))
        if self.rays_item.visible():
            starts, ends, hits = self.visible_rays(run)
            if len(starts) and not self._same_rays(starts, ends):  # upload only a new sample's rays
                pts = np.empty((2 * len(starts), 3), dtype=np.float32)
                pts[0::2], pts[1::2] = starts, ends
                colours = np.where(np.repeat(hits, 2)[:, None], HIT, MISS).astype(np.float32)
                self.rays_item.setData(pos=pts, color=colours)
        self._draw_clouds(run)

    @staticmethod
    def visible_rays(run: RobotRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rays drawn of `run`'s latest sample: starts, ends (m, world frame) and hit flags. Every ray of
        a sensor with at most MAX_DRAWN_RAYS rays; of a denser one (a 3-D LIDAR, a depth camera) every k-th,
        evenly over its rays, so that no more than MAX_DRAWN_RAYS are drawn for it: 100,000 lines cost
        software OpenGL a second a frame and show no more than a few thousand do (its point cloud shows
        every hit)."""
        batches = []
        for batch in run.sensors.rays_by_sensor.values():
            step = max(1, math.ceil(len(batch[0]) / MAX_DRAWN_RAYS))
            batches.append(tuple(part[::step] for part in batch))
        if not batches:
            return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, dtype=bool)
        starts, ends, hits = (np.concatenate(parts) for parts in zip(*batches, strict=True))
        return starts, ends, hits

    def _same_rays(self, starts: np.ndarray, ends: np.ndarray) -> bool:
        """Whether these rays are the ones drawn already (sensors sample at their own, lower rates)."""
        same = self._drawn_rays is not None and all(
            a.shape == b.shape and np.array_equal(a, b) for a, b in zip(self._drawn_rays, (starts, ends), strict=True))
        self._drawn_rays = (starts, ends)
        return same

    def _draw_clouds(self, run: RobotRun) -> None:
        """Each of `run`'s cloud sensors' latest scan, placed with the sensor's pose when it is first drawn
        (within a frame of the scan) and coloured by height from blue (low) through green to red (high);
        the clouds of names `run` has no sensor of are empty."""
        sensors = {sensor.name: sensor for sensor in run.sensors.sensors}
        for name, item in self.cloud_items.items():
            sensor = sensors.get(name)
            drawn = (run.index, None if sensor is None else sensor.last_sample_time)
            if not item.visible() or self._cloud_drawn[name] == drawn:
                continue
            self._cloud_drawn[name] = drawn
            points = None if sensor is None else sensor.cloud(sensor.reading)
            if sensor is None or points is None or not len(points):
                item.setData(pos=np.zeros((0, 3)))
                continue
            origin, rotation = sensor.sensor_frame(run.state)
            world = origin + points @ rotation.T
            item.setData(pos=world.astype(np.float32), color=height_colours(world[:, 2]))
