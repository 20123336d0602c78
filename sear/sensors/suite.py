"""All of a run's sensors: sampling each on its own period, one ray batch per tick, readings and log.

    suite = SensorSuite(configs, rng=rng, client=world.client, ignore_bodies=world.robot_body_ids(index),
                        origin=(lat0, lon0, alt0))
    suite.update(state)        # on the physics steps at or after suite.next_due (s)
    suite.read("front_ir")     # latest reading (None until the first sample)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sear.collision import StaticWorld
from sear.errors import SearError
from sear.sensors import registry
from sear.sensors.base import RayHits, Sensor, SensorContext
from sear.sensors.config import SensorConfig
from sear.sensors.raycast import RayCaster, RayResult
from sear.state import VehicleState


class SensorSuite:
    """The sensors of a run, built from their definitions through the registry."""

    def __init__(self, configs: list[SensorConfig], *, rng: np.random.Generator, client: int,
                 ignore_bodies: list[int], origin: tuple[float, float, float] = (0.0, 0.0, 0.0),
                 body: int | None = None, body_centre: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0),
                 static_world: StaticWorld | None = None, accessories: Sequence[Sensor] = ()) -> None:
        """`body`: the pybullet body the sensors are mounted on, whose frame pybullet reports at
        `body_centre` (its centre of mass, m, in the body model frame). With it, rays are cast in the
        body's frame: fixed arrays made once, which pybullet moves with the body itself. Without it
        (sensors tested on a state alone), each sample's rays are worked out in the world frame.
        `static_world`: the world's fixed bodies as triangles (World.static_world), cast with Embree
        (sear.sensors.raycast); without it every ray is cast with pybullet. `accessories`: sensors built
        elsewhere that are not in the sensors file (the gripper's), after the configured ones.
        `ignore_bodies`: the bodies of the robot that carries these sensors, which its rays never hit (they
        hit every other robot)."""
        context = SensorContext(origin=origin)
        self.sensors: list[Sensor] = []
        for config in configs:
            cls = registry.model(config.TYPE)
            if cls is None:
                raise SearError(f"no sensor model for type {config.TYPE!r}")
            self.sensors.append(cls(config, rng, context))
        self.sensors.extend(accessories)
        self._by_name = {s.name: s for s in self.sensors}
        self._index = {id(s): i for i, s in enumerate(self.sensors)}
        self._cells: list[list[str] | None] = [None] * len(self.sensors)
        self.caster = RayCaster(client, ignore_bodies, static_world)
        for sensor in self.sensors:
            sensor.use_world(self.caster, static_world)
        self.body = body
        self._local: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        """Ray starts and ends in the body's pybullet frame, by the sensors (ids) that cast them together."""
        centre = np.asarray(body_centre, dtype=float)
        for sensor in self.sensors:
            if sensor.ray_count:
                start = sensor.ray_origin - centre
                starts = np.ascontiguousarray(np.broadcast_to(start, sensor.ray_reach.shape))
                self._local[(id(sensor),)] = (starts, np.ascontiguousarray(start + sensor.ray_reach))
        self._last_batch: list[RayHits] = []
        """Each sensor's rays of the last batch cast."""
        self._hits_by_sensor: dict[str, RayHits] = {}
        self.sampled: list[Sensor] = []
        """The sensors sampled by the last update that sampled any."""
        self.next_due = min((s.next_sample for s in self.sensors), default=math.inf)
        """Simulated time (s) of the next sample of any sensor (inf without sensors): the loop asks for
        the vehicle's state only on ticks that need it."""

    @staticmethod
    def _drawn(hits: RayHits) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return hits.starts, np.where(hits.hit[:, None], hits.position, hits.ends), hits.hit

    @property
    def last_rays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Starts, ends (at the hit, or full length) and hit flags of the rays cast on the last tick that
        cast any; world frame, metres. Worked out on request, for drawing."""
        if not self._last_batch:
            return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, dtype=bool)
        drawn = [self._drawn(hits) for hits in self._last_batch]
        return tuple(np.concatenate(parts) for parts in zip(*drawn, strict=True))  # type: ignore[return-value]

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
        sensor = self.sensor(name)
        return sensor.value(sensor.reading)

    def update(self, state: VehicleState) -> list[Sensor]:
        """Sample every sensor whose period is due at state.time, all their rays in one batch; returns the
        sensors sampled (also kept in `sampled` until the next update that samples any)."""
        return update_together([self], [state])[0]

    def _due(self, state: VehicleState) -> tuple[list[Sensor], list[Sensor], tuple[Any, ...] | None]:
        """The sensors due at state.time, those of them that cast rays, and their rays as a batch for
        RayCaster.cast_together (None when none casts)."""
        time = state.time + 1e-9
        due = [s for s in self.sensors if s.next_sample <= time]
        casting = [s for s in due if s.ray_count]
        if not casting:
            return due, casting, None
        if self.body is not None:
            key = tuple(map(id, casting))
            rays = self._local.get(key)
            if rays is None:  # sensors due together: their rays joined once, kept for the next time
                local = [self._local[(id(sensor),)] for sensor in casting]
                rays = self._local[key] = (np.concatenate([r[0] for r in local]),
                                           np.concatenate([r[1] for r in local]))
            return due, casting, (self.caster, rays[0], rays[1], self.body)
        world = [rays for rays in map(lambda s: s.rays(state), casting) if rays is not None]
        return due, casting, (self.caster, np.concatenate([w[0] for w in world]), np.concatenate([w[1] for w in world]),
                              None)

    def _sample(self, state: VehicleState, due: list[Sensor], casting: list[Sensor], cast: RayResult | None
                ) -> list[Sensor]:
        """Sample the `due` sensors, the rays of those `casting` having been cast (`cast`, in their order)."""
        hits_of: dict[int, RayHits] = {}
        if casting and cast is not None:
            by_name = self._hits_by_sensor
            batch, lo = [], 0
            for sensor in casting:
                hi = lo + sensor.ray_count
                hits = RayHits(cast.fraction[lo:hi], sensor.ray_length, sensor.ray_origin, sensor.ray_reach, state,
                               cast.normal[lo:hi], cast.body[lo:hi])
                hits_of[id(sensor)] = by_name[sensor.name] = hits
                batch.append(hits)
                lo = hi
            self._last_batch = batch
        cells, index = self._cells, self._index
        for sensor in due:
            sensor.sample(state, hits_of.get(id(sensor)) if casting else None)
            sensor.last_sample_time = state.time
            sensor.advance(state.time)
            cells[index[id(sensor)]] = None
        self.next_due = min(s.next_sample for s in self.sensors)
        self.sampled = due
        return due

    def log_columns(self) -> list[str]:
        """The CSV columns of the sensors: `<name>.<field>` for each sensor's log fields."""
        return [f"{s.name}.{field}" for s in self.sensors for field in s.log_fields]

    def log_values(self) -> list[str]:
        """CSV cells of every sensor's latest reading; each sensor's are formatted once per sample."""
        out: list[str] = []
        cells = self._cells
        for i, sensor in enumerate(self.sensors):
            mine = cells[i]
            if mine is None:
                mine = cells[i] = sensor.log_values()
            out.extend(mine)
        return out


def update_together(suites: Sequence[SensorSuite], states: Sequence[VehicleState]) -> list[list[Sensor]]:
    """`update` of each suite at its robot's state, the rays of all of them cast together
    (RayCaster.cast_together: one Embree call of the fixed world for every robot of a world); returns
    the sensors each sampled."""
    found = [suite._due(state) for suite, state in zip(suites, states, strict=True)]
    batches = [batch for _, _, batch in found if batch is not None]
    casts = iter(RayCaster.cast_together(batches) if batches else [])
    sampled: list[list[Sensor]] = []
    for suite, state, (due, casting, batch) in zip(suites, states, found, strict=True):
        sampled.append(suite._sample(state, due, casting, next(casts) if batch is not None else None)
                       if due else due)
    return sampled
