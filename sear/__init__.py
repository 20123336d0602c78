"""SEAR: Simulation Environment for Autonomous Robots.

A desktop robotics simulator: a project (terrain, robot body and wheels, vehicle dynamics, sensors from
datasheets, user control code) is edited in Qt windows or by hand and simulated with pybullet, in a
window or headless. World frame ENU (x east, y north, z up, metres); body frame x forward, y left, z up.
"""

__version__ = "0.1.0"
