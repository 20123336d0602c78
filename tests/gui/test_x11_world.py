"""The World tab driven with real X events (xdotool under a 1366x768 Xvfb), as a user would (issue 24): click
the World tab, place a box and a wall from the palette, place a tree, select it by clicking and delete it
with the Delete key, drag the wall to a new place with the mouse, undo (the wall goes back), redo, save with
Ctrl+S and quit with Ctrl+Q; the saved file holds the poses the window
showed, and a headless simulation of it reads the wall with a LIDAR at the distance worked out here."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sear.loading import load_project
from sear.project import Project
from sear.runtime.simulation import Simulation
from sear.sensors.config import Pose
from sear.sensors.files import save_sensors
from sear.sensors.lidar import LidarConfig
from sear.state import quaternion_to_euler
from tests import xserver
from tests.xserver import xdotool

from ..physics.helpers import rover_project

pytestmark = pytest.mark.gl

HELPER = Path(__file__).with_name("x11_world_app.py")
LIDAR_HEIGHT = 0.16
"""m: the LIDAR's mount above the body origin, straight over it (x = y = 0 in the body frame)."""
TARGET = (0.0, 3.0)
"""m east, north: where the test drags the wall's centre (a point of the editor's 0.5 m grid)."""


def _xdotool(display: str, *args: str) -> None:
    xdotool(*args, env=dict(os.environ, DISPLAY=display))


def _when(path: Path, condition, what: str, timeout: float = 90.0) -> dict:
    """The first report (tests/gui/x11_world_app.py) for which `condition(report)` holds."""
    deadline = time.monotonic() + timeout
    data = None
    while time.monotonic() < deadline:
        if path.exists():
            data = json.loads(path.read_text())
            if condition(data):
                return data
        time.sleep(0.1)
    raise AssertionError(f"{what}: not seen in {timeout} s (last report {data})")


def _centre(rect: list[int]) -> tuple[int, int]:
    x, y, w, h = rect
    return x + w // 2, y + h // 2


def _pixel(report: dict, point: tuple[float, float, float]) -> tuple[int, int]:
    """Where a world point (m) shows on the screen: the view's camera matrix, as OpenGL applies it."""
    clip = np.array(report["mvp"]) @ np.array([*point, 1.0])
    ndc = clip[:3] / clip[3]
    x, y, w, h = report["view"]
    return round(x + (ndc[0] + 1.0) / 2.0 * w), round(y + (1.0 - ndc[1]) / 2.0 * h)


def _named(report: dict, kind: str) -> dict:
    (item,) = [o for o in report["obstacles"] if o["kind"] == kind]
    return item


@pytest.mark.skipif(not shutil.which("xdotool"), reason="xdotool is not installed (make test installs it with "
                    "packaging/install-system-deps.sh)")
@pytest.mark.skipif(not xserver.available(), reason="needs Xvfb (Debian's xvfb)")
def test_place_drag_undo_save_and_simulate_the_world(tmp_path):
    project = rover_project(tmp_path / "room")
    save_sensors(tmp_path / "room" / "sensors.xml",
                 [LidarConfig(name="lidar", angle_step_deg=1.0, resolution_mm=0.0, pose=Pose(z=LIDAR_HEIGHT))])
    project.code.sensors = tmp_path / "room" / "sensors.xml"
    project.code.user_code = tmp_path / "room" / "parked.py"
    project.code.user_code.write_text("def main_loop(sim):\n    pass\n", encoding="utf-8")
    path = project.save(tmp_path / "room" / "room.prj")
    report = tmp_path / "report.json"
    with xserver.private_display("1366x768x24") as display:
        env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", XDG_CONFIG_HOME=str(tmp_path / "config"))
        process = subprocess.Popen([sys.executable, str(HELPER), str(report), str(path)], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            first = _when(report, lambda r: True, "the window")
            _xdotool(display, "windowfocus", "--sync", str(first["window_id"]))
            _xdotool(display, "mousemove", "--sync", *map(str, _centre(first["world_tab"])), "click", "1")
            opened = _when(report, lambda r: r["current_tab"], "the World tab")
            # Positive control: nothing is placed before the palette is used.
            assert opened["obstacles"] == [] and not opened["dirty"]
            _xdotool(display, "mousemove", "--sync", *map(str, _centre(opened["palette"]["box"])), "click", "1")
            _when(report, lambda r: len(r["obstacles"]) == 1, "the box")
            _xdotool(display, "mousemove", "--sync", *map(str, _centre(opened["palette"]["wall"])), "click", "1")
            placed = _when(report, lambda r: len(r["obstacles"]) == 2, "the wall")
            wall, box = _named(placed, "wall"), _named(placed, "box")
            assert placed["selected"] == ["obstacle", wall["name"]]  # the new one is selected
            assert (wall["x"], wall["y"]) != TARGET

            # A tree placed, unselected by a click on empty ground, selected by a click on its crown and
            # deleted with the Delete key.
            _xdotool(display, "mousemove", "--sync", *map(str, _centre(opened["palette"]["tree"])), "click", "1")
            treed = _when(report, lambda r: len(r["obstacles"]) == 3, "the tree")
            tree = _named(treed, "tree")
            _xdotool(display, "mousemove", "--sync", *map(str, _pixel(treed, (-3.0, -3.0, 0.0))), "click", "1")
            _when(report, lambda r: r["selected"] is None, "nothing selected")
            _xdotool(display, "mousemove", "--sync", *map(str, _pixel(treed, (tree["x"], tree["y"], 3.0))),
                     "click", "1")
            _when(report, lambda r: r["selected"] == ["obstacle", tree["name"]], "the tree selected")
            _xdotool(display, "key", "Delete")
            deleted = _when(report, lambda r: len(r["obstacles"]) == 2, "the tree deleted")
            assert [_named(deleted, "wall"), _named(deleted, "box")] == [wall, box]
            steps = deleted["undo_steps"]

            # Drag the wall by the point of the ground under its middle to the target's point.
            grab = _pixel(placed, (wall["x"], wall["y"], 0.0))
            drop = _pixel(placed, (*TARGET, 0.0))
            _xdotool(display, "mousemove", "--sync", *map(str, grab), "mousedown", "1")
            for t in np.linspace(0.1, 1.0, 10):
                _xdotool(display, "mousemove", "--sync", str(round(grab[0] + t * (drop[0] - grab[0]))),
                         str(round(grab[1] + t * (drop[1] - grab[1]))))
            _xdotool(display, "mouseup", "1")
            moved = _when(report, lambda r: r["undo_steps"] == steps + 1, "the drag's undo step")
            assert (_named(moved, "wall")["x"], _named(moved, "wall")["y"]) == pytest.approx(TARGET, abs=1e-9)
            assert _named(moved, "box") == box  # only the wall moved

            _xdotool(display, "key", "ctrl+z")
            undone = _when(report, lambda r: r["undo_steps"] == steps, "Undo")
            assert _named(undone, "wall") == wall and _named(undone, "box") == box
            _xdotool(display, "key", "ctrl+shift+z")
            redone = _when(report, lambda r: r["undo_steps"] == steps + 1, "Redo")
            assert (_named(redone, "wall")["x"], _named(redone, "wall")["y"]) == pytest.approx(TARGET, abs=1e-9)
            _xdotool(display, "key", "ctrl+s")
            saved = _when(report, lambda r: not r["dirty"], "Save")
            _xdotool(display, "key", "ctrl+q")
            assert process.wait(timeout=60) == 0
        finally:
            if process.poll() is None:
                process.kill()
            _out, err = process.communicate(timeout=30)
    assert "Traceback" not in err, err[-3000:]

    # Reopened: the file holds the poses the window showed.
    again = Project.load(path)
    assert again.world is not None
    by_name = {o.name: o for o in again.world.obstacles()}
    for shown in saved["obstacles"]:
        item = by_name[shown["name"]]
        assert (item.x, item.y, item.yaw) == (shown["x"], shown["y"], shown["yaw"])
    file_wall = by_name[wall["name"]]
    assert (file_wall.x, file_wall.y) == pytest.approx(TARGET, abs=1e-9)

    # Simulated headless: the LIDAR (beam i at -90° + i° from the robot's heading, over its origin) meets
    # the wall's south face, thickness / 2 short of its centre line, wherever the beam crosses the wall.
    simulation = Simulation(load_project(path), output=lambda text: None)
    try:
        simulation.run(1.0)
        scan = simulation.sensors.read("lidar")
        sx, sy = simulation.state.position[:2]
        _, _, heading = quaternion_to_euler(simulation.state.orientation)
        face = file_wall.y - file_wall.thickness / 2.0
        half = file_wall.length / 2.0 + file_wall.thickness / 2.0
        checked = 0
        for i, reading in enumerate(scan):
            angle = heading + math.radians(-90.0 + i)
            if math.sin(angle) < 0.5:
                continue  # beams that do not reach the wall's face within its length
            distance = (face - sy) / math.sin(angle)
            if abs(sx + distance * math.cos(angle) - file_wall.x) > half - 0.05:
                continue
            assert reading == pytest.approx(distance, abs=0.01), (i, reading, distance)
            checked += 1
        assert checked >= 15  # the beams from about 70° to 89° left of the heading
    finally:
        simulation.close()
