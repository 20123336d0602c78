"""Scanning laser range finder: a planar (or multi-layer) fan of rays.

Reading i of a scan is at scan angle i·step from 0 to the spread angle (180° at 0.5° gives 360
readings: 0, 0.5 ... 179.5), measured counter-clockwise from the sensor's right, so the scan is centred
on its forward axis (the SICK LMS convention: 0° right, 90° ahead, 180° left). Each reading is the
closest hit within the maximum range in metres, or NaN where nothing is in range (a float array cannot
hold None). Several layers tilt the fan by their vertical angles; the reading is then (layers, n).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from sear.fields import param
from sear.sensors.base import MAX_RAYS_PER_SAMPLE, RayHits, Sensor
from sear.sensors.config import SensorConfig
from sear.state import VehicleState


@dataclass
class LidarConfig(SensorConfig):
    """Scanning laser range finder (e.g. SICK LMS200, Hokuyo URG-04LX).

    A planar scan from 0 to `spread_deg` in steps of `angle_step_deg` (180 at 0.5 gives 360
    readings: 0, 0.5 ... 179.5), centred on the sensor's forward axis, counter-clockwise.
    """

    TYPE: ClassVar[str] = "lidar"

    angle_step_deg: float = param(0.5, kind="positive", decimals=4)
    """Angle between readings, degrees (> 0)."""
    max_range_m: float = param(8.0, kind="positive")
    """Maximum sensing distance, metres."""
    min_range_m: float = param(0.0, kind="nonNegative")
    """Nearer hits are not reported, metres."""
    resolution_mm: float = param(10.0, kind="nonNegative")
    """Range resolution (quantisation step), mm."""
    spread_deg: float = param(180.0, kind="angle360")
    """Scan angle, degrees (0 < spread <= 360)."""
    update_rate_hz: float = param(10.0, kind="positive")
    """Scans per second."""
    layers_deg: tuple[float, ...] = param((0.0,), label="Layers (vertical angles, °)", unit="°")
    """Vertical angles of the scan layers, degrees above the sensor plane; one layer = planar."""
    sick_format: bool = param(False, label="SICK LMS2xx packing")
    """Also provide each scan packed as SICK LMS2xx 16-bit distance values."""
    noise_stddev_mm: float = param(0.0, kind="nonNegative", group="noise")
    """1-sigma Gaussian range noise when `noise` is on, mm."""
    motion_skew: bool = param(False, label="Motion skew (spinning scan)")
    """Cast each beam at its own time within the scan, from where the sensor is then (a spinning head
    sweeps the scan over one period: the last beam at the scan's time, each earlier one (spread - its
    angle)/360 of a period before); off: every beam from the pose at the scan's time."""
    max_incidence_deg: float = param(90.0, kind="incidence", label="Max incidence")
    """Returns from surfaces hit more than this from square-on are lost (too little light comes back),
    degrees; 90 = none lost."""
    dropout_pct: float = param(0.0, kind="percent", group="noise", label="Dropout at max range")
    """Chance of losing the return of a white (reflectivity 1) surface hit square-on at the maximum range
    when `noise` is on, percent; a return at range r, reflectivity rho and incidence theta is lost with
    this × (r / max range)² / (rho cos theta) (the LIDAR equation's received power, inverted), at most 100 %."""
    intensity: bool = param(False, label="Intensity channel")
    """Also report each return's intensity: the surface's reflectivity × the cosine of the incidence
    (0..1; NaN for no return), logged beside the ranges as the array `intensities`."""
    reflectivity: float = param(0.5, kind="fraction", label="Default reflectivity")
    """Diffuse reflectivity (0..1) of surfaces that do not give their own (sear.sensors.base.SensorContext)."""

    def problems(self) -> list[tuple[str, str]]:
        problems = []
        if self.min_range_m >= self.max_range_m:
            problems.append(("min_range_m", f"the minimum range ({self.min_range_m} m) must be less than "
                                            f"the maximum range ({self.max_range_m} m)."))
        if self.angle_step_deg > self.spread_deg:
            problems.append(("angle_step_deg", f"the angle between readings ({self.angle_step_deg}°) is larger "
                                               f"than the spread angle ({self.spread_deg}°)."))
        if self.spread_deg / self.angle_step_deg * len(self.layers_deg) > MAX_RAYS_PER_SAMPLE:
            problems.append(("angle_step_deg", f"the scan needs more than {MAX_RAYS_PER_SAMPLE:,} rays; use a "
                                               "larger angle between readings or fewer layers."))
        return problems

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
    TITLE = "LIDAR"
    DEFINITION = LidarConfig
    FIELDS = ("min",)
    PLOTTED = ()
    DELAYED = ("sick", "intensities")
    config: LidarConfig

    @classmethod
    def rays_per_sample(cls, config: SensorConfig) -> int:
        return len(scan_angles_deg(config)) * len(config.layers_deg)  # type: ignore[arg-type, attr-defined]

    def __init__(self, config: LidarConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        scan = self.scan_angles = np.radians(scan_angles_deg(config) - config.spread_deg / 2.0)
        """Azimuth of each reading of a layer, rad from the sensor's forward axis, counter-clockwise."""
        layers = np.radians(np.asarray(config.layers_deg, dtype=float))
        el, az = np.meshgrid(layers, scan, indexing="ij")
        self.shape = el.shape if len(layers) > 1 else (len(scan),)
        self.directions = np.column_stack([
            (np.cos(el) * np.cos(az)).ravel(), (np.cos(el) * np.sin(az)).ravel(), np.sin(el).ravel()])
        self.sick: np.ndarray | None = None
        self.intensities: np.ndarray | None = None
        """Intensity of each return of the reading (its shape; NaN for no return) when `intensity` is on."""
        self._min_fraction = config.min_range_m / config.max_range_m
        self._fan(self.directions, config.max_range_m)
        if config.motion_skew:
            angles = scan_angles_deg(config)
            per_beam = (angles[-1] - angles) / 360.0 * self.period
            self.beam_delays = np.tile(per_beam, len(layers))
        self._max_cos = math.cos(math.radians(config.max_incidence_deg))
        self._needs_incidence = config.intensity or config.max_incidence_deg < 90.0 or (
            config.noise and config.dropout_pct > 0)

    def _surface(self, hits: RayHits) -> tuple[np.ndarray, np.ndarray]:
        """Cosine of each ray's incidence on what it hit (0 for a miss) and that surface's reflectivity."""
        starts, ends = hits.starts, hits.ends
        direction = ends - starts
        direction /= np.linalg.norm(direction, axis=1)[:, None]
        cos = np.clip(-np.einsum("ij,ij->i", direction, hits.normal), 0.0, 1.0)
        table = self.context.reflectivity
        rho = np.full(len(cos), self.config.reflectivity)
        if table:
            for body in np.unique(hits.body):
                if int(body) in table:
                    rho[hits.body == body] = table[int(body)]
        return cos, rho

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        assert hits is not None
        cfg = self.config
        fraction = hits.fraction
        dist = fraction * cfg.max_range_m
        dist[(fraction >= 1.0) | (fraction < self._min_fraction)] = np.nan
        if self._needs_incidence:
            cos, rho = self._surface(hits)
            if cfg.max_incidence_deg < 90.0:
                dist[cos < self._max_cos] = np.nan
            if cfg.noise and cfg.dropout_pct > 0:
                received = rho * cos / np.maximum(dist / cfg.max_range_m, 1e-9) ** 2
                lost = self.rng.random(len(dist)) * received < cfg.dropout_pct / 100.0
                dist[lost & ~np.isnan(dist)] = np.nan
            if cfg.intensity:
                self.intensities = np.where(np.isnan(dist), np.nan, rho * cos).reshape(self.shape)
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

    # --- presentation ---------------------------------------------------------------------------------

    @staticmethod
    def _scan(reading: Any) -> np.ndarray | None:
        if reading is None:
            return None
        scan = np.asarray(reading, dtype=float)
        return scan if scan.size else None

    def log_cells(self, reading: Any) -> list[str]:
        """The nearest return of the scan, m ('' when nothing is in range)."""
        scan = self._scan(reading)
        if scan is None or np.all(np.isnan(scan)):
            return [""]
        return [format(float(np.nanmin(scan)), ".10g")]

    def hud_text(self, reading: Any) -> str:
        scan = self._scan(reading)
        if scan is None:
            return "—"
        if np.all(np.isnan(scan)):
            return "no returns"
        return f"{np.count_nonzero(~np.isnan(scan))} returns, nearest {np.nanmin(scan):.2f} m"

    def arrays(self, reading: Any) -> dict[str, np.ndarray]:
        """The scan as `ranges` (m, float32, NaN = no return), and with `intensity` on its `intensities`
        (float32, NaN = no return)."""
        out = {"ranges": np.array(reading, dtype=np.float32)}
        if self.config.intensity:
            intensities = self.intensities if self.intensities is not None else np.full(self.shape, np.nan)
            out["intensities"] = np.array(intensities, dtype=np.float32)
        return out

    @property
    def draws_cloud(self) -> bool:
        return len(self.config.layers_deg) > 1

    def cloud(self, reading: Any) -> np.ndarray | None:
        """The returns of a scan of several layers as points in the sensor frame (m): range × the beam's
        unit direction (cos el cos az, cos el sin az, sin el); None for a planar scan (its plot shows it)."""
        scan = self._scan(reading)
        if scan is None or scan.ndim != 2:
            return None
        ranges = scan.ravel()
        ok = ~np.isnan(ranges)
        return self.directions[ok] * ranges[ok, None]

    def plot_points(self, reading: Any) -> np.ndarray | None:
        """The returns of the scan's middle layer, x right and y ahead of the sensor, m."""
        scan = self._scan(reading)
        if scan is None:
            return None
        ranges = np.atleast_2d(scan)[-1 if scan.ndim == 1 else len(scan) // 2]
        angles = self.scan_angles
        ok = ~np.isnan(ranges)
        return np.column_stack([-ranges[ok] * np.sin(angles[ok]), ranges[ok] * np.cos(angles[ok])])

    def plot_extent(self) -> tuple[float, tuple[float, float] | None, bool]:
        cfg = self.config
        angles = self.scan_angles
        edges = (float(angles[0]), float(angles[-1])) if cfg.spread_deg < 360.0 else None
        return float(cfg.max_range_m), edges, cfg.spread_deg > 180
