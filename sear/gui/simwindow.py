"""The simulation window (SPEC §4): a 3-D view, keyboard driving, live sensor values and plots.

It wraps the same `Simulation.tick()` a headless run uses: a timer advances the simulation (in real time
or as fast as possible) and then draws one frame from pybullet's poses, so what the window shows is
what a headless run with the same seed and inputs computes. Drawing never changes the simulation.
"""

from __future__ import annotations

import math
import signal
import sys
import time
import traceback
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
import pyqtgraph.opengl as gl
from pyqtgraph import Vector
from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QColor, QFont, QKeySequence, QMatrix4x4, QQuaternion, QTextCursor
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QMenuBar,
    QPlainTextEdit,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from sear.errors import ProjectError
from sear.gui.geometry import restore_window, save_window
from sear.gui.griddock import GridTabs
from sear.gui.help import add_help_menu
from sear.gui.preview import lit_mesh_item
from sear.gui.widgets import cross_marks
from sear.runtime import Pacer, Simulation, TickResult, quaternion_to_euler, reopen_std_streams
from sear.sensors.base import Sensor
from sear.state import body_rotation

if TYPE_CHECKING:
    import trimesh

    from sear.physics.world import World

DRIVE_KEYS = {
    Qt.Key.Key_U: "forward", Qt.Key.Key_Up: "forward",
    Qt.Key.Key_J: "brake", Qt.Key.Key_Down: "back",
    Qt.Key.Key_H: "left", Qt.Key.Key_Left: "left",
    Qt.Key.Key_K: "right", Qt.Key.Key_Right: "right",
}
GRIPPER_LIFT_KEYS = {Qt.Key.Key_T: 1, Qt.Key.Key_B: -1}
"""Held: the gripper's lift goes up (T) or down (B) while the key is down, and stops when it is let go."""
GRIPPER_KEY = Qt.Key.Key_G
"""Pressed: the gripper's paddles close when open, open when closed."""
CAMERA_KEYS = {
    Qt.Key.Key_W: (1, 0, 0), Qt.Key.Key_S: (-1, 0, 0), Qt.Key.Key_A: (0, 1, 0), Qt.Key.Key_D: (0, -1, 0),
    Qt.Key.Key_Q: (0, 0, 1), Qt.Key.Key_Z: (0, 0, -1),
}
SPARSE_BEAMS = 64
"""A scan of at most this many returns is drawn as a range map, a spoke to each return."""
ONE_SHOT_KEYS = {Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space, Qt.Key.Key_F1}
"""Keys that act once when pressed (reset, start the user code, the keys' help), whatever has the focus.
(F1 is also the Help menu's shortcut, which takes it first when the window is active.)"""
HELP = """<b>Keys</b> (hold them; several at once)<br>
<table cellspacing=4>
<tr><td><b>U</b> / ↑</td><td>accelerate</td></tr>
<tr><td><b>J</b></td><td>brake</td></tr>
<tr><td>↓</td><td>reverse</td></tr>
<tr><td><b>H</b> / ←, <b>K</b> / →</td><td>steer left, right (skid, differential: turn; on the spot alone)</td></tr>
<tr><td><b>Enter</b></td><td>reset the robot to its start pose</td></tr>
<tr><td><b>Space</b></td><td>start the user code (restart it after an error)</td></tr>
<tr><td><b>Tab</b></td><td>next robot (several robots): the keys drive it, the camera follows it</td></tr>
<tr><td><b>W S A D</b></td><td>camera forward, back, left, right</td></tr>
<tr><td><b>Q Z</b></td><td>camera up, down</td></tr>
<tr><td>mouse</td><td>drag to orbit, wheel to zoom</td></tr>
<tr><td><b>G</b></td><td>gripper: close / open the paddles</td></tr>
<tr><td><b>T</b> / <b>B</b></td><td>gripper: raise / lower the lift (hold)</td></tr>
<tr><td><b>P</b> / <b>N</b></td><td>pause / single step</td></tr>
<tr><td><b>R</b></td><td>show sensor rays</td></tr>
<tr><td><b>Esc</b></td><td>back to the 3-D view from a text field</td></tr>
<tr><td><b>Ctrl+W</b> / <b>Ctrl+Q</b></td><td>close the window / quit</td></tr>
<tr><td><b>F1</b></td><td>this help</td></tr>
</table>
These keys work whichever control has the focus, except while you type in a text field.<br>
Driving from the keyboard, the camera keeps the robot in view until you move the camera<br>
yourself (mouse or W S A D Q Z); choose a camera in the Camera box to let it follow again."""
PANEL_PERIOD = 0.12
"""Seconds between refreshes of the HUD and status bar, or of the plots, in turn (each every 0.24 s)."""
TICK_BUDGET = {True: 0.022, False: 0.05}
"""Wall seconds a frame may spend simulating, in real-time and in as-fast-as-possible mode: when the
physics cannot keep up the simulation slips behind the clock (the status bar says so) rather than the
frame rate collapsing, and as fast as possible still draws about 15 frames a second."""
HIT, MISS = (1.0, 0.2, 0.15, 0.95), (0.3, 0.85, 0.35, 0.12)
ROBOT_COLOURS = ((0.55, 0.6, 0.78), (0.85, 0.5, 0.35), (0.45, 0.72, 0.45), (0.8, 0.72, 0.35), (0.65, 0.5, 0.78),
                 (0.4, 0.72, 0.75))
"""Body colours of the robots, in turn (the first robot's is the one-robot window's)."""
PLOT_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                "#bcbd22", "#17becf")
"""Colours of the first ten plotted fields (the "tab10" palette: easy to tell apart); further fields get
colours of their own from plot_colour()."""


def plot_colour(slot: int) -> QColor:
    """The colour of plot slot `slot` (0, 1, ...): the palette's, then hues a golden-ratio step apart,
    so no two slots share a colour."""
    if slot < len(PLOT_COLOURS):
        return QColor(PLOT_COLOURS[slot])
    extra = slot - len(PLOT_COLOURS)
    return QColor.fromHsvF((0.07 + extra * 0.6180339887) % 1.0, 0.85, 0.9 if extra % 2 else 0.6)


def is_text_field(widget: QWidget | None) -> bool:
    """Whether keys pressed in `widget` are typed text: an editable line edit, spin box, text editor or
    editable combo box (a read-only text, such as the console, is not one)."""
    if isinstance(widget, (QLineEdit, QAbstractSpinBox, QTextEdit, QPlainTextEdit)):
        return not widget.isReadOnly()
    return isinstance(widget, QComboBox) and widget.isEditable()


class RateDisplay:
    """The status bar's speed of the simulation against the wall clock, steady enough to read.

    The rate is simulated over wall seconds across the last WINDOW wall seconds (not since the last
    restart of the pacer, which slips on every slow frame), once it spans at least SPAN; it reads "real
    time" within 4 % of 1, and only leaves that when it is more than 8 % off (hysteresis); a factor shown
    is changed only when the rate moves by more than 0.03 from it."""

    WINDOW, SPAN = 3.0, 2.0
    """Wall seconds the rate is measured over, at most and at least."""
    ENTER, LEAVE = 0.04, 0.08
    """Within ENTER of 1 the rate reads "real time"; it reads as a factor again beyond LEAVE."""
    STEP = 0.03
    """A factor on show changes only when the rate moves further than this from it."""

    def __init__(self) -> None:
        self.samples: deque[tuple[float, float]] = deque()
        self.shown: float | None = None
        """The factor on show (1.0 for "real time"), None before there is one."""

    def clear(self) -> None:
        """Forget the samples (pause, change of mode, a jump): the next text comes from fresh ones."""
        self.samples.clear()
        self.shown = None

    def add(self, wall: float, simulated: float) -> None:
        """One sample: wall clock and simulated time, s."""
        self.samples.append((wall, simulated))
        while len(self.samples) > 2 and wall - self.samples[1][0] >= self.WINDOW:
            self.samples.popleft()

    def rate(self) -> float | None:
        """Simulated seconds per wall second over the samples, None while they span less than SPAN."""
        if len(self.samples) < 2:
            return None
        (w0, s0), (w1, s1) = self.samples[0], self.samples[-1]
        return (s1 - s0) / (w1 - w0) if w1 - w0 >= self.SPAN else None

    def text(self, realtime: bool) -> str:
        """ "real time", "0.81× real time" (real-time mode) or "3.2× real time" (as fast as possible)."""
        rate = self.rate()
        if rate is not None:
            shown = self.shown
            if realtime and abs(rate - 1.0) <= (self.LEAVE if shown == 1.0 else self.ENTER):
                self.shown = 1.0
            elif shown is None or shown == 1.0 or abs(rate - shown) > self.STEP:
                self.shown = rate
        if self.shown is None:
            return "real time" if realtime else "fast"
        if realtime and self.shown == 1.0:
            return "real time"
        return f"{self.shown:.2f}× real time" if realtime else f"fast: {self.shown:.1f}× real time"


def _transform(position: np.ndarray, orientation: np.ndarray) -> QMatrix4x4:
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


GRID_COLOUR = (0.1, 0.12, 0.1, 0.35)
GRID_LIFT = 0.04
"""Metres the ground grid floats above the terrain, so that the surface does not hide its lines."""


def ground_grid(world: World) -> np.ndarray:
    """Line segments (pairs of points, m, world frame) of a grid draped over the terrain: lines 1, 2 or 5 ×
    10^k metres apart (10 to 25 across the terrain), each sampled every 1/200 of the terrain's size and lifted
    GRID_LIFT above the ground, so distances and slopes read at a glance."""
    lo, hi = world.terrain.mesh.bounds
    size = float(max(hi[0] - lo[0], hi[1] - lo[1]))
    spacing = next(m * 10.0 ** k for k in range(-2, 6) for m in (1, 2, 5) if size / (m * 10.0 ** k) <= 25)
    xs = np.arange(math.ceil(lo[0] / spacing), math.floor(hi[0] / spacing) + 1) * spacing
    ys = np.arange(math.ceil(lo[1] / spacing), math.floor(hi[1] / spacing) + 1) * spacing
    along_x = np.linspace(lo[0], hi[0], 201)
    along_y = np.linspace(lo[1], hi[1], 201)
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
    """The 3-D view. `held` are the driving and camera keys held down (the window's KeyRouter keeps it,
    whichever widget has the focus); dragging and the wheel tell the window the user moved the camera."""

    def __init__(self, window: SimulationWindow) -> None:
        super().__init__()
        self.window = window
        self.held: set[Qt.Key] = set()
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() != Qt.MouseButton.NoButton:
            self.window.camera_moved_by_user()
        super().mouseMoveEvent(event)

    def wheelEvent(self, event) -> None:
        self.window.camera_moved_by_user(zoom_only=True)
        super().wheelEvent(event)


class KeyRouter(QObject):
    """Sends the simulation window's keys to it whichever of its widgets has the focus (an event filter
    on the application: a key press goes to the focused widget, and the Camera box would open on Space
    and the plot list would search for U). Text fields keep their keys; Esc anywhere in the window gives
    the focus back to the 3-D view. Popups (the Camera box's list, menus) and dialogs keep theirs.

    A QShortcut cannot do this: it sees no key releases, and keys are held to drive."""

    def __init__(self, window: SimulationWindow) -> None:
        super().__init__(window)
        self.window = window

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) or not isinstance(obj, QWidget) \
                or isinstance(QApplication.focusWidget() or obj, QMenuBar):  # after Alt, arrows walk the menus
            return False
        top = QWidget.window(obj)  # (SimView.window is its SimulationWindow)
        if top is not self.window and not (isinstance(top, QDockWidget) and top.parentWidget() is self.window):
            return False
        try:
            return self.window.route_key(obj, event)
        except Exception:  # an exception escaping an event filter would take the whole application down
            traceback.print_exc()
            return False


CONSOLE_LINES = 5000
"""Lines the console keeps: older output scrolls away (the terminal, or a log, keeps all of it)."""
CONSOLE_WIDTH = 2000
"""Characters of one console line shown; the rest of a longer line is replaced by a note."""
CONSOLE_REFRESH = 0.1
"""s of wall time between two updates of the console."""


class ConsoleTail:
    """The end of a stream of output, bounded: the last `lines` lines, each cut to `width` characters,
    whatever is printed (100 MB of prints, or one line of 100 MB); the console shows what it holds.

    `take()` says how to bring the console up to date: append the few lines that came since the last
    take, or (after many) replace the console's text with everything kept, which costs Qt far less than
    appending thousands of lines to a full console and having it drop as many from the top."""

    REPLACE_AFTER = 200
    """New lines since the last take beyond which take() replaces the text instead of appending."""

    def __init__(self, lines: int = CONSOLE_LINES, width: int = CONSOLE_WIDTH) -> None:
        self.lines: deque[str] = deque(maxlen=lines)
        """The last whole lines, without their newline."""
        self.partial = ""
        """The start of the line being printed (at most `width` characters)."""
        self.width = width
        self.total = 0
        """Whole lines ever added."""
        self.fresh = 0
        """Lines at the end of `lines` not yet taken."""
        self._shown = 0
        """Characters of `partial` taken already (the console shows them)."""
        self._more = 0
        """Characters of the line being printed beyond `width`, left out."""

    @property
    def pending(self) -> bool:
        return self.fresh > 0 or len(self.partial) > self._shown

    def _extend(self, piece: str) -> None:
        room = self.width - len(self.partial)
        if room > 0:
            self.partial += piece[:room]
        self._more += max(0, len(piece) - max(room, 0))

    def _end_line(self) -> None:
        note = f" … ({self._more:,} more characters not shown)" if self._more else ""
        self.lines.append(self.partial + note)
        self.total += 1
        self.fresh += 1
        self.partial, self._more = "", 0

    def add(self, text: str) -> None:
        limit = self.lines.maxlen or 0
        if text.count("\n") > limit:  # all but its last `limit` lines would scroll away at once
            cut = len(text)
            for _ in range(limit + 1):
                cut = text.rfind("\n", 0, cut)
            dropped = text.count("\n", 0, cut + 1)
            self.total += dropped
            self.fresh += dropped
            self.partial, self._more = "", 0
            text = text[cut + 1:]
        parts = text.split("\n")
        self._extend(parts[0])
        for part in parts[1:]:
            self._end_line()
            self._extend(part)

    def everything(self) -> str:
        """All that is kept: a note when earlier lines scrolled away, the lines, the line being printed."""
        limit = self.lines.maxlen or 0
        note = (f"[… {self.total - limit:,} earlier lines not shown: the console keeps the last {limit:,}]\n"
                if self.total > limit else "")
        return note + "".join(f"{line}\n" for line in self.lines) + self.partial

    def take(self) -> tuple[bool, str]:
        """(replace, text): replace the console's text with `text`, or append `text` to it."""
        if self.fresh > self.REPLACE_AFTER or self.fresh > len(self.lines):
            replace, text = True, self.everything()
        elif self.fresh:
            first = len(self.lines) - self.fresh
            done = [self.lines[first][self._shown:], *(self.lines[k] for k in range(first + 1, len(self.lines)))]
            replace, text = False, "".join(f"{line}\n" for line in done) + self.partial
        else:
            replace, text = False, self.partial[self._shown:]
        self.fresh = 0
        self._shown = len(self.partial)
        return replace, text


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
        self._panel_count = 0
        self._history: dict[str, deque] = {}
        self._history_t: deque[float] = deque(maxlen=1800)
        self.following = False
        """Whether the camera keeps the robot in view (driven from the keyboard, in any camera)."""
        self._camera_moved = False
        """The user moved the camera since last choosing one: keyboard driving no longer follows."""
        self.rate_display = RateDisplay()
        self._plot_slots: dict[str, int] = {}
        self.setWindowTitle(f"{simulation.project.name} — SEAR simulation")
        self._build()
        self._build_menus()
        self.key_router = KeyRouter(self)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self.key_router)
        self.console_tail = ConsoleTail()
        """Output not yet shown: the console shows it at most CONSOLE_REFRESH s apart, so a flood of
        prints costs the window one bounded update, not one per print."""
        self._console_next = 0.0
        """perf_counter time before which the console is not updated again (see _show_console)."""
        for text in simulation.output_history:  # what init() printed before the window existed
            self.console_tail.add(text)
        self._show_console(now=True)
        simulation.output_listeners.append(self._console_append)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.frame)
        self._restore_layout()

    # --- construction ---------------------------------------------------------------------------------

    def _build(self) -> None:
        sim, world = self.simulation, self.simulation.world
        self.view = SimView(self)
        self.view.setBackgroundColor((176, 200, 224))
        self.view.addItem(terrain_item(world.terrain.mesh, world.terrain.vertex_colors))
        lo, hi = world.terrain.mesh.bounds
        size = float(max(hi[0] - lo[0], hi[1] - lo[1]))
        self.grid_item = gl.GLLinePlotItem(pos=ground_grid(world), mode="lines", color=GRID_COLOUR, width=1.0,
                                           antialias=False, glOptions="translucent")
        self.view.addItem(self.grid_item)
        self._add_north_arrow(size, float(hi[2]))
        self.robot_items: list[tuple[gl.GLMeshItem, gl.GLMeshItem, dict[str, gl.GLMeshItem]]] = []
        """Each robot's body, collision hull and wheel items, in Simulation.robots' order."""
        for index, vehicle in enumerate(world.vehicles):
            body_item = lit_mesh_item(vehicle.body_mesh, ROBOT_COLOURS[index % len(ROBOT_COLOURS)])
            self.view.addItem(body_item)
            hull_item = lit_mesh_item(vehicle.body_mesh.convex_hull, (1.0, 0.5, 0.1), edges=True)
            hull_item.setGLOptions("translucent")
            self.view.addItem(hull_item)
            wheel_items = {}
            for wid, mesh in vehicle.wheel_meshes.items():
                item = lit_mesh_item(mesh, (0.15, 0.15, 0.17))
                self.view.addItem(item)
                wheel_items[wid] = item
            self.robot_items.append((body_item, hull_item, wheel_items))
        self.body_item, self.hull_item, self.wheel_items = self.robot_items[0]
        self.gripper_items: dict[int, list[gl.GLMeshItem]] = {}
        """Each gripper's parts (World.grippers: by robot index)."""
        for index, gripper in world.grippers.items():
            self.gripper_items[index] = []
            for mesh in gripper.meshes():
                item = lit_mesh_item(mesh, (0.85, 0.65, 0.15))
                self.view.addItem(item)
                self.gripper_items[index].append(item)
        self.obstacle_items: dict[int, gl.GLMeshItem] = {}
        self.rays_item = gl.GLLinePlotItem(mode="lines", width=1.0, antialias=False)
        self.rays_item.setVisible(False)
        self._drawn_rays: tuple[np.ndarray, np.ndarray] | None = None
        self.view.addItem(self.rays_item)
        self._build_clouds()

        self.hud = QLabel(self.view)
        self.hud.setFont(QFont("Monospace", 9))
        self.hud.setStyleSheet("background: rgba(20, 24, 30, 170); color: #f0f0f0; padding: 6px; border-radius: 4px;")
        self.hud.move(8, 8)
        self.help = QLabel(HELP, self.view)
        self.help.setStyleSheet("background: rgba(255, 255, 255, 235); color: #111; padding: 10px; "
                                "border: 1px solid #888; border-radius: 6px;")
        self.help.setVisible(False)
        self.view.setMinimumSize(320, 220)
        self.setCentralWidget(self.view)

        # Docks: plots, LIDAR, console.
        plots = QWidget()
        layout = QVBoxLayout(plots)
        self.fields_list = QListWidget()
        self.fields_list.setMaximumHeight(130)
        self.fields_list.setMinimumHeight(48)
        for sensor, prefix in ((sensor, run.prefix) for run in sim.robots for sensor in run.sensors.sensors):
            plotted = sensor.log_fields if sensor.PLOTTED is None else sensor.PLOTTED
            for field in plotted:
                item = QListWidgetItem(f"{prefix}{sensor.name}.{field}")  # as the log names it
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
        self.plot.setMinimumSize(220, 120)
        self.plot.addLegend(offset=(5, 5), brush=(255, 255, 255, 210), pen=(180, 180, 180), labelTextColor=(20, 20, 20))
        self.plot.setLabel("bottom", "simulated time", units="s")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.curves: dict[str, pg.PlotDataItem] = {}
        layout.addWidget(QLabel("Plot these fields:"))
        layout.addWidget(self.fields_list)
        layout.addWidget(self.plot, 1)
        self.plots_dock = self._dock("Plots", plots, Qt.DockWidgetArea.RightDockWidgetArea)

        # Every sensor whose type draws a top-down plot of its readings (a LIDAR's scan) gets a dock of its
        # own, tabbed together.
        self.scan_plots: dict[str, tuple[Sensor, pg.PlotWidget, pg.PlotDataItem]] = {}
        self.scan_docks: list[QDockWidget] = []
        for sensor in sim.sensors.sensors:
            if sensor.plot_extent() is None:
                continue
            plot, returns = self._scan_plot(sensor)
            self.scan_plots[sensor.name] = (sensor, plot, returns)
            title = sensor.TITLE or sensor.TYPE
            dock = self._dock(f"{title} ({sensor.name})", plot, Qt.DockWidgetArea.RightDockWidgetArea)
            if self.scan_docks:
                self.tabifyDockWidget(self.scan_docks[0], dock)
            self.scan_docks.append(dock)
        if self.scan_docks:
            self.scan_docks[0].raise_()
        first = next(iter(self.scan_plots.values()), None)
        self.scan_sensor = first[0] if first else None
        """The first scan sensor (its dock is shown first)."""

        self._build_image_docks()
        self.scan_beams: dict[str, pg.PlotDataItem] = {}
        """Each sparse scan's spokes (_draw_beams)."""
        self.grid_tabs = GridTabs()
        self.grid_dock: QDockWidget | None = None
        """The Grids dock (sim.show_grid), made when user code first shows a grid."""

        self.console = QPlainTextEdit()
        self.console.setReadOnly(True)
        self.console.setFont(QFont("Monospace", 9))
        self.console.setMaximumBlockCount(CONSOLE_LINES + 2)  # and a note, the line being printed
        self.console.setPlaceholderText(f"Output of your code (its last {CONSOLE_LINES:,} lines) appears here.")
        self.console_dock = self._dock("Console", self.console, Qt.DockWidgetArea.BottomDockWidgetArea)
        # The right-hand docks reach down to the status bar; the console lies under the 3-D view only.
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)

        self._build_toolbar()
        self.status = QLabel()
        self.statusBar().addWidget(self.status, 1)

    def _restore_layout(self) -> None:
        """Open as the window was last closed (size, docks), inside the screen; the first time 1400×880 or
        the screen's size if smaller, with the 3-D view given the largest share: the side docks a third of
        the width, the console an eighth of the height."""
        if restore_window(self, "simulation", QSize(1400, 880)):
            return
        side = [d for d in self.findChildren(QDockWidget)
                if self.dockWidgetArea(d) == Qt.DockWidgetArea.RightDockWidgetArea]
        if side:
            self.resizeDocks(side, [max(260, self.width() // 3)] * len(side), Qt.Orientation.Horizontal)
        self.resizeDocks([self.console_dock], [max(70, self.height() // 8)], Qt.Orientation.Vertical)

    def _build_clouds(self) -> None:
        """A point cloud in the 3-D view for each sensor whose readings are clouds (multi-layer LIDARs)."""
        self.cloud_items: dict[str, gl.GLScatterPlotItem] = {}
        self._cloud_drawn: dict[str, float | None] = {}
        for sensor in self.simulation.sensors.sensors:
            if sensor.draws_cloud:
                item = gl.GLScatterPlotItem(pos=np.zeros((0, 3)), size=2.0, pxMode=True)
                item.setGLOptions("opaque")
                self.view.addItem(item)
                self.cloud_items[sensor.name] = item
                self._cloud_drawn[sensor.name] = None

    def _build_image_docks(self) -> None:
        """A dock showing the latest picture of each sensor whose readings are images (depth cameras)."""
        self.image_items: dict[str, pg.ImageItem] = {}
        self._image_drawn: dict[str, float | None] = {}
        for sensor in self.simulation.sensors.sensors:
            if not sensor.draws_image:
                continue
            widget = pg.GraphicsLayoutWidget()
            widget.setBackground("w")
            box = widget.addViewBox(lockAspect=True, invertY=True, enableMouse=False)
            image = pg.ImageItem(axisOrder="row-major")
            box.addItem(image)
            widget.setMinimumSize(160, 120)
            self.image_items[sensor.name] = image
            self._image_drawn[sensor.name] = None
            self._dock(f"{sensor.TITLE or sensor.TYPE} ({sensor.name})", widget, Qt.DockWidgetArea.RightDockWidgetArea)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _scan_plot(self, sensor: Sensor) -> tuple[pg.PlotWidget, pg.PlotDataItem]:
        """A top-down plot of `sensor`'s readings with its polar grid; returns it and its returns' curve."""
        plot = pg.PlotWidget(background="w")
        plot.setMinimumSize(180, 150)
        plot.setAspectLocked(True)
        plot.showGrid(x=True, y=True, alpha=0.3)
        plot.setLabel("bottom", "left ← → right", units="m")
        plot.setLabel("left", "ahead", units="m")
        self._add_polar_grid(sensor, plot)
        # Lines only: pyqtgraph's ScatterPlotItem crashes PySide6 6.12 when painted (a refcount error,
        # 'none_dealloc'), so returns are drawn as short crosses and the robot as an outline.
        returns = plot.plot(pen=pg.mkPen(200, 40, 40, width=2), connect="pairs")
        plot.plot([-0.15, 0.0, 0.15, -0.15], [-0.1, 0.25, -0.1, -0.1], pen=pg.mkPen(30, 30, 30, width=2))
        return plot, returns

    def _add_polar_grid(self, sensor: Sensor, plot: pg.PlotWidget) -> None:
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
            plot.plot(radius * np.cos(theta), radius * np.sin(theta), pen=pen)
            label = pg.TextItem(f"{radius:g} m", color=(110, 110, 130), anchor=(0, 1))
            label.setPos(radius * math.cos(math.radians(60)), radius * math.sin(math.radians(60)))
            plot.addItem(label)
            radius += ring_step
        if edges is not None:
            for a in edges:  # the sector's edges, in the view's right/ahead axes
                plot.plot([0.0, -reach * math.sin(a)], [0.0, reach * math.cos(a)],
                          pen=pg.mkPen(120, 160, 120, width=1))
        plot.setRange(xRange=(-reach, reach), yRange=(-reach if behind else -0.1 * reach, reach), padding=0.02)
        plot.disableAutoRange()

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

    def _build_toolbar(self) -> None:
        bar = self.addToolBar("Simulation")
        bar.setObjectName("simulation-toolbar")
        self.toolbar = bar
        self.commands: dict[str, QAction] = {}
        """The window's menu and toolbar actions by name (not QWidget.actions(), the list Qt keeps)."""

        def add(key: str, text: str, checkable: bool, slot, shortcut: str | QKeySequence.StandardKey | None = None,
                checked: bool = False, shown_key: str | None = None, tool: str | None = None) -> QAction:
            """An action; `shortcut` a real one, `shown_key` a key the KeyRouter handles, shown in menus
            only; `tool` its text on the toolbar (None: not on the toolbar)."""
            action = QAction(text + (f"\t{shown_key}" if shown_key else ""), self)
            action.setCheckable(checkable)
            action.setChecked(checked)
            if shortcut:
                action.setShortcut(QKeySequence(shortcut))
            (action.toggled if checkable else action.triggered).connect(slot)
            if tool is not None:
                action.setIconText(tool)
                bar.addAction(action)
            else:
                self.addAction(action)  # its shortcut works in this window without a toolbar button
            self.commands[key] = action
            return action

        add("start", "Start User Code", False, lambda: self.start_user_code(), shown_key="Space",
            tool="Start user code (Space)")
        add("reset", "Reset Robot", False, lambda: self.reset(), shown_key="Enter", tool="Reset (Enter)")
        bar.addSeparator()
        add("pause", "Pause", True, self.set_paused, "P", tool="Pause")
        add("step", "Single Step", False, lambda: self.single_step(), "N", tool="Step")
        add("realtime", "Real Time", True, self.set_realtime, "Ctrl+T", checked=True, tool="Real time")
        bar.addSeparator()
        add("rays", "Sensor Rays", True, self.set_rays_visible, "R", tool="Sensor rays")
        if self.cloud_items:
            add("cloud", "Point Cloud", True, self.set_cloud_visible, checked=True, tool="Point cloud")
        add("debug", "Physics Shapes", True, self.set_debug_shapes, "Ctrl+D",
            checked=self.simulation.project.code.debug_shapes, tool="Physics shapes")
        add("record", "Record Log…", True, self.set_recording, "Ctrl+L", tool="Record log…")
        add("help", "Keyboard Shortcuts", True, self.show_key_help, "F1", tool="Help (F1)")
        add("close", "Close Window", False, lambda: self.close(), QKeySequence.StandardKey.Close)
        add("quit", "Quit", False, quit_application, QKeySequence.StandardKey.Quit)
        add("copy", "Copy", False, lambda: self.copy_text(), QKeySequence.StandardKey.Copy)
        add("copy_readout", "Copy Sensor Readout", False, lambda: self.copy_readout(), "Ctrl+Shift+C")
        add("view_focus", "Back to the 3-D View", False, lambda: self.view.setFocus(), shown_key="Esc")
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
        self.camera_box.activated.connect(lambda _i: self.camera_chosen())
        bar.addWidget(self.camera_box)
        self.set_debug_shapes(self.simulation.project.code.debug_shapes)

    def _build_menus(self) -> None:
        """File, Edit, View, Simulation and Help, with every action's key shown."""
        c = self.commands
        menus = self.menuBar()
        file = menus.addMenu("&File")
        file.addAction(c["record"])
        file.addSeparator()
        file.addAction(c["close"])
        file.addAction(c["quit"])
        edit = menus.addMenu("&Edit")
        edit.addAction(c["copy"])
        edit.addAction(c["copy_readout"])
        view = menus.addMenu("&View")
        cameras = view.addMenu("&Camera")
        self.camera_actions = QActionGroup(self)
        for index in range(self.camera_box.count()):
            action = cameras.addAction(self.camera_box.itemText(index))
            action.setCheckable(True)
            action.setData(self.camera_box.itemData(index))
            action.setChecked(index == self.camera_box.currentIndex())
            action.triggered.connect(lambda _=False, i=index: self._camera_from_menu(i))
            self.camera_actions.addAction(action)
        view.addAction(c["view_focus"])
        view.addSeparator()
        view.addAction(c["rays"])
        view.addAction(c["debug"])
        view.addSeparator()
        for dock in self.findChildren(QDockWidget):
            view.addAction(dock.toggleViewAction())
        toolbar = self.toolbar.toggleViewAction()
        toolbar.setText("Toolbar")
        view.addAction(toolbar)
        simulation = menus.addMenu("&Simulation")
        for key in ("start", "reset", None, "pause", "step", "realtime"):
            if key is None:
                simulation.addSeparator()
            else:
                simulation.addAction(c[key])
        # Help: the keys (F1 here, as the status bar says), then the user guide at this window's page and
        # About, as in every window (sear.gui.help).
        c.update(add_help_menu(self, guide_shortcut=False, page="simulation-window.md"))
        help_menu = menus.actions()[-1].menu()  # the menu add_help_menu added last
        assert isinstance(help_menu, QMenu)
        self.help_menu = help_menu
        first = help_menu.actions()[0]
        self.help_menu.insertAction(first, c["help"])
        self.help_menu.insertSeparator(first)

    # --- controls ------------------------------------------------------------------------------------------

    def route_key(self, widget: QWidget, event) -> bool:
        """A key press or release in `widget` of this window (KeyRouter); True when it was handled here.

        Driving and camera keys are held (auto-repeat ignored), Enter and Space act once, Esc gives the
        focus to the 3-D view: whichever widget has the focus, except a text field being typed in, which
        keeps all but Esc. Keys with Ctrl or Alt are left to the shortcuts (Ctrl+Q, Ctrl+W, ...)."""
        key = Qt.Key(event.key())
        gripper_key = (self.simulation.driven in self.simulation.world.grippers
                       and (key in GRIPPER_LIFT_KEYS or key == GRIPPER_KEY))
        robot_key = key == Qt.Key.Key_Tab and len(self.simulation.robots) > 1  # one robot: Tab moves the focus
        ours = key in DRIVE_KEYS or key in CAMERA_KEYS or key in ONE_SHOT_KEYS or gripper_key or robot_key
        if event.type() == QEvent.Type.KeyRelease:
            if not event.isAutoRepeat():
                self.view.held.discard(key)  # also when typing: a key held into a text field must let go
                if key in GRIPPER_LIFT_KEYS and gripper_key:
                    self.simulation.set_gripper_input(lift=0)  # stop the lift where it is
            return ours and not is_text_field(QApplication.focusWidget() or widget)
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if modifiers != Qt.KeyboardModifier.NoModifier:
            return False
        if key == Qt.Key.Key_Escape:
            self.view.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return True
        if not ours or is_text_field(QApplication.focusWidget() or widget) or is_text_field(widget):
            return False
        if event.isAutoRepeat():
            return True
        if key in DRIVE_KEYS:
            self.view.held.add(key)
            if not self._camera_moved:
                self.following = True
        elif key in CAMERA_KEYS:
            self.view.held.add(key)
        elif key in GRIPPER_LIFT_KEYS:
            self.view.held.add(key)
            self.simulation.set_gripper_input(lift=GRIPPER_LIFT_KEYS[key])
        elif key == GRIPPER_KEY:
            gripper = self.simulation.world.grippers.get(self.simulation.driven)
            if gripper is not None:
                lift = sum(GRIPPER_LIFT_KEYS[k] for k in self.view.held if k in GRIPPER_LIFT_KEYS)
                self.simulation.set_gripper_input(open=not gripper.open_command, lift=lift)
        elif key == Qt.Key.Key_Space:
            self.start_user_code()
        elif key == Qt.Key.Key_F1:
            self.commands["help"].toggle()
        elif robot_key:
            self.next_robot()
        else:
            self.reset()
        return True

    def camera_moved_by_user(self, *, zoom_only: bool = False) -> None:
        """The user moved the camera (mouse or camera keys): keyboard driving stops following the robot,
        and a camera that places itself (follow, on board; top-down unless only zoomed) becomes free."""
        self._camera_moved = True
        self.following = False
        places_itself = self.camera_mode in ("follow", "top") or self.camera_mode.startswith("sensor:")
        if places_itself and not (zoom_only and self.camera_mode == "top"):
            self.camera_box.setCurrentIndex(self.camera_box.findData("free"))

    def camera_chosen(self) -> None:
        """A camera was chosen (Camera box or View menu), even the one in use: keyboard driving follows
        the robot again from the next key press."""
        self._camera_moved = False
        self.following = False

    def _camera_from_menu(self, index: int) -> None:
        self.camera_box.setCurrentIndex(index)
        self.camera_chosen()

    def show_key_help(self, on: bool) -> None:
        """The keys' help over the 3-D view's top right corner (clear of the HUD), or hidden."""
        self.help.setVisible(on)
        if on:
            self.help.adjustSize()
            self.help.move(max(0, self.view.width() - self.help.width() - 12), 12)

    def copy_text(self) -> None:
        """Edit > Copy: the console's selected text."""
        if self.console.textCursor().hasSelection():
            self.console.copy()

    def copy_readout(self) -> None:
        """Edit > Copy Sensor Readout: the HUD's text (time, speed, every sensor's reading)."""
        self._update_hud()
        clipboard = QApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.hud.text())

    def start_user_code(self) -> None:
        """Space: start the user code, or restart it in a fresh process once it failed or finished."""
        if self.simulation.can_restart:
            self.simulation.restart_user_code()
        else:
            self.simulation.start_user_code()
        self._show_console(now=True)  # what init printed, or why it could not start, shown with the key press
        if self.camera_mode == "free":
            self.camera_box.setCurrentIndex(self.camera_box.findData("follow"))

    def reset(self) -> None:
        self.simulation.reset()
        self.draw()

    def next_robot(self) -> None:
        """Tab: the keys drive the next robot and the camera follows it (the robot left lets go of the
        keys' pedals; its user code keeps driving it)."""
        if self._manual_active:
            self.simulation.set_manual_input(0.0, 0.0, False)
            self._manual_active = False
        self.simulation.choose_next_robot()
        self.following = not self._camera_moved
        self.draw()
        self._update_status()
        self._update_hud()

    @property
    def realtime(self) -> bool:
        """Whether the simulation keeps to the wall clock (else it runs as fast as frames allow)."""
        return self.pacer.realtime

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pacer.restart()
        self.rate_display.clear()

    def set_realtime(self, on: bool) -> None:
        self.pacer.realtime = on
        self.pacer.restart()
        self.rate_display.clear()

    def single_step(self) -> None:
        if not self.commands["pause"].isChecked():
            self.commands["pause"].setChecked(True)
        self._advance_ticks(1)
        self.draw()

    def set_rays_visible(self, on: bool) -> None:
        self.rays_item.setVisible(on)
        self.draw()

    def set_cloud_visible(self, on: bool) -> None:
        """Show or hide the point clouds of the multi-layer LIDARs."""
        for item in self.cloud_items.values():
            item.setVisible(on)
        if on:
            self._cloud_drawn = dict.fromkeys(self._cloud_drawn)
        self.draw()

    def set_debug_shapes(self, on: bool) -> None:
        for _body, hull_item, _wheels in self.robot_items:
            hull_item.setVisible(on)
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
            try:
                self.simulation.start_log(path)  # the dialog asked before replacing a file
            except ProjectError as exc:  # one of the project's own files, a folder, not writable
                self._console_note(f"Not recording: {exc}\n")
                self.commands["record"].blockSignals(True)
                self.commands["record"].setChecked(False)
                self.commands["record"].blockSignals(False)
                return
            self._console_note(f"Recording to {path}\n")
        else:
            written = self.simulation.stop_log()
            if written is not None:
                self._console_note(f"Log written to {written}\n")

    def set_camera(self, mode: str) -> None:
        self.camera_mode = mode
        for action in self.camera_actions.actions() if hasattr(self, "camera_actions") else ():
            action.setChecked(action.data() == mode)
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
        self.rate_display.clear()
        self.draw()
        self._show_console(now=True)

    def frame(self) -> None:
        """Timer tick: advance the simulation as the clock says (stopping exactly at `duration`), then
        draw one frame."""
        if not self.paused:
            self._advance_ticks(self.pacer.due(), TICK_BUDGET[self.realtime])
        self._move_camera_keys()
        self.draw()
        self._show_console()
        now = time.perf_counter()
        self._frames.append(now)
        if not self.paused:
            self.rate_display.add(now, self.simulation.world.time)
        if self.pacer.finished:
            self.close()

    def _move_camera_keys(self) -> None:
        moves = [CAMERA_KEYS[k] for k in self.view.held if k in CAMERA_KEYS]
        if not moves:
            return
        self.camera_moved_by_user()
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
        for vehicle, (body_item, hull_item, wheel_items) in zip(world.vehicles, self.robot_items, strict=True):
            pose = _transform(*vehicle.pose())
            body_item.setTransform(pose)
            hull_item.setTransform(pose)
            for wid, (pos, orn) in vehicle.wheel_transforms().items():
                wheel_items[wid].setTransform(_transform(pos, orn))
        for index, gripper in world.grippers.items():
            for item, (pos, orn, _size) in zip(self.gripper_items[index], gripper.part_poses(), strict=True):
                item.setTransform(_transform(pos, orn))
        position, orientation = self.simulation.driven_robot.vehicle.pose()
        for index, obstacle in enumerate(world.obstacles):
            item = self.obstacle_items.get(index)
            if item is None:
                item = lit_mesh_item(obstacle.mesh, obstacle.colour[:3], edges=self.commands["debug"].isChecked())
                self.view.addItem(item)
                self.obstacle_items[index] = item
                pos, orn = world.obstacle_pose(obstacle)
                item.setTransform(_transform(pos, orn))
            elif obstacle.dynamic:
                pos, orn = world.obstacle_pose(obstacle)
                item.setTransform(_transform(pos, orn))
        if self.rays_item.visible():
            starts, ends, hits = self.visible_rays()
            if len(starts) and not self._same_rays(starts, ends):  # upload only a new sample's rays
                pts = np.empty((2 * len(starts), 3), dtype=np.float32)
                pts[0::2], pts[1::2] = starts, ends
                colours = np.where(np.repeat(hits, 2)[:, None], HIT, MISS).astype(np.float32)
                self.rays_item.setData(pos=pts, color=colours)
        self._draw_clouds()
        self._follow_camera(position, orientation)
        # Text and plots change slowly to the eye and are costly to repaint (every widget over an
        # OpenGL view is recomposited in software): refresh them at about 4 Hz of wall time.
        # The two plots (the costliest to repaint) on every other of those refreshes, the frames between
        # the text's, so that no frame pays for all of them.
        now = time.perf_counter()
        forced = self.paused or not self.timer.isActive()
        if now - self._panels_drawn >= PANEL_PERIOD or forced:
            self._panels_drawn = now
            self._panel_count += 1
            if self._panel_count % 2 or forced:
                self._update_hud()
                self._update_status()
            if not self._panel_count % 2 or forced:
                self._update_plots()

    def _same_rays(self, starts: np.ndarray, ends: np.ndarray) -> bool:
        """Whether these rays are the ones drawn already (sensors sample at their own, lower rates)."""
        same = self._drawn_rays is not None and all(
            a.shape == b.shape and np.array_equal(a, b) for a, b in zip(self._drawn_rays, (starts, ends), strict=True))
        self._drawn_rays = (starts, ends)
        return same

    def _draw_clouds(self) -> None:
        """Each cloud sensor's latest scan, placed with the sensor's pose when it is first drawn (within a
        frame of the scan) and coloured by height from blue (low) through green to red (high)."""
        sensors = self.simulation.sensors
        for name, item in self.cloud_items.items():
            sensor = sensors.sensor(name)
            if not item.visible() or self._cloud_drawn[name] == sensor.last_sample_time:
                continue
            self._cloud_drawn[name] = sensor.last_sample_time
            points = sensor.cloud(sensor.reading)
            if points is None or not len(points):
                item.setData(pos=np.zeros((0, 3)))
                continue
            origin, rotation = sensor.sensor_frame(self.simulation.state)
            world = origin + points @ rotation.T
            item.setData(pos=world.astype(np.float32), color=height_colours(world[:, 2]))

    def visible_rays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every ray sensor's rays of its latest sample: starts, ends (m, world frame) and hit flags."""
        batches = list(self.simulation.driven_robot.sensors.rays_by_sensor.values())
        if not batches:
            return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, dtype=bool)
        starts, ends, hits = (np.concatenate(parts) for parts in zip(*batches, strict=True))
        return starts, ends, hits

    def _follow_camera(self, position: np.ndarray, orientation: np.ndarray) -> None:
        mode = self.camera_mode
        if mode in ("free", "fixed"):
            if self.following:  # driven from the keyboard: keep the view's angle and distance, on the robot
                self.view.opts["center"] = Vector(*position)
        elif mode == "follow":
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
            # Looking along the sensor's axis from its mount raised 5 cm above the hull's top (body frame), so
            # a sensor mounted inside the body does not show the inside of the hull.
            top = float(self.simulation.robots[0].vehicle.body_mesh.bounds[1][2])
            lift = max(0.0, top + 0.05 - float(sensor.mount_position[2]))
            eye = origin + body_rotation(self.simulation.state) @ np.array([0.0, 0.0, lift])
            self.view.setCameraPosition(pos=Vector(*(eye + forward * 2.0)), distance=2.0, elevation=-elevation,
                                        azimuth=azimuth + 180)

    def _log_cells(self) -> dict[str, str]:
        """Every sensor column's latest value, as the CSV log writes it (for the plots' history)."""
        cells: dict[str, str] = {}
        for run in self.simulation.robots:
            sensors = run.sensors
            cells.update(zip((run.prefix + c for c in sensors.log_columns()), sensors.log_values(), strict=True))
        return cells

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
        run = sim.driven_robot
        lines = [f"t = {sim.world.time:8.2f} s   speed {np.linalg.norm(run.state.linear_velocity):5.2f} m/s"]
        if len(sim.robots) > 1:
            lines.insert(0, f"robot {run.name} ({run.index + 1} of {len(sim.robots)})")
        for sensor in run.sensors.sensors:
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
                del self._plot_slots[name]
        t = np.fromiter(self._history_t, float)
        for name in chosen:
            values = np.fromiter(self._history.get(name, ()), float)
            if name not in self.curves:
                # The lowest colour slot no field on show uses: a field ticked later never takes the
                # colour of one already shown.
                used = set(self._plot_slots.values())
                slot = self._plot_slots[name] = next(i for i in range(len(used) + 1) if i not in used)
                self.curves[name] = self.plot.plot(pen=pg.mkPen(plot_colour(slot), width=1.5), name=name)
            if len(values) == len(t):
                self.curves[name].setData(t, values, connect="finite")
        sensors = self.simulation.sensors
        for name, image_item in self.image_items.items():
            sensor = sensors.sensor(name)
            if self._image_drawn[name] != sensor.last_sample_time:
                self._image_drawn[name] = sensor.last_sample_time
                picture = sensor.image(sensor.reading)
                if picture is not None:
                    image_item.setImage(picture, levels=(0, 255))
        for sensor, plot, returns in self.scan_plots.values():
            points = sensor.plot_points(sensor.reading)
            if points is not None:
                # Plot with the robot's forward axis pointing up the screen, left to the left.
                returns.setData(*cross_marks(points[:, 0], points[:, 1], 0.04))
                self._draw_beams(sensor.name, plot, points)
        self._update_grids()

    def _draw_beams(self, name: str, plot: pg.PlotWidget, points: np.ndarray) -> None:
        """A sparse scan (a ring of at most SPARSE_BEAMS returns) as a range map: a line from the sensor to
        each return, so each beam reads as a spoke of the polar map (dense scans show returns only)."""
        beams = self.scan_beams.get(name)
        if beams is None:
            if len(points) > SPARSE_BEAMS:
                return
            beams = self.scan_beams[name] = plot.plot(pen=pg.mkPen(230, 130, 130, width=1), connect="pairs")
        spokes = np.zeros((2 * len(points) if len(points) <= SPARSE_BEAMS else 0, 2))
        spokes[1::2] = points[:len(spokes) // 2]  # each spoke from the sensor (0, 0) to its return
        beams.setData(spokes[:, 0], spokes[:, 1])

    def _update_grids(self) -> None:
        """The grids user code showed (sim.show_grid) in the Grids dock, tabbed with the first scan dock
        and brought to the front when it first appears, with the robot drawn on them."""
        grids = self.simulation.grids
        if not grids:
            return
        if self.grid_dock is None:
            self.grid_dock = self._dock("Grids", self.grid_tabs, Qt.DockWidgetArea.RightDockWidgetArea)
            if self.scan_docks:
                self.tabifyDockWidget(self.scan_docks[0], self.grid_dock)
            QTimer.singleShot(0, self.grid_dock.raise_)  # once the new tab is laid out
        state = self.simulation.state
        x, y = float(state.position[0]), float(state.position[1])
        self.grid_tabs.update_grids(grids, (x, y, quaternion_to_euler(state.orientation)[2]))

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
        speed = "paused" if self.paused else self.rate_display.text(self.realtime)
        robot = f"driving {sim.driven_robot.name} (Tab: next of {len(sim.robots)} robots)   |   " \
            if len(sim.robots) > 1 else ""
        self.status.setText(f"{robot}{code}   |   t = {sim.world.time:7.2f} s   |   {speed}   |   "
                            f"{fps:4.1f} frames/s   |   F1: keys")

    def _show_console(self, *, now: bool = False) -> None:
        """Put the output gathered since the last time into the console (every CONSOLE_REFRESH s)."""
        clock = time.perf_counter()
        if not self.console_tail.pending or (not now and clock < self._console_next):
            return
        replace, text = self.console_tail.take()
        if replace:
            self.console.setPlainText(text)
        else:
            self.console.moveCursor(QTextCursor.MoveOperation.End)
            self.console.insertPlainText(text)
        self.console.moveCursor(QTextCursor.MoveOperation.End)
        # A flood's updates (up to CONSOLE_LINES long lines each) take at most a fifth of the time.
        self._console_next = clock + max(CONSOLE_REFRESH, 5 * (time.perf_counter() - clock))

    def _console_show(self, text: str) -> None:
        """Show `text` in the console at once (the window's own messages)."""
        self.console_tail.add(text)
        self._show_console(now=True)

    def _console_note(self, text: str) -> None:
        """The window's own message: to the console at once, and to the terminal."""
        self._console_append(text)
        self._show_console(now=True)

    def _console_append(self, text: str) -> None:
        self.console_tail.add(text)
        if sys.stdout is None or sys.stdout.closed:  # user code closed it
            reopen_std_streams()
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
        self.view.held.clear()
        save_window(self, "simulation")
        event.accept()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.ActivationChange and not self.isActiveWindow():
            self.view.held.clear()  # keys released in another window never reach this one
        super().changeEvent(event)


def quit_application() -> None:
    """File > Quit (Ctrl+Q): close every window (each may still say no), which ends the application with
    status 0 once the last one has closed."""
    QApplication.closeAllWindows()


def run_window(simulation: Simulation, *, duration: float | None = None) -> int:
    """Show the simulation window until it is closed (or `duration` simulated seconds pass); returns 0.

    A user code error (a hook stuck past its time-out, a crash of its process) is shown in the console
    while the window keeps running; Space restarts the user code. The caller closes the simulation."""
    from sear.gui.app import configure_qt, set_window_icon

    configure_qt()
    app = QApplication.instance() or QApplication([])
    set_window_icon()
    window = SimulationWindow(simulation, duration=duration)
    window.show()
    window.start()
    stopped: list[int] = []

    def stop(signum: int, frame: object) -> None:  # runs in whatever Python code is under way (a frame)
        stopped.append(signum)
        # Closed from the event loop once that code has returned, as when the user closes it.
        QTimer.singleShot(0, window.close)

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        app.exec()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 128 + stopped[0] if stopped else 0
