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
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np

from sear.fields import param
from sear.sensors.base import MAX_RAYS_PER_SAMPLE, Preview, RayHits, Sensor
from sear.sensors.config import SensorConfig
from sear.state import VehicleState, body_rotation

SPEED_OF_SOUND = 343.0
"""m/s: sound in air at 20 °C, for an ultrasonic ranger's blanking time."""
ANALOG = {"output": "analog"}
DIGITAL = {"output": "digital"}

IR_CURVES: dict[str, tuple[tuple[float, float], ...]] = {
    # Sharp GP2D12 datasheet, "Analog output voltage vs. distance to reflective object" (white paper,
    # reflectance 90 %): read off the figure every 2 cm from 10 to 20 cm, then every 5 cm to 80 cm.
    "Sharp GP2D12": ((10.0, 2.45), (12.0, 2.125), (14.0, 1.86), (16.0, 1.66), (18.0, 1.52), (20.0, 1.38),
                     (25.0, 1.14), (30.0, 0.975), (35.0, 0.85), (40.0, 0.76), (45.0, 0.68), (50.0, 0.62),
                     (55.0, 0.58), (60.0, 0.54), (65.0, 0.51), (70.0, 0.48), (75.0, 0.45), (80.0, 0.42)),
    # Sharp GP2Y0A02YK0F datasheet (E4-A00101EN), Fig. 2 "Analog output voltage vs. distance to
    # reflective object" (white paper, reflectance 90 %): read off the figure every 10 cm from its peak at
    # 15 cm to 150 cm.
    "Sharp GP2Y0A02YK0F": ((15.0, 2.75), (20.0, 2.51), (30.0, 1.99), (40.0, 1.52), (50.0, 1.25), (60.0, 1.04),
                           (70.0, 0.87), (80.0, 0.79), (90.0, 0.74), (100.0, 0.69), (110.0, 0.60),
                           (120.0, 0.55), (130.0, 0.50), (140.0, 0.47), (150.0, 0.45)),
}
"""The datasheet curves of the analog Sharp rangers, (distance cm, output volts) from the curve's peak
outwards (docs/sensors/ has each part's card). Nearer than the peak the output falls again (the
reflected spot moves off the position-sensitive detector): the figures draw that fall but too steeply to
read points from it, so it is modelled as a straight line from the peak to 0 V at 0 cm. A near object
therefore gives the voltage of a farther one, as on the real part."""


def curve_volts(curve: str, distance_cm: np.ndarray | float) -> np.ndarray:
    """Output voltage (V) of curve `curve` (IR_CURVES) at distances (cm): the datasheet's points joined by
    straight lines, the fold-back to 0 V at 0 cm nearer than the peak, the last point's voltage beyond the
    last point."""
    points = np.array(IR_CURVES[curve])
    return np.interp(distance_cm, np.concatenate([[0.0], points[:, 0]]), np.concatenate([[0.0], points[:, 1]]))


def curve_distance(curve: str, volts: np.ndarray | float) -> np.ndarray:
    """Distance (cm) that the curve's branch from its peak outwards gives for an output voltage (V): what a
    program converting the output with the datasheet's curve reads. Voltages above the peak read as the
    peak's distance, below the last point as the last point's."""
    points = np.array(IR_CURVES[curve])
    return np.interp(volts, points[::-1, 1], points[::-1, 0])


class IrOutput(NamedTuple):
    """An analog infrared ranger's reading with its datasheet curve (InfraredConfig.output_curve)."""

    voltage: float
    """The sensor's output, V: its curve at the nearest hit (at the curve's far end when nothing is hit)."""
    adc: int
    """The voltage as the ADC reads it, counts (0 .. 2^adc_bits - 1)."""
    apparent: float
    """The distance the curve gives for the ADC's reading, m (curve_distance): what a program converting
    the output sees; a target nearer than the peak reads farther than it is."""
    distance: float | None
    """Ground truth: the distance of the nearest hit within the maximum range, m (None: nothing hit)."""


@dataclass
class InfraredConfig(SensorConfig):
    """Infrared range sensor (e.g. Sharp GP2D12 analog, GP2D15 digital): a cone of rays.

    Analog output reports the closest hit in metres; digital output reports True when something is
    within `switching_distance_cm`, and uses only the beam width and switching distance.
    """

    TYPE: ClassVar[str] = "infrared"

    output: Literal["analog", "digital"] = param("analog", type_name="irOutput")
    beam_width_cm: float = param(6.0, kind="positive")
    """Beam diameter at its widest point, cm (> 0); with the resolution at most 1,000,000 rays per sample."""
    min_range_cm: float = param(10.0, kind="nonNegative", visible_when=ANALOG)
    """Minimum sensing distance, cm: nearer hits are not reported (analog)."""
    max_range_cm: float = param(80.0, kind="positive", visible_when=ANALOG)
    """Maximum sensing distance, cm: the length of every ray (analog)."""
    resolution_cm: float = param(1.0, kind="positive", visible_when=ANALOG)
    """Ray spacing around each cone and cone-to-cone diameter step, cm (> 0; at least about 1/800 of the
    beam width: at most 1,000,000 rays per sample)."""
    switching_distance_cm: float = param(24.0, kind="positive", visible_when=DIGITAL)
    """Digital output: reports True when an object is nearer than this, cm."""
    update_rate_hz: float = param(26.0, kind="positive")
    """Samples per second (GP2D12: one every 38 ms)."""
    output_curve: Literal["none", "Sharp GP2D12", "Sharp GP2Y0A02YK0F"] = param(
        "none", type_name="irCurve", label="Output curve", visible_when=ANALOG)
    """Analog output: 'none' reports the distance (m); a part's name reports its datasheet output voltage,
    the ADC's counts of it, the distance the curve gives for them and the true distance (IrOutput), with
    the curve's fold-back nearer than its peak (IR_CURVES)."""
    adc_bits: int = param(10, minimum=1, maximum=24, label="ADC bits", unit="bits", visible_when=ANALOG)
    """Resolution of the ADC that reads the output voltage, bits (an Arduino Uno's: 10); with an output curve."""
    adc_reference_v: float = param(5.0, kind="positive", label="ADC reference", unit="V", visible_when=ANALOG)
    """The voltage of the ADC's full scale, V (an Arduino Uno's: 5 V); with an output curve."""
    noise_stddev_cm: float = param(0.0, kind="nonNegative", group="noise", visible_when=ANALOG)
    """1-sigma Gaussian distance noise when `noise` is on, cm."""

    def problems(self) -> list[tuple[str, str]]:
        return _range_problems(self)


@dataclass
class UltrasonicConfig(SensorConfig):
    """Ultrasonic range sensor (e.g. MaxBotix LV-EZ1, HC-SR04): a cone of rays (the beam pattern's
    width); surfaces met beyond the critical angle return no echo, nor do echoes within the blanking time."""

    TYPE: ClassVar[str] = "ultrasonic"

    beam_width_cm: float = param(60.0, kind="positive")
    """Beam diameter at its widest point, cm (> 0); with the resolution at most 1,000,000 rays per sample."""
    min_range_cm: float = param(15.24, kind="nonNegative")
    """Minimum sensing distance, cm."""
    max_range_cm: float = param(645.0, kind="positive")
    """Maximum sensing distance, cm: the length of every ray."""
    resolution_cm: float = param(2.54, kind="positive")
    """Ray spacing and cone step, cm (> 0; at least about 1/800 of the beam width: at most 1,000,000
    rays per sample); also the reading's quantisation (LV-EZ1: 1 inch)."""
    update_rate_hz: float = param(20.0, kind="positive")
    """Samples per second."""
    max_incidence_deg: float = param(22.5, kind="incidence", label="Max incidence")
    """The critical angle, degrees: sound meeting a smooth surface more obliquely than this (its normal
    more than this from the ray) reflects away and returns no echo; the next surface that echoes counts."""
    blanking_us: float = param(0.0, kind="nonNegative", label="Blanking time", unit="µs")
    """While the transducer rings down after the ping, echoes are not heard, µs: an echo returning within
    this time (from nearer than SPEED_OF_SOUND × time / 2) is missed, and the next one counts. 0: none
    beyond the minimum range."""
    range_step_cm: float = param(0.0, kind="nonNegative", label="Range step")
    """Quantisation of the reading (the echo timer's step), cm; 0: the ray resolution, as the LV-EZ1's
    1 inch."""
    noise_stddev_cm: float = param(0.0, kind="nonNegative", group="noise")
    """1-sigma Gaussian distance noise when `noise` is on, cm."""

    def problems(self) -> list[tuple[str, str]]:
        return _range_problems(self)


def _range_problems(sensor: InfraredConfig | UltrasonicConfig) -> list[tuple[str, str]]:
    problems = []
    if sensor.min_range_cm >= sensor.max_range_cm:
        problems.append(("min_range_cm", f"the minimum range ({sensor.min_range_cm} cm) must be less than "
                                         f"the maximum range ({sensor.max_range_cm} cm)."))
    rays = bounded_ray_count(sensor.beam_width_cm, sensor.resolution_cm)
    if rays is None:
        problems.append(("resolution_cm", f"the beam ({sensor.beam_width_cm:g} cm wide at a resolution of "
                                          f"{sensor.resolution_cm:g} cm) would need more than "
                                          f"{MAX_RAYS_PER_SAMPLE:,} rays per sample; use a coarser resolution "
                                          "or a narrower beam."))
    return problems


def bounded_ray_count(beam_width: float, resolution: float, limit: int = MAX_RAYS_PER_SAMPLE) -> int | None:
    """ray_count of a cone pattern, or None when it is more than `limit` (found without counting them:
    a beam of 1e9 cm at 1e-9 cm would take for ever)."""
    ratio = beam_width / resolution
    if not math.isfinite(ratio):
        return None
    # ~ratio cones (each a resolution narrower than the last) of at most pi * ratio + 1 rays each, and the
    # innermost cones alone hold more than `limit` once ratio passes sqrt(limit) * 2.
    if ratio > 2.0 * math.sqrt(limit) + 2.0:
        return None
    count = ray_count(beam_width, resolution)
    return count if count <= limit else None


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

    FIELDS = ("distance",)

    @classmethod
    def rays_per_sample(cls, config: SensorConfig) -> int:
        return ray_count(config.beam_width_cm, config.resolution_cm)  # type: ignore[attr-defined]
    length_m: float
    min_m: float

    def hud_text(self, reading: Any) -> str:
        if reading is None:
            return f"nothing within {self.length_m:g} m" if self.last_sample_time is not None else "—"
        if isinstance(reading, bool):
            return "DETECTED" if reading else "clear"
        return f"{reading:.3f} m"

    @classmethod
    def preview(cls, config: SensorConfig) -> Preview:
        """The rays where the beam ends, seen along it (cm, the form's unit)."""
        digital = getattr(config, "output", "analog") == "digital"
        length_cm = config.switching_distance_cm if digital else config.max_range_cm  # type: ignore[attr-defined]
        beam_cm, res_cm = config.beam_width_cm, config.resolution_cm  # type: ignore[attr-defined]
        beam, res = beam_cm / 100.0, res_cm / 100.0
        circle = np.linspace(0, 2 * np.pi, 90)
        outline = np.column_stack([beam_cm / 2 * np.cos(circle), beam_cm / 2 * np.sin(circle)])
        count = bounded_ray_count(beam, res)
        rate = config.update_rate_hz  # type: ignore[attr-defined]
        if count is None:
            return Preview(
                title="Rays at the end of the beam", x_label="y, across the beam (cm)",
                y_label="z, across the beam (cm)", points=np.zeros((0, 2)), outline=outline,
                caption=f"more than {MAX_RAYS_PER_SAMPLE:,} rays per sample: use a coarser resolution.")
        ends = cone_directions(beam, length_cm / 100.0, res) * length_cm
        return Preview(
            title="Rays at the end of the beam", x_label="y, across the beam (cm)", y_label="z, across the beam (cm)",
            points=ends[:, 1:3], outline=outline,
            caption=f"{count} rays per sample ({count * rate:,.0f} rays/s at {rate:g} Hz), each {length_cm:g} cm long; "
                    f"the circle is the beam's {beam_cm:g} cm width.")

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
    TITLE = "Infrared"
    DEFINITION = InfraredConfig
    config: InfraredConfig

    @property
    def log_fields(self) -> tuple[str, ...]:
        """`distance` (m) for analog output, `detected` (1 or 0) for digital; with an output curve
        `voltage` (V), `adc` (counts), `apparent` (m) and `distance` (m, ground truth)."""
        if self.config.output == "digital":
            return ("detected",)
        return IrOutput._fields if self.curve else self.FIELDS

    def __init__(self, config: InfraredConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        self.curve = config.output_curve if config.output == "analog" and config.output_curve != "none" else ""
        if config.output == "digital":
            self._setup(config.beam_width_cm, config.switching_distance_cm, config.resolution_cm, 0.0)
        elif self.curve:  # every hit counts: nearer than the minimum range the curve folds back
            self._setup(config.beam_width_cm, config.max_range_cm, config.resolution_cm, 0.0)
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
        self.reading = self._output(nearest) if self.curve else nearest

    def _output(self, distance: float | None) -> IrOutput:
        """The curve's voltage at `distance` (m; None: nothing within the maximum range, which reads as
        the farthest of the curve's points), then the ADC."""
        cfg = self.config
        far = IR_CURVES[self.curve][-1][0]
        volts = float(curve_volts(self.curve, far if distance is None else distance * 100.0))
        full = 1 << cfg.adc_bits
        counts = min(full - 1, max(0, math.floor(volts / cfg.adc_reference_v * full)))
        # The voltage a count stands for: the middle of its step.
        apparent = float(curve_distance(self.curve, (counts + 0.5) * cfg.adc_reference_v / full)) / 100.0
        return IrOutput(volts, counts, apparent, distance)

    def hud_text(self, reading: Any) -> str:
        if isinstance(reading, IrOutput):
            truth = "nothing" if reading.distance is None else f"{reading.distance:.3f} m"
            return f"{reading.voltage:.3f} V ({reading.adc}), reads {reading.apparent:.3f} m, true {truth}"
        return super().hud_text(reading)


class UltrasonicSensor(_ConeSensor):
    TYPE = "ultrasonic"
    TITLE = "Ultrasonic"
    DEFINITION = UltrasonicConfig
    config: UltrasonicConfig

    def __init__(self, config: UltrasonicConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        blanked_cm = SPEED_OF_SOUND * config.blanking_us * 1e-6 / 2.0 * 100.0  # the echo's way there and back
        self._setup(config.beam_width_cm, config.max_range_cm, config.resolution_cm,
                    max(config.min_range_cm, min(blanked_cm, config.max_range_cm)))
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
            step = (cfg.range_step_cm or cfg.resolution_cm) / 100.0
            if step > 0:
                nearest = round(nearest / step) * step
            nearest = min(self.length_m, max(self.min_m, nearest))
        self.reading = nearest
