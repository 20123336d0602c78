"""A mesh robot's wheels have bodies: they meet obstacles and other robots, not the terrain.

The demo rover (tests.physics.helpers) has a 0.6 m long, 0.4 m wide chassis and wheels of radius 0.1 m at
x = ±0.22 m, y = ±0.25 m, 0.06 m wide: the wheels stand 2 cm ahead of the chassis' nose and outside its
sides, so a thin post on a wheel's line and another rover coming head-on meet the wheels first. The
contact distances are worked out here from the wheel model's own bounds and the props' sizes.
"""

from __future__ import annotations

import copy

import numpy as np
import pybullet as p
import trimesh

from sear.demo import make_wheel
from sear.project import WHEEL_IDS

from .helpers import ROVER_WHEELS, rover_project, run, static_box

POST_RADIUS = 0.025
"""A 5 cm post, m."""
POST_HEIGHT = 0.5
"""m: taller than the rover, so a wheel's front meets it at the wheel's own height."""


def _wheel_radius() -> float:
    """The rover wheel model's radius, m, from its mesh: half its extent along x (the axle is y)."""
    wheel: trimesh.Trimesh = make_wheel()
    return float(wheel.extents[0] / 2.0)


def _post(world, x: float, y: float) -> int:
    """A fixed vertical cylinder of radius POST_RADIUS standing on the flat ground (z = 0) at (x, y)."""
    shape = p.createCollisionShape(p.GEOM_CYLINDER, radius=POST_RADIUS, height=POST_HEIGHT,
                                   physicsClientId=world.client)
    return p.createMultiBody(0, shape, basePosition=(x, y, POST_HEIGHT / 2), physicsClientId=world.client)


def _wheel_centre(vehicle, wid: str) -> np.ndarray:
    """Wheel `wid`'s centre in the world (its body-frame place in ROVER_WHEELS moved by the pose), m."""
    position, orientation = vehicle.pose()
    rotation = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
    return position + rotation @ np.asarray(ROVER_WHEELS[wid])


def test_a_post_on_a_wheels_line_stops_the_robot_at_the_wheel(tmp_path, make_world):
    """Driven (20 N) at a post 0.3 m ahead of its left front wheel's centre, it meets the post at about
    0.55 m/s and stops there, that wheel against it. (Met at 1.7 m/s the rover bounces, turns about the
    post and rests its chassis' corner on it, the wheel about 2 cm off.)"""
    world = make_world(rover_project(tmp_path))
    vehicle = world.vehicles[0]
    run(world, 0.5)
    wheel = _wheel_centre(vehicle, "left_front")
    post_xy = np.array([wheel[0] + 0.3, wheel[1]])
    post = _post(world, *post_xy)
    # A vertical post and a wheel whose axle is horizontal: the wheel's rim meets the post at the wheel
    # centre's height, when the centre is r + the post's radius from the post's axis (horizontally).
    touch = _wheel_radius() + POST_RADIUS
    vehicle.accelerate(20.0)
    gaps, first_links = [], None
    for _ in range(round(3.0 / world.dt)):
        world.step()
        gaps.append(float(np.linalg.norm(_wheel_centre(vehicle, "left_front")[:2] - post_xy)))
        links = {c[3] for c in p.getContactPoints(vehicle.body_id, post, physicsClientId=world.client)}
        if first_links is None and links:
            first_links = links
    # The wheel, not the chassis (link -1), met the post first: link 0 is left_front.
    assert first_links == {WHEEL_IDS.index("left_front")}, first_links
    # It never went through the post, and it is stopped there, touching it.
    assert min(gaps) >= touch - 0.02, (min(gaps), touch)
    assert gaps[-1] <= touch + 0.02, (gaps[-1], touch)
    speed = np.linalg.norm(p.getBaseVelocity(vehicle.body_id, physicsClientId=world.client)[0][:2])
    assert speed < 0.05, speed
    assert links == {WHEEL_IDS.index("left_front")}, links  # still the wheel, alone, against the post


def test_a_post_beside_the_wheels_lets_the_robot_pass(tmp_path, make_world):
    """The positive control: the same post 0.1 m outside the wheel's outer face is passed."""
    world = make_world(rover_project(tmp_path))
    vehicle = world.vehicles[0]
    run(world, 0.5)
    x0 = float(vehicle.pose()[0][0])
    wheel_y = ROVER_WHEELS["left_front"][1]
    outer = wheel_y + float(make_wheel().extents[1]) / 2
    _post(world, x0 + 1.0, outer + POST_RADIUS + 0.1)
    vehicle.accelerate(40.0)
    run(world, 4.0)
    assert float(vehicle.pose()[0][0]) > x0 + 2.0


def test_two_robots_head_on_meet_wheel_to_wheel(tmp_path, make_world):
    project = rover_project(tmp_path)
    project.robot_name = "west"
    project.body.start_east = -1.0
    east = copy.deepcopy(project.robots[0])
    east.name = "east"
    east.body.start_east = 1.0
    east.body.rotation = (0.0, 0.0, 1.0, 0.0)  # facing west
    project.add_robot(east)
    world = make_world(project)
    west_car, east_car = world.vehicles
    run(world, 0.5)
    west_car.accelerate(40.0)
    east_car.accelerate(40.0)
    run(world, 3.0)
    r = _wheel_radius()
    wheel_x = ROVER_WHEELS["left_front"][0]
    # Each front wheel's front-most point: its centre (wheel_x ahead of the body origin along the
    # heading) plus r along the heading.
    reach = []
    for car in (west_car, east_car):
        position, orientation = car.pose()
        heading = np.asarray(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)[:, 0]
        reach.append(float(position[0] + heading[0] * (wheel_x + r)))
    overlap = reach[0] - reach[1]
    assert overlap <= 0.01, overlap
    # They did meet (not stopped short), and wheel against wheel.
    assert overlap > -0.02, overlap
    links = {(c[3], c[4]) for c in p.getContactPoints(west_car.body_id, east_car.body_id,
                                                       physicsClientId=world.client)}
    assert any(a >= 0 and b >= 0 for a, b in links), links


def test_wheel_bodies_do_not_touch_the_terrain(tmp_path, make_world):
    """The suspension rays carry the robot: no contact between a wheel body and the ground, while the
    chassis itself, dropped onto the ground, does meet it (the positive control)."""
    world = make_world(rover_project(tmp_path))
    vehicle = world.vehicles[0]
    vehicle.accelerate(40.0)
    run(world, 1.0)
    wheel_contacts = [c for c in p.getContactPoints(vehicle.body_id, world.terrain_ids[0],
                                                    physicsClientId=world.client) if c[3] >= 0]
    assert wheel_contacts == []
    position, orientation = vehicle.pose()
    vehicle.reset((float(position[0]), float(position[1]), 0.05), tuple(orientation))
    world.step()
    world.step()
    links = {c[3] for c in p.getContactPoints(vehicle.body_id, world.terrain_ids[0], physicsClientId=world.client)}
    assert links == {-1}, links


def _drive_at_step(tmp_path, make_world, height: float) -> tuple[float, float]:
    """The rover driven (40 N) from rest at a fixed step `height` m high whose face is 1.5 m ahead of its
    origin: (its origin's x after 4 s, where its front wheels' rims touch the step's face), m."""
    world = make_world(rover_project(tmp_path))
    vehicle = world.vehicles[0]
    run(world, 0.5)
    x0 = float(vehicle.pose()[0][0])
    face = x0 + 1.5
    static_box(world, (face + 0.5, 0.0, height / 2), (0.5, 2.0, height / 2))
    vehicle.accelerate(40.0)
    run(world, 4.0)
    return float(vehicle.pose()[0][0]), face - _wheel_radius() - ROVER_WHEELS["left_front"][0]


def test_a_step_higher_than_the_wheels_radius_stops_the_wheels(tmp_path, make_world):
    """A rigid wheel cannot climb a step higher than its radius (the push it needs, W·√(h(2r−h))/(r−h),
    has no bound at h = r): the rover stops with its front wheels' rims at the step's face (the wheel's
    front-most point is at its centre's height, below the 12 cm step's top)."""
    x, touch = _drive_at_step(tmp_path, make_world, 0.12)
    # Within 5 mm: the chassis' nose, 2 cm behind the wheels' rims, would stop it about 2 cm further on.
    assert abs(x - touch) <= 0.005, (x, touch)


def test_a_step_half_the_wheels_radius_is_climbed_with_speed(tmp_path, make_world):
    """The positive control: a 5 cm step, met at speed, is climbed and left behind (the box is 1 m deep)."""
    x, touch = _drive_at_step(tmp_path, make_world, 0.05)
    assert x > touch + 1.5, (x, touch)
