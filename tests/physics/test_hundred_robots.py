"""A hundred robots in one world, every pair of them able to collide: no per-robot collision group bit
(sear.collision gives every robot the same group and a mask that meets it), so nothing caps the robot count
and no pair is filtered out.

Each of the 4,950 pairs is checked by contact, not by reading the filter bits back. A round-robin schedule
(the circle method) splits the pairs into 99 rounds of 50 disjoint pairs; in each round every pair stands
at a place of its own on a grid 3 m apart, its second robot 0.5 m behind its first (their 0.6 m hulls
overlap by 10 cm, worked out from sear.demo's hull length), pybullet's collision detection runs once, and
it must report contact points between the two chassis of every pair. Control: spread out on the grid 3 m
apart, no two robots touch.
"""

from __future__ import annotations

import copy
import itertools

import pybullet as p

from sear.demo import make_body
from tests.physics.helpers import rover_project

ROBOTS = 100
SPACING = 3.0
"""m between neighbouring grid points: far beyond a rover's 0.6 m x 0.5 m footprint."""
LENGTH = float(make_body().extents[0])
"""m: the rover's hull length (0.6)."""
OFFSET = LENGTH - 0.1
"""m: b's centre behind a's, so their hulls overlap by 10 cm along x."""


def test_every_pair_of_a_hundred_robots_collides(make_world, tmp_path):
    project = rover_project(tmp_path)
    project.robot_name = "r0"
    template = copy.deepcopy(project.robots[0])
    for index in range(ROBOTS):
        body = project.body if index == 0 else None
        if index:
            robot = copy.deepcopy(template)
            robot.name = f"r{index}"
            project.add_robot(robot)
            body = robot.body
        body.start_east = (index % 10) * SPACING - 13.5
        body.start_north = (index // 10) * SPACING - 13.5
    world = make_world(project)
    client = world.client
    bodies = [vehicle.body_id for vehicle in world.vehicles]
    assert len(set(bodies)) == ROBOTS
    orientation = p.getBasePositionAndOrientation(bodies[0], physicsClientId=client)[1]
    height = p.getBasePositionAndOrientation(bodies[0], physicsClientId=client)[0][2]

    def place(index: int, x: float, y: float) -> None:
        p.resetBasePositionAndOrientation(bodies[index], (x, y, height), orientation, physicsClientId=client)

    def touching(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        p.performCollisionDetection(physicsClientId=client)
        p.performCollisionDetection(physicsClientId=client)  # the second drops the pairs the moves parted
        return [(a, b) for a, b in pairs if p.getContactPoints(bodies[a], bodies[b], physicsClientId=client)]

    circle = list(range(ROBOTS))
    checked: set[tuple[int, int]] = set()
    missing = []
    for _ in range(ROBOTS - 1):
        pairs = [(circle[k], circle[ROBOTS - 1 - k]) for k in range(ROBOTS // 2)]
        for spot, (a, b) in enumerate(pairs):
            x, y = (spot % 10) * SPACING, (spot // 10) * SPACING
            place(a, x, y)
            place(b, x - OFFSET, y)
        found = touching(pairs)
        missing += [pair for pair in pairs if pair not in found]
        checked.update(tuple(sorted(pair)) for pair in pairs)
        circle = [circle[0], circle[-1], *circle[1:-1]]
    assert len(checked) == ROBOTS * (ROBOTS - 1) // 2  # every pair was put to the test
    assert missing == []
    # Control: spread out on the grid, 3 m apart, no two robots touch.
    for index in range(ROBOTS):
        place(index, (index % 10) * SPACING, (index // 10) * SPACING)
    assert touching(list(itertools.combinations(range(ROBOTS), 2))) == []
