"""The stacking example (examples/stacking): user code in its controller process stacks three boxes with
the gripper, and the tower stands as physics says a tower of three 15 cm boxes stands: the top box's
bottom two box heights (0.30 m) above the ground, the middle one's one box height, all three on one
vertical line. The too-heavy and too-big negative controls are tests/physics/test_gripper.py's."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from sear.project import Project
from sear.runtime.simulation import Simulation

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "stacking"
SIZE = 0.15
"""m: the example's boxes (stacking.py's SIZE), stated here independently."""
TIME_LIMIT = 60.0
"""s of simulated time the program may take (it needs about 42)."""


def _box_corners(simulation: Simulation) -> list[np.ndarray]:
    """(8, 3) world corners of every box the user code added."""
    world = simulation.world
    out = []
    for obstacle in world.obstacles:
        assert obstacle.kind == "box" and obstacle.dynamic
        position, orientation = p.getBasePositionAndOrientation(obstacle.body_id, physicsClientId=world.client)
        rotation = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
        local = np.array(list(itertools.product(*[(-h, h) for h in np.asarray(obstacle.size) / 2])))
        out.append(local @ rotation.T + np.asarray(position))
    return out


@pytest.fixture
def stacking(tmp_path):
    folder = tmp_path / "stacking"
    shutil.copytree(EXAMPLE, folder)
    output: list[str] = []
    simulation = Simulation(Project.load(folder / "stacking.prj"), output=output.append)
    yield simulation, output
    simulation.close()


def test_user_code_stacks_three_boxes_into_a_tower(stacking):
    simulation, output = stacking
    assert 0 in simulation.world.grippers
    assert "gripper" in simulation.sensors.names
    simulation.start_user_code()
    done_at: list[float] = []

    def finished(_result) -> bool:
        if not done_at and any("a tower of three" in text for text in output):
            done_at.append(simulation.world.time)
        return bool(done_at) and simulation.world.time > done_at[0] + 1.0  # let it settle a second

    simulation.run(TIME_LIMIT, after_tick=finished)
    assert simulation.user_error is None, simulation.user_error
    assert done_at, "".join(output)
    boxes = sorted(_box_corners(simulation), key=lambda c: c[:, 2].min())
    assert len(boxes) == 3
    bottoms = [float(c[:, 2].min()) for c in boxes]
    tops = [float(c[:, 2].max()) for c in boxes]
    # Acceptance: the top box rests two box heights up, within 1 cm; the middle one on the bottom one.
    assert bottoms[2] == pytest.approx(2 * SIZE, abs=0.01)
    assert bottoms[1] == pytest.approx(SIZE, abs=0.01)
    assert bottoms[0] == pytest.approx(0.0, abs=0.005)
    assert tops[2] == pytest.approx(3 * SIZE, abs=0.01)  # level, not tipped on an edge
    centres = np.array([c.mean(axis=0) for c in boxes])
    assert np.abs(centres[:, :2] - centres[0, :2]).max() < SIZE / 3  # one above the other
    assert not simulation.world.grippers[0].reading().holding  # let go of it


def test_a_sensor_named_like_the_grippers_is_a_problem_only_with_a_gripper(tmp_path):
    from sear.errors import ProjectError
    from sear.loading import load_project
    from sear.sensors.compass import CompassConfig
    from sear.sensors.files import save_sensors

    folder = tmp_path / "stacking"
    shutil.copytree(EXAMPLE, folder)
    project = Project.load(folder / "stacking.prj")
    project.code.sensors = save_sensors(folder / "sensors.xml", [CompassConfig(name="gripper")])
    problems = load_project(project).problems
    assert [p.field for p in problems] == ["code.sensors"]
    assert "'gripper', the name of the gripper's own sensor" in problems[0].message
    project.code.user_code = None  # the simulations below need no controller process
    with pytest.raises(ProjectError, match="rename that sensor"):
        Simulation(project)
    project.body.gripper = None  # positive control: without a gripper the name is free
    assert [p.field for p in load_project(project).problems] == ["code.user_code"]  # only the unset code
    simulation = Simulation(project)
    try:
        assert simulation.sensors.names == ["gripper"]
        with pytest.raises(Exception, match="this robot has no gripper"):
            simulation.sim.gripper(open=False)
    finally:
        simulation.close()
