"""Gravity, the two values SEAR uses and why they differ.

`GRAVITY` is the simulated world's: pybullet's gravity, the weight the vehicle models and the gripper
carry, and what an accelerometer at rest reads (+9.81 m/s² up). It is the original SEAR's value (its
jMonkeyEngine world used 9.81), so logs and user code written against it read the same numbers.

`STANDARD_GRAVITY` is the unit g of datasheets (9.80665 m/s² by definition, ISO 80000-3): an
accelerometer's range and resolution given in g and mV/g are converted with it. It is a unit, not the
world's gravity.
"""

from __future__ import annotations

GRAVITY = 9.81
"""m/s²: the simulated world's gravity, along -z."""
STANDARD_GRAVITY = 9.80665
"""m/s²: one g, the datasheets' unit."""
