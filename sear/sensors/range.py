"""Infrared and ultrasonic range sensors: a beam modelled as nested cones of rays (SPEC §5).

The outermost cone has the beam's widest radius at the maximum range; rays around each cone are spaced
by the resolution (rays per cone = circumference / resolution); each next cone's diameter is smaller by
the resolution, until the radius minus the resolution is 0 or less; one more ray runs along the axis.
All rays have the same length (the maximum range), so the inner cones reach further: a teardrop. The
reading is the closest hit over all rays; a single ray is the cheap special case (a beam no wider than
the resolution).

`cone_directions` is pure numpy, so the Sensor Wizard draws the same pattern the simulation casts.
"""

from __future__ import annotations

import math

import numpy as np

from sear.sensors.base import RayHits, Sensor
from sear.sensors.config import InfraredConfig, UltrasonicConfig
from sear.state import VehicleState, body_rotation


def cone_radii(beam_width: float, resolution: float) -> list[float]:
    """Radii of the nested cones at the far end (same unit as the arguments), outermost first."""
    radii = []
    diameter = beam_width
    while diameter / 2.0 - resolution > 0:
        radii.append(diameter / 2.0)
        diameter -= resolution
    return radii


def cone_directions(beam_width: float, max_range: float, resolution: float) -> np.ndarray:
    """Unit ray directions (N, 3) in the sensor frame (axis +x) of the nested-cone pattern.

    Units of the three lengths only need to agree (cm in the wizard, m in the simulation)."""
    dirs = [np.array([1.0, 0.0, 0.0])]
    for radius in cone_radii(beam_width, resolution):
        count = max(1, math.floor(2.0 * math.pi * radius / resolution))
        angles = np.arange(count) * (2.0 * math.pi / count)
        pts = np.column_stack([np.full(count, max_range), radius * np.cos(angles), radius * np.sin(angles)])
        dirs.extend(pts / np.linalg.norm(pts, axis=1, keepdims=True))
    return np.vstack(dirs)


def ray_count(beam_width: float, resolution: float) -> int:
    """Rays one sample of the pattern costs."""
    return 1 + sum(max(1, math.floor(2.0 * math.pi * r / resolution)) for r in cone_radii(beam_width, resolution))


class _ConeSensor(Sensor):
    """Shared by infrared and ultrasonic: cast the cone, keep the nearest acceptable hit."""

    length_m: float
    min_m: float

    def _setup(self, beam_cm: float, range_cm: float, resolution_cm: float, min_cm: float) -> None:
        self.length_m = range_cm / 100.0
        self.min_m = min_cm / 100.0
        self._min_fraction = self.min_m / self.length_m
        self.directions = cone_directions(beam_cm / 100.0, self.length_m, resolution_cm / 100.0)
        self._fan(self.directions, self.length_m)

    def _in_range(self, hits: RayHits) -> np.ndarray:
        """Which rays hit something at the minimum range or beyond."""
        fraction = hits.fraction
        return (fraction < 1.0) & (fraction >= self._min_fraction)

    def _nearest(self, hits: RayHits) -> float | None:
        nearest = float(hits.fraction.min())
        if nearest >= 1.0:
            return None  # nothing hit
        if nearest < self._min_fraction:  # something inside the minimum range: the nearest beyond it
            fractions = hits.fraction[self._in_range(hits)]
            if not fractions.size:
                return None
            nearest = float(fractions.min())
        return nearest * self.length_m


class InfraredSensor(_ConeSensor):
    TYPE = "infrared"
    FIELDS = ("distance",)
    config: InfraredConfig

    def __init__(self, config: InfraredConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        if config.output == "digital":
            self.FIELDS = ("detected",)
            self._setup(config.beam_width_cm, config.switching_distance_cm, config.resolution_cm, 0.0)
        else:
            self._setup(config.beam_width_cm, config.max_range_cm, config.resolution_cm, config.min_range_cm)

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        assert hits is not None
        nearest = self._nearest(hits)
        if self.config.output == "digital":
            self.reading = nearest is not None
            return
        if nearest is not None and self.config.noise and self.config.noise_stddev_cm > 0:
            nearest = float(min(self.length_m, max(self.min_m, nearest + self.rng.normal(
                0.0, self.config.noise_stddev_cm / 100.0))))
        self.reading = nearest


class UltrasonicSensor(_ConeSensor):
    TYPE = "ultrasonic"
    FIELDS = ("distance",)
    config: UltrasonicConfig

    def __init__(self, config: UltrasonicConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        self._setup(config.beam_width_cm, config.max_range_cm, config.resolution_cm, config.min_range_cm)
        self.max_cos = math.cos(math.radians(config.max_incidence_deg))
        self._echo_projection = (self.max_cos - 1e-12) * self.length_m

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        assert hits is not None
        # Sound hitting a surface more obliquely than the limit reflects away and never returns.
        candidates = np.flatnonzero(self._in_range(hits))
        nearest = None
        if candidates.size:
            # Normals into the body frame (n_body = R^T n) meet the rays' body-frame reach vectors (length
            # L): the echo returns when |cos(incidence)| * L reaches max_cos * L.
            normals_body = hits.normals(candidates) @ body_rotation(state)
            projection = np.einsum("ij,ij->i", normals_body, self.ray_reach[candidates])
            echoed = candidates[np.abs(projection) >= self._echo_projection]
            if echoed.size:
                nearest = float(hits.fraction[echoed].min()) * self.length_m
        if nearest is not None:
            cfg = self.config
            if cfg.noise and cfg.noise_stddev_cm > 0:
                nearest += float(self.rng.normal(0.0, cfg.noise_stddev_cm / 100.0))
            step = cfg.resolution_cm / 100.0
            if step > 0:
                nearest = round(nearest / step) * step
            nearest = min(self.length_m, max(self.min_m, nearest))
        self.reading = nearest
