"""The simulation window's readouts: the HUD over the 3-D view, the Plots dock, a dock per sensor that
draws a picture of its readings (a scan's top-down plot, a depth camera's image) and the Grids dock.

The HUD and the sensor docks show the driven robot (Tab chooses it). A sensor dock stands for a sensor
name and type: one dock whatever the number of robots, showing the driven robot's sensor of that name
(its page made the first time that robot is driven), or saying that the driven robot has none; with
several robots its title names the robot. The Plots dock lists every robot's fields by their log names;
each grid in the Grids dock is drawn with the robot that showed it.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QFont, QIcon, QPixmap
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from sear.gui.griddock import GridTabs
from sear.gui.widgets import cross_marks
from sear.state import quaternion_to_euler

if TYPE_CHECKING:
    from sear.runtime.robotrun import RobotRun
    from sear.runtime.simulation import Simulation
    from sear.sensors.base import Sensor

SPARSE_BEAMS = 64
"""A scan of at most this many returns is drawn as a range map, a spoke to each return."""
PLOT_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                "#bcbd22", "#17becf")
"""Colours of the first ten plotted fields (the "tab10" palette: easy to tell apart); further fields get
colours of their own from plot_colour()."""
HISTORY = 1800
"""Control ticks of history the Plots dock keeps (30 s at 60 Hz)."""
PLOTS_SHARE = 0.45
"""The Plots dock's share of the right-hand column's height the first time the window opens beside sensor
docks: pictures (scans, grids, depth images) need the room more than the line plot does."""


def plot_colour(slot: int) -> QColor:
    """The colour of plot slot `slot` (0, 1, ...): the palette's, then hues a golden-ratio step apart,
    so no two slots share a colour."""
    if slot < len(PLOT_COLOURS):
        return QColor(PLOT_COLOURS[slot])
    extra = slot - len(PLOT_COLOURS)
    return QColor.fromHsvF((0.07 + extra * 0.6180339887) % 1.0, 0.85, 0.9 if extra % 2 else 0.6)


def hud_text(sensor: Sensor) -> str:
    """The readout of one sensor: its type's hud_text, or a plain description should that fail (a type
    added at run time must not break the window)."""
    try:
        return str(sensor.hud_text(sensor.reading))
    except Exception:
        return repr(sensor.reading)[:60]


class Hud(QLabel):
    """The driven robot's time, speed and sensor readings over the 3-D view's top left corner."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setFont(QFont("Monospace", 9))
        self.setStyleSheet("background: rgba(20, 24, 30, 170); color: #f0f0f0; padding: 6px; border-radius: 4px;")
        self.move(8, 8)

    def show_robot(self, simulation: Simulation) -> None:
        run = simulation.driven_robot
        lines = [f"t = {simulation.world.time:8.2f} s   speed {np.linalg.norm(run.state.linear_velocity):5.2f} m/s"]
        if len(simulation.robots) > 1:
            lines.insert(0, f"robot {run.name} ({run.index + 1} of {len(simulation.robots)})")
        for sensor in run.sensors.sensors:
            lines.append(f"{sensor.name:<12} {hud_text(sensor)}")
        self.setText("\n".join(lines))
        self.adjustSize()


class PlotsPanel(QWidget):
    """The Plots dock's widget: a list of every robot's plotted fields (as the log names them) to tick, and
    their history over simulated time. The list is the legend: a plotted field's row shows its curve's
    colour, so nothing covers the curves; it grows with the dock, up to the height of all its rows."""

    def __init__(self, simulation: Simulation) -> None:
        super().__init__()
        self.simulation = simulation
        layout = QVBoxLayout(self)
        self.fields_list = QListWidget()
        self.fields_list.setMinimumHeight(48)
        self.items: dict[str, QListWidgetItem] = {}
        """Each field's row in the list, by its log name."""
        for run in simulation.robots:
            for sensor in run.sensors.sensors:
                plotted = sensor.log_fields if sensor.PLOTTED is None else sensor.PLOTTED
                for field in plotted:
                    item = QListWidgetItem(f"{run.prefix}{sensor.name}.{field}")  # as the log names it
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    item.setCheckState(Qt.CheckState.Unchecked)
                    self.fields_list.addItem(item)
                    self.items[item.text()] = item
        for name in ("accel.x", "accel.z", "gyro.z"):
            match = self.fields_list.findItems(name, Qt.MatchFlag.MatchExactly)
            if match:
                match[0].setCheckState(Qt.CheckState.Checked)
        if not any(self.fields_list.item(i).checkState() == Qt.CheckState.Checked
                   for i in range(self.fields_list.count())) and self.fields_list.count():
            self.fields_list.item(0).setCheckState(Qt.CheckState.Checked)
        rows = max(1, self.fields_list.count())
        frame = 2 * self.fields_list.frameWidth()
        self.fields_list.setMaximumHeight(rows * max(self.fields_list.sizeHintForRow(0), 1) + frame + 2)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setMinimumSize(220, 120)
        self.plot.setLabel("bottom", "simulated time", units="s")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.curves: dict[str, pg.PlotDataItem] = {}
        self._slots: dict[str, int] = {}
        """Each plotted field's colour slot (plot_colour)."""
        self.history: dict[str, deque] = {}
        """Each log column's values, one per control tick (NaN where it had none)."""
        self.history_t: deque[float] = deque(maxlen=HISTORY)
        """Simulated time of each control tick in the history, s."""
        layout.addWidget(QLabel("Plot these fields (each in the colour of its row):"))
        layout.addWidget(self.fields_list, 1)
        layout.addWidget(self.plot, 1)
        checked = [self.fields_list.item(i) for i in range(self.fields_list.count())
                   if self.fields_list.item(i).checkState() == Qt.CheckState.Checked]
        if checked:  # the rows plotted first are in view, with their colours
            QTimer.singleShot(0, self.fields_list, lambda: self.fields_list.scrollToItem(
                checked[0], QListWidget.ScrollHint.PositionAtTop))

    @property
    def has_fields(self) -> bool:
        """Whether the run's sensors have any field to plot (the window collapses an empty Plots dock)."""
        return self.fields_list.count() > 0

    def record(self) -> None:
        """Every sensor column's latest value, as the CSV log writes it, at this control tick."""
        self.history_t.append(self.simulation.world.time)
        for run in self.simulation.robots:
            sensors = run.sensors
            for column, cell in zip(sensors.log_columns(), sensors.log_values(), strict=True):
                self.history.setdefault(run.prefix + column, deque(maxlen=HISTORY)).append(
                    float(cell) if cell else np.nan)
        # Keep every column's history aligned with the time axis.
        for values in self.history.values():
            while len(values) < len(self.history_t):
                values.appendleft(np.nan)

    def refresh(self) -> None:
        """Draw the ticked fields' history (a field ticked off is taken off the plot)."""
        chosen = [self.fields_list.item(i).text() for i in range(self.fields_list.count())
                  if self.fields_list.item(i).checkState() == Qt.CheckState.Checked]
        for name in list(self.curves):
            if name not in chosen:
                self.plot.removeItem(self.curves.pop(name))
                del self._slots[name]
                self.items[name].setIcon(QIcon())
        t = np.fromiter(self.history_t, float)
        for name in chosen:
            values = np.fromiter(self.history.get(name, ()), float)
            if name not in self.curves:
                # The lowest colour slot no field on show uses: a field ticked later never takes the
                # colour of one already shown.
                used = set(self._slots.values())
                slot = self._slots[name] = next(i for i in range(len(used) + 1) if i not in used)
                self.curves[name] = self.plot.plot(pen=pg.mkPen(plot_colour(slot), width=1.5), name=name)
                swatch = QPixmap(12, 12)
                swatch.fill(plot_colour(slot))
                self.items[name].setIcon(QIcon(swatch))
            if len(values) == len(t):
                self.curves[name].setData(t, values, connect="finite")


def collapse_empty_plots(plots_dock: QDockWidget, plots: PlotsPanel) -> bool:
    """Hide the Plots dock when the run has no field to plot (it would stay large and empty), leaving the
    right-hand column to the sensor and Grids docks. True when it was hidden: the window shows it again
    before it saves its layout, so the next run with fields to plot finds it as the user left it."""
    if plots.has_fields:
        return False
    plots_dock.hide()
    return True


def give_pictures_room(window: QMainWindow, picture: QDockWidget) -> None:
    """Share the right-hand column between the Plots dock and `picture` (a sensor's or the Grids dock,
    below it): PLOTS_SHARE of the height to the plots, the rest to the picture, which needs it (an
    occupancy grid, a depth image, a scan kept square). Nothing to share when the Plots dock is hidden."""
    plots = window.findChild(QDockWidget, "Plots")
    if plots is None or plots.isHidden() or picture.isHidden():
        return
    height = max(window.height(), 200)
    window.resizeDocks([plots, picture], [round(height * PLOTS_SHARE), round(height * (1.0 - PLOTS_SHARE))],
                       Qt.Orientation.Vertical)


class ScanPanel(pg.PlotWidget):
    """A top-down plot of one sensor's readings (a scan) with its polar grid: the robot's forward axis up
    the screen, its left to the left."""

    def __init__(self, sensor: Sensor) -> None:
        super().__init__(background="w")
        self.sensor = sensor
        self.setMinimumSize(180, 150)
        self.setAspectLocked(True)
        self.showGrid(x=True, y=True, alpha=0.3)
        self.setLabel("bottom", "left ← → right", units="m")
        self.setLabel("left", "ahead", units="m")
        self._add_polar_grid()
        # Lines only: pyqtgraph's ScatterPlotItem crashes PySide6 6.12 when painted (a refcount error,
        # 'none_dealloc'), so returns are drawn as short crosses and the robot as an outline.
        self.returns = self.plot(pen=pg.mkPen(200, 40, 40, width=2), connect="pairs")
        self.beams: pg.PlotDataItem | None = None
        """A sparse scan's spokes (refresh), made when first drawn."""
        self.plot([-0.15, 0.0, 0.15, -0.15], [-0.1, 0.25, -0.1, -0.1], pen=pg.mkPen(30, 30, 30, width=2))

    def _add_polar_grid(self) -> None:
        """Range rings (metres) and the edges of the scanned sector, so the scan view reads as a polar plot
        whose extent stays put while the returns come and go."""
        extent = self.sensor.plot_extent()
        assert extent is not None
        reach, edges, behind = extent
        ring_step = next((step for step in (0.5, 1, 2, 5, 10, 20, 50, 100) if reach / step <= 5), 200.0)
        theta = np.linspace(0.0, 2.0 * math.pi, 181)
        pen = pg.mkPen(150, 150, 170, width=1, style=Qt.PenStyle.DashLine)
        radius = ring_step
        while radius <= reach + 1e-9:
            self.plot(radius * np.cos(theta), radius * np.sin(theta), pen=pen)
            label = pg.TextItem(f"{radius:g} m", color=(110, 110, 130), anchor=(0, 1))
            label.setPos(radius * math.cos(math.radians(60)), radius * math.sin(math.radians(60)))
            self.addItem(label)
            radius += ring_step
        if edges is not None:
            for a in edges:  # the sector's edges, in the view's right/ahead axes
                self.plot([0.0, -reach * math.sin(a)], [0.0, reach * math.cos(a)], pen=pg.mkPen(120, 160, 120, width=1))
        self.setRange(xRange=(-reach, reach), yRange=(-reach if behind else -0.1 * reach, reach), padding=0.02)
        self.disableAutoRange()

    def refresh(self) -> None:
        """The sensor's latest returns; a sparse scan (a ring of at most SPARSE_BEAMS returns) also as a
        range map, a line from the sensor to each return, so each beam reads as a spoke of the polar map."""
        points = self.sensor.plot_points(self.sensor.reading)
        if points is None:
            return
        self.returns.setData(*cross_marks(points[:, 0], points[:, 1], 0.04))
        if self.beams is None:
            if len(points) > SPARSE_BEAMS:
                return
            self.beams = self.plot(pen=pg.mkPen(230, 130, 130, width=1), connect="pairs")
        spokes = np.zeros((2 * len(points) if len(points) <= SPARSE_BEAMS else 0, 2))
        spokes[1::2] = points[:len(spokes) // 2]  # each spoke from the sensor (0, 0) to its return
        self.beams.setData(spokes[:, 0], spokes[:, 1])


class ImagePanel(pg.GraphicsLayoutWidget):
    """The latest picture of one sensor whose readings are images (a depth camera)."""

    def __init__(self, sensor: Sensor) -> None:
        super().__init__()
        self.sensor = sensor
        self.setBackground("w")
        box = self.addViewBox(lockAspect=True, invertY=True, enableMouse=False)
        self.image = pg.ImageItem(axisOrder="row-major")
        box.addItem(self.image)
        self.setMinimumSize(160, 120)
        self._drawn: float | None = None

    def refresh(self) -> None:
        """The sensor's latest picture, when it took a new one."""
        if self._drawn != self.sensor.last_sample_time:
            self._drawn = self.sensor.last_sample_time
            picture = self.sensor.image(self.sensor.reading)
            if picture is not None:
                self.image.setImage(picture, levels=(0, 255))


SensorPanel = ScanPanel | ImagePanel


class SensorDock(QDockWidget):
    """The dock of one sensor name and type: it shows the driven robot's sensor of that name (a panel per
    robot, made when first shown), or that the driven robot has none."""

    def __init__(self, window: QMainWindow, sensor: Sensor, kind: type[ScanPanel] | type[ImagePanel]) -> None:
        self.name = sensor.name
        self.title = f"{sensor.TITLE or sensor.TYPE} ({sensor.name})"
        super().__init__(self.title, window)
        self.setObjectName(self.title)  # the window's saved layout knows the dock by it
        self.kind = kind
        self.sensor_type = sensor.TYPE
        self.pages = QStackedWidget()
        self.missing = QLabel()
        self.missing.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.missing.setWordWrap(True)
        self.pages.addWidget(self.missing)
        self.setWidget(self.pages)
        self.panels: dict[int, SensorPanel] = {}
        """Each robot's panel, by robot index, once that robot was shown."""
        self.panel: SensorPanel | None = None
        """The panel on show: the driven robot's sensor's (None when it has no such sensor)."""

    def show_robot(self, run: RobotRun, several: bool) -> None:
        """Show `run`'s sensor of this dock's name and type; `several`: the run has several robots, and the
        title says whose sensor it is."""
        sensor = next((s for s in run.sensors.sensors if s.name == self.name and self.sensor_type == s.TYPE), None)
        if sensor is None:
            self.panel = None
            self.missing.setText(f"{run.name} has no {self.title}.")
            self.pages.setCurrentWidget(self.missing)
            self.setWindowTitle(f"{self.title} — not on {run.name}")
            return
        panel = self.panels.get(run.index)
        if panel is None:
            panel = self.panels[run.index] = self.kind(sensor)
            self.pages.addWidget(panel)
        self.panel = panel
        self.pages.setCurrentWidget(panel)
        self.setWindowTitle(f"{self.title} — {run.name}" if several else self.title)

    def refresh(self) -> None:
        if self.panel is not None:
            self.panel.refresh()


class SensorDocks:
    """The window's sensor docks (scans, tabbed together, then images) and its Grids dock, in the right
    dock area of `window`."""

    def __init__(self, window: QMainWindow, simulation: Simulation) -> None:
        self.window = window
        self.simulation = simulation
        self.docks: list[SensorDock] = []
        """Every sensor dock: the scans' first, in the robots' sensors' order."""
        seen: set[tuple[str, str]] = set()
        for kind in (ScanPanel, ImagePanel):
            for run in simulation.robots:
                for sensor in run.sensors.sensors:
                    draws = sensor.plot_extent() is not None if kind is ScanPanel else sensor.draws_image
                    if not draws or (sensor.name, sensor.TYPE) in seen:
                        continue
                    seen.add((sensor.name, sensor.TYPE))
                    dock = SensorDock(window, sensor, kind)
                    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
                    if kind is ScanPanel and self.scan_docks:
                        window.tabifyDockWidget(self.scan_docks[0], dock)
                    self.docks.append(dock)
        if self.scan_docks:
            self.scan_docks[0].raise_()
        self.grid_tabs = GridTabs()
        self.grid_dock: QDockWidget | None = None
        """The Grids dock (sim.show_grid), made when user code first shows a grid."""
        self.drive(simulation.driven_robot)

    @property
    def scan_docks(self) -> list[SensorDock]:
        """The docks of the scans (tabbed together)."""
        return [dock for dock in self.docks if dock.kind is ScanPanel]

    def panel(self, name: str) -> SensorPanel | None:
        """The panel on show for sensor `name` (the driven robot's), None when no dock shows one."""
        return next((dock.panel for dock in self.docks if dock.name == name and dock.panel is not None), None)

    def drive(self, run: RobotRun) -> None:
        """Show `run`'s sensors (Tab chose it)."""
        several = len(self.simulation.robots) > 1
        for dock in self.docks:
            dock.show_robot(run, several)

    def refresh(self) -> None:
        """Draw the shown sensors' latest readings and the grids user code showed."""
        for dock in self.docks:
            dock.refresh()
        self._update_grids()

    def _update_grids(self) -> None:
        """The grids user code showed (sim.show_grid) in the Grids dock, tabbed with the first scan dock
        and brought to the front when it first appears, each with the robot that showed it drawn on it."""
        simulation = self.simulation
        grids = simulation.grids
        if not grids:
            return
        if self.grid_dock is None:
            self.grid_dock = dock = QDockWidget("Grids", self.window)
            dock.setObjectName("Grids")
            dock.setWidget(self.grid_tabs)
            self.window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
            if self.scan_docks:
                self.window.tabifyDockWidget(self.scan_docks[0], dock)
            else:
                QTimer.singleShot(0, lambda: give_pictures_room(self.window, dock))  # once it is laid out
            QTimer.singleShot(0, dock.raise_)  # once the new tab is laid out
        poses = {}
        for title in grids:
            # With several robots a title starts with its robot's prefix ("rover."); with one, the prefix is "".
            run = next(r for r in simulation.robots if title.startswith(r.prefix))
            state = run.state
            poses[title] = (float(state.position[0]), float(state.position[1]),
                            quaternion_to_euler(state.orientation)[2])
        self.grid_tabs.update_grids(grids, poses)
