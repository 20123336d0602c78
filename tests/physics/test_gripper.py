"""The gripper (sear.physics.gripper) against physics worked out here: the grasp holds a box while its
weight (and the lift's acceleration) is below the friction of two paddles, 2·μ·F (μ the paddles'
friction times the box's, F each paddle's squeeze), and a heavier one slips out; a box wider than the
opening is pushed, not lifted; the break beam sees what is between the paddles."""

from __future__ import annotations

import itertools

import numpy as np
import pybullet as p
import pytest

from sear.physics.gripper import LIFT_ACCELERATION, PADDLE_FRICTION, GripperBody
from sear.physics.world import World
from sear.project import Gripper

from .helpers import G, rover_project, run

BOX_FRICTION = 0.6
"""Friction coefficient World.add_box gives its boxes (docs/user-code.md); Bullet multiplies the two."""
SIZE = 0.15
"""m: the boxes' edge."""
LIFT = 0.2
"""m: how high the tests send the lift."""


@pytest.fixture
def gripper_world(tmp_path, make_world):
    """The demo rover with a default gripper on level ground, settled."""
    project = rover_project(tmp_path / "rover")
    project.body.gripper = Gripper()
    world = make_world(project)
    run(world, 0.5)
    return world


def _lowest(world: World, box: int) -> float:
    """Height of a box's lowest corner (m): 0 for a box on the ground, even a tilted one."""
    obstacle = world.obstacles[box]
    position, orientation = p.getBasePositionAndOrientation(obstacle.body_id, physicsClientId=world.client)
    rotation = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
    half = np.asarray(obstacle.size) / 2
    corners = np.array(list(itertools.product(*[(-h, h) for h in half])))
    return float((corners @ rotation.T + position)[:, 2].min())


def _box_x(world: World, box: int) -> float:
    return p.getBasePositionAndOrientation(world.obstacles[box].body_id, physicsClientId=world.client)[0][0]


def _paddle_mid_x(gripper: GripperBody) -> float:
    """World x of the middle of the paddles' length (the robot faces +x)."""
    return float(gripper.part_poses()[2][0][0])


def _grip_and_lift(world: World, mass: float, size: float = SIZE) -> float:
    """A box of `mass` kg set between the open paddles, gripped and lifted LIFT m; returns the height of
    its lowest corner above the ground afterwards (m)."""
    gripper = world.grippers[0]
    box = world.add_box(_paddle_mid_x(gripper), 0.0, size=size, mass=mass)
    world.vehicles[0].brake(world.project.dynamics.brake_force)
    gripper.command(open=False)
    run(world, 1.5)
    gripper.command(height=LIFT)
    run(world, 2.5)
    return _lowest(world, box)


def _capacity_kg(grip: Gripper) -> float:
    """The heaviest box a friction grasp lifts: two paddles, each pressing with the grip force, hold
    2·μ·F; the lift's acceleration adds its share to the weight."""
    mu = PADDLE_FRICTION * BOX_FRICTION
    return 2 * mu * grip.grip_force / (G + LIFT_ACCELERATION)


def test_a_light_box_rises_with_the_paddles(gripper_world):
    world = gripper_world
    bottom = _grip_and_lift(world, 0.3)
    assert world.grippers[0].reading().holding
    # The robot's front springs give a little under the load: the box's bottom ends up to 2 cm below.
    assert LIFT - 0.02 < bottom < LIFT + 0.002


def test_a_box_just_within_the_grip_is_lifted(gripper_world):
    world = gripper_world
    mass = 0.9 * _capacity_kg(world.project.body.gripper)  # 2.1 kg
    bottom = _grip_and_lift(world, mass)
    assert world.grippers[0].reading().holding
    assert bottom > LIFT - 0.05  # the soft springs sink ~3.5 cm under 2.1 kg at the robot's front


def test_a_box_too_heavy_for_the_grip_slips_and_stays_on_the_ground(gripper_world):
    world = gripper_world
    mass = 1.5 * _capacity_kg(world.project.body.gripper)  # 3.5 kg
    bottom = _grip_and_lift(world, mass)
    assert bottom == pytest.approx(0.0, abs=0.005)  # a corner at least still on the ground
    assert not world.grippers[0].reading().holding
    assert world.grippers[0].height() == pytest.approx(LIFT, abs=0.005)  # the paddles went up without it


def test_a_box_too_heavy_is_pushed_not_lifted(gripper_world):
    """Driving into a box heavier than the grip holds pushes it along the ground."""
    world = gripper_world
    gripper = world.grippers[0]
    mass = 2.0 * _capacity_kg(world.project.body.gripper)
    box = world.add_box(_paddle_mid_x(gripper) + 0.3, 0.0, size=SIZE, mass=mass)
    x0 = _box_x(world, box)
    world.vehicles[0].accelerate(20.0)
    run(world, 3.0)
    world.vehicles[0].accelerate(0.0)
    world.vehicles[0].brake(world.project.dynamics.brake_force)
    gripper.command(open=False, height=LIFT)
    run(world, 3.0)
    assert _box_x(world, box) - x0 > 0.3  # pushed ahead of the robot
    assert _lowest(world, box) == pytest.approx(0.0, abs=0.005)


def test_a_box_wider_than_the_opening_is_pushed_not_lifted(gripper_world):
    world = gripper_world
    gripper = world.grippers[0]
    size = world.project.body.gripper.max_opening + 0.05  # does not fit between the paddles
    box = world.add_box(_paddle_mid_x(gripper) + 0.4, 0.0, size=size, mass=0.3)
    x0 = _box_x(world, box)
    world.vehicles[0].accelerate(10.0)
    run(world, 3.0)
    world.vehicles[0].accelerate(0.0)
    world.vehicles[0].brake(world.project.dynamics.brake_force)
    run(world, 1.0)
    assert not gripper.beam()  # it never came between the paddles
    gripper.command(open=False, height=LIFT)
    run(world, 3.0)
    assert _box_x(world, box) - x0 > 0.2  # pushed by the paddles' tips
    assert _lowest(world, box) == pytest.approx(0.0, abs=0.005)
    assert not gripper.reading().holding
    # Positive control: a light box that fits is lifted by the same steps.
    gripper.command(open=True, height=0.0)
    run(world, 3.0)
    bottom = _grip_and_lift(world, 0.3)
    assert bottom > LIFT - 0.04


def test_the_beam_sees_a_box_between_the_paddles_and_not_the_empty_gap(gripper_world):
    world = gripper_world
    gripper = world.grippers[0]
    reading = gripper.reading()
    assert not reading.beam and not reading.holding
    assert reading.opening == pytest.approx(world.project.body.gripper.max_opening, abs=1e-3)
    world.add_box(_paddle_mid_x(gripper), 0.0, size=SIZE, mass=0.3)
    run(world, 0.1)
    assert gripper.beam()


def test_the_paddles_close_to_the_box_width_and_the_lift_reaches_its_height(gripper_world):
    world = gripper_world
    _grip_and_lift(world, 0.3)
    reading = world.grippers[0].reading()
    assert reading.opening == pytest.approx(SIZE, abs=2e-3)  # closed on the box's faces
    assert reading.height == pytest.approx(LIFT, abs=2e-3)
    world.grippers[0].command(height=1e3)  # clamped to the travel
    run(world, 3.5)
    assert world.grippers[0].height() == pytest.approx(world.project.body.gripper.lift_travel, abs=2e-3)


def test_reset_puts_the_gripper_back_open_and_down(gripper_world):
    world = gripper_world
    _grip_and_lift(world, 0.3)
    world.reset_vehicle()
    run(world, 1.0)
    reading = world.grippers[0].reading()
    assert reading.height == pytest.approx(0.0, abs=2e-3)
    assert reading.opening == pytest.approx(world.project.body.gripper.max_opening, abs=1e-3)


def test_the_gripper_hangs_on_the_robot_and_clears_the_ground(gripper_world):
    """At rest the mast sits in front of the robot's body and wheels, and the paddles' lower edges clear
    level ground (z = 0) by about the designed 2 cm."""
    world = gripper_world
    gripper = world.grippers[0]
    pos, _ = world.vehicles[0].pose()
    front = pos[0] + max(world.vehicles[0].body_mesh.bounds[1][0],
                         max(w.centre[0] + w.radius for w in world.vehicles[0].wheels.values()))
    mast_pos, _, mast_size = gripper.part_poses()[0]
    assert mast_pos[0] - mast_size[0] / 2 > front
    for paddle_pos, paddle_orn, paddle_size in gripper.part_poses()[2:]:
        rotation = np.asarray(p.getMatrixFromQuaternion(paddle_orn)).reshape(3, 3)
        corners = np.array(list(itertools.product(*[(-h, h) for h in paddle_size / 2])))
        lowest = (corners @ rotation.T + paddle_pos)[:, 2].min()
        assert lowest == pytest.approx(0.02, abs=0.005)


def test_a_robot_without_a_gripper_has_none(tmp_path, make_world):
    world = make_world(rover_project(tmp_path / "plain"))
    assert world.grippers == {}
    assert world.robot_body_ids(0) == [world.vehicles[0].body_id]
