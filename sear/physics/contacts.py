"""What a robot touches: the bodies in contact with its chassis, for counting collisions (sear.batch).

The wheels are rays, not bodies (sear.physics.vehicle), so the chassis (and its gripper) is all of the robot
that can touch anything; the terrain it rests on through its wheels is not a collision, so its bodies are
left out.
"""

from __future__ import annotations

import pybullet as p

from sear.physics.world import World


def touching(world: World, index: int) -> frozenset[int]:
    """pybullet ids of the bodies other than the terrain in contact with robot `index`'s chassis or gripper
    now (obstacles: trees, boxes, walls; other robots)."""
    terrain = set(world.terrain_ids)
    robot = set(world.robot_body_ids(index))
    found: set[int] = set()
    for body in robot:
        for point in p.getContactPoints(bodyA=body, physicsClientId=world.client):
            other = point[2]
            if other not in terrain and other not in robot:
                found.add(other)
    return frozenset(found)
