"""The simulation window's docks are sized to what they show (issue 24 item 4): a Plots dock with nothing
to plot collapses and the pictures take the column, a grid gets the larger share below the plots, the
Plots list grows with its dock, and no legend covers the curves (each plotted row shows its colour)."""

from __future__ import annotations

import textwrap

import pytest
from PySide6.QtCore import Qt

from sear.gui.geometry import settings
from sear.gui.simwindow import SimulationWindow
from sear.sensors.imu import AccelerometerConfig
from sear.sensors.lidar import LidarConfig

from .test_grid_dock import _window as grid_window

pytestmark = pytest.mark.gl

SHOW_GRID = """\
    def main_loop(sim):
        sim.show_grid([[0.0, 1.0, 0.5], [1.0, 1.0, 0.0]], x=-1.0, y=-1.0, cell=0.5, title="map")
    """


def _window(qtbot, tmp_path, sensors, code: str = SHOW_GRID) -> SimulationWindow:
    """test_grid_dock's window on a rover with `sensors`, opened as the first time (no saved layout), on a
    laptop's screen."""
    settings().remove("simulation")
    w = grid_window(qtbot, tmp_path, textwrap.dedent(code), sensors)
    w.resize(1366, 740)
    qtbot.waitExposed(w)
    return w


def _show_grid(w: SimulationWindow, qtbot) -> None:
    w.start_user_code()
    w.advance(0.2)
    w.refresh_docks()
    qtbot.waitUntil(lambda: w.sensor_docks.grid_dock is not None and w.sensor_docks.grid_dock.isVisible())
    qtbot.wait(50)  # the dock's first layout


def test_a_plots_dock_with_nothing_to_plot_collapses_and_the_grid_takes_the_column(qtbot, tmp_path):
    lidar = LidarConfig(name="scan", angle_step_deg=2.0, spread_deg=180.0, max_range_m=5.0)
    w = _window(qtbot, tmp_path, [lidar])
    try:
        assert w.plots.fields_list.count() == 0  # a scan logs arrays: nothing for the line plot
        assert w.plots_dock.isHidden()
        _show_grid(w, qtbot)
        grid = w.sensor_docks.grid_dock
        assert grid.height() > 0.8 * w.centralWidget().height()  # the right-hand column's height, all of it
        w.close()
        assert not w.plots_dock.isHidden()  # saved as shown: a later run with fields finds its plots
    finally:
        w.simulation.close()


def test_a_plots_dock_with_fields_stays_and_a_grid_below_it_gets_the_larger_share(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, [AccelerometerConfig(name="accel")])
    try:
        assert w.plots.fields_list.count() == 3 and not w.plots_dock.isHidden()  # the control of the above
        _show_grid(w, qtbot)
        grid = w.sensor_docks.grid_dock
        assert grid.height() > w.plots_dock.height()
        plot = w.sensor_docks.grid_tabs.plots["map"]
        assert plot.height() >= 250  # the grid was drawn 95 px high
    finally:
        w.simulation.close()


def test_the_plots_list_grows_with_its_dock_and_is_the_legend(qtbot, tmp_path):
    accels = [AccelerometerConfig(name=f"accel{i}") for i in range(10)]  # 30 fields
    w = _window(qtbot, tmp_path, accels, code="def main_loop(sim):\n    pass\n")
    try:
        panel = w.plots
        w.resize(1366, 520)
        qtbot.waitUntil(lambda: w.height() == 520)
        qtbot.wait(50)
        short, short_dock = panel.fields_list.height(), w.plots_dock.height()
        w.resize(1366, 960)
        qtbot.waitUntil(lambda: w.height() == 960)
        qtbot.wait(50)
        tall, tall_dock = panel.fields_list.height(), w.plots_dock.height()
        assert tall_dock > short_dock + 300
        assert tall > short + 100  # the list takes a share of the dock's growth
        rows = panel.fields_list.count()
        assert panel.plot.getPlotItem().legend is None  # nothing drawn over the curves
        panel.refresh()
        ticked = [panel.fields_list.item(i) for i in range(rows)
                  if panel.fields_list.item(i).checkState() == Qt.CheckState.Checked]
        assert len(ticked) == 1  # no accel.x: the first field
        for i in range(rows):
            item = panel.fields_list.item(i)
            icon = item.icon()
            if item in ticked:
                colour = icon.pixmap(12, 12).toImage().pixelColor(6, 6)
                assert colour == panel.curves[item.text()].opts["pen"].color()
            else:
                assert icon.isNull()
    finally:
        w.simulation.close()
