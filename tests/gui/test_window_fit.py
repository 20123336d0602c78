"""Every window fits a laptop screen (issue 13 item 2): opened on a 1366×768 screen, and on 1920×1080 at
`QT_SCALE_FACTOR=1.5` (1280×720 logical pixels), each window lies inside the screen's available area, can be
made as small as 1280×720, and every button of every tab is on screen and not cut off. Splitters, docks and
window sizes are remembered (in the temporary XDG_CONFIG_HOME of the test session)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QDockWidget

from sear.gui import geometry
from sear.project import Project
from sear.runtime.simulation import Simulation
from tests import xserver

PROBE = Path(__file__).with_name("window_fit_probe.py")


def _inside(rect: list[int], width: int, height: int) -> bool:
    """Whether the rectangle [x, y, w, h] lies within a screen of width × height."""
    x, y, w, h = rect
    return min(x, y) >= 0 and x + w <= width and y + h <= height


@pytest.mark.skipif(not xserver.available(), reason="needs Xvfb (Debian's xvfb)")
@pytest.mark.parametrize(("screen", "scale", "logical"), [((1366, 768), "1", (1366, 768)),
                                                            ((1920, 1080), "1.5", (1280, 720))])
def test_every_window_and_button_fits_the_screen(demo_copy, tmp_path, screen, scale, logical):
    with xserver.private_display(f"{screen[0]}x{screen[1]}x24") as display:
        env = dict(os.environ, DISPLAY=display, QT_SCALE_FACTOR=scale, QT_QPA_PLATFORM="xcb",
                   XDG_CONFIG_HOME=str(tmp_path / "config"))
        done = subprocess.run([sys.executable, str(PROBE), str(demo_copy / "demo.prj")],
                              env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    pages = json.loads(done.stdout.strip().splitlines()[-1])
    assert {p["window"] for p in pages} == {"settings", "wizard", "help", "simulation"}
    width, height = logical
    for page in pages:
        where = f"{page['window']} {page['page']!r}"
        assert page["available"][2:] == [width, height], where  # the screen as the test set it up
        assert _inside(page["frame"], width, height), f"{where} frame {page['frame']}"
        assert page["minimum"][0] <= 1280 and page["minimum"][1] <= 720, f"{where} minimum {page['minimum']}"
        assert len(page["buttons"]) >= 2, where  # something was checked
        for button in page["buttons"]:
            assert _inside(button["global"], width, height), f"{where}: {button}"
            assert not button["clipped"], f"{where}: {button}"
    texts = {b["text"] for p in pages for b in p["buttons"]}
    assert {"Save and Close", "Simulate", "Reset Defaults"} <= texts


def _clear(key: str) -> None:
    store = geometry.settings()
    store.remove(key)
    store.sync()


def test_simulation_window_opens_with_the_view_largest_and_remembers_its_docks(qtbot, demo_copy):
    from sear.gui.simwindow import SimulationWindow

    _clear("simulation")
    simulation = Simulation(Project.load(demo_copy / "demo.prj"), seed=0, output=lambda text: None)
    try:
        window = SimulationWindow(simulation)
        qtbot.addWidget(window)
        window.show()
        qtbot.waitExposed(window)
        docks = window.findChildren(QDockWidget)
        assert len(docks) >= 3
        view_area = window.view.width() * window.view.height()
        for dock in docks:
            assert dock.width() * dock.height() < view_area, dock.windowTitle()
        assert window.console_dock.height() <= window.height() * 0.2
        assert window.plots.plot.height() >= 100
        # Make the console taller and the side docks narrower, close, open again: as left.
        window.resize(1200, 700)
        window.resizeDocks([window.console_dock], [230], Qt.Orientation.Vertical)
        window.resizeDocks([window.plots_dock], [300], Qt.Orientation.Horizontal)
        qtbot.wait(50)
        console_height, plots_width = window.console_dock.height(), window.plots_dock.width()
        assert abs(console_height - 230) <= 12 and abs(plots_width - 300) <= 12
        window.close()
        again = SimulationWindow(simulation)
        qtbot.addWidget(again)
        again.show()
        qtbot.waitExposed(again)
        assert again.size() == QSize(1200, 700)
        assert abs(again.console_dock.height() - console_height) <= 2
        assert abs(again.plots_dock.width() - plots_width) <= 2
        again.close()
    finally:
        simulation.close()


def test_wizard_remembers_its_size_and_splitter(qtbot, demo_copy):
    from sear.gui.wizard import SensorWizard

    _clear("wizard")
    project = Project.load(demo_copy / "demo.prj")
    wizard = SensorWizard(project)
    qtbot.addWidget(wizard)
    wizard.show()
    wizard.resize(1100, 640)
    wizard.splitter.setSizes([400, 600])
    qtbot.wait(50)
    sizes = wizard.splitter.sizes()
    assert sizes != [280, 1000] and abs(sizes[0] - 400) <= 10
    wizard.done(0)
    again = SensorWizard(project)
    qtbot.addWidget(again)
    again.show()
    qtbot.wait(50)
    assert again.size() == QSize(1100, 640)
    assert again.splitter.sizes() == sizes
    again.done(0)


def test_a_remembered_window_larger_than_the_screen_is_brought_inside(qtbot):
    from PySide6.QtWidgets import QMainWindow

    window = QMainWindow()
    qtbot.addWidget(window)
    area = geometry.available(window)
    window.setGeometry(area.right() - 100, area.bottom() - 50, area.width() + 400, area.height() + 300)
    geometry.keep_inside(window)
    assert window.width() <= area.width() and window.height() <= area.height()
    assert window.x() >= area.left() and window.y() >= area.top()
    assert window.x() + window.width() <= area.right() + 1
    assert window.y() + window.height() <= area.bottom() + 1


def test_settings_window_remembers_its_size_and_console_height(qtbot, demo_copy):
    from sear.gui.settings.window import SettingsWindow

    _clear("settings")
    project = Project.load(demo_copy / "demo.prj")
    window = SettingsWindow(project)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    console = window.console.parentWidget()
    assert isinstance(console, QDockWidget)
    window.resize(1150, 690)
    window.resizeDocks([console], [260], Qt.Orientation.Vertical)
    qtbot.wait(50)
    height = console.height()
    assert abs(height - 260) <= 12
    window.dirty = False
    window.close()
    again = SettingsWindow(project)
    qtbot.addWidget(again)
    again.show()
    qtbot.waitExposed(again)
    assert again.size() == QSize(1150, 690)
    assert abs(again.console.parentWidget().height() - height) <= 2
    again.dirty = False
    again.close()
