"""The World tab's 3-D editor: the terrain, the obstacles of the project's <world> and every robot's start,
picked and dragged with the mouse.

A press on an object selects it; dragging it moves it over the ground (the point under the mouse stays
under the mouse); dragging the knob on the ring round the selected object turns it. A press on nothing
clears the selection, and dragging there orbits the camera as in every 3-D view of SEAR (Ctrl+drag
pans, the wheel zooms). Picking is geometry, not OpenGL: the mouse's ray (from the camera's matrices) is
cut with each object's boxes (sear.scene.parts) and, for moving, with the level plane through the point
first grabbed. The view only reports; the World tab writes the project (one undo step a drag).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyqtgraph.opengl as gl
from pyqtgraph import Vector
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QMatrix4x4, QVector4D

Key = tuple[str, str]
"""An object of the editor: ('obstacle', name) or ('robot', index as text)."""


@dataclass
class Placement:
    """An object as the view draws and picks it: its boxes in its own frame, and where that frame is."""

    key: Key
    parts: list[tuple[tuple[float, float, float], tuple[float, float, float]]]
    """(centre, size) of its boxes in its frame (x along its yaw, z up from its feet), m."""
    x: float
    y: float
    z: float
    """Its feet: the ground under it (or, for a box given a height, its bottom), m."""
    yaw: float
    """rad, counter-clockwise from east."""
    turnable: bool = True
    """Whether it has a heading (a tree has none: no ring)."""

    def radius(self) -> float:
        """The ring's radius round it, m: past its farthest corner."""
        corners = [math.hypot(abs(c[0]) + s[0] / 2, abs(c[1]) + s[1] / 2) for c, s in self.parts]
        return max(corners) + 0.3

    def knob(self) -> np.ndarray:
        """Where the turning knob sits: on the ring, ahead of it along its yaw (world frame, m)."""
        r = self.radius()
        return np.array([self.x + r * math.cos(self.yaw), self.y + r * math.sin(self.yaw), self.z + 0.05])


def ray_box(origin: np.ndarray, direction: np.ndarray, centre: np.ndarray, half: np.ndarray,
            yaw: float) -> float | None:
    """Distance along a ray (unit `direction`) to a box of half sizes `half` centred on `centre` and turned
    `yaw` about z, or None when the ray misses it (the slab method in the box's frame)."""
    c, s = math.cos(-yaw), math.sin(-yaw)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    o = rot @ (origin - centre)
    d = rot @ direction
    near, far = -math.inf, math.inf
    for axis in range(3):
        if abs(d[axis]) < 1e-12:
            if abs(o[axis]) > half[axis]:
                return None
            continue
        t1, t2 = (-half[axis] - o[axis]) / d[axis], (half[axis] - o[axis]) / d[axis]
        near, far = max(near, min(t1, t2)), min(far, max(t1, t2))
    if near > far or far < 0:
        return None
    return max(near, 0.0)


class WorldView(gl.GLViewWidget):
    """The editor's 3-D view. Signals: `picked(key)` (None: nothing), `moved(key, x, y)` while an object is
    dragged (its new centre, m), `turned(key, yaw)` while its knob is dragged (rad), `dropped(key)` when the
    mouse lets go of a dragged object."""

    picked = Signal(object)
    moved = Signal(object, float, float)
    turned = Signal(object, float)
    dropped = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.setBackgroundColor((235, 238, 242))
        self.placements: dict[Key, Placement] = {}
        self.selected: Key | None = None
        self._drag: tuple[str, Key, np.ndarray, np.ndarray] | None = None
        """While dragging: ('move' or 'turn', the object, the grabbed point, the object's centre then)."""
        self.snap: Callable[[float, float], tuple[float, float]] = lambda x, y: (x, y)
        """How a dragged centre is snapped (the World tab's grid)."""
        self.snap_yaw: Callable[[float], float] = lambda yaw: yaw
        self.knob = 0.2
        """Half the edge of the turning knob, m (the World tab draws it this size)."""
        self.setMinimumSize(320, 260)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # a click gives it the keys: Delete, Ctrl+D

    # --- the camera's ray ----------------------------------------------------------------------------

    def mvp(self) -> QMatrix4x4:
        """The camera's projection times view matrix: world point to clip coordinates."""
        viewport = self.getViewport()
        return self.projectionMatrix(viewport, viewport) * self.viewMatrix()

    def mouse_ray(self, pos: QPointF) -> tuple[np.ndarray, np.ndarray]:
        """The ray through the widget point `pos` (logical pixels): its origin and unit direction, world m."""
        inverse, ok = self.mvp().inverted()
        if not ok:
            raise ValueError("the camera's matrix cannot be inverted")
        ndc_x = 2.0 * pos.x() / max(self.width(), 1) - 1.0
        ndc_y = 1.0 - 2.0 * pos.y() / max(self.height(), 1)
        points = []
        for depth in (-1.0, 1.0):
            v = inverse.map(QVector4D(ndc_x, ndc_y, depth, 1.0))
            points.append(np.array([v.x(), v.y(), v.z()]) / v.w())
        direction = points[1] - points[0]
        return points[0], direction / np.linalg.norm(direction)

    def screen_point(self, point: tuple[float, float, float]) -> QPointF:
        """Where a world point (m) shows in the widget, logical pixels (for tests and tooltips)."""
        v = self.mvp().map(QVector4D(float(point[0]), float(point[1]), float(point[2]), 1.0))
        ndc_x, ndc_y = v.x() / v.w(), v.y() / v.w()
        return QPointF((ndc_x + 1.0) / 2.0 * self.width(), (1.0 - ndc_y) / 2.0 * self.height())

    def pick(self, pos: QPointF) -> tuple[str, Key] | None:
        """What the mouse at `pos` is on: ('turn', key) for the selected object's knob, ('move', key) for
        the nearest object hit, or None."""
        origin, direction = self.mouse_ray(pos)
        if self.selected in self.placements:
            placed = self.placements[self.selected]
            if placed.turnable and ray_box(origin, direction, placed.knob(), np.full(3, self.knob), 0.0) is not None:
                return "turn", placed.key
        best: tuple[float, Key] | None = None
        for placed in self.placements.values():
            c, s = math.cos(placed.yaw), math.sin(placed.yaw)
            for (px, py, pz), dims in placed.parts:
                centre = np.array([placed.x + c * px - s * py, placed.y + s * px + c * py, placed.z + pz])
                hit = ray_box(origin, direction, centre, np.asarray(dims) / 2.0, placed.yaw)
                if hit is not None and (best is None or hit < best[0]):
                    best = (hit, placed.key)
        return None if best is None else ("move", best[1])

    def _ground_point(self, pos: QPointF, height: float) -> np.ndarray | None:
        """Where the mouse's ray meets the level plane z = `height`, or None when it runs parallel or away."""
        origin, direction = self.mouse_ray(pos)
        if abs(direction[2]) < 1e-9:
            return None
        t = (height - origin[2]) / direction[2]
        return None if t <= 0 else origin + t * direction

    # --- the mouse ----------------------------------------------------------------------------------------

    def mousePressEvent(self, event) -> None:
        super().mousePressEvent(event)  # remembers the point for orbiting
        if event.button() != Qt.MouseButton.LeftButton:
            return
        hit = self.pick(event.position())
        if hit is None:
            self._drag = None
            self.picked.emit(None)
            return
        mode, key = hit
        placed = self.placements[key]
        grabbed = self._ground_point(event.position(), placed.z)
        if key != self.selected:
            self.picked.emit(key)
        if grabbed is not None:
            self._drag = (mode, key, grabbed, np.array([placed.x, placed.y]))

    def mouseMoveEvent(self, event) -> None:
        if self._drag is None:
            super().mouseMoveEvent(event)  # orbit or pan the camera
            return
        mode, key, grabbed, start = self._drag
        placed = self.placements.get(key)
        point = self._ground_point(event.position(), grabbed[2])
        if placed is None or point is None:
            return
        if mode == "move":
            x, y = self.snap(*(start + point[:2] - grabbed[:2]))
            self.moved.emit(key, x, y)
        else:
            yaw = math.atan2(point[1] - placed.y, point[0] - placed.x)
            self.turned.emit(key, self.snap_yaw(yaw))

    def mouseReleaseEvent(self, event) -> None:
        if self._drag is not None:
            key = self._drag[1]
            self._drag = None
            self.dropped.emit(key)
        super().mouseReleaseEvent(event)

    def look_at(self, centre: tuple[float, float, float], size: float) -> None:
        """Point the camera at `centre` from far enough to see `size` m across."""
        self.setCameraPosition(pos=Vector(*centre), distance=max(size, 2.0) * 1.2, elevation=40, azimuth=-75)
