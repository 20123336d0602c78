"""Collision filter group bits shared by the physics bodies and the sensors' rays.

A model-layer module so that sear.physics (which gives the bodies their groups) and the ray module in
sear.sensors (which leaves groups out of its rays' mask) agree on the bits without one importing the
other.
"""

from __future__ import annotations

ROBOT_COLLISION_GROUP = 0x40
"""Collision filter group bit of the robot's bodies; the sensors' rays leave it out of their mask.
Not 1 or 2: Bullet gives dynamic bodies group 1 and static ones group 2 (StaticFilter)."""
