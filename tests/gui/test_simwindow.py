"""The simulation window, driven with real key and mouse events (pytest-qt under Xvfb)."""

from __future__ import annotations

import csv
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from lxml import etree
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from sear.gui.simwindow import SimulationWindow
from sear.project import Project
from sear.runtime.logs import load_arrays
from sear.runtime.simulation import Simulation
from sear.state import quaternion_to_euler

pytestmark = pytest.mark.gl


@pytest.fixture
def window(qtbot, demo_copy):
    simulation = Simulation(Project.load(demo_copy / "demo.prj"), seed=4)
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    w.view.setFocus()
    w.advance(2.0)  # drop and settle
    yield w
    w.timer.stop()
    simulation.close()


def _yaw(w) -> float:
    return quaternion_to_euler(w.simulation.state.orientation)[2]


def test_holding_u_drives_forward_and_h_turns_left(window):
    w = window
    start = w.simulation.state.position.copy()
    yaw0 = _yaw(w)
    QTest.keyPress(w.view, Qt.Key.Key_U)
    w.advance(1.0)
    moved = w.simulation.state.position - start
    forward = np.array([math.cos(yaw0), math.sin(yaw0)])
    assert moved[:2] @ forward > 0.5  # 40 N on 20 kg: about 1 m in the first second
    QTest.keyPress(w.view, Qt.Key.Key_H)
    w.advance(1.0)
    assert _yaw(w) - yaw0 > 0.3
    QTest.keyRelease(w.view, Qt.Key.Key_U)
    QTest.keyRelease(w.view, Qt.Key.Key_H)
    w.advance(0.1)
    assert w.simulation.world.vehicles[0].engine_force == 0.0 and w.simulation.world.vehicles[0].steering == 0.0


def test_several_keys_at_once_and_autorepeat_ignored(window):
    w = window
    QTest.keyPress(w.view, Qt.Key.Key_Up)
    QTest.keyPress(w.view, Qt.Key.Key_Right)
    # Holding a key makes the system send auto-repeated release/press pairs: the key stays held.
    repeat = QKeyEvent(QEvent.Type.KeyRelease, Qt.Key.Key_Right, Qt.KeyboardModifier.NoModifier, "", True)
    QApplication.sendEvent(w.view, repeat)
    assert Qt.Key.Key_Right in w.view.held
    w.advance(1.0)
    assert w.simulation.world.vehicles[0].engine_force > 0 and w.simulation.world.vehicles[0].steering < 0
    assert _yaw(w) < 0  # turned right (clockwise)


def test_enter_resets_and_space_starts_user_code(window):
    w = window
    QTest.keyPress(w.view, Qt.Key.Key_U)
    w.advance(1.0)
    QTest.keyRelease(w.view, Qt.Key.Key_U)
    QTest.keyClick(w.view, Qt.Key.Key_Return)
    assert np.allclose(w.simulation.state.position, w.simulation.world.start_poses[0][0])
    assert "press Space" in w.status.text()
    QTest.keyClick(w.view, Qt.Key.Key_Space)
    assert w.simulation.user_started and w.cameras.mode == "follow"
    w.advance(0.5)
    assert "user code running" in w.status.text()
    assert "demo: route of 4 corners" in w.console.toPlainText()  # printed by init() before the window


def _hud_line(w, name: str) -> str:
    """The HUD label's line for sensor `name`, as the user sees it."""
    lines = [line for line in w.hud.text().splitlines() if line.split(" ", 1)[0] == name]
    assert len(lines) == 1, w.hud.text()
    return lines[0][len(name):].strip()


def _numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"[-+]?\d+\.\d+", text)]


def test_hud_shows_readings_of_the_robot_at_rest(window):
    w = window
    w.timer.stop()
    w.advance(1.0)  # settled since the fixture's 2 s: at rest, level on flat ground, facing east
    state = w.simulation.state
    assert np.linalg.norm(state.linear_velocity) < 0.05
    x, y, z, qw = (float(c) for c in (*state.orientation[:3], state.orientation[3]))
    # The world's up axis in the body frame (third row of the body's rotation matrix), from the quaternion.
    up_in_body = np.array([2 * (x * z - qw * y), 2 * (y * z + qw * x), 1 - 2 * (x * x + y * y)])
    ax, ay, az = _numbers(_hud_line(w, "accel"))
    # At rest an accelerometer feels the ground push up: +9.81 m/s² along up (1 % scale error, noise on).
    assert np.allclose([ax, ay, az], 9.81 * up_in_body, atol=0.35), (ax, ay, az)
    assert az > 9.4 and "m/s²" in _hud_line(w, "accel")
    yaw = quaternion_to_euler(state.orientation)[2]  # counter-clockwise from east
    heading = _numbers(_hud_line(w, "compass"))[0]  # clockwise from north
    expected = (90.0 - math.degrees(yaw)) % 360.0
    assert abs((heading - expected + 180.0) % 360.0 - 180.0) < 4.0 and "°" in _hud_line(w, "compass")
    lat, lon, _alt = _numbers(_hud_line(w, "gps"))
    # Metres north/east of the terrain centre (35.3 N, 80.7 W) to degrees: 1 m of noise is ~1e-5 degrees.
    north, east = float(state.position[1]), float(state.position[0])
    assert lat == pytest.approx(35.3 + north / 110_950.0, abs=1e-4)
    assert lon == pytest.approx(-80.7 + east / (111_320.0 * math.cos(math.radians(35.3))), abs=1e-4)
    assert "returns, nearest" in _hud_line(w, "lidar") or _hud_line(w, "lidar") == "no returns"
    assert _hud_line(w, "odometer").endswith("ticks)")


def test_hud_survives_readings_of_any_shape(window):
    w = window
    w.timer.stop()
    sensor = w.simulation.sensors.sensor("gps")
    for odd in ((1.0, 2.0), "text", np.zeros(3), {"a": 1}):
        sensor.reading = odd
        w._update_hud()
        assert _hud_line(w, "gps")  # some text, no exception


def _cone_rays(beam_width: float, resolution: float) -> int:
    """Rays of a cone sensor's sample: one on the axis, and around each nested cone (outermost radius
    beam/2 at the far end, each next diameter smaller by the resolution while radius - resolution > 0)
    one ray per resolution of circumference, at least one."""
    rays, k = 1, 0
    while (radius := (beam_width - k * resolution) / 2.0) - resolution > 1e-12:
        rays += max(1, math.floor(2.0 * math.pi * radius / resolution))
        k += 1
    return rays


def _rays_defined_in(sensors_xml) -> dict[str, int]:
    """Rays per sample of each ray sensor of a sensors file, from its XML figures."""
    counts = {}
    for element in etree.parse(str(sensors_xml)).getroot():
        def number(tag: str, element=element) -> float:
            return float(element.findtext(tag))

        if element.tag in ("infrared", "ultrasonic"):
            counts[element.get("name")] = _cone_rays(number("beam_width_cm"), number("resolution_cm"))
        elif element.tag == "lidar":
            layers = len((element.findtext("layers_deg") or "0").split())
            counts[element.get("name")] = round(number("spread_deg") / number("angle_step_deg")) * layers
    return counts


def test_the_ray_count_from_the_figures_of_the_demo_sensors(demo_dir):
    # The demo's sensors: infrared 6 cm beam at 1 cm (cones of radius 3, 2.5, 2, 1.5 cm: 18 + 15 + 12 + 9
    # rays, and the axis), LIDAR 180° at 1° (0 ... 179°).
    assert _cone_rays(6.0, 1.0) == 55
    assert _rays_defined_in(demo_dir / "sensors.xml")["lidar"] == 180


def test_sensor_rays_toggle(window):
    w = window
    assert not w.scene.rays_item.visible()
    w.commands["rays"].setChecked(True)
    w.advance(0.2)
    starts, _ends, _hits = w.scene.visible_rays(w.simulation.driven_robot)
    # Every ray sensor's latest rays are drawn, whichever of them sampled on the last tick: as many as the
    # sensors file defines, counted here from its figures (SPEC §5), not from the sensor models.
    expected = _rays_defined_in(w.simulation.project.code.sensors)
    assert set(w.simulation.sensors.rays_by_sensor) == set(expected)
    assert len(starts) == sum(expected.values())
    assert w.scene.rays_item.visible() and len(w.scene.rays_item.pos) == 2 * sum(expected.values())   # a line per ray
    w.commands["rays"].setChecked(False)
    assert not w.scene.rays_item.visible()


def test_record_writes_a_log(window, tmp_path):
    w = window
    w.set_recording(True, tmp_path / "rec.csv")
    w.advance(1.0)
    w.set_recording(False)
    with open(tmp_path / "rec.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][0] == "time" and "gps.latitude" in rows[0] and len(rows) == 61
    arrays = load_arrays(tmp_path / "rec.csv")  # streamed into rec.arrays/
    assert arrays["lidar.ranges"].shape[0] == len(arrays["lidar.time"]) >= 10


def test_pause_single_step_and_cameras(window):
    w = window
    w.commands["pause"].setChecked(True)
    t = w.simulation.world.time
    w.frame()
    assert w.simulation.world.time == t
    w.single_step()
    assert w.simulation.world.time == pytest.approx(t + 1 / 240)
    for mode in ("top", "fixed", "follow", "sensor:lidar", "free"):
        w.cameras.box.setCurrentIndex(w.cameras.box.findData(mode))
        w.frame()
    QTest.keyClick(w.view, Qt.Key.Key_F1)
    assert w.help.isVisible()


def test_a_user_code_error_shows_and_the_window_keeps_running(qtbot, demo_copy):
    (demo_copy / "demo_code.py").write_text("def main_loop(sim):\n    raise ValueError('bad reading')\n")
    simulation = Simulation(Project.load(demo_copy / "demo.prj"))
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    try:
        w.start_user_code()
        w.advance(0.5)
        assert "ValueError: bad reading" in w.console.toPlainText()
        assert "stopped by an error" in w.status.text()
        QTest.keyPress(w.view, Qt.Key.Key_U)
        before = simulation.state.position.copy()
        w.advance(1.0)
        assert np.linalg.norm(simulation.state.position - before) > 0.3
    finally:
        simulation.close()


def test_the_window_stops_exactly_at_its_duration_and_records_control_ticks(qtbot, demo_copy):
    simulation = Simulation(Project.load(demo_copy / "demo.prj"))
    w = SimulationWindow(simulation, duration=0.7)
    qtbot.addWidget(w)
    w.show()
    try:
        w.commands["realtime"].setChecked(False)  # as fast as possible: up to a simulated second a frame
        assert not w.realtime
        for _ in range(200):
            if not w.isVisible():
                break
            w.frame()
        assert not w.isVisible()  # closed itself
        assert simulation.steps == 168  # 0.7 s at 240 Hz, not a tick more
        # The plots' history has a point per control tick (every 4th of them at 240/60 Hz).
        assert len(w.plots.history_t) == 168 // 4
        assert list(w.plots.history_t)[:2] == pytest.approx([4 / 240, 8 / 240])
    finally:
        w.timer.stop()
        simulation.close()


def test_closing_the_window_exits_with_status_0(demo_copy):
    env = dict(os.environ)
    log = demo_copy / "window.csv"
    result = subprocess.run([sys.executable, "-m", "sear", "run", str(demo_copy / "demo.prj"), "--duration", "1.5",
                             "--log", str(log)], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "demo: route of 4 corners" in result.stdout
    with open(log, newline="") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == 1 + 90 and float(rows[-1][0]) == pytest.approx(1.5)  # stopped exactly at --duration


def test_record_refuses_the_projects_own_files(window, demo_copy):
    w = window
    code = demo_copy / "demo_code.py"
    before = code.read_bytes()
    w.commands["record"].blockSignals(True)
    w.commands["record"].setChecked(True)  # as the button would, then the path the dialog returned
    w.commands["record"].blockSignals(False)
    w.set_recording(True, code)
    assert code.read_bytes() == before and w.simulation.log is None
    assert not w.commands["record"].isChecked()
    assert "Not recording: " in w.console.toPlainText() and "user code file" in w.console.toPlainText()


# --- the Free camera (issue 24 item 4) ---


def _eye(view) -> np.ndarray:
    """The eye of pyqtgraph's orbit camera: `distance` from the centre, `elevation` up, `azimuth` round."""
    c, o = view.opts["center"], view.opts
    e, a = math.radians(o["elevation"]), math.radians(o["azimuth"])
    return np.array([c.x(), c.y(), c.z()]) + o["distance"] * np.array(
        [math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])


def test_held_z_stops_the_free_camera_above_the_ground(window):
    w = window
    w.timer.stop()
    ground = w.simulation.world.terrain  # the demo's terrain: its highest point bounds the ground anywhere
    start = _eye(w.view)
    QTest.keyPress(w.view, Qt.Key.Key_Z)
    for _ in range(400):  # 400 frames of Z: 2 % of the distance each, far below the ground unclamped
        w.frame()
    QTest.keyRelease(w.view, Qt.Key.Key_Z)
    eye = _eye(w.view)
    assert eye[2] < start[2] - 1.0  # positive control: Z did move the camera down
    xy = eye[:2]
    near = np.linalg.norm(ground.mesh.vertices[:, :2] - xy, axis=1) < 3.0
    assert near.any()  # the eye is over the terrain
    assert eye[2] >= ground.mesh.vertices[near, 2].min() + 0.45, eye


def test_choosing_free_again_puts_the_camera_back_on_the_robot(window):
    w = window
    w.timer.stop()
    first = dict(w.view.opts)
    QTest.mousePress(w.view, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(700, 60))
    for y in range(60, 400, 20):
        QTest.mouseMove(w.view, QPoint(700 - y, y))
    QTest.mouseRelease(w.view, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(300, 400))
    assert w.view.opts["azimuth"] != pytest.approx(first["azimuth"], abs=5)  # the drag orbited
    box = w.cameras.box
    assert box.currentData() == "free"
    box.activated.emit(box.currentIndex())  # what choosing the entry in use does (Qt emits no change)
    robot = w.simulation.state.position
    centre = w.view.opts["center"]
    assert np.allclose([centre.x(), centre.y(), centre.z()], robot, atol=1e-6)
    assert (w.view.opts["distance"], w.view.opts["elevation"], w.view.opts["azimuth"]) == (8.0, 25, -135)


def test_a_saved_view_is_kept_in_the_project_and_chosen_again(window, qtbot):
    w = window
    w.timer.stop()
    w.view.setCameraPosition(distance=12.0, elevation=40.0, azimuth=30.0)
    w.save_view("gate")
    saved = Project.load(w.simulation.project.path).views
    assert [(v.name, v.distance, v.elevation, v.azimuth) for v in saved] == [("gate", 12.0, 40.0, 30.0)]
    box = w.cameras.box
    assert box.currentData() == "view:gate" and box.currentText() == "View: gate"
    w.view.orbit(90, -20)  # the user moves away
    assert w.view.opts["azimuth"] != pytest.approx(30.0)
    box.activated.emit(box.currentIndex())  # choosing it again: back to the view as saved
    assert (w.view.opts["distance"], w.view.opts["elevation"], w.view.opts["azimuth"]) == (12.0, 40.0, 30.0)
    # The next run of the project lists it.
    again = Simulation(Project.load(w.simulation.project.path), seed=4)
    try:
        later = SimulationWindow(again)
        qtbot.addWidget(later)
        assert "View: gate" in [later.cameras.box.itemText(i) for i in range(later.cameras.box.count())]
    finally:
        again.close()
