"""All of a run's sensors: sampling each on its own period, one ray batch per tick, readings and log.

    suite = SensorSuite(configs, rng=rng, client=world.client, ignore_bodies=world.robot_body_ids(),
                        origin=(lat0, lon0, alt0))
    suite.update(state)        # every physics step
    suite.read("front_ir")     # latest reading (None until the first sample)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sear.errors import SearError

# Importing the modules registers their sensor classes.
from sear.sensors import compass, gps, imu, lidar, odometer, range  # noqa: F401
from sear.sensors.base import RayHits, Sensor, SensorContext
from sear.sensors.config import SensorConfig
from sear.sensors.raycast import RayCaster
from sear.state import VehicleState


class SensorSuite:
    """The sensors of a run, built from their definitions through the registry."""

    def __init__(self, configs: list[SensorConfig], *, rng: np.random.Generator, client: int,
                 ignore_bodies: list[int], origin: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        context = SensorContext(origin=origin)
        self.sensors: list[Sensor] = []
        for config in configs:
            cls = Sensor.registry.get(config.TYPE)
            if cls is None:
                raise SearError(f"no sensor model for type {config.TYPE!r}")
            self.sensors.append(cls(config, rng, context))
        self._by_name = {s.name: s for s in self.sensors}
        self.caster = RayCaster(client, ignore_bodies)
        self._last_hits: RayHits | None = None
        self._hits_by_sensor: dict[str, RayHits] = {}

    @staticmethod
    def _drawn(hits: RayHits) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return hits.starts, np.where(hits.hit[:, None], hits.position, hits.ends), hits.hit

    @property
    def last_rays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Starts, ends (at the hit, or full length) and hit flags of the rays cast on the last tick that
        cast any; world frame, metres. Worked out on request, for drawing."""
        if self._last_hits is None:
            return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, dtype=bool)
        return self._drawn(self._last_hits)

    @property
    def rays_by_sensor(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Each ray sensor's rays of its latest sample, as last_rays gives them: what the window draws,
        steady although sensors sample on different ticks."""
        return {name: self._drawn(hits) for name, hits in self._hits_by_sensor.items()}

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.sensors]

    def sensor(self, name: str) -> Sensor:
        """The sensor model called `name`; an error listing the existing names otherwise."""
        try:
            return self._by_name[name]
        except KeyError:
            known = ", ".join(repr(n) for n in self.names) or "none (the project has no sensors file)"
            raise SearError(f"there is no sensor named {name!r}; the sensors are: {known}") from None

    def read(self, name: str) -> Any:
        """Latest reading of sensor `name`, or None before its first sample / with nothing in range."""
        return self.sensor(name).reading

    def update(self, state: VehicleState) -> None:
        """Sample every sensor whose period is due at state.time; all their rays in one batch."""
        due = [s for s in self.sensors if s.due(state.time)]
        if not due:
            return
        spans, starts, ends = [], [], []
        count = 0
        for sensor in due:
            rays = sensor.rays(state)
            if rays is None:
                spans.append(None)
                continue
            s, e = rays
            spans.append(slice(count, count + len(s)))
            starts.append(s)
            ends.append(e)
            count += len(s)
        hits: RayHits | None = None
        if count:
            hits = self.caster.cast(np.concatenate(starts), np.concatenate(ends))
            self._last_hits = hits
            for sensor, span in zip(due, spans, strict=True):
                if span is not None:
                    self._hits_by_sensor[sensor.name] = hits[span]
        for sensor, span in zip(due, spans, strict=True):
            sensor.sample(state, hits[span] if span is not None and hits is not None else None)
            sensor.last_sample_time = state.time
            sensor.advance(state.time)

    def log_columns(self) -> list[str]:
        return [f"{s.name}.{field}" for s in self.sensors for field in s.FIELDS]

    def log_values(self) -> list[str]:
        cells: list[str] = []
        for s in self.sensors:
            cells.extend(s.log_values())
        return cells

    def lidar_scans(self) -> dict[str, np.ndarray]:
        """Latest scan of each LIDAR that has sampled (metres, NaN = no return)."""
        return {s.name: s.reading for s in self.sensors if s.TYPE == "lidar" and s.reading is not None}
