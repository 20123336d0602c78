"""SEAR: Simulation Environment for Autonomous Robots.

A desktop robotics simulator: a project (terrain, robot body and wheels, vehicle dynamics, sensors from
datasheets, user control code) is edited in Qt windows or by hand and simulated with pybullet, in a
window or headless. World frame ENU (x east, y north, z up, metres); body frame x forward, y left, z up.
"""

__version__ = "0.1.0"


import os as _os

# One BLAS thread in every SEAR process (the simulation, the window, the controllers, which inherit it),
# unless the user set another figure: SEAR's matrices are small (a depth camera's 100,000 x 3 points times a
# 3 x 3 rotation), too small for OpenBLAS's thread pool to pay, and its threads spin-wait for work between
# calls. Measured with the D435 preset headless: 27 % of the CPU in OpenBLAS's thread server, and a 1 s run
# costing 4.1 s of CPU with the pool against 2.5 s without (bench/bench_core.py's d435 row). It has to be
# set before numpy is first imported, which `import sear` precedes on every SEAR entry point.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
