"""All of a run's sensors: sampling each on its own period, one ray batch per tick, readings and log.

    suite = SensorSuite(configs, rng=rng, client=world.client, ignore_bodies=world.robot_body_ids(index),
                        origin=(lat0, lon0, alt0))
    suite.update(state)        # on the physics steps at or after suite.next_due (s)
    suite.read("front_ir")     # latest reading (None until the first sample)
"""

from __future__ import annotations

import hashlib
import math
from collections import deque
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


def sensor_rng(rng: np.random.Generator, name: str) -> np.random.Generator:
    """The noise stream of the sensor called `name` among those seeded by `rng`: a child of `rng`'s seed
    sequence keyed by a hash of the name (not by the sensor's place in the file), so that adding, removing
    or reordering sensors leaves every other sensor's noise as it was, and a run repeats with its seed.
    `rng` itself is never drawn from. (A generator without a seed sequence is keyed by its state.)"""
    key = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")
    seq = getattr(rng.bit_generator, "seed_seq", None)
    if isinstance(seq, np.random.SeedSequence):
        child = np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, key), pool_size=seq.pool_size)
    else:
        state = hashlib.sha256(repr(rng.bit_generator.state).encode()).digest()
        child = np.random.SeedSequence(int.from_bytes(state[:16], "little"), spawn_key=(key,))
    return np.random.Generator(type(rng.bit_generator)(child))


class PoseHistory:
    """The body's poses on the recent physics steps, for sensors whose samples span time (a spinning
    LIDAR's scan): the pose at any instant between two steps is interpolated (position linearly, rotation
    by slerp), before the first one extrapolated with that step's velocities (constant twist)."""

    def __init__(self, span: float) -> None:
        self.span = span
        """s of history kept (the longest scan plus a step)."""
        self._entries: deque[tuple[float, np.ndarray, np.ndarray, VehicleState]] = deque()

    def record(self, state: VehicleState) -> None:
        entries = self._entries
        if entries and state.time <= entries[-1][0] + 1e-12:
            entries.pop()  # the same instant again (a repeated update): keep the latest
        quat = np.asarray(state.orientation, dtype=float)
        entries.append((state.time, np.asarray(state.position, dtype=float).copy(), quat / np.linalg.norm(quat),
                        state))
        while len(entries) > 2 and entries[1][0] < state.time - self.span:
            entries.popleft()

    def poses(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions (N, 3, m) and rotation matrices (N, 3, 3; body axes as columns) at `times` (N, s)."""
        entries = self._entries
        stamps = np.array([e[0] for e in entries])
        positions = np.array([e[1] for e in entries])
        quats = np.array([e[2] for e in entries])
        times = np.asarray(times, dtype=float)
        hi = np.clip(np.searchsorted(stamps, times), 1, max(1, len(stamps) - 1))
        if len(stamps) == 1:
            pos = np.broadcast_to(positions[0], (len(times), 3)).copy()
            quat = np.broadcast_to(quats[0], (len(times), 4)).copy()
        else:
            lo = hi - 1
            frac = np.clip((times - stamps[lo]) / (stamps[hi] - stamps[lo]), 0.0, 1.0)
            pos = positions[lo] + (positions[hi] - positions[lo]) * frac[:, None]
            quat = _slerp(quats[lo], quats[hi], frac)
        before = times < stamps[0]
        if np.any(before):
            first = entries[0][3]
            dt = times[before] - stamps[0]
            pos[before] = positions[0] + np.outer(dt, np.asarray(first.linear_velocity, dtype=float))
            turn = _quat_from_rotvec(np.outer(dt, np.asarray(first.angular_velocity, dtype=float)))
            quat[before] = _quat_mul(turn, np.broadcast_to(quats[0], turn.shape))
        return pos, _quat_matrix(quat)


def _slerp(q0: np.ndarray, q1: np.ndarray, frac: np.ndarray) -> np.ndarray:
    dot = np.einsum("ij,ij->i", q0, q1)
    q1 = np.where(dot[:, None] < 0, -q1, q1)
    dot = np.abs(dot)
    angle = np.arccos(np.clip(dot, -1.0, 1.0))
    small = angle < 1e-9
    sin = np.where(small, 1.0, np.sin(angle))
    w0 = np.where(small, 1.0 - frac, np.sin((1.0 - frac) * angle) / sin)
    w1 = np.where(small, frac, np.sin(frac * angle) / sin)
    out = q0 * w0[:, None] + q1 * w1[:, None]
    return out / np.linalg.norm(out, axis=1)[:, None]


def _quat_from_rotvec(v: np.ndarray) -> np.ndarray:
    """Quaternions (x, y, z, w) of rotation vectors (N, 3), rad."""
    angle = np.linalg.norm(v, axis=1)
    scale = np.where(angle < 1e-12, 0.5, np.sin(angle / 2.0) / np.where(angle < 1e-12, 1.0, angle))
    return np.column_stack([v * scale[:, None], np.cos(angle / 2.0)])


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products a * b of quaternions (N, 4) stored x, y, z, w."""
    ax, ay, az, aw = a.T
    bx, by, bz, bw = b.T
    return np.column_stack([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (N, 3, 3) of unit quaternions (N, 4) stored x, y, z, w."""
    x, y, z, w = q.T
    return np.stack([np.column_stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)]),
                     np.column_stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)]),
                     np.column_stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)])], axis=1)


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
            self.sensors.append(cls(config, sensor_rng(rng, config.name), context))
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
        """The sensors whose readings changed (sampled, or delivered after their latency) on the last update
        that changed any."""
        self._held = [s for s in self.sensors if s.latency > 0]
        """Sensors whose readings are delivered a latency after their samples."""
        self._skewed = [s for s in self.sensors if s.ray_count and getattr(s, "beam_delays", None) is not None]
        """Sensors whose beams are cast at their own times within a sample (a spinning LIDAR's scan)."""
        self.history = PoseHistory(max((s.period for s in self._skewed), default=0.0) + 0.1)
        """The body's recent poses, recorded on every step while a sensor is in `_skewed`."""
        self._world_rays: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        """The world-frame rays of the skewed sensors of the last cast, by sensor id."""
        self.next_due = min((s.next_sample for s in self.sensors), default=math.inf)
        """Simulated time (s) of the next sample of any sensor, or delivery of a held-back reading (inf
        without sensors): the loop asks for the vehicle's state only on ticks that need it (every tick
        while a sensor's beams are cast at their own times: the poses between its samples are needed)."""

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
        """Sample every sensor whose period is due at state.time, all their rays in one batch, and deliver
        the held-back readings due; returns the sensors whose readings changed (also kept in `sampled`
        until the next update that changes any)."""
        return update_together([self], [state])[0]

    def _due(self, state: VehicleState) -> tuple[list[Sensor], list[Sensor], tuple[Any, ...] | None]:
        """The sensors due at state.time, those of them that cast rays, and their rays as a batch for
        RayCaster.cast_together (None when none casts)."""
        time = state.time + 1e-9
        due = [s for s in self.sensors if s.next_sample <= time]
        casting = [s for s in due if s.ray_count]
        if not casting:
            return due, casting, None
        skewed = [s for s in casting if s in self._skewed]
        if skewed:  # each beam from the pose at its own time: the whole batch in the world frame
            self._world_rays = {id(s): self._skewed_rays(s, state) for s in skewed}
            mixed = [self._world_rays.get(id(s)) or s.rays(state) for s in casting]
            starts = np.concatenate([w[0] for w in mixed if w is not None])
            return due, casting, (self.caster, starts, np.concatenate([w[1] for w in mixed if w is not None]), None)
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

    def _skewed_rays(self, sensor: Sensor, state: VehicleState) -> tuple[np.ndarray, np.ndarray]:
        """World-frame starts and ends of `sensor`'s rays, each from the body's pose at its own time:
        state.time minus the sensor's `beam_delays` (s), interpolated between the recorded steps."""
        delays = sensor.beam_delays
        assert delays is not None
        self.history.record(state)
        positions, rotations = self.history.poses(state.time - delays)
        starts = positions + rotations @ sensor.ray_origin
        ends = starts + np.einsum("nij,nj->ni", rotations, sensor.ray_reach)
        return starts, ends

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
                               cast.normal[lo:hi], cast.body[lo:hi], world=self._world_rays.get(id(sensor)))
                hits_of[id(sensor)] = by_name[sensor.name] = hits
                batch.append(hits)
                lo = hi
            self._last_batch = batch
        self._world_rays = {}
        cells, index = self._cells, self._index
        delivered = []
        for sensor in due:
            sensor.sample(state, hits_of.get(id(sensor)) if casting else None)
            sensor.last_sample_time = state.time
            sensor.advance(state.time)
            if sensor.sampled_at(state.time):
                cells[index[id(sensor)]] = None
                delivered.append(sensor)
        return delivered

    def _deliver(self, state: VehicleState, fresh: list[Sensor]) -> list[Sensor]:
        """After the samples of a tick (`fresh`: those delivered at once): deliver the held-back readings
        now due, record the pose for the skewed sensors, and set `next_due`; returns every sensor whose
        reading changed on this tick."""
        changed = fresh
        if self._held:
            for sensor in self._held:
                if sensor.deliver(state.time):
                    self._cells[self._index[id(sensor)]] = None
                    changed = [*changed, sensor] if sensor not in changed else changed
        if self._skewed:
            self.history.record(state)
        self.next_due = min(min(s.next_sample for s in self.sensors),
                            min((s.next_delivery for s in self._held), default=math.inf),
                            state.time if self._skewed else math.inf)
        if changed:
            self.sampled = changed
        return changed

    def log_columns(self) -> list[str]:
        """The CSV columns of the sensors: `<name>.<field>` for each sensor's log fields, then for a sensor
        with a latency `<name>.stamp`, the simulated time (s) its reading was sampled (earlier than the
        row's time by the latency and up to a sample period). Sensors without one log as they always did:
        their reading is the one sampled on the last of their sample times."""
        return [f"{s.name}.{field}" for s in self.sensors
                for field in ((*s.log_fields, "stamp") if s.latency > 0 else s.log_fields)]

    def log_values(self) -> list[str]:
        """CSV cells of every sensor's latest delivered reading; each sensor's are formatted once per reading."""
        out: list[str] = []
        cells = self._cells
        for i, sensor in enumerate(self.sensors):
            mine = cells[i]
            if mine is None:
                mine = cells[i] = sensor.log_values()
                if sensor.latency > 0:
                    stamp = sensor.reading_time
                    mine.append("" if stamp is None else format(stamp, ".10g"))
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
        fresh = suite._sample(state, due, casting, next(casts) if batch is not None else None) if due else due
        sampled.append(suite._deliver(state, fresh))
    return sampled
