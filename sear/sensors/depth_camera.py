"""Depth camera: a pinhole image of z-depths in metres (e.g. an Intel RealSense D435's depth stream).

Pixel (row r, column c) of a width × height image looks through the centre of its pixel of a pinhole
camera whose horizontal field of view spans the width; pixels are square, so the vertical field of view
follows from the aspect ratio. The camera looks along its sensor's +x axis; row 0 is the top of the
image (sensor +z side) and column 0 its left (sensor +y side), as a picture is seen from behind the
camera. Each pixel holds the depth of the nearest surface along the optical axis (z-depth, what a
depth camera reports: a wall square to the axis at 2 m reads 2 m in every pixel, its corners included,
although they are farther away along their rays), or NaN where nothing lies between the minimum and
maximum depth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from sear.fields import param
from sear.sensors.base import RayHits, Sensor
from sear.sensors.config import SensorConfig
from sear.state import VehicleState


@dataclass
class DepthCameraConfig(SensorConfig):
    """Depth camera: an image of z-depths (metres) from a pinhole camera looking along the sensor's x axis."""

    TYPE: ClassVar[str] = "depth_camera"

    width_px: int = param(160, kind="positiveInt", label="Width", unit="px")
    """Image width, pixels."""
    height_px: int = param(120, kind="positiveInt", label="Height", unit="px")
    """Image height, pixels (square pixels: the vertical field of view follows from the aspect ratio)."""
    fov_deg: float = param(60.0, minimum=0.0, exclusive_minimum=True, maximum=170.0, label="Horizontal field of view",
                           unit="°")
    """Horizontal field of view across the image's width, degrees."""
    min_range_m: float = param(0.1, kind="nonNegative", label="Minimum depth")
    """Nearer surfaces give no return (NaN), metres of depth along the optical axis."""
    max_range_m: float = param(10.0, kind="positive", label="Maximum depth")
    """Farther surfaces give no return (NaN), metres of depth along the optical axis."""
    resolution_mm: float = param(1.0, kind="nonNegative", label="Depth unit")
    """Depth quantisation step (the depth stream's unit), mm; 0 = none."""
    update_rate_hz: float = param(15.0, kind="positive", label="Frame rate")
    """Frames per second."""
    noise_at_1m_mm: float = param(0.0, kind="nonNegative", group="noise", label="Depth noise at 1 m")
    """1-sigma Gaussian depth noise at 1 m when `noise` is on, mm; it grows with the square of the depth,
    as a stereo or structured-light camera's error does (2 mm at 1 m is 8 mm at 2 m)."""

    def problems(self) -> list[tuple[str, str]]:
        if self.min_range_m >= self.max_range_m:
            return [("min_range_m", f"the minimum depth ({self.min_range_m} m) must be less than the maximum "
                                    f"depth ({self.max_range_m} m).")]
        return []


def pixel_directions(config: DepthCameraConfig) -> np.ndarray:
    """(height, width, 3) direction of each pixel's ray in the sensor frame (x forward, y left, z up),
    scaled so that its x component is 1: a point at depth d along the axis is d × direction."""
    return pinhole_directions(config.width_px, config.height_px, config.fov_deg)


def pinhole_directions(w: int, h: int, fov_deg: float) -> np.ndarray:
    """`pixel_directions` of a w × h pinhole camera with `fov_deg` degrees across its width (the RGB
    camera's too)."""
    focal = (w / 2.0) / math.tan(math.radians(fov_deg) / 2.0)  # pixels
    u = (np.arange(w) + 0.5 - w / 2.0) / focal  # rightwards
    v = (np.arange(h) + 0.5 - h / 2.0) / focal  # downwards
    vv, uu = np.meshgrid(v, u, indexing="ij")
    return np.stack([np.ones_like(uu), -uu, -vv], axis=-1)


def depth_colours(depth: np.ndarray, max_depth: float) -> np.ndarray:
    """(h, w, 3) uint8 picture of a depth image: near is bright yellow, far dark blue, no return black."""
    t = np.clip(np.nan_to_num(depth, nan=max_depth) / max_depth, 0.0, 1.0)
    near, far = np.array([255.0, 236.0, 90.0]), np.array([25.0, 40.0, 110.0])
    rgb = near + (far - near) * t[..., None]
    rgb[np.isnan(depth)] = 0.0
    return rgb.astype(np.uint8)


class DepthCameraSensor(Sensor):
    TYPE = "depth_camera"
    TITLE = "Depth camera"
    DEFINITION = DepthCameraConfig
    FIELDS = ("centre", "min")
    config: DepthCameraConfig

    @classmethod
    def rays_per_sample(cls, config: SensorConfig) -> int:
        """One ray per pixel: width × height."""
        return config.width_px * config.height_px  # type: ignore[attr-defined]

    def __init__(self, config: DepthCameraConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        self.shape = (config.height_px, config.width_px)
        directions = pixel_directions(config).reshape(-1, 3)
        # Each ray runs from the camera to the plane at the maximum depth (x = max_range_m in the sensor
        # frame), so its hit fraction times the maximum depth is the hit's z-depth.
        self._fan(directions, config.max_range_m)
        self._min_fraction = config.min_range_m / config.max_range_m

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        assert hits is not None
        cfg = self.config
        fraction = hits.fraction
        depth = fraction * cfg.max_range_m
        depth[(fraction >= 1.0) | (fraction < self._min_fraction)] = np.nan
        if cfg.noise and cfg.noise_at_1m_mm > 0:
            depth += self.rng.normal(0.0, 1.0, depth.shape) * (cfg.noise_at_1m_mm / 1000.0) * depth * depth
        step = cfg.resolution_mm / 1000.0
        if step > 0:
            depth = np.round(depth / step)
            depth *= step
        np.clip(depth, cfg.min_range_m, cfg.max_range_m, out=depth)  # NaN (no return) stays NaN
        self.reading = depth.reshape(self.shape).astype(np.float32)

    # --- presentation ---------------------------------------------------------------------------------

    @staticmethod
    def _image(reading: Any) -> np.ndarray | None:
        if reading is None:
            return None
        image = np.asarray(reading, dtype=float)
        return image if image.ndim == 2 and image.size else None

    def log_cells(self, reading: Any) -> list[str]:
        """The depth at the image's centre and the nearest depth in the image, m ('' for no return)."""
        image = self._image(reading)
        if image is None:
            return ["", ""]
        h, w = image.shape
        centre = float(image[h // 2, w // 2])
        nearest = "" if np.all(np.isnan(image)) else format(float(np.nanmin(image)), ".10g")
        return ["" if math.isnan(centre) else format(centre, ".10g"), nearest]

    def hud_text(self, reading: Any) -> str:
        image = self._image(reading)
        if image is None:
            return "—"
        if np.all(np.isnan(image)):
            return f"{image.shape[1]}×{image.shape[0]}, no returns"
        return f"{image.shape[1]}×{image.shape[0]}, nearest {np.nanmin(image):.2f} m"

    def arrays(self, reading: Any) -> dict[str, np.ndarray]:
        """The frame as `depth`: (height, width) float32 z-depths, m, NaN = no return; row 0 at the top."""
        return {"depth": np.array(reading, dtype=np.float32)}

    def image(self, reading: Any) -> np.ndarray | None:
        """The frame as a picture, (height, width, 3) uint8, row 0 at the top: near bright, far dark,
        no return black."""
        image = self._image(reading)
        return None if image is None else depth_colours(image, self.config.max_range_m)
