"""The gripper in the simulation window: G closes and opens the paddles, T and B raise and lower the lift
while held and stop it when let go, the gripper's parts are drawn where the physics has them, and the
keys' help names the keys. Robots without a gripper leave G, T and B alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from sear.gui.simkeys import HELP
from sear.gui.simwindow import SimulationWindow
from sear.project import Project
from sear.runtime.simulation import Simulation

pytestmark = pytest.mark.gl

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "stacking"
SIZE = 0.15


@pytest.fixture
def window(qtbot, tmp_path):
    folder = tmp_path / "stacking"
    shutil.copytree(EXAMPLE, folder)
    project = Project.load(folder / "stacking.prj")
    project.code.user_code = None  # driven from the keyboard here
    simulation = Simulation(project)
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    w.view.setFocus()
    w.advance(0.5)
    yield w
    w.timer.stop()
    simulation.close()


def test_g_closes_on_a_box_and_t_b_move_the_lift_while_held(window):
    w = window
    gripper = w.simulation.world.grippers[0]
    middle = gripper.part_poses()[2][0]
    w.simulation.sim.add_box(float(middle[0]), 0.0, size=SIZE, mass=0.3)
    w.advance(0.2)
    QTest.keyClick(w.view, Qt.Key.Key_G)
    w.advance(1.5)
    reading = gripper.reading()
    assert reading.holding and reading.opening == pytest.approx(SIZE, abs=2e-3)
    QTest.keyPress(w.view, Qt.Key.Key_T)
    w.advance(1.0)
    QTest.keyRelease(w.view, Qt.Key.Key_T)
    raised = gripper.height()
    assert 0.05 < raised < gripper.travel  # 0.15 m/s after a 0.5 m/s² start: ~0.13 m in 1 s
    w.advance(1.0)
    assert gripper.height() == pytest.approx(raised, abs=0.03)  # stopped soon after the key let go
    assert w.simulation.world.obstacles[0].body_id == gripper.held_body
    QTest.keyPress(w.view, Qt.Key.Key_B)
    w.advance(2.0)
    QTest.keyRelease(w.view, Qt.Key.Key_B)
    assert gripper.height() == pytest.approx(0.0, abs=2e-3)
    QTest.keyClick(w.view, Qt.Key.Key_G)
    w.advance(2.0)
    assert gripper.reading().opening == pytest.approx(w.simulation.project.body.gripper.max_opening, abs=1e-3)
    assert not gripper.reading().holding


def test_the_gripper_is_drawn_where_the_physics_has_it(window):
    w = window
    QTest.keyPress(w.view, Qt.Key.Key_T)
    w.advance(1.0)
    w.draw()
    parts = w.simulation.world.grippers[0].part_poses()
    assert len(w.scene.gripper_items[0]) == len(parts) == 4
    for item, (position, _orientation, _size) in zip(w.scene.gripper_items[0], parts, strict=True):
        drawn = np.array(item.transform().column(3).toTuple()[:3])
        assert drawn == pytest.approx(position, abs=1e-5)
    assert "<b>G</b>" in HELP and "<b>T</b> / <b>B</b>" in HELP


def test_without_a_gripper_g_t_b_do_nothing(qtbot, demo_copy):
    simulation = Simulation(Project.load(demo_copy / "demo.prj"))
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    w.view.setFocus()
    try:
        assert simulation.world.grippers == {} and w.scene.gripper_items == {}
        for key in (Qt.Key.Key_G, Qt.Key.Key_T, Qt.Key.Key_B):
            QTest.keyClick(w.view, key)
        w.advance(0.2)
        assert not w.view.held
        # Positive control: a drive key of the same window is taken.
        QTest.keyPress(w.view, Qt.Key.Key_U)
        assert Qt.Key.Key_U in w.view.held
        QTest.keyRelease(w.view, Qt.Key.Key_U)
    finally:
        w.timer.stop()
        simulation.close()
