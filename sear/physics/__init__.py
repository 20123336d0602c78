"""The pybullet world: model import, terrain, obstacles and the vehicle. All pybullet calls live here
(and in sear.sensors.raycast)."""

from sear.physics.quiet import import_pybullet_quietly

import_pybullet_quietly()  # first, before any module here imports pybullet
