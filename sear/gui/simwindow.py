"""The simulation window (SPEC §4): a 3-D view, keyboard driving, live sensor values and plots.

It wraps the same `Simulation.tick()` a headless run uses: a timer advances the simulation (in real time
or as fast as possible) and then draws one frame from pybullet's poses, so what the window shows is
what a headless run with the same seed and inputs computes. Drawing never changes the simulation.
"""

from __future__ import annotations

import math
import sys
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
import pyqtgraph.opengl as gl
from pyqtgraph import Vector
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QFont, QKeySequence, QMatrix4x4, QQuaternion, QTextCursor
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from sear.gui.preview import shaded_colours
from sear.gui.widgets import cross_marks
from sear.runtime import Pacer, Simulation, TickResult, quaternion_to_euler
from sear.sensors.base import Sensor

if TYPE_CHECKING:
    import trimesh

DRIVE_KEYS = {
    Qt.Key.Key_U: "forward", Qt.Key.Key_Up: "forward",
    Qt.Key.Key_J: "brake", Qt.Key.Key_Down: "back",
    Qt.Key.Key_H: "left", Qt.Key.Key_Left: "left",
    Qt.Key.Key_K: "right", Qt.Key.Key_Right: "right",
}
CAMERA_KEYS = {
    Qt.Key.Key_W: (1, 0, 0), Qt.Key.Key_S: (-1, 0, 0), Qt.Key.Key_A: (0, 1, 0), Qt.Key.Key_D: (0, -1, 0),
    Qt.Key.Key_Q: (0, 0, 1), Qt.Key.Key_Z: (0, 0, -1),
}
HELP = """<b>Keys</b> (hold them; several at once)<br>
<table cellspacing=4>
<tr><td><b>U</b> / ↑</td><td>accelerate</td></tr>
<tr><td><b>J</b></td><td>brake</td></tr>
<tr><td>↓</td><td>reverse</td></tr>
<tr><td><b>H</b> / ←, <b>K</b> / →</td><td>steer (skid steer: spin) left, right</td></tr>
<tr><td><b>Enter</b></td><td>reset the robot to its start pose</td></tr>
<tr><td><b>Space</b></td><td>start the user code (restart it after an error)</td></tr>
<tr><td><b>W S A D</b></td><td>camera forward, back, left, right</td></tr>
<tr><td><b>Q Z</b></td><td>camera up, down</td></tr>
<tr><td>mouse</td><td>drag to orbit, wheel to zoom</td></tr>
<tr><td><b>P</b> / <b>N</b></td><td>pause / single step</td></tr>
<tr><td><b>R</b></td><td>show sensor rays</td></tr>
<tr><td><b>F1</b></td><td>this help</td></tr>
</table>"""
PANEL_PERIOD = 0.16
"""Seconds between refreshes of the HUD, plots and status bar."""
TICK_BUDGET = {True: 0.022, False: 0.05}
"""Wall seconds a frame may spend simulating, in real-time and in as-fast-as-possible mode: when the
physics cannot keep up the simulation slips behind the clock (the status bar says so) rather than the
frame rate collapsing, and as fast as possible still draws about 15 frames a second."""
HIT, MISS = (1.0, 0.2, 0.15, 0.95), (0.3, 0.85, 0.35, 0.12)


def _transform(position: np.ndarray, orientation: np.ndarray) -> QMatrix4x4:
    m = QMatrix4x4()
    m.translate(float(position[0]), float(position[1]), float(position[2]))
    x, y, z, w = (float(c) for c in orientation)
    m.rotate(QQuaternion(w, x, y, z))
    return m


def _mesh_item(mesh: trimesh.Trimesh, colour: tuple[float, float, float], edges: bool = False) -> gl.GLMeshItem:
    data = gl.MeshData(vertexes=np.asarray(mesh.vertices, dtype=np.float32), faces=np.asarray(mesh.faces, np.int32),
                       faceColors=shaded_colours(mesh, colour).astype(np.float32))
    return gl.GLMeshItem(meshdata=data, smooth=False, shader=None, drawEdges=edges, edgeColor=(0, 0, 0, 1),
                         glOptions="opaque")


def terrain_item(mesh: trimesh.Trimesh, colours: np.ndarray | None) -> gl.GLMeshItem:
    """The terrain lit from a fixed sun so slopes read, coloured by its own colours or by height."""
    normals = np.asarray(mesh.vertex_normals)
    sun = np.array([0.3, -0.4, 0.87])
    light = 0.45 + 0.55 * np.clip(normals @ (sun / np.linalg.norm(sun)), 0.0, 1.0)
    if colours is not None and len(colours) == len(mesh.vertices):
        base = np.asarray(colours, dtype=float)[:, :3] / 255.0
    else:
        z = mesh.vertices[:, 2]
        t = (z - z.min()) / max(float(np.ptp(z)), 1e-6)
        low, mid, high = np.array([0.27, 0.55, 0.25]), np.array([0.6, 0.55, 0.33]), np.array([0.92, 0.92, 0.9])
        base = np.where(t[:, None] < 0.6, low + (mid - low) * (t[:, None] / 0.6),
                        mid + (high - mid) * ((t[:, None] - 0.6) / 0.4))
    rgba = np.ones((len(mesh.vertices), 4), dtype=np.float32)
    rgba[:, :3] = np.clip(base * light[:, None], 0, 1)
    data = gl.MeshData(vertexes=np.asarray(mesh.vertices, np.float32), faces=np.asarray(mesh.faces, np.int32),
                       vertexColors=rgba)
    return gl.GLMeshItem(meshdata=data, smooth=True, shader=None, glOptions="opaque")


class SimView(gl.GLViewWidget):
    """The 3-D view; it tracks which keys are held (auto-repeat ignored)."""

    def __init__(self, window: SimulationWindow) -> None:
        super().__init__()
        self.window = window
        self.held: set[Qt.Key] = set()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def keyPressEvent(self, event) -> None:
        if event.isAutoRepeat():
            return
        key = event.key()
        if key in DRIVE_KEYS or key in CAMERA_KEYS:
            self.held.add(key)
        elif not self.window.key_action(key):
            super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.isAutoRepeat():
            return
        self.held.discard(event.key())


class SimulationWindow(QMainWindow):
    """Shows and drives one Simulation."""

    def __init__(self, simulation: Simulation, *, duration: float | None = None) -> None:
        super().__init__()
        self.simulation = simulation
        self.pacer = Pacer(simulation, realtime=True, until=duration)
        """The wall clock the timer keeps to (real time), or one simulated second a frame (fast); the
        window closes at `duration` simulated seconds."""
        self.paused = False
        self.camera_mode = "free"
        self._manual_active = False
        self._frames: deque[float] = deque(maxlen=60)
        self._panels_drawn = 0.0
        self._history: dict[str, deque] = {}
        self._history_t: deque[float] = deque(maxlen=1800)
        self.setWindowTitle(f"{simulation.project.name} — SEAR simulation")
        self._build()
        for text in simulation.output_history:  # what init() printed before the window existed
            self._console_show(text)
        simulation.output_listeners.append(self._console_append)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.frame)
        self.resize(1400, 880)

    # --- construction ---------------------------------------------------------------------------------

    def _build(self) -> None:
        sim, world = self.simulation, self.simulation.world
        self.view = SimView(self)
        self.view.setBackgroundColor((176, 200, 224))
        self.view.addItem(terrain_item(world.terrain.mesh, world.terrain.vertex_colors))
        lo, hi = world.terrain.mesh.bounds
        size = float(max(hi[0] - lo[0], hi[1] - lo[1]))
        grid = gl.GLGridItem()
        grid.setSize(size, size)
        spacing = max(1.0, 10 ** math.floor(math.log10(size / 10)))
        grid.setSpacing(spacing, spacing)
        grid.translate(0, 0, float(lo[2]) - 0.01)
        self.view.addItem(grid)
        self._add_north_arrow(size, float(hi[2]))
        vehicle = world.vehicle
        self.body_item = _mesh_item(vehicle.body_mesh, (0.55, 0.6, 0.78))
        self.view.addItem(self.body_item)
        self.hull_item = _mesh_item(vehicle.body_mesh.convex_hull, (1.0, 0.5, 0.1), edges=True)
        self.hull_item.setGLOptions("translucent")
        self.view.addItem(self.hull_item)
        self.wheel_items = {}
        for wid, mesh in vehicle.wheel_meshes.items():
            item = _mesh_item(mesh, (0.15, 0.15, 0.17))
            self.view.addItem(item)
            self.wheel_items[wid] = item
        self.obstacle_items: dict[int, gl.GLMeshItem] = {}
        self.rays_item = gl.GLLinePlotItem(mode="lines", width=1.0, antialias=False)
        self.rays_item.setVisible(False)
        self.view.addItem(self.rays_item)

        self.hud = QLabel(self.view)
        self.hud.setFont(QFont("Monospace", 9))
        self.hud.setStyleSheet("background: rgba(20, 24, 30, 170); color: #f0f0f0; padding: 6px; border-radius: 4px;")
        self.hud.move(8, 8)
        self.help = QLabel(HELP, self.view)
        self.help.setStyleSheet("background: rgba(255, 255, 255, 235); color: #111; padding: 10px; "
                                "border: 1px solid #888; border-radius: 6px;")
        self.help.setVisible(False)
        self.setCentralWidget(self.view)

        # Docks: plots, LIDAR, console.
        plots = QWidget()
        layout = QVBoxLayout(plots)
        self.fields_list = QListWidget()
        self.fields_list.setMaximumHeight(130)
        for sensor in sim.sensors.sensors:
            plotted = sensor.log_fields if sensor.PLOTTED is None else sensor.PLOTTED
            for field in plotted:
                item = QListWidgetItem(f"{sensor.name}.{field}")
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Unchecked)
                self.fields_list.addItem(item)
        for name in ("accel.x", "accel.z", "gyro.z"):
            match = self.fields_list.findItems(name, Qt.MatchFlag.MatchExactly)
            if match:
                match[0].setCheckState(Qt.CheckState.Checked)
        if not any(self.fields_list.item(i).checkState() == Qt.CheckState.Checked
                   for i in range(self.fields_list.count())) and self.fields_list.count():
            self.fields_list.item(0).setCheckState(Qt.CheckState.Checked)
        self.plot = pg.PlotWidget(background="w")
        self.plot.addLegend(offset=(5, 5), brush=(255, 255, 255, 210), pen=(180, 180, 180), labelTextColor=(20, 20, 20))
        self.plot.setLabel("bottom", "simulated time", units="s")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.curves: dict[str, pg.PlotDataItem] = {}
        layout.addWidget(QLabel("Plot these fields:"))
        layout.addWidget(self.fields_list)
        layout.addWidget(self.plot, 1)
        self._dock("Plots", plots, Qt.DockWidgetArea.RightDockWidgetArea)

        self.lidar_plot = pg.PlotWidget(background="w")
        self.lidar_plot.setAspectLocked(True)
        self.lidar_plot.showGrid(x=True, y=True, alpha=0.3)
        self.lidar_plot.setLabel("bottom", "left ← → right", units="m")
        self.lidar_plot.setLabel("left", "ahead", units="m")
        # Lines only: pyqtgraph's ScatterPlotItem crashes PySide6 6.12 when painted (a refcount error,
        # 'none_dealloc'), so returns are drawn as short crosses and the robot as an outline.
        # The first sensor whose type draws a top-down plot of its readings (a LIDAR's scan) gets the dock.
        self.scan_sensor = next((s for s in sim.sensors.sensors if s.plot_extent() is not None), None)
        if self.scan_sensor is not None:
            self._add_polar_grid(self.scan_sensor)
        self.lidar_scatter = self.lidar_plot.plot(pen=pg.mkPen(200, 40, 40, width=2), connect="pairs")
        self.lidar_plot.plot([-0.15, 0.0, 0.15, -0.15], [-0.1, 0.25, -0.1, -0.1], pen=pg.mkPen(30, 30, 30, width=2))
        if self.scan_sensor is not None:
            title = self.scan_sensor.TITLE or self.scan_sensor.TYPE
            self._dock(f"{title} ({self.scan_sensor.name})", self.lidar_plot, Qt.DockWidgetArea.RightDockWidgetArea)

        self.console = QPlainTextEdit()
        self.console.setReadOnly(True)
        self.console.setFont(QFont("Monospace", 9))
        self.console.setMaximumBlockCount(5000)
        self._dock("Console", self.console, Qt.DockWidgetArea.BottomDockWidgetArea)

        self._build_toolbar()
        self.status = QLabel()
        self.statusBar().addWidget(self.status, 1)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _add_polar_grid(self, sensor: Sensor) -> None:
        """Range rings (metres) and the edges of the scanned sector, so the scan view reads as a polar plot
        whose extent stays put while the returns come and go."""
        extent = sensor.plot_extent()
        assert extent is not None
        reach, edges, behind = extent
        ring_step = next((step for step in (0.5, 1, 2, 5, 10, 20, 50, 100) if reach / step <= 5), 200.0)
        theta = np.linspace(0.0, 2.0 * math.pi, 181)
        pen = pg.mkPen(150, 150, 170, width=1, style=Qt.PenStyle.DashLine)
        radius = ring_step
        while radius <= reach + 1e-9:
            self.lidar_plot.plot(radius * np.cos(theta), radius * np.sin(theta), pen=pen)
            label = pg.TextItem(f"{radius:g} m", color=(110, 110, 130), anchor=(0, 1))
            label.setPos(radius * math.cos(math.radians(60)), radius * math.sin(math.radians(60)))
            self.lidar_plot.addItem(label)
            radius += ring_step
        if edges is not None:
            for a in edges:  # the sector's edges, in the view's right/ahead axes
                self.lidar_plot.plot([0.0, -reach * math.sin(a)], [0.0, reach * math.cos(a)],
                                     pen=pg.mkPen(120, 160, 120, width=1))
        self.lidar_plot.setRange(xRange=(-reach, reach), yRange=(-reach if behind else -0.1 * reach, reach),
                                 padding=0.02)
        self.lidar_plot.disableAutoRange()

    def _add_north_arrow(self, size: float, top: float) -> None:
        x, y, z = size * 0.42, size * 0.30, top + 0.5
        length = size * 0.1
        pts = np.array([[x, y, z], [x, y + length, z], [x, y + length, z], [x - length * 0.25, y + length * 0.7, z],
                        [x, y + length, z], [x + length * 0.25, y + length * 0.7, z]])
        self.view.addItem(gl.GLLinePlotItem(pos=pts, mode="lines", color=(0.8, 0.1, 0.1, 1.0), width=3))
        if hasattr(gl, "GLTextItem"):
            self.view.addItem(gl.GLTextItem(pos=(x, y + length * 1.15, z), text="N", color=(150, 0, 0, 255)))

    def _build_toolbar(self) -> None:
        bar = self.addToolBar("Simulation")
        bar.setObjectName("simulation-toolbar")
        self.commands: dict[str, QAction] = {}
        """The window's menu and toolbar actions by name (not QWidget.actions(), the list Qt keeps)."""

        def add(key: str, text: str, checkable: bool, slot, shortcut: str | None = None, checked: bool = False):
            action = QAction(text, self)
            action.setCheckable(checkable)
            action.setChecked(checked)
            if shortcut:
                action.setShortcut(QKeySequence(shortcut))
            (action.toggled if checkable else action.triggered).connect(slot)
            bar.addAction(action)
            self.commands[key] = action
            return action

        add("start", "Start user code (Space)", False, lambda: self.start_user_code())
        add("reset", "Reset (Enter)", False, lambda: self.reset())
        bar.addSeparator()
        add("pause", "Pause", True, self.set_paused, "P")
        add("step", "Step", False, lambda: self.single_step(), "N")
        add("realtime", "Real time", True, self.set_realtime, checked=True)
        bar.addSeparator()
        add("rays", "Sensor rays", True, self.set_rays_visible, "R")
        add("debug", "Physics shapes", True, self.set_debug_shapes,
            checked=self.simulation.project.code.debug_shapes)
        add("record", "Record log…", True, self.set_recording)
        add("help", "Help (F1)", True, lambda on: self.help.setVisible(on), "F1")
        bar.addSeparator()
        bar.addWidget(QLabel(" Camera: "))
        self.camera_box = QComboBox()
        self.camera_box.addItem("Free", "free")
        self.camera_box.addItem("Follow", "follow")
        self.camera_box.addItem("Fixed", "fixed")
        self.camera_box.addItem("Top-down", "top")
        for sensor in self.simulation.sensors.sensors:
            self.camera_box.addItem(f"On board: {sensor.name}", f"sensor:{sensor.name}")
        self.camera_box.currentIndexChanged.connect(lambda _i: self.set_camera(self.camera_box.currentData()))
        bar.addWidget(self.camera_box)
        self.set_debug_shapes(self.simulation.project.code.debug_shapes)

    # --- controls ------------------------------------------------------------------------------------------

    def key_action(self, key: int) -> bool:
        """One-shot keys; True when handled."""
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.reset()
        elif key == Qt.Key.Key_Space:
            self.start_user_code()
        elif key == Qt.Key.Key_F1:
            self.commands["help"].toggle()
        else:
            return False
        return True

    def start_user_code(self) -> None:
        """Space: start the user code, or restart it in a fresh process once it failed or finished."""
        if self.simulation.can_restart:
            self.simulation.restart_user_code()
        else:
            self.simulation.start_user_code()
        if self.camera_mode == "free":
            self.camera_box.setCurrentIndex(self.camera_box.findData("follow"))

    def reset(self) -> None:
        self.simulation.reset()
        self.draw()

    @property
    def realtime(self) -> bool:
        """Whether the simulation keeps to the wall clock (else it runs as fast as frames allow)."""
        return self.pacer.realtime

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pacer.restart()

    def set_realtime(self, on: bool) -> None:
        self.pacer.realtime = on
        self.pacer.restart()

    def single_step(self) -> None:
        if not self.commands["pause"].isChecked():
            self.commands["pause"].setChecked(True)
        self._advance_ticks(1)
        self.draw()

    def set_rays_visible(self, on: bool) -> None:
        self.rays_item.setVisible(on)
        self.draw()

    def set_debug_shapes(self, on: bool) -> None:
        self.hull_item.setVisible(on)
        for item in self.obstacle_items.values():
            item.opts["drawEdges"] = on
            item.update()

    def set_recording(self, on: bool, path: str | Path | None = None) -> None:
        if on:
            if path is None:
                start = self.simulation.project.path.parent if self.simulation.project.path else Path.cwd()
                chosen, _ = QFileDialog.getSaveFileName(self, "Record a log", str(start / "record.csv"),
                                                        "CSV logs (*.csv)")
                if not chosen:
                    self.commands["record"].blockSignals(True)
                    self.commands["record"].setChecked(False)
                    self.commands["record"].blockSignals(False)
                    return
                path = chosen
            self.simulation.start_log(path)
            self._console_append(f"Recording to {path}\n")
        else:
            written = self.simulation.stop_log()
            if written is not None:
                self._console_append(f"Log written to {written}\n")

    def set_camera(self, mode: str) -> None:
        self.camera_mode = mode
        pos = self.simulation.state.position
        if mode == "top":
            self.view.setCameraPosition(pos=Vector(*pos), distance=30, elevation=89.9, azimuth=-90)
        elif mode == "fixed":
            self.view.setCameraPosition(pos=Vector(0, 0, 0), distance=40, elevation=35, azimuth=-120)
        self.draw()

    # --- stepping --------------------------------------------------------------------------------------------

    def _drive_input(self) -> None:
        held = {DRIVE_KEYS[k] for k in self.view.held if k in DRIVE_KEYS}
        if held:
            throttle = (1.0 if "forward" in held else 0.0) - (1.0 if "back" in held else 0.0)
            steer = (1.0 if "left" in held else 0.0) - (1.0 if "right" in held else 0.0)
            self.simulation.set_manual_input(throttle, steer, "brake" in held)
            self._manual_active = True
        elif self._manual_active:
            self.simulation.set_manual_input(0.0, 0.0, False)  # keys released: let go of the pedals
            self._manual_active = False

    def _advance_ticks(self, count: int, budget: float | None = None) -> None:
        """Run `count` ticks with the held keys, or fewer if `budget` wall seconds run out first."""
        self.simulation.advance(count, budget=budget, before_tick=self._drive_input, after_tick=self._ticked)

    def _ticked(self, result: TickResult) -> None:
        if result.control:
            self._record_history(self.simulation.world.time)

    def advance(self, seconds: float) -> None:
        """Simulate `seconds` with the keys as they are now held (what the timer does, minus the clock)."""
        self._advance_ticks(round(seconds * self.simulation.physics_hz))
        self.pacer.restart()  # the real-time clock and factor count from here, not across this jump
        self.draw()

    def frame(self) -> None:
        """Timer tick: advance the simulation as the clock says (stopping exactly at `duration`), then
        draw one frame."""
        if not self.paused:
            self._advance_ticks(self.pacer.due(), TICK_BUDGET[self.realtime])
        self._move_camera_keys()
        self.draw()
        self._frames.append(time.perf_counter())
        if self.pacer.finished:
            self.close()

    def _move_camera_keys(self) -> None:
        moves = [CAMERA_KEYS[k] for k in self.view.held if k in CAMERA_KEYS]
        if not moves:
            return
        if self.camera_mode != "free":
            self.camera_box.setCurrentIndex(self.camera_box.findData("free"))
        forward, left, up = np.sum(moves, axis=0)
        azimuth = math.radians(self.view.opts["azimuth"])
        step = max(0.05, self.view.opts["distance"] * 0.02)
        # The camera looks from azimuth towards the centre; 'forward' moves the centre away from the eye.
        fx, fy = -math.cos(azimuth), -math.sin(azimuth)
        dx = (forward * fx - left * fy) * step
        dy = (forward * fy + left * fx) * step
        self.view.pan(dx, dy, up * step, relative="global")

    # --- drawing ---------------------------------------------------------------------------------------------

    def draw(self) -> None:
        world = self.simulation.world
        vehicle = world.vehicle
        position, orientation = vehicle.pose()
        self.body_item.setTransform(_transform(position, orientation))
        self.hull_item.setTransform(_transform(position, orientation))
        for wid, (pos, orn) in vehicle.wheel_transforms().items():
            self.wheel_items[wid].setTransform(_transform(pos, orn))
        for index, obstacle in enumerate(world.obstacles):
            item = self.obstacle_items.get(index)
            if item is None:
                item = _mesh_item(obstacle.mesh, obstacle.colour[:3], edges=self.commands["debug"].isChecked())
                self.view.addItem(item)
                self.obstacle_items[index] = item
                pos, orn = world.obstacle_pose(obstacle)
                item.setTransform(_transform(pos, orn))
            elif obstacle.dynamic:
                pos, orn = world.obstacle_pose(obstacle)
                item.setTransform(_transform(pos, orn))
        if self.rays_item.visible():
            starts, ends, hits = self.visible_rays()
            if len(starts):
                pts = np.empty((2 * len(starts), 3), dtype=np.float32)
                pts[0::2], pts[1::2] = starts, ends
                colours = np.where(np.repeat(hits, 2)[:, None], HIT, MISS).astype(np.float32)
                self.rays_item.setData(pos=pts, color=colours)
        self._follow_camera(position, orientation)
        # Text and plots change slowly to the eye and are costly to repaint (every widget over an
        # OpenGL view is recomposited in software): refresh them at about 6 Hz of wall time.
        now = time.perf_counter()
        if now - self._panels_drawn >= PANEL_PERIOD or self.paused or not self.timer.isActive():
            self._panels_drawn = now
            self._update_hud()
            self._update_plots()
            self._update_status()

    def visible_rays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every ray sensor's rays of its latest sample: starts, ends (m, world frame) and hit flags."""
        batches = list(self.simulation.sensors.rays_by_sensor.values())
        if not batches:
            return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, dtype=bool)
        starts, ends, hits = (np.concatenate(parts) for parts in zip(*batches, strict=True))
        return starts, ends, hits

    def _follow_camera(self, position: np.ndarray, orientation: np.ndarray) -> None:
        mode = self.camera_mode
        if mode == "follow":
            yaw = math.degrees(quaternion_to_euler(orientation)[2])
            self.view.setCameraPosition(pos=Vector(*position), distance=4.0, elevation=18, azimuth=yaw + 180)
        elif mode == "top":
            self.view.opts["center"] = Vector(*position)
        elif mode.startswith("sensor:"):
            sensor = self.simulation.sensors.sensor(mode.split(":", 1)[1])
            origin, rot = sensor.sensor_frame(self.simulation.state)
            forward = rot[:, 0]
            azimuth = math.degrees(math.atan2(forward[1], forward[0]))
            elevation = math.degrees(math.asin(max(-1.0, min(1.0, forward[2]))))
            # Looking along the sensor's axis from just behind its mount.
            self.view.setCameraPosition(pos=Vector(*(origin + forward * 2.0)), distance=2.0, elevation=-elevation,
                                        azimuth=azimuth + 180)

    def _log_cells(self) -> dict[str, str]:
        """Every sensor column's latest value, as the CSV log writes it (for the plots' history)."""
        return dict(zip(self.simulation.sensors.log_columns(), self.simulation.sensors.log_values(), strict=True))

    @staticmethod
    def hud_text(sensor: Sensor) -> str:
        """The readout of one sensor: its type's hud_text, or a plain description should that fail (a
        type added at run time must not break the window)."""
        try:
            return str(sensor.hud_text(sensor.reading))
        except Exception:
            return repr(sensor.reading)[:60]

    def _update_hud(self) -> None:
        sim = self.simulation
        lines = [f"t = {sim.world.time:8.2f} s   speed {np.linalg.norm(sim.state.linear_velocity):5.2f} m/s"]
        for sensor in sim.sensors.sensors:
            lines.append(f"{sensor.name:<12} {self.hud_text(sensor)}")
        self.hud.setText("\n".join(lines))
        self.hud.adjustSize()
        if self.help.isVisible():
            self.help.adjustSize()
            self.help.move(self.view.width() - self.help.width() - 12, 12)

    def _record_history(self, t: float) -> None:
        self._history_t.append(t)
        for column, cell in self._log_cells().items():
            self._history.setdefault(column, deque(maxlen=1800)).append(float(cell) if cell else np.nan)
        # Keep every column's history aligned with the time axis.
        for values in self._history.values():
            while len(values) < len(self._history_t):
                values.appendleft(np.nan)

    def _update_plots(self) -> None:
        chosen = [self.fields_list.item(i).text() for i in range(self.fields_list.count())
                  if self.fields_list.item(i).checkState() == Qt.CheckState.Checked]
        for name in list(self.curves):
            if name not in chosen:
                self.plot.removeItem(self.curves.pop(name))
        t = np.fromiter(self._history_t, float)
        for i, name in enumerate(chosen):
            values = np.fromiter(self._history.get(name, ()), float)
            if name not in self.curves:
                self.curves[name] = self.plot.plot(pen=pg.mkPen(pg.intColor(i, 8), width=1.5), name=name)
            if len(values) == len(t):
                self.curves[name].setData(t, values, connect="finite")
        if self.scan_sensor is not None:
            points = self.scan_sensor.plot_points(self.scan_sensor.reading)
            if points is not None:
                # Plot with the robot's forward axis pointing up the screen, left to the left.
                self.lidar_scatter.setData(*cross_marks(points[:, 0], points[:, 1], 0.04))

    def _update_status(self) -> None:
        sim = self.simulation
        if sim.user_error is not None:
            why = "did not return in time" if sim.stuck else "stopped by an error"
            again = ": Space restarts it" if sim.can_restart else ""
            code = f"user code {why} (see the console){again}; you can still drive"
        elif sim.user_code_running:
            code = "user code running"
        elif sim.runner is None:
            code = "no user code"
        elif sim.user_started:
            code = "user code finished: Space restarts it" if sim.can_restart else "user code finished"
        else:
            code = "user code not started: press Space"
        fps = 0.0
        if len(self._frames) > 1:
            fps = (len(self._frames) - 1) / max(self._frames[-1] - self._frames[0], 1e-9)
        simulated, wall = self.pacer.elapsed()
        rtf = simulated / wall if wall > 0.5 and not self.paused else float("nan")
        mode = "paused" if self.paused else ("real time" if self.realtime else "fast")
        rtf_text = f", running at {rtf:4.2f}x real time" if math.isfinite(rtf) else ""
        self.status.setText(f"{code}   |   t = {sim.world.time:7.2f} s   |   {mode}{rtf_text}   |   "
                            f"{fps:4.1f} frames/s   |   F1: keys")

    def _console_show(self, text: str) -> None:
        self.console.moveCursor(QTextCursor.MoveOperation.End)
        self.console.insertPlainText(text)
        self.console.moveCursor(QTextCursor.MoveOperation.End)

    def _console_append(self, text: str) -> None:
        self._console_show(text)
        sys.stdout.write(text)  # also to the terminal (or the settings window's console)
        sys.stdout.flush()

    # --- life cycle -------------------------------------------------------------------------------------------

    def start(self) -> None:
        self.pacer.restart()
        self.timer.start(15)
        self.view.setFocus()
        self.view.setCameraPosition(pos=Vector(*self.simulation.state.position), distance=8.0, elevation=25,
                                    azimuth=-135)
        self.draw()

    def closeEvent(self, event) -> None:
        self.timer.stop()
        event.accept()


def run_window(simulation: Simulation, *, duration: float | None = None) -> int:
    """Show the simulation window until it is closed (or `duration` simulated seconds pass); returns 0.

    A user code error (a hook stuck past its time-out, a crash of its process) is shown in the console
    while the window keeps running; Space restarts the user code. The caller closes the simulation."""
    from sear.gui.app import configure_qt

    configure_qt()
    app = QApplication.instance() or QApplication([])
    window = SimulationWindow(simulation, duration=duration)
    window.show()
    window.start()
    app.exec()
    return 0
