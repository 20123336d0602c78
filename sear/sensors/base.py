"""What every sensor model shares: mounting, sampling on simulated time, noise, presentation.

A sensor type is one module (see docs/adding-a-sensor-type.md): its definition (a SensorConfig dataclass
whose fields carry their units, bounds and labels), its model (a `Sensor` subclass naming the definition
in DEFINITION) and how a reading presents itself (`hud_text`, `log_cells`, `arrays`, `value`), listed in
sear.sensors.registry. A model declares the rays it needs once, in the body frame (`_fan`), receives
their hits on each sample and produces a reading. The window, the CSV log, `sim.read` and the Sensor
Wizard all work from these declarations; none of them knows a type by name.

Noise follows Gazebo's IMU model: a constant bias drawn once per run, a bias random walk, and white
Gaussian noise per sample, plus the datasheet's noise density and bias instability (flicker noise, see
ImuNoise); each sensor draws from its own stream of the run's seed (sear.sensors.suite.sensor_rng).
(Webots scales noise with the output, which gives a zero reading no noise: wrong for an IMU at rest.)
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from sear.sensors.config import SensorConfig
from sear.state import VehicleState, body_rotation

MAX_RAYS_PER_SAMPLE = 1_000_000
"""Most rays one sensor casts in a sample (a cone's, a scan's or a depth image's), so that building and
casting a sensor stays within the memory a run can honour (~100 bytes a ray while it is cast: 100 MB).
The caster splits larger batches for pybullet itself (its rayTestBatch takes at most 16,383)."""
MAX_RAYS_PER_SECOND = 5_000_000
"""Most rays all sensors together cast per simulated second (each sensor samples at most once a physics
step): the Embree caster casts 5-9 million a second here, so a simulated second costs about a second of
rays; where Embree is missing (pybullet alone, ~0.2-0.8 million a second) it costs up to ~25 s."""


def euler_matrix_deg(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Rotation matrix of roll, pitch, yaw in degrees, applied as intrinsic z-y'-x'' (yaw first)."""
    r, p, y = (math.radians(v) for v in (roll, pitch, yaw))
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    return rz @ ry @ rx


def sample_rate_hz(config: SensorConfig) -> float:
    """Samples per second of a sensor so defined: its update rate, else its bandwidth."""
    rate = getattr(config, "update_rate_hz", None) or getattr(config, "bandwidth_hz", None)
    if not rate:
        raise TypeError(f"{type(config).__name__} declares neither update_rate_hz nor bandwidth_hz, so "
                        "its sensor cannot be scheduled")
    return float(rate)


class RayHits:
    """One sensor's rays of a sample: the fraction of its length at which each ray hit (1.0 for a miss),
    and on request whether it hit, the distance from its start (m; inf for a miss), the rays and hit
    positions in the world frame and the surface normals. Sensors that need only the nearest hit work
    from the fractions: right after a ray cast every numpy call costs microseconds, the cast having
    emptied the caches."""

    __slots__ = ("body", "fraction", "length", "normal", "origin", "reach", "state", "world")

    def __init__(self, fraction: np.ndarray, length: float, origin: np.ndarray, reach: np.ndarray,
                 state: VehicleState, normal: np.ndarray | None = None, body: np.ndarray | None = None,
                 world: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.fraction = fraction
        """Hit fraction of each ray's length (1.0 for a miss)."""
        self.length = length
        """Length of every ray, m."""
        self.origin = origin
        """(3,) where the rays start, body frame, m."""
        self.reach = reach
        """(N, 3) each ray from its start to its end, body frame, m."""
        self.state = state
        """The robot's state when the rays were cast (for the world-frame rays)."""
        self.normal = np.zeros((len(fraction), 3)) if normal is None else normal
        """(N, 3) world-frame unit normal of the surface each ray hit, facing the ray's start; zeros for a miss."""
        self.body = np.full(len(fraction), -1) if body is None else body
        """(N,) pybullet body id of what each ray hit; -1 for a miss."""
        self.world = world
        """(starts, ends) of the rays in the world frame, m, when they were not all cast from `state`'s
        pose (a LIDAR whose beams each left from the pose at their own time); None otherwise."""

    @property
    def starts(self) -> np.ndarray:
        """(N, 3) ray starts, world frame, m."""
        if self.world is not None:
            return self.world[0]
        body = body_rotation(self.state)
        return np.broadcast_to(self.state.position + body @ self.origin, self.reach.shape)

    @property
    def ends(self) -> np.ndarray:
        """(N, 3) ray ends, world frame, m."""
        if self.world is not None:
            return self.world[1]
        body = body_rotation(self.state)
        return self.state.position + body @ self.origin + self.reach @ body.T

    @property
    def hit(self) -> np.ndarray:
        """Whether each ray hit something."""
        return self.fraction < 1.0

    @property
    def distance(self) -> np.ndarray:
        """Distance from each ray's start to its hit, m; inf for a miss."""
        return np.where(self.fraction < 1.0, self.fraction * self.length, np.inf)

    @property
    def position(self) -> np.ndarray:
        """(N, 3) hit points, world frame, m; NaN for misses."""
        starts = self.starts
        points = starts + (self.ends - starts) * self.fraction[:, None]
        return np.where(self.hit[:, None], points, np.nan)

    def normals(self, indices: np.ndarray) -> np.ndarray:
        """World-frame unit normals (k, 3) of the surfaces hit by rays `indices` of this sensor's rays."""
        return self.normal[indices]


@dataclass
class SensorContext:
    """What sensors may need beyond their definition: the geodetic origin of the world frame and the
    surfaces' reflectivities."""

    origin: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Latitude, longitude (decimal degrees) and altitude (m) of the world origin (x = y = z = 0; the
    terrain's surface at the centre is at the project's `<altitude>`: sear.physics.world.World)."""
    reflectivity: dict[int, float] = field(default_factory=dict)
    """Diffuse reflectivity (0..1, at a LIDAR's wavelength) of the surfaces of pybullet bodies, by body id;
    a body not listed has the LIDAR's default reflectivity."""


@dataclass
class Preview:
    """What the Sensor Wizard draws beside a type's form (pure data: the wizard draws it)."""

    title: str
    x_label: str
    y_label: str
    points: np.ndarray
    """(N, 2) points, drawn as small crosses."""
    outline: np.ndarray
    """(M, 2) a line drawn through these points (e.g. the beam's edge); may be empty."""
    caption: str
    """A sentence under the plot."""


class Sensor:
    """Base of the sensor models. A subclass sets TYPE (the definition's XML element name), TITLE (its
    Sensor Wizard tab), DEFINITION (its SensorConfig dataclass) and FIELDS (the log columns after
    '<name>.'), implements `sample`, and may refine how its readings are presented."""

    TYPE: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    DEFINITION: ClassVar[type[SensorConfig]] = SensorConfig
    FIELDS: ClassVar[tuple[str, ...]] = ()
    PLOTTED: ClassVar[tuple[str, ...] | None] = None
    """Log fields the window offers to plot over time (None: all of FIELDS)."""
    DELAYED: ClassVar[tuple[str, ...]] = ()
    """Attributes a sample sets beside `reading` that are held back and delivered with it (latency)."""
    beam_delays: np.ndarray | None = None
    """(ray_count,) s before the sample's time at which each ray is cast (a spinning LIDAR's beams, each
    from the pose at its own time: SensorSuite interpolates it); None: every ray from the sample's pose."""
    HAS_ARRAYS: ClassVar[bool] = False
    """Whether the type defines `arrays` (the log then saves them beside the CSV); set from the class
    itself, so it cannot disagree with it."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.HAS_ARRAYS = cls.arrays is not Sensor.arrays
    ray_count: int = 0
    """Rays one sample casts (0: the sensor casts none)."""
    ray_length: float = 0.0
    """Length of every one of its rays, m."""
    ray_origin: np.ndarray
    """(3,) where its rays start, body frame, m (sensors that cast rays)."""
    ray_reach: np.ndarray
    """(ray_count, 3) each ray from its start to its end, body frame, m."""

    def __init__(self, config: SensorConfig, rng: np.random.Generator, context: SensorContext) -> None:
        self.config = config
        self.name = config.name
        self.rng = rng
        self.context = context
        self.mount_position = np.array([config.pose.x, config.pose.y, config.pose.z], dtype=float)
        self.mount_rotation = euler_matrix_deg(config.pose.roll, config.pose.pitch, config.pose.yaw)
        self.period = 1.0 / self.rate_hz()
        self.next_sample = 0.0
        self.last_sample_time: float | None = None
        self.reading: Any = None
        self.reading_time: float | None = None
        """Simulated time (s) at which the delivered `reading` was sampled (None before the first)."""
        self.latency = float(getattr(config, "latency_s", 0.0) or 0.0)
        """s from a sample to its delivery (SensorConfig.latency_s)."""
        self._pending: deque[tuple[float, float, Any, tuple[Any, ...]]] = deque()
        """Samples taken and not yet delivered: (delivery time, sample time, reading, DELAYED attributes),
        oldest first."""
        self._delivered: tuple[Any, tuple[Any, ...]] | None = None
        """The reading and DELAYED attributes delivered last (shown while later samples are held back)."""

    @classmethod
    def rays_per_sample(cls, config: SensorConfig) -> int:
        """Rays one sample of a sensor so defined casts, worked out without building it (0: none); only
        for definitions whose `problems()` are empty."""
        return 0

    def rate_hz(self) -> float:
        """Samples per second (from the definition's update rate or bandwidth)."""
        return sample_rate_hz(self.config)

    def advance(self, time: float) -> None:
        """Schedule the next sample one period after the last scheduled one (so the average rate is
        exact even when the period is not a multiple of the physics step)."""
        self.next_sample += self.period
        if self.next_sample <= time + 1e-9:
            self.next_sample = time + self.period

    def sampled_at(self, time: float) -> bool:
        """Book a sample just taken at `time` (s): delivered at once (True) or, with a latency, held back
        until `time + latency` (False; `reading` goes back to the one delivered before)."""
        if self.latency <= 0.0:
            self.reading_time = time
            return True
        self._pending.append((time + self.latency, time, self.reading,
                              tuple(getattr(self, name) for name in self.DELAYED)))
        if self._delivered is None:
            self.reading = None
            for name in self.DELAYED:
                setattr(self, name, None)
        else:
            self._show(self._delivered)
        return False

    def _show(self, delivered: tuple[Any, tuple[Any, ...]]) -> None:
        self.reading = delivered[0]
        for name, value in zip(self.DELAYED, delivered[1], strict=True):
            setattr(self, name, value)

    def deliver(self, time: float) -> bool:
        """Deliver the held samples due by `time` (s): `reading` becomes the latest of them; whether any was."""
        pending = self._pending
        delivered = False
        while pending and pending[0][0] <= time + 1e-9:
            _, self.reading_time, reading, extras = pending.popleft()
            self._delivered = (reading, extras)
            delivered = True
        if self._delivered is not None and delivered:
            self._show(self._delivered)
        return delivered

    @property
    def next_delivery(self) -> float:
        """Simulated time (s) of the next held sample's delivery (inf when none is held)."""
        return self._pending[0][0] if self._pending else math.inf

    def sensor_frame(self, state: VehicleState) -> tuple[np.ndarray, np.ndarray]:
        """World position (m) and rotation matrix (sensor axes as columns) of the sensor."""
        body = body_rotation(state)
        return state.position + body @ self.mount_position, body @ self.mount_rotation

    def rays(self, state: VehicleState) -> tuple[np.ndarray, np.ndarray] | None:
        """World-frame ray starts and ends (ray_count, 3) of a sample in `state`, or None."""
        if not self.ray_count:
            return None
        body = body_rotation(state)
        origin = state.position + body @ self.ray_origin
        return np.broadcast_to(origin, self.ray_reach.shape).copy(), origin + self.ray_reach @ body.T

    def _fan(self, directions: np.ndarray, length: float) -> None:
        """Declare the rays of a sensor whose rays all start at its mount: unit `directions` (N, 3) in
        the sensor frame, each `length` m long. They are kept in the body frame, fixed to the robot,
        where pybullet can cast them as they are (see SensorSuite). A direction that is not a unit vector
        makes its ray |direction| × `length` long (the depth camera's rays end on a plane)."""
        self.ray_origin = self.mount_position.copy()
        self.ray_reach = directions @ self.mount_rotation.T * length
        self.ray_count = len(directions)
        self.ray_length = length

    def use_world(self, caster: Any, world: Any) -> None:
        """Called once by the suite that holds the sensor: its ray caster (sear.sensors.raycast.RayCaster,
        for rays a sample decides on, as a camera's shadow rays) and the world's fixed shapes and colours
        (sear.collision.StaticWorld, or None). Most types need neither."""

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        """Produce `self.reading` from the state (and the hits of this sensor's rays)."""
        raise NotImplementedError

    # --- presentation: called by the window, the log and sim.read, never per sample ------------------

    @property
    def log_fields(self) -> tuple[str, ...]:
        """This sensor's log columns after '<name>.' (FIELDS unless the definition changes them)."""
        return self.FIELDS

    def log_cells(self, reading: Any) -> list[str]:
        """CSV cells of a reading, one per log field; empty cells for a reading that does not exist.

        A single field takes a scalar reading; several fields are read as attributes of the reading."""
        fields = self.log_fields
        if reading is None:
            return [""] * len(fields)
        if len(fields) == 1 and not isinstance(reading, tuple):
            return [_fmt(reading)]
        return [_fmt(getattr(reading, f, None)) for f in fields]

    def log_values(self) -> list[str]:
        """CSV cells of the latest reading."""
        return self.log_cells(self.reading)

    def hud_text(self, reading: Any) -> str:
        """One short line for the window's readout; any reading (None, number, tuple, array) gives text."""
        if reading is None:
            return "—"
        cells = self.log_cells(reading)
        fields = self.log_fields
        if len(fields) == 1:
            return cells[0] or "—"
        return "  ".join(f"{f} {c or '—'}" for f, c in zip(fields, cells, strict=False))

    def arrays(self, reading: Any) -> dict[str, np.ndarray]:
        """Array outputs of a reading that a CSV cell cannot hold (e.g. a LIDAR scan), by key; the log
        streams each sample's arrays beside the CSV into the folder FILE.arrays as `<name>.time.npy`
        and `<name>.<key>.npy` (every sample of a key the same shape and dtype)."""
        return {}

    def value(self, reading: Any) -> Any:
        """What `sim.read(name)` returns for a reading (the reading itself unless a type says otherwise)."""
        return reading

    @property
    def draws_cloud(self) -> bool:
        """Whether `cloud` gives points for this sensor (the window then offers a point cloud)."""
        return type(self).cloud is not Sensor.cloud

    @property
    def draws_image(self) -> bool:
        """Whether `image` gives pictures for this sensor (the window then shows them in a dock)."""
        return type(self).image is not Sensor.image

    def cloud(self, reading: Any) -> np.ndarray | None:
        """(N, 3) points of a reading in the sensor frame (x forward, y left, z up, m) for the window's
        3-D view (a 3-D LIDAR's point cloud), or None for types that draw none."""
        return None

    def image(self, reading: Any) -> np.ndarray | None:
        """A reading as a picture, (height, width, 3) uint8 RGB with row 0 at the top, for the window (a
        depth camera's frame), or None for types that draw none."""
        return None

    def plot_points(self, reading: Any) -> np.ndarray | None:
        """(N, 2) points of a reading for a top-down plot (x right, y ahead of the sensor, m), or None
        for types that do not draw one."""
        return None

    def plot_extent(self) -> tuple[float, tuple[float, float] | None, bool] | None:
        """The area `plot_points` can cover, for the plot's grid: reach (m), the angles of the sector's
        edges (rad from ahead, counter-clockwise; None for a full circle) and whether it reaches behind
        the sensor; None for types without a plot."""
        return None

    @classmethod
    def preview(cls, config: SensorConfig) -> Preview | None:
        """What the Sensor Wizard draws beside the form for `config` (None: nothing)."""
        return None


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool | np.bool_):
        return "1" if value else "0"
    if isinstance(value, int | np.integer):
        return str(int(value))
    value = float(value)
    return "" if math.isnan(value) else format(value, ".10g")


FLICKER_TIME_CONSTANTS_S = tuple(10.0 ** (k / 3.0) for k in range(-3, 13))
"""Correlation times (s) of the Gauss-Markov processes whose sum makes an IMU's flicker (1/f) bias noise:
three a decade from 0.1 s to 10^4 s, so its Allan deviation is flat (its floor, the bias instability)
for averaging times from about a second to an hour (shorter, white noise hides it anyway)."""
FLICKER_FLOOR = math.sqrt(2.0 * math.log(2.0) / math.pi)
"""Allan deviation floor of flicker noise of coefficient B, over B (IEEE Std 952-1997, C.1.3: 0.664)."""


def flicker_sigmas(floor: float) -> float:
    """Steady-state 1-sigma of each of the FLICKER_TIME_CONSTANTS_S processes whose sum has the Allan
    deviation floor `floor` (the datasheet's bias instability). Processes of correlation times spaced by
    the ratio r, of equal variance s², sum to a power spectral density s²/(2 f ln r) between their corner
    frequencies; flicker noise of coefficient B has B²/(2 pi f) (IEEE 952), and an Allan floor
    B·FLICKER_FLOOR: so s² = B² ln r / pi."""
    ratio = FLICKER_TIME_CONSTANTS_S[1] / FLICKER_TIME_CONSTANTS_S[0]
    coefficient = floor / FLICKER_FLOOR
    return coefficient * math.sqrt(math.log(ratio) / math.pi)


class ImuNoise:
    """An IMU's noise for three axes: the datasheet's noise density (angle or velocity random walk: white
    noise whose Allan deviation is density/sqrt(tau)) and bias instability (flicker noise: a sum of
    Gauss-Markov processes, FLICKER_TIME_CONSTANTS_S, whose Allan deviation is flat at the figure), and
    Gazebo's terms: white noise per sample, a constant bias (drawn once), a bias random walk and a
    scale-factor error (drawn once). All zero unless the definition turns noise on."""

    def __init__(self, rng: np.random.Generator, enabled: bool, *, white: float, bias: float, walk: float,
                 scale_pct: float, density: float = 0.0, instability: float = 0.0, rate_hz: float = 1.0) -> None:
        """`white`: 1-sigma per sample; `density`: noise density per sqrt(Hz), which a sample averaging
        over its period 1/`rate_hz` s sees as 1-sigma density·sqrt(rate); `instability`: the Allan
        deviation floor; all in the reading's unit (walk per sqrt(s))."""
        self.rng = rng
        self.enabled = enabled
        self.white = math.hypot(white, density * math.sqrt(rate_hz)) if enabled else 0.0
        self.walk = walk
        self.bias = rng.normal(0.0, bias, 3) if enabled and bias > 0 else np.zeros(3)
        self.scale = 1.0 + (rng.normal(0.0, scale_pct / 100.0, 3) if enabled and scale_pct > 0 else np.zeros(3))
        self.flicker: np.ndarray | None = None
        """(K, 3) the flicker processes' present values (None: no bias instability)."""
        if enabled and instability > 0:
            self._flicker_sigma = flicker_sigmas(instability)
            self._taus = np.array(FLICKER_TIME_CONSTANTS_S)[:, None]
            self.flicker = rng.normal(0.0, self._flicker_sigma, (len(self._taus), 3))  # stationary start
            self._flicker_dt = -1.0
            self._decay = self._drive = np.zeros_like(self._taus)

    def apply(self, true: tuple[float, float, float], dt: float) -> tuple[float, float, float]:
        """The three axes' true values with noise added (when enabled); dt is the time since the last
        sample, s, for the bias random walk and the flicker processes."""
        if not self.enabled:
            return true
        if self.walk > 0 and dt > 0:
            self.bias = self.bias + self.rng.normal(0.0, self.walk * math.sqrt(dt), 3)
        bx, by, bz = self.bias.tolist()
        if self.flicker is not None:
            if dt > 0:
                if dt != self._flicker_dt:
                    self._flicker_dt = dt
                    self._decay = np.exp(-dt / self._taus)
                    self._drive = self._flicker_sigma * np.sqrt(1.0 - self._decay ** 2)
                self.flicker = self.flicker * self._decay + self._drive * self.rng.normal(0.0, 1.0, self.flicker.shape)
            fx, fy, fz = self.flicker.sum(axis=0).tolist()
            bx, by, bz = bx + fx, by + fy, bz + fz
        sx, sy, sz = self.scale.tolist()
        x, y, z = true[0] * sx + bx, true[1] * sy + by, true[2] * sz + bz
        if self.white > 0:
            wx, wy, wz = self.rng.normal(0.0, self.white, 3).tolist()
            x, y, z = x + wx, y + wy, z + wz
        return x, y, z
