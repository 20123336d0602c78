"""RGB camera: a pinhole colour image, ray cast on the CPU (headless, deterministic; no OpenGL).

The geometry is the depth camera's (sear.sensors.depth_camera.pinhole_directions): pixel (row r, column c)
of a width × height image looks through the centre of its pixel, the horizontal field of view spans the
width, pixels are square, the camera looks along its sensor's +x axis, row 0 is the top of the image and
column 0 its left. Each pixel's ray meets the nearest surface within the maximum range (the same caster,
Embree's, as every other sensor: sear.sensors.raycast), and the pixel takes that surface's colour as the
window draws it (sear.colours: the terrain's vertex colours or height colours, each obstacle's colour,
each robot's colour; StaticWorld.colours), lit by one sun:

    pixel = colour × (ambient + (1 - ambient) × max(0, n·s) × lit)

with n the surface's normal facing the camera, s the unit vector towards the sun and lit 0 when a second
ray from the surface towards the sun meets anything (a shadow), else 1. A pixel whose ray meets nothing
shows the sky: SKY_HORIZON blending to SKY_ZENITH as the ray rises. Values are display values (no gamma
curve is applied), rounded to 8 bits; optional Gaussian pixel noise comes from the run's seeded generator,
so the same seed gives the same frames. The shadow rays are occlusion queries (RayCaster.occluded: is
anything in the way, not where); the per-pixel arithmetic runs in numba's kernels once the process has
loaded them (sear.sensors.raykernels: camera_points, camera_shade), with the same frames to the bit.

What is not modelled: lens distortion, exposure and white balance (the light is a fixed scale), motion blur
and rolling shutter (every pixel of a frame sees the same instant), Bayer demosaicing, reflections and
textures (a surface has one colour per body, or per terrain vertex). The robot that carries the camera is
not seen by it and casts no shadow in it: its own rays ignore it, as every sensor's do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from sear.collision import StaticWorld
from sear.fields import param
from sear.sensors.base import RayHits, Sensor
from sear.sensors.config import SensorConfig
from sear.sensors.depth_camera import pinhole_directions
from sear.sensors.raykernels import Kernels, kernels
from sear.state import VehicleState, body_rotation

SKY_HORIZON = np.array([0.80, 0.87, 0.95])
"""Colour (RGB 0..1) of the sky at the horizon."""
SKY_ZENITH = np.array([0.42, 0.62, 0.90])
"""Colour (RGB 0..1) of the sky straight up."""
UNKNOWN_COLOUR = (0.6, 0.6, 0.6)
"""Colour of a body no colour was given for (sear.colours: the window's default obstacle grey)."""
SHADOW_LIFT = 1e-4
"""m: shadow rays start this far off the surface, along its normal, so they do not meet it again."""
SHADOW_REACH = 1000.0
"""m: how far a shadow ray looks towards the sun."""
TERRAIN_RASTER_MAX = 1024
_NO_NOISE = np.zeros((0, 3), dtype=np.float32)
_ZERO2 = np.zeros(2)
"""Most cells along a side of the terrain colour raster (see _TerrainColours)."""


@dataclass
class RgbCameraConfig(SensorConfig):
    """RGB camera: a pinhole colour image looking along the sensor's x axis, lit by one sun with shadows."""

    TYPE: ClassVar[str] = "rgb_camera"

    width_px: int = param(320, kind="positiveInt", label="Width", unit="px")
    """Image width, pixels."""
    height_px: int = param(240, kind="positiveInt", label="Height", unit="px")
    """Image height, pixels (square pixels: the vertical field of view follows from the aspect ratio)."""
    fov_deg: float = param(62.2, minimum=0.0, exclusive_minimum=True, maximum=170.0,
                           label="Horizontal field of view", unit="°")
    """Horizontal field of view across the image's width, degrees."""
    max_range_m: float = param(100.0, kind="positive", label="Maximum range")
    """Surfaces farther than this along the optical axis are not drawn (the sky shows), m."""
    update_rate_hz: float = param(15.0, kind="positive", label="Frame rate")
    """Frames per second."""
    sun_azimuth_deg: float = param(135.0, minimum=0.0, maximum=360.0, label="Sun azimuth", unit="°")
    """Compass bearing of the sun, degrees clockwise from north (+y) towards east (+x)."""
    sun_elevation_deg: float = param(60.0, minimum=0.0, maximum=90.0, label="Sun elevation", unit="°")
    """Height of the sun above the horizon, degrees."""
    ambient: float = param(0.35, kind="fraction", label="Ambient light", unit="")
    """Share of the light that reaches every surface, shadowed or facing away from the sun (0 to 1)."""
    shadows: bool = param(True, label="Shadows")
    """Cast a second ray from each lit surface towards the sun (doubles the rays of a frame at most)."""
    noise_stddev: float = param(0.0, kind="nonNegative", group="noise", label="Pixel noise", unit="")
    """1-sigma Gaussian noise added to each channel of each pixel when `noise` is on, in 8-bit steps."""


def sun_direction(azimuth_deg: float, elevation_deg: float) -> np.ndarray:
    """Unit vector (world frame ENU) towards a sun at a compass bearing (degrees from north towards
    east) and an elevation (degrees above the horizon)."""
    a, e = math.radians(azimuth_deg), math.radians(elevation_deg)
    return np.array([math.cos(e) * math.sin(a), math.cos(e) * math.cos(a), math.sin(e)])


class _TerrainColours:
    """The terrain's vertex colours as a raster over its x-y extent: a hit's colour is the colour of its
    cell (the mean colour of the vertices in it; a cell without one takes its nearest such cell's), one
    gather a pixel whatever the terrain's size."""

    def __init__(self, vertices: np.ndarray, colours: np.ndarray) -> None:
        self.low = vertices[:, :2].min(axis=0)
        span = np.maximum(vertices[:, :2].max(axis=0) - self.low, 1e-9)
        cells = int(min(TERRAIN_RASTER_MAX, max(2, math.ceil(math.sqrt(len(vertices))))))
        self.size = span / cells
        self.cells = cells
        index = self._cell(vertices[:, :2])
        flat = index[:, 0] * cells + index[:, 1]
        total = np.zeros((cells * cells, 3))
        np.add.at(total, flat, colours)
        count = np.bincount(flat, minlength=cells * cells).astype(float)
        filled = count > 0
        raster = np.zeros((cells * cells, 3))
        raster[filled] = total[filled] / count[filled, None]
        if not filled.all():
            from scipy.spatial import cKDTree

            where = np.column_stack(np.divmod(np.arange(cells * cells), cells))
            _, nearest = cKDTree(where[filled]).query(where[~filled])
            raster[~filled] = raster[filled][nearest]
        self.raster = raster

    def _cell(self, xy: np.ndarray) -> np.ndarray:
        return np.clip(((xy - self.low) / self.size).astype(np.int64), 0, self.cells - 1)

    def cell_of(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """(N,) the raster cell (row of `raster`) of world points at x, y ((N,) each, m): column by column,
        in 32-bit integers (a frame's worth of pixels at a time)."""
        row = ((x - self.low[0]) * (1.0 / self.size[0])).astype(np.int32)
        np.clip(row, 0, self.cells - 1, out=row)
        column = ((y - self.low[1]) * (1.0 / self.size[1])).astype(np.int32)
        np.clip(column, 0, self.cells - 1, out=column)
        row *= self.cells
        row += column
        return row

    def at(self, xy: np.ndarray) -> np.ndarray:
        """(N, 3) colours at world points (N, 2), m."""
        return self.raster[self.cell_of(xy[:, 0], xy[:, 1])]


class RgbCameraSensor(Sensor):
    TYPE = "rgb_camera"
    TITLE = "RGB camera"
    DEFINITION = RgbCameraConfig
    FIELDS = ("centre_r", "centre_g", "centre_b")
    config: RgbCameraConfig

    @classmethod
    def rays_per_sample(cls, config: SensorConfig) -> int:
        """One ray per pixel, and one more towards the sun for each with shadows on (at most)."""
        pixels = config.width_px * config.height_px  # type: ignore[attr-defined]
        return pixels * (2 if config.shadows else 1)  # type: ignore[attr-defined]

    def __init__(self, config: RgbCameraConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        self.shape = (config.height_px, config.width_px)
        directions = pinhole_directions(config.width_px, config.height_px, config.fov_deg).reshape(-1, 3)
        # Rays end on the plane at the maximum range along the axis, as the depth camera's do.
        self._fan(directions, config.max_range_m)
        self.sun = sun_direction(config.sun_azimuth_deg, config.sun_elevation_deg)
        self._sun_reach = self.sun * SHADOW_REACH
        unit = self.ray_reach / np.linalg.norm(self.ray_reach, axis=1, keepdims=True)
        self._unit_body = [np.ascontiguousarray(unit[:, k], dtype=np.float32) for k in range(3)]
        """Each pixel's ray direction in the body frame (unit vectors, by column), for the sky's colour."""
        self._reach_columns = [np.ascontiguousarray(self.ray_reach[:, k]) for k in range(3)]
        self._sky_horizon = (SKY_HORIZON * 255.0).astype(np.float32)
        self._sky_rise = ((SKY_ZENITH - SKY_HORIZON) * 255.0).astype(np.float32)
        self._caster: Any = None
        self._world: StaticWorld | None = None
        self._palette_version = -1
        self._palette = np.zeros((0, 3), dtype=np.float32)
        self._bodies = 0
        """Rows of the palette that are bodies' colours (the terrain raster's cells follow)."""
        self._terrain_body = -1
        self._terrain: _TerrainColours | None = None
        self._reach_tuple = tuple(self._reach_columns)
        self._unit_tuple = tuple(self._unit_body)
        self._x: np.ndarray | None = None
        """Work arrays of the compiled path (_sample_compiled), kept from frame to frame."""
        self._y = self._light = self._towards = self._begin = self._end = np.zeros(0)

    def use_world(self, caster: Any, world: StaticWorld | None) -> None:
        """The suite's ray caster (for the shadow rays) and the world's colours."""
        self._caster = caster
        self._world = world

    def _colours_of(self, bodies: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """(N, 3) float32 colours of the surfaces hit: bodies (N,) pybullet ids at world points x, y ((N,)
        each, m). One table holds every body's colour, then the terrain raster's cells: one gather a pixel."""
        self._refresh_palette(int(bodies.max(initial=0)) + 1)
        # np.take, not palette[index]: a fifth of fancy indexing's time for rows of a small table.
        if self._terrain is None:
            return np.take(self._palette, bodies, axis=0)
        cell = self._terrain.cell_of(x, y)
        cell += self._bodies
        return np.take(self._palette, np.where(bodies == self._terrain_body, cell, bodies), axis=0)

    def _refresh_palette(self, top: int) -> None:
        """Make the colour table again when the world's colours changed or a body id reaches `top` - 1 that
        it has no row for."""
        world = self._world
        if (world is not None and world.colour_version != self._palette_version) or top > self._bodies:
            colours = world.colours if world is not None else {}
            self._bodies = max([top, *(body + 1 for body in colours)])
            palette = np.tile(np.array(UNKNOWN_COLOUR), (self._bodies, 1))
            for body, colour in colours.items():
                palette[body] = colour
            self._terrain = None
            if world is not None:
                self._terrain_body = world.terrain[0].body if world.terrain else -1
                if (world.terrain and world.terrain_colours is not None
                        and len(world.terrain_colours) == len(world.terrain[0].vertices)):
                    self._terrain = _TerrainColours(world.terrain[0].vertices, world.terrain_colours)
                    palette = np.concatenate([palette, self._terrain.raster])
                self._palette_version = world.colour_version
            self._palette = palette.astype(np.float32)

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        assert hits is not None
        rotation = body_rotation(state)
        origin = state.position + rotation @ hits.origin
        compiled = kernels()
        if compiled is not None:
            self.reading = self._sample_compiled(compiled, rotation, origin, hits).reshape(*self.shape, 3)
            return
        cfg = self.config
        fraction = hits.fraction
        hit = fraction < 1.0
        # Whole-image arrays, column by column (misses computed too, then replaced by the sky): cheaper
        # than gathering the hits out and scattering them back, and no (N, 3) @ (3, 3) product, which goes
        # to BLAS.
        rx, ry, rz = self._reach_columns

        def world(axis: int) -> np.ndarray:
            """The hits' world coordinate `axis` (m)."""
            column = rx * rotation[axis, 0]
            column += ry * rotation[axis, 1]
            column += rz * rotation[axis, 2]
            column *= fraction
            column += origin[axis]
            return column

        x, y = world(0), world(1)
        normals = hits.normal
        facing = normals[:, 0] * self.sun[0]
        facing += normals[:, 1] * self.sun[1]
        facing += normals[:, 2] * self.sun[2]
        light = np.maximum(facing, 0.0).astype(np.float32)
        if cfg.shadows and self._caster is not None:
            towards = np.flatnonzero(hit & (facing > 0.0))
            if len(towards):
                begin = np.column_stack([x[towards], y[towards], world(2)[towards]])
                begin += np.take(normals, towards, axis=0) * SHADOW_LIFT
                blocked = self._caster.occluded(begin, begin + self._sun_reach)
                light[towards[blocked]] = 0.0
        light *= (1.0 - cfg.ambient) * 255.0
        light += cfg.ambient * 255.0
        image = self._colours_of(np.where(hit, hits.body, 0), x, y)
        image *= light[:, None]
        miss = np.flatnonzero(~hit)
        if len(miss):  # the sky, by how far each ray rises in the world frame
            up = rotation[2].astype(np.float32)
            ux, uy, uz = self._unit_body
            rise = ux[miss] * up[0]
            rise += uy[miss] * up[1]
            rise += uz[miss] * up[2]
            np.clip(rise, 0.0, 1.0, out=rise)
            image[miss] = self._sky_horizon + np.multiply.outer(rise, self._sky_rise)
        if cfg.noise and cfg.noise_stddev > 0:
            image += self.rng.normal(0.0, cfg.noise_stddev, image.shape).astype(np.float32)
        np.rint(image, out=image)
        np.clip(image, 0.0, 255.0, out=image)
        self.reading = image.astype(np.uint8).reshape(*self.shape, 3)

    def _sample_compiled(self, compiled: Kernels, rotation: np.ndarray, origin: np.ndarray, hits: RayHits
                         ) -> np.ndarray:
        """The frame (N, 3) uint8 with numba's kernels (raykernels.camera_points, camera_shade): the numpy
        path's arithmetic in one pass a pixel, into arrays kept from frame to frame, to the bit the same."""
        cfg = self.config
        n = len(hits.fraction)
        if self._x is None or len(self._x) != n:
            self._x, self._y = np.empty(n), np.empty(n)
            self._light = np.empty(n, dtype=np.float32)
            self._towards = np.empty(n, dtype=np.int64)
            self._begin, self._end = np.empty((n, 3)), np.empty((n, 3))
        shadows = cfg.shadows and self._caster is not None
        light = self._light
        count = compiled.camera_points(hits.fraction, hits.normal, self._reach_tuple, rotation, origin, self.sun,
                                       SHADOW_LIFT, self._sun_reach, shadows, self._x, self._y, light,
                                       self._towards, self._begin, self._end)
        if count:
            blocked = self._caster.occluded(self._begin[:count], self._end[:count])
            light[self._towards[:count][blocked]] = 0.0
        body = hits.body
        self._refresh_palette(int(body.max(initial=0)) + 1)
        terrain = self._terrain
        noise = (self.rng.normal(0.0, cfg.noise_stddev, (n, 3)).astype(np.float32) if cfg.noise and cfg.noise_stddev > 0
                 else _NO_NOISE)
        image = np.empty((n, 3), dtype=np.uint8)
        compiled.camera_shade(
            hits.fraction, body, self._x, self._y, light, np.float32((1.0 - cfg.ambient) * 255.0),
            np.float32(cfg.ambient * 255.0), self._palette, self._terrain_body if terrain is not None else -1,
            self._bodies, terrain.low if terrain is not None else _ZERO2,
            1.0 / terrain.size if terrain is not None else _ZERO2, terrain.cells if terrain is not None else 1,
            self._unit_tuple, rotation[2].astype(np.float32), self._sky_horizon, self._sky_rise, noise, image)
        return image

    # --- presentation ---------------------------------------------------------------------------------

    @staticmethod
    def _frame(reading: Any) -> np.ndarray | None:
        if reading is None:
            return None
        frame = np.asarray(reading)
        return frame if frame.ndim == 3 and frame.shape[2] == 3 and frame.size else None

    def log_cells(self, reading: Any) -> list[str]:
        """The red, green and blue values (0-255) of the image's centre pixel."""
        frame = self._frame(reading)
        if frame is None:
            return ["", "", ""]
        h, w, _ = frame.shape
        return [str(int(v)) for v in frame[h // 2, w // 2]]

    def hud_text(self, reading: Any) -> str:
        frame = self._frame(reading)
        if frame is None:
            return "—"
        h, w, _ = frame.shape
        r, g, b = (int(v) for v in frame[h // 2, w // 2])
        return f"{w}×{h}, centre #{r:02x}{g:02x}{b:02x}"

    def arrays(self, reading: Any) -> dict[str, np.ndarray]:
        """The frame as `rgb`: (height, width, 3) uint8, row 0 at the top."""
        return {"rgb": np.array(reading, dtype=np.uint8)}

    def image(self, reading: Any) -> np.ndarray | None:
        """The frame itself, (height, width, 3) uint8, row 0 at the top."""
        return self._frame(reading)
