"""Robots of different kinds in one world (the merge of several robots with URDF bodies and grippers): a
mesh rover and the Clearpath Husky from pybullet_data. The rover's infrared sensor sees the Husky (which
is in a robot collision group of its own, not hidden like a robot's own parts), the two collide, and a
gripper on the second robot is that robot's (sim.gripper of the first robot says it has none)."""

from __future__ import annotations

import copy
from pathlib import Path

import pybullet as p
import pybullet_data
import pytest

from sear.errors import SearError
from sear.project import Gripper, Robot
from sear.runtime.simulation import Simulation
from tests.test_multi_robot import SENSORS

HUSKY = Path(pybullet_data.getDataPath()) / "husky" / "husky.urdf"


def _project(tmp_path: Path, with_husky: bool):
    from tests.physics.helpers import rover_project

    project = rover_project(tmp_path)
    (tmp_path / "sensors.xml").write_text(SENSORS)
    project.code.sensors = tmp_path / "sensors.xml"
    project.robot_name = "rover"
    project.body.start_east = -1.2
    if with_husky:
        husky = Robot(name="husky")
        husky.body.file = HUSKY
        husky.body.start_east = 0.2  # its base box's rear face 0.54 m behind this
        husky.dynamics.drive_type = "skid"
        husky.dynamics.engine_force = 100.0
        project.add_robot(husky)
    return project


@pytest.mark.parametrize("with_husky", [True, False])
def test_a_rover_sees_a_urdf_robot_and_runs_into_it(tmp_path: Path, with_husky: bool) -> None:
    simulation = Simulation(_project(tmp_path, with_husky))
    try:
        rover = simulation.robots[0]
        simulation.run(0.5)
        reading = rover.sim.read("front_ir")
        if not with_husky:  # the control: the same rover on open ground sees nothing ahead
            assert reading is None
            return
        husky = simulation.world.vehicles[1]
        # The Husky's surface ahead of the sensor, by one pybullet ray that only the Husky can stop (its
        # AABB would be padded by the collision margin).
        x, y, z = (float(v) for v in rover.state.position)
        nose = x + 0.30  # the sensor on the rover's nose, facing east
        hit = p.rayTest([nose, y, z + 0.02], [nose + 3.0, y, z + 0.02], physicsClientId=simulation.world.client)[0]
        assert hit[0] == husky.body_id
        assert reading is not None
        assert abs(reading - (hit[3][0] - nose)) < 0.015
        simulation.set_manual_input(1.0, 0.0, False)
        touched = False
        for _ in range(round(3.0 * simulation.physics_hz)):
            simulation.tick()
            if p.getContactPoints(rover.vehicle.body_id, husky.body_id, physicsClientId=simulation.world.client):
                touched = True
                break
        assert touched
    finally:
        simulation.close()


def test_a_gripper_belongs_to_its_own_robot(tmp_path: Path) -> None:
    from tests.physics.helpers import rover_project

    project = rover_project(tmp_path)
    project.robot_name = "plain"
    second = copy.deepcopy(project.robots[0])
    second.name = "gripping"
    second.body.start_east = 3.0
    second.body.gripper = Gripper()
    project.add_robot(second)
    simulation = Simulation(project)
    try:
        assert sorted(simulation.world.grippers) == [1]
        simulation.robots[1].sim.gripper(open=False)
        with pytest.raises(SearError, match="no gripper"):
            simulation.robots[0].sim.gripper(open=False)
        assert "gripper" in simulation.robots[1].sensors.names and "gripper" not in simulation.robots[0].sensors.names
    finally:
        simulation.close()
