"""The gripper's sensors: the break beam between its paddles, and where the paddles and the lift are.

Not a type of the sensors file: a robot whose body has a gripper (Robot Body Model tab) has this sensor,
named GRIPPER_SENSOR, with nothing to configure. It is read like the others (`sim.read("gripper")`, the
log's `gripper.beam`, `gripper.opening`, `gripper.height`, `gripper.holding` columns, the window's
readout); its values come from the physics (sear.physics.gripper casts the beam), handed in as a
function so this module needs no physics engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from sear.fields import param
from sear.sensors.base import RayHits, Sensor, SensorContext
from sear.sensors.config import SensorConfig
from sear.state import GripperReading, VehicleState

GRIPPER_SENSOR = "gripper"
"""The name of the gripper's sensor (a sensors file may not use it for another sensor)."""


@dataclass
class GripperSensorConfig(SensorConfig):
    """The gripper's sensors: sampled at `update_rate_hz` (the simulation's control rate)."""

    TYPE: ClassVar[str] = "gripper"

    update_rate_hz: float = param(60.0, kind="positive")


class GripperSensor(Sensor):
    """Break beam, opening, lift height and grasp of the robot's gripper, from `source` (the physics)."""

    TYPE = "gripper"
    TITLE = "Gripper"
    DEFINITION = GripperSensorConfig
    FIELDS = ("beam", "opening", "height", "holding")
    PLOTTED = ("opening", "height")

    def __init__(self, config: GripperSensorConfig, rng: np.random.Generator, context: SensorContext, *,
                 source: Callable[[], GripperReading]) -> None:
        super().__init__(config, rng, context)
        self.source = source

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        self.reading = self.source()

    def hud_text(self, reading: Any) -> str:
        if not isinstance(reading, GripperReading):
            return super().hud_text(reading)
        beam = "beam BROKEN" if reading.beam else "beam clear"
        held = ", holding" if reading.holding else ""
        return f"{beam}, open {reading.opening * 100:.1f} cm, lift {max(reading.height, 0.0) * 100:.1f} cm{held}"
