"""The simulation window's Grids dock: the grids user code shows with `sim.show_grid` (an occupancy map).

Each title gets a top-down plot in metres (x east, y north, the world frame) with the grid drawn in
place, 0 white to 1 black and NaN (unknown) a light blue-grey, and the position and heading of the robot
that showed it on it. The dock holds one such plot per title, tabbed; a plot is redrawn only when its grid
was shown again. Reading `Simulation.grids` never changes the simulation.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QTabWidget

from sear.runtime.sim import GridImage

UNKNOWN = (206, 214, 226)
"""RGB of a NaN (unknown) cell."""
ROBOT = (220, 40, 40)


def grid_rgba(values: np.ndarray) -> np.ndarray:
    """(rows, columns, 4) uint8 colours of a grid: 0 (or less) white .. 1 (or more) black, NaN UNKNOWN."""
    grey = np.clip(255.0 * (1.0 - np.nan_to_num(values, nan=0.0)), 0.0, 255.0).astype(np.uint8)
    rgba = np.empty((*values.shape, 4), dtype=np.uint8)
    rgba[..., 0] = rgba[..., 1] = rgba[..., 2] = grey
    rgba[..., 3] = 255
    unknown = np.isnan(values)
    rgba[unknown, :3] = UNKNOWN
    return rgba


class GridPlot(pg.PlotWidget):
    """One title's grid, in world metres, with the robot drawn on it."""

    def __init__(self, title: str) -> None:
        super().__init__(background="w")
        self.title = title
        self.setMinimumSize(180, 150)
        self.setAspectLocked(True)
        self.setLabel("bottom", "east", units="m")
        self.setLabel("left", "north", units="m")
        self.image = pg.ImageItem(axisOrder="row-major")
        self.addItem(self.image)
        self.robot = self.plot(pen=pg.mkPen(*ROBOT, width=2))
        self.shown: GridImage | None = None

    def show_grid(self, grid: GridImage) -> None:
        """Draw `grid` where it lies in the world (row 0 at its south edge); the view fits it when its
        extent changes."""
        rows, cols = grid.values.shape
        self.image.setImage(grid_rgba(grid.values), levels=(0, 255))
        rect = QRectF(grid.x, grid.y, cols * grid.cell, rows * grid.cell)
        self.image.setRect(rect)
        old = self.shown
        if old is None or (old.x, old.y, old.cell, old.values.shape) != (grid.x, grid.y, grid.cell, (rows, cols)):
            self.setRange(rect, padding=0.02)
        self.shown = grid

    def show_robot(self, x: float, y: float, yaw: float, size: float = 0.3) -> None:
        """The robot as an arrowhead `size` m long at (x, y) m, pointing along `yaw` rad."""
        c, s = math.cos(yaw), math.sin(yaw)
        local = np.array([[size * 0.6, 0.0], [-size * 0.4, size * 0.3], [-size * 0.4, -size * 0.3], [size * 0.6, 0.0]])
        self.robot.setData(x + local[:, 0] * c - local[:, 1] * s, y + local[:, 0] * s + local[:, 1] * c)


class GridTabs(QTabWidget):
    """The Grids dock's widget: one GridPlot per title, in the order the titles were first shown."""

    def __init__(self) -> None:
        super().__init__()
        self.plots: dict[str, GridPlot] = {}

    def update_grids(self, grids: dict[str, GridImage], robots: dict[str, tuple[float, float, float]]) -> None:
        """Draw every grid shown since the last call (new titles get a tab) and on each, its robot as
        `robots` has it by title: `(x, y, yaw)` (m, m, rad)."""
        for title, grid in grids.items():
            plot = self.plots.get(title)
            if plot is None:
                plot = self.plots[title] = GridPlot(title)
                self.addTab(plot, title)
            if plot.shown is not grid:
                plot.show_grid(grid)
            plot.show_robot(*robots[title])
