"""Scanning laser range finder: a planar (or multi-layer) fan of rays.

Reading i of a scan is at scan angle i·step from 0 to the spread angle (180° at 0.5° gives 360
readings: 0, 0.5 ... 179.5), measured counter-clockwise from the sensor's right, so the scan is centred
on its forward axis (the SICK LMS convention: 0° right, 90° ahead, 180° left). Each reading is the
closest hit within the maximum range in metres, or NaN where nothing is in range (a float array cannot
hold None). Several layers tilt the fan by their vertical angles; the reading is then (layers, n).
"""

from __future__ import annotations

import math

import numpy as np

from sear.sensors.base import RayHits, Sensor
from sear.sensors.config import LidarConfig
from sear.state import VehicleState

SICK_NO_RETURN = 0x1FFF
"""LMS2xx value for 'no reflection / out of range' (13 bits of distance all set)."""


def scan_angles_deg(config: LidarConfig) -> np.ndarray:
    """Scan angles of one layer, degrees from the sensor's right (0 .. spread)."""
    count = max(1, math.floor(config.spread_deg / config.angle_step_deg + 1e-9))
    return np.arange(count) * config.angle_step_deg


def sick_lms2xx(distances_m: np.ndarray, max_range_m: float) -> np.ndarray:
    """Pack a scan (m, NaN = no return) as LMS2xx 16-bit values: millimetre mode when the range fits
    13 bits of millimetres (8.191 m), else centimetre mode; no return is 0x1FFF (bits 13-15, the
    LMS's flags, are 0)."""
    unit = 1000.0 if max_range_m <= SICK_NO_RETURN / 1000.0 else 100.0
    values = np.where(np.isnan(distances_m), SICK_NO_RETURN,
                      np.minimum(np.round(np.nan_to_num(distances_m) * unit), SICK_NO_RETURN - 1))
    return values.astype("<u2")


class LidarSensor(Sensor):
    TYPE = "lidar"
    FIELDS = ("min",)
    config: LidarConfig

    def __init__(self, config: LidarConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        scan = np.radians(scan_angles_deg(config) - config.spread_deg / 2.0)
        layers = np.radians(np.asarray(config.layers_deg, dtype=float))
        el, az = np.meshgrid(layers, scan, indexing="ij")
        self.shape = el.shape if len(layers) > 1 else (len(scan),)
        self.directions = np.column_stack([
            (np.cos(el) * np.cos(az)).ravel(), (np.cos(el) * np.sin(az)).ravel(), np.sin(el).ravel()])
        self.sick: np.ndarray | None = None
        self._min_fraction = config.min_range_m / config.max_range_m
        self._fan(self.directions, config.max_range_m)

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        assert hits is not None
        cfg = self.config
        fraction = hits.fraction
        dist = fraction * cfg.max_range_m
        dist[(fraction >= 1.0) | (fraction < self._min_fraction)] = np.nan
        if cfg.noise and cfg.noise_stddev_mm > 0:
            dist += self.rng.normal(0.0, cfg.noise_stddev_mm / 1000.0, dist.shape)
        step = cfg.resolution_mm / 1000.0
        if step > 0:
            dist = np.round(dist / step)
            dist *= step
        np.clip(dist, cfg.min_range_m, cfg.max_range_m, out=dist)  # NaN (no return) stays NaN
        self.reading = dist.reshape(self.shape)
        if cfg.sick_format:
            self.sick = sick_lms2xx(self.reading, cfg.max_range_m)

    def log_values(self) -> list[str]:
        if self.reading is None or np.all(np.isnan(self.reading)):
            return [""]
        return [format(float(np.nanmin(self.reading)), ".10g")]
