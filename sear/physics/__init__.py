"""The pybullet world: model import, terrain, obstacles and the vehicle. All pybullet calls live here
(and in sear.sensors.raycast)."""
