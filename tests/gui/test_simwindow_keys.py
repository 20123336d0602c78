"""The simulation window's keyboard, menus, camera and panels (issue 13 items 1, 5, 7): keys drive whatever
widget has the focus, except a text field; the menu bar; the camera follows keyboard driving until the
user moves it; plot colours, a scan plot per LIDAR, a steady speed in the status bar."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from lxml import etree
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QKeySequence, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit

from sear.gui.simwindow import RateDisplay, SimulationWindow
from sear.project import Project
from sear.runtime.simulation import Simulation

pytestmark = pytest.mark.gl


def _open(qtbot, prj):
    simulation = Simulation(Project.load(prj), seed=4)
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    w.activateWindow()  # focus moves between widgets of the active window only
    qtbot.waitUntil(w.isActiveWindow, timeout=60_000)
    w.view.setFocus()
    w.advance(2.0)  # drop and settle
    return w


@pytest.fixture
def window(qtbot, demo_copy):
    w = _open(qtbot, demo_copy / "demo.prj")
    yield w
    w.timer.stop()
    w.simulation.close()


def _moved_by_u(w, target) -> float:
    """Hold U with the key events sent to `target` for a simulated second; metres driven."""
    start = w.simulation.state.position.copy()
    QTest.keyPress(target, Qt.Key.Key_U)
    w.advance(1.0)
    QTest.keyRelease(target, Qt.Key.Key_U)
    return float(np.linalg.norm(w.simulation.state.position[:2] - start[:2]))


# --- keys whatever has the focus ----------------------------------------------------------------------------

def _text_field(w) -> QLineEdit:
    """A line edit in the Plots dock (the window has none of its own yet), with the focus."""
    edit = QLineEdit()
    w.plots.fields_list.parentWidget().layout().addWidget(edit)
    edit.show()
    edit.setFocus()
    assert w.focusWidget() is edit
    return edit


def test_driving_keys_work_with_the_focus_on_any_control(window):
    w = window
    # Positive control: without the key the robot stays put.
    still = w.simulation.state.position.copy()
    w.advance(0.5)
    assert np.linalg.norm(w.simulation.state.position[:2] - still[:2]) < 0.05
    for widget in (w.cameras.box, w.plots.fields_list, w.console):
        widget.setFocus()
        assert w.focusWidget() is widget
        assert _moved_by_u(w, widget) > 0.3, widget
        assert not w.view.held  # released


def test_space_on_the_camera_box_starts_the_user_code_and_opens_no_drop_down(window):
    w = window
    w.cameras.box.setFocus()
    assert not w.simulation.user_started
    QTest.keyClick(w.cameras.box, Qt.Key.Key_Space)
    assert w.simulation.user_started
    assert not w.cameras.box.view().isVisible()
    # Enter resets the robot, with the focus on the plot list too.
    w.plots.fields_list.setFocus()
    QTest.keyPress(w.plots.fields_list, Qt.Key.Key_Up)
    w.advance(1.0)
    QTest.keyRelease(w.plots.fields_list, Qt.Key.Key_Up)
    QTest.keyClick(w.plots.fields_list, Qt.Key.Key_Return)
    assert np.allclose(w.simulation.state.position, w.simulation.world.start_poses[0][0])


def test_a_text_field_keeps_its_keys_and_esc_gives_the_focus_back_to_the_view(window):
    w = window
    edit = _text_field(w)
    QTest.keyClicks(edit, "uhjk ")
    QTest.keyClick(edit, Qt.Key.Key_Up)
    assert edit.text() == "uhjk "
    assert not w.view.held and not w.simulation.user_started
    QTest.keyClick(edit, Qt.Key.Key_Escape)
    assert w.focusWidget() is w.view
    assert _moved_by_u(w, w.view) > 0.3  # and the keys drive again


def test_keys_with_ctrl_are_left_to_the_shortcuts(window):
    w = window
    QTest.keyPress(w.view, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    QTest.keyPress(w.view, Qt.Key.Key_U, Qt.KeyboardModifier.ControlModifier)
    assert not w.view.held


def test_the_menu_bar_keeps_its_arrows(window):
    w = window
    w.menuBar().setFocus()  # as Alt does
    QTest.keyPress(w.menuBar(), Qt.Key.Key_Left)
    assert not w.view.held
    w.view.setFocus()
    QTest.keyPress(w.view, Qt.Key.Key_Left)  # positive control
    assert w.view.held == {Qt.Key.Key_Left}


def test_a_key_released_after_the_focus_moved_lets_go(window):
    w = window
    QTest.keyPress(w.view, Qt.Key.Key_U)
    assert Qt.Key.Key_U in w.view.held
    edit = _text_field(w)
    QTest.keyRelease(edit, Qt.Key.Key_U)
    assert not w.view.held


# --- menus --------------------------------------------------------------------------------------------------

def _menu_items(menu) -> list[str]:
    return [a.text() for a in menu.actions() if not a.isSeparator()]


def test_the_menu_bar_and_its_shortcuts(window):
    w = window
    menus = {a.text().replace("&", ""): a.menu() for a in w.menuBar().actions()}
    assert list(menus)[:4] == ["File", "Edit", "View", "Simulation"] and list(menus)[-1] == "Help"
    c = w.commands
    assert c["quit"].shortcut() == QKeySequence("Ctrl+Q") and c["quit"] in menus["File"].actions()
    assert c["close"].shortcut() == QKeySequence("Ctrl+W") and c["close"] in menus["File"].actions()
    assert c["help"] in menus["Help"].actions() and c["help"].shortcut() == QKeySequence("F1")
    # Help also has the user guide (at this window's page) and About, as every window (sear.gui.help).
    assert [a for a in menus["Help"].actions() if not a.isSeparator()] == [c["help"], c["user_guide"], c["about"]]
    # Keys the window handles itself are shown in the menu's shortcut column.
    assert "Start User Code\tSpace" in _menu_items(menus["Simulation"])
    assert "Reset Robot\tEnter" in _menu_items(menus["Simulation"])
    assert c["pause"].shortcut() == QKeySequence("P") and c["pause"] in menus["Simulation"].actions()
    cameras = next(a.menu() for a in menus["View"].actions() if a.menu() is not None)
    assert _menu_items(cameras) == [w.cameras.box.itemText(i) for i in range(w.cameras.box.count())]
    # Choosing a camera in the menu sets the Camera box, and the box ticks the menu.
    next(a for a in cameras.actions() if a.text() == "Top-down").trigger()
    assert w.cameras.mode == "top" and w.cameras.box.currentData() == "top"
    w.cameras.box.setCurrentIndex(w.cameras.box.findData("fixed"))
    assert [a.text() for a in cameras.actions() if a.isChecked()] == ["Fixed"]


def test_help_user_guide_opens_this_window_s_page(window, monkeypatch):
    from sear.gui import help as help_

    opened = []
    monkeypatch.setattr(help_, "show_user_guide", lambda parent, page: opened.append(page))
    window.commands["user_guide"].trigger()
    assert opened == ["simulation-window.md"]
    assert help_.docs_folder() is not None and (help_.docs_folder() / "simulation-window.md").is_file()


def test_close_window_closes_it(window):
    assert window.isVisible()
    window.commands["close"].trigger()
    assert not window.isVisible() and not window.timer.isActive()


def test_copy_sensor_readout(window):
    window.commands["copy_readout"].trigger()
    text = QApplication.clipboard().text()
    assert text.startswith("t = ") and "lidar" in text and "odometer" in text


# --- the camera follows keyboard driving ---------------------------------------------------------------------

def _centre(w) -> np.ndarray:
    c = w.view.opts["center"]
    return np.array([c.x(), c.y(), c.z()])


def _wheel(w) -> None:
    event = QWheelEvent(QPointF(200, 200), QPointF(w.view.mapToGlobal(QPoint(200, 200))), QPoint(0, 0),
                        QPoint(0, 120), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(w.view, event)


@pytest.mark.parametrize("camera", ["free", "fixed"])
def test_the_camera_follows_keyboard_driving_until_the_user_moves_it(window, camera):
    w = window
    w.cameras.box.setCurrentIndex(w.cameras.box.findData(camera))
    w.cameras.box.activated.emit(w.cameras.box.currentIndex())
    before = _centre(w)
    QTest.keyPress(w.view, Qt.Key.Key_U)
    w.advance(3.0)
    robot = w.simulation.state.position
    assert np.linalg.norm(robot[:2] - before[:2]) > 2.0  # the robot left where the camera looked
    assert np.allclose(_centre(w), robot, atol=1e-6)  # ... and the camera went with it
    _wheel(w)  # the user zooms: the camera stays where it is from now on
    held_at = _centre(w)
    w.advance(2.0)
    assert np.linalg.norm(w.simulation.state.position[:2] - held_at[:2]) > 1.0
    assert np.allclose(_centre(w), held_at)
    QTest.keyRelease(w.view, Qt.Key.Key_U)
    # Choosing the camera again (even the same) lets the next keyboard drive follow again.
    w.cameras.box.activated.emit(w.cameras.box.currentIndex())
    QTest.keyPress(w.view, Qt.Key.Key_U)
    w.advance(1.0)
    QTest.keyRelease(w.view, Qt.Key.Key_U)
    assert np.allclose(_centre(w), w.simulation.state.position, atol=1e-6)


def test_the_camera_keys_stop_the_following(window):
    w = window
    QTest.keyPress(w.view, Qt.Key.Key_U)
    w.advance(1.0)
    assert w.cameras.following
    QTest.keyPress(w.view, Qt.Key.Key_D)
    w.frame()
    QTest.keyRelease(w.view, Qt.Key.Key_D)
    assert not w.cameras.following
    held_at = _centre(w)
    w.advance(1.0)
    assert np.allclose(_centre(w), held_at)


# --- plots --------------------------------------------------------------------------------------------------

def _colours(w) -> list[str]:
    return [curve.opts["pen"].color().name() for curve in w.plots.curves.values()]


def _tick(w, name: str, on: bool) -> None:
    item = w.plots.fields_list.findItems(name, Qt.MatchFlag.MatchExactly)[0]
    item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
    w.refresh_docks()


def test_a_field_ticked_later_never_takes_the_colour_of_one_shown(window):
    w = window
    w.refresh_docks()
    names = [w.plots.fields_list.item(i).text() for i in range(w.plots.fields_list.count())]
    assert len(names) > 12  # more fields than the palette has colours
    assert sorted(w.plots.curves) == ["accel.x", "accel.z", "gyro.z"]
    _tick(w, "accel.z", False)  # a gap in the middle, then a field further down the list
    _tick(w, "odometer.distance" if "odometer.distance" in names else names[-1], True)
    colours = _colours(w)
    assert len(colours) == 3 and len(set(colours)) == 3
    for name in names:  # every field on at once
        _tick(w, name, True)
        colours = _colours(w)
        assert len(colours) == len(set(colours)), colours
    assert len(w.plots.curves) == len(names)
    for name in names[::2]:  # off and on again in another order
        _tick(w, name, False)
    for name in reversed(names[::2]):
        _tick(w, name, True)
        assert len(_colours(w)) == len(set(_colours(w)))


def test_every_lidar_gets_a_scan_plot(qtbot, demo_copy):
    sensors_file = demo_copy / "sensors.xml"
    tree = etree.parse(str(sensors_file))
    first = tree.getroot().find("lidar")
    second = copy.deepcopy(first)
    second.set("name", "rear_lidar")
    first.addnext(second)
    tree.write(str(sensors_file), xml_declaration=True, encoding="UTF-8")
    lidars = [e.get("name") for e in etree.parse(str(sensors_file)).getroot() if e.tag == "lidar"]
    assert lidars == ["lidar", "rear_lidar"]
    w = _open(qtbot, demo_copy / "demo.prj")
    try:
        assert sorted(d.name for d in w.sensor_docks.scan_docks) == sorted(lidars)
        titles = {d.windowTitle() for d in w.sensor_docks.scan_docks}
        assert titles == {f"LIDAR ({name})" for name in lidars}
        w.advance(0.5)
        w.refresh_docks()
        for name in lidars:  # both see the demo's tree ahead: returns drawn in each plot
            returns = w.sensor_docks.panel(name).returns
            assert returns.xData is not None and len(returns.xData) > 0, name
    finally:
        w.timer.stop()
        w.simulation.close()


# --- a steady status bar ------------------------------------------------------------------------------------

def _feed(display: RateDisplay, rate: float, seconds: float, rng, realtime: bool = True) -> list[str]:
    """Frames 15 to 60 ms of wall time apart, each simulating up to the clock scaled by `rate`, behind it
    by up to a frame (as the pacer does); the text after each."""
    wall = display.samples[-1][0] if display.samples else 0.0
    sim = display.samples[-1][1] if display.samples else 0.0
    texts = []
    end = wall + seconds
    while wall < end:
        step = rng.uniform(0.015, 0.06)
        wall += step
        sim += rate * step
        display.add(wall, sim - rng.uniform(0.0, 0.06))
        texts.append(display.text(realtime))
    return texts


def test_the_speed_shown_does_not_flicker():
    rng = np.random.default_rng(1)
    display = RateDisplay()
    assert set(_feed(display, 1.0, 60.0, rng)) == {"real time"}
    # Too slow for a while: a factor, steady once measured over the window.
    texts = _feed(display, 0.81, 60.0, rng)
    settled = texts[len(texts) // 10:]
    assert len(set(settled)) == 1 and settled[0].endswith("× real time"), set(settled)
    assert abs(float(settled[0].split("×")[0]) - 0.81) <= 0.03


def test_the_speed_shown_follows_real_changes():
    rng = np.random.default_rng(2)
    display = RateDisplay()
    assert _feed(display, 1.0, 5.0, rng)[-1] == "real time"
    assert _feed(display, 0.5, 5.0, rng)[-1] == "0.50× real time"
    assert _feed(display, 1.0, 5.0, rng)[-1] == "real time"
    display.clear()
    assert _feed(display, 4.0, 5.0, rng, realtime=False)[-1] == "fast: 4.0× real time"
