"""The simulation window's cameras: free (the user's), follow (behind the robot), fixed, top-down, and on
board each sensor of the driven robot, chosen in the toolbar's Camera box or View > Camera.

Driving from the keyboard, the camera keeps the driven robot in view until the user moves the camera
(mouse, camera keys); choosing a camera, even the one in use, lets it follow again. Choosing Free (even
when it is in use) and View > Reset View put the free camera back where the window opened: the driven robot
seen from 8 m behind its left. No camera but an on-board one ever goes below the terrain's surface: an eye
that would is raised (its elevation first, keeping the point it looks at) to CLEARANCE above the ground. When Tab drives
another robot, the on-board cameras are that robot's sensors: an on-board camera in use stays on the
sensor of the same name, or the camera follows the robot when it has none.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np
from pyqtgraph import Vector
from PySide6.QtCore import QObject
from PySide6.QtGui import QActionGroup
from PySide6.QtWidgets import QComboBox, QMenu

from sear.project import CameraView
from sear.state import body_rotation, quaternion_to_euler

if TYPE_CHECKING:
    from sear.gui.simview import SimView
    from sear.runtime.robotrun import RobotRun

FIXED_CAMERAS = (("Free", "free"), ("Follow", "follow"), ("Fixed", "fixed"), ("Top-down", "top"))
"""The cameras every window has, as (text, mode); the on-board ones follow as ("On board: NAME",
"sensor:NAME")."""
CLEARANCE = 0.5
"""Metres the eye of a camera (but an on-board one) keeps above the terrain's surface under it."""


class Cameras(QObject):
    """The cameras of a window's 3-D view and the Camera box that chooses them. `redraw` is called after the
    camera changed, to show it at once."""

    def __init__(self, view: SimView, run: RobotRun, redraw: Callable[[], None],
                 ground: Callable[[float, float], float] | None = None,
                 views: list[CameraView] | None = None) -> None:
        """`ground(x, y)`: the terrain's height (m) under a point, which the eye stays above (None: no
        terrain). `views`: the project's named views, listed after the on-board cameras."""
        super().__init__(view)
        self.ground = ground
        self.views: list[CameraView] = list(views or [])
        self.view = view
        self.run = run
        """The driven robot, whose sensors the on-board cameras are and which the cameras follow."""
        self._redraw = redraw
        self.mode = "free"
        """'free', 'follow', 'fixed', 'top' or 'sensor:NAME'."""
        self.following = False
        """Whether the camera keeps the robot in view (driven from the keyboard, in any camera)."""
        self._moved = False
        """The user moved the camera since last choosing one: keyboard driving no longer follows."""
        self.box = QComboBox()
        self._fill_box()
        self.box.currentIndexChanged.connect(lambda _i: self.set_camera(self.box.currentData()))
        self.box.activated.connect(lambda _i: self.chosen())
        self.menu: QMenu | None = None
        self._actions = QActionGroup(self)
        view.camera_moved = lambda zoom_only: self.moved_by_user(zoom_only=zoom_only)
        view.camera_changed = self.keep_above_ground

    def _entries(self) -> Iterable[tuple[str, str]]:
        yield from FIXED_CAMERAS
        for sensor in self.run.sensors.sensors:
            yield f"On board: {sensor.name}", f"sensor:{sensor.name}"
        for saved in self.views:
            yield f"View: {saved.name}", f"view:{saved.name}"

    def _fill_box(self) -> None:
        self.box.blockSignals(True)
        self.box.clear()
        for text, mode in self._entries():
            self.box.addItem(text, mode)
        self.box.setCurrentIndex(self.box.findData(self.mode))
        self.box.blockSignals(False)

    def fill_menu(self, menu: QMenu) -> None:
        """Put a checkable entry per camera into `menu` (View > Camera), as the Camera box lists them."""
        self.menu = menu
        menu.clear()
        for action in self._actions.actions():
            self._actions.removeAction(action)
        for index in range(self.box.count()):
            action = menu.addAction(self.box.itemText(index))
            action.setCheckable(True)
            action.setData(self.box.itemData(index))
            action.setChecked(index == self.box.currentIndex())
            action.triggered.connect(lambda _=False, i=index: self._from_menu(i))
            self._actions.addAction(action)

    def _from_menu(self, index: int) -> None:
        self.box.setCurrentIndex(index)
        self.chosen()

    def set_camera(self, mode: str) -> None:
        """Look from camera `mode` (what the Camera box does)."""
        self.mode = mode
        for action in self._actions.actions():
            action.setChecked(action.data() == mode)
        position = self.run.state.position
        if mode == "top":
            self.view.setCameraPosition(pos=Vector(*position), distance=30, elevation=89.9, azimuth=-90)
        elif mode == "fixed":
            self.view.setCameraPosition(pos=Vector(0, 0, 0), distance=40, elevation=35, azimuth=-120)
        elif mode.startswith("view:"):
            saved = next(v for v in self.views if v.name == mode.split(":", 1)[1])
            self.view.setCameraPosition(pos=Vector(*saved.center), distance=saved.distance,
                                        elevation=saved.elevation, azimuth=saved.azimuth)
            self.keep_above_ground()
        self._redraw()

    def choose(self, mode: str) -> None:
        """Choose camera `mode` in the Camera box (and so look from it)."""
        self.box.setCurrentIndex(self.box.findData(mode))

    def chosen(self) -> None:
        """A camera was chosen (Camera box or View menu), even the one in use: keyboard driving follows
        the robot again from the next key press; Free starts again from the first view of the robot."""
        self._moved = False
        self.following = False
        if self.mode == "free":
            self.look_at_robot()
            self._redraw()
        elif self.mode.startswith("view:"):  # chosen again: back to the view as saved
            self.set_camera(self.mode)

    def saved_view(self, name: str) -> CameraView:
        """The camera as it is now, as a named view (sear.project.CameraView), to the millimetre and the
        hundredth of a degree (so the file reads 0.23, not 0.23000000417232513)."""
        centre, opts = self.view.opts["center"], self.view.opts
        return CameraView(name, (round(centre.x(), 3), round(centre.y(), 3), round(centre.z(), 3)),
                          round(float(opts["distance"]), 3), round(float(opts["elevation"]), 2),
                          round(float(opts["azimuth"]), 2))

    def set_views(self, views: list[CameraView], choose: str | None = None) -> None:
        """The project's named views are now `views` (one was saved); look from view `choose` if given."""
        self.views = list(views)
        self._fill_box()
        if self.menu is not None:
            self.fill_menu(self.menu)
        if choose is not None:
            self.choose(f"view:{choose}")

    def reset_view(self) -> None:
        """View > Reset View: the free camera where the window opened, on the driven robot."""
        if self.mode != "free":
            self.choose("free")
        self.chosen()

    def driving(self) -> None:
        """A driving key was pressed: the camera keeps the robot in view unless the user moved it."""
        if not self._moved:
            self.following = True

    def moved_by_user(self, *, zoom_only: bool = False) -> None:
        """The user moved the camera (mouse or camera keys): keyboard driving stops following the robot,
        and a camera that places itself (follow, on board; top-down unless only zoomed) becomes free."""
        self._moved = True
        self.following = False
        places_itself = self.mode in ("follow", "top") or self.mode.startswith("sensor:")
        if places_itself and not (zoom_only and self.mode == "top"):
            self.choose("free")

    def drive(self, run: RobotRun) -> None:
        """Tab: follow `run` (unless the user moved the camera), its sensors the on-board cameras."""
        self.run = run
        if self.mode.startswith("sensor:") and self.mode.split(":", 1)[1] not in run.sensors.names:
            self.mode = "follow"
        self._fill_box()
        if self.menu is not None:
            self.fill_menu(self.menu)
        self.following = not self._moved

    def move_by_keys(self, moves: list[tuple[int, int, int]]) -> None:
        """The camera keys held: move the free camera (any other becomes free) in the view's frame."""
        if not moves:
            return
        self.moved_by_user()
        if self.mode != "free":
            self.choose("free")
        forward, left, up = np.sum(moves, axis=0)
        azimuth = math.radians(self.view.opts["azimuth"])
        step = max(0.05, self.view.opts["distance"] * 0.02)
        # The camera looks from azimuth towards the centre; 'forward' moves the centre away from the eye.
        fx, fy = -math.cos(azimuth), -math.sin(azimuth)
        dx = (forward * fx - left * fy) * step
        dy = (forward * fy + left * fx) * step
        self.view.pan(dx, dy, up * step, relative="global")
        self.keep_above_ground()

    def keep_above_ground(self) -> None:
        """Raise the eye to CLEARANCE above the terrain under it when it is lower: first by looking down
        more steeply at the same point (up to 89°), then, if that is not enough, by raising that point."""
        if self.ground is None or self.mode.startswith("sensor:"):
            return
        opts = self.view.opts
        for _ in range(4):  # the eye's x, y move as its elevation changes: the ground under it too
            eye = self.view.cameraPosition()
            floor = self.ground(eye.x(), eye.y()) + CLEARANCE
            if eye.z() >= floor - 1e-6:
                return
            centre, distance = opts["center"], float(opts["distance"])
            wanted = (floor - centre.z()) / distance
            if wanted < math.sin(math.radians(89.0)):
                opts["elevation"] = max(float(opts["elevation"]), math.degrees(math.asin(max(-1.0, wanted))) + 0.01)
            else:
                opts["elevation"] = 89.0
                opts["center"] = Vector(centre.x(), centre.y(), floor - distance * math.sin(math.radians(89.0)))
        self.view.update()

    def place(self) -> None:
        """Put the camera where its mode says for the driven robot's pose now (each frame)."""
        run, mode = self.run, self.mode
        position, orientation = run.vehicle.pose()
        if mode in ("free", "fixed") or mode.startswith("view:"):
            if self.following:  # driven from the keyboard: keep the view's angle and distance, on the robot
                self.view.opts["center"] = Vector(*position)
        elif mode == "follow":
            yaw = math.degrees(quaternion_to_euler(orientation)[2])
            self.view.setCameraPosition(pos=Vector(*position), distance=4.0, elevation=18, azimuth=yaw + 180)
        elif mode == "top":
            self.view.opts["center"] = Vector(*position)
        elif mode.startswith("sensor:"):
            sensor = run.sensors.sensor(mode.split(":", 1)[1])
            state = run.state
            origin, rot = sensor.sensor_frame(state)
            forward = rot[:, 0]
            azimuth = math.degrees(math.atan2(forward[1], forward[0]))
            elevation = math.degrees(math.asin(max(-1.0, min(1.0, forward[2]))))
            # Looking along the sensor's axis from its mount raised 5 cm above the hull's top (body frame), so
            # a sensor mounted inside the body does not show the inside of the hull.
            top = float(run.vehicle.body_mesh.bounds[1][2])
            lift = max(0.0, top + 0.05 - float(sensor.mount_position[2]))
            eye = origin + body_rotation(state) @ np.array([0.0, 0.0, lift])
            self.view.setCameraPosition(pos=Vector(*(eye + forward * 2.0)), distance=2.0, elevation=-elevation,
                                        azimuth=azimuth + 180)
        self.keep_above_ground()

    def look_at_robot(self) -> None:
        """The first view: the driven robot seen from 8 m behind its left, 25° up."""
        self.view.setCameraPosition(pos=Vector(*self.run.state.position), distance=8.0, elevation=25, azimuth=-135)

