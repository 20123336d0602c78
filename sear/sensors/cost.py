"""What a ray-casting sensor costs: rays per sample, rays per second and its share of one CPU core.

The Sensor Wizard states this for every sensor that casts rays as its fields are edited, so nobody adds
a depth camera at full resolution without knowing that it alone keeps the run below real time.

The cost of one sample on the CPU is modelled as a fixed part plus a part per ray, both measured by
`bench/bench_rays.py` (process CPU time of SensorSuite.update, every thread included, on its bench
scene): a sample of a few rays costs mostly the fixed part (the batch's set-up, the moving bodies' check,
the reading: ~0.36 ms, as much as ~290 rays), one of tens of thousands mostly the rays. A single
throughput in rays per second would call a 55-ray infrared cone at 26 Hz free (0.1 % of a core) where it
costs ~1 %; the fixed part is why the two are kept apart. The share of a core at real time is then

    rate (samples per simulated second) x (fixed + rays x per ray) (CPU seconds per sample)

in CPU seconds per simulated second: 1.0 is a whole core, and above it the sensor alone holds a run on
one core below real time. The estimate is of the ray casting and the reading only (no physics, no
controller, no window); sensors sampling on the same tick share one batch, so a project's total counts
the fixed part once per sensor, an upper bound.

Pure: no Qt, no pybullet (the wizard imports it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sear.sensors import registry
from sear.sensors.base import sample_rate_hz
from sear.sensors.config import SensorConfig


@dataclass(frozen=True)
class CasterCost:
    """CPU time the ray caster spends on one sample of one ray sensor: `per_sample_s` + rays x `per_ray_s`."""

    per_sample_s: float
    """Fixed CPU seconds of a sample, whatever its number of rays (set-up of the batch, the reading)."""
    per_ray_s: float
    """CPU seconds per ray cast (Embree, the moving bodies' check, the hit's fraction and normal)."""

    def seconds(self, rays: int) -> float:
        """CPU seconds of one sample of `rays` rays (0 for a sample that casts none)."""
        return self.per_sample_s + rays * self.per_ray_s if rays else 0.0


RAY_CASTER_COST = CasterCost(per_sample_s=2.33e-4, per_ray_s=3.13e-7)
"""The caster's measured cost, the one place the Sensor Wizard's estimates come from: fitted by
`bench/bench_rays.py --cost-only` (its last line prints the two figures; copy them here whenever the caster
changes) to the process CPU time of one LIDAR sample of 1 to 28,800 rays on its bench scene (79,202 terrain
triangles, 200 fixed boxes, 2 moving ones). Measured 2026-11-27 on the 2-core development machine with the
ray kernels compiled (sear.sensors.raykernels: a run loads them at its first batch of 20,000 rays, or
after 2 M rays; before that a small sensor costs up to ~1.5x this), at load average 6.5 (the machine was
not idler that day): 0.31 ms for 1 ray, 0.93 ms for 1,600, 8.5 ms for 28,800 (3.4 M rays per CPU second).
The fit: 0.23 ms per sample + 0.31 µs per ray, within 10 % of each measurement from 7,200 rays up; from 160
to 1,600 rays it is up to 0.2 ms under the measurement. CPU time grows with the machine's load (the caster
with numpy alone, measured at load 1.2: 0.27 ms + 0.41 µs; before issue 23, at load 2.5-3.8 and 5.5-6.5:
0.36 ms + 1.23 µs and 0.53 ms + 1.41 µs)."""

WARN_SHARE = 0.5
"""Share of one core (0.5 = 50 %) above which the wizard shows a sensor's cost as a warning: with the
physics, the other sensors and the controller, such a sensor leaves little of a core for real time."""


@dataclass(frozen=True)
class RayCost:
    """The ray-casting cost of one sensor, or of several together."""

    rays_per_sample: int
    """Rays one sample casts (for several sensors: the sum of one sample of each)."""
    rate_hz: float
    """Samples per simulated second (capped at the physics rate when one is given); 0 for several sensors."""
    rays_per_second: float
    """Rays cast per simulated second."""
    core_share: float
    """Estimated CPU seconds per simulated second: the share of one core the sensor needs to keep up with
    real time (1.0 = a whole core)."""
    capped: bool = False
    """Whether the rate asked for is above the physics rate (a sensor samples at most once a step)."""

    @property
    def heavy(self) -> bool:
        """Whether the share is above WARN_SHARE (the wizard's warning)."""
        return self.core_share > WARN_SHARE


def casts_rays(type_name: str) -> bool:
    """Whether a sensor type casts rays (its default definition does): the wizard states costs for these
    types only."""
    model = registry.model(type_name)
    return model is not None and model.rays_per_sample(model.DEFINITION()) > 0


def ray_cost(config: SensorConfig, physics_hz: float | None = None,
             caster: CasterCost | None = None) -> RayCost | None:
    """The cost of one sensor so defined; None for a type that casts no rays, or for a definition whose
    fields disagree (its `problems()`: its pattern is not defined, and a cone too fine to count is one of
    them). `physics_hz`: the project's physics rate, which caps the sensor's rate (None: no cap). `caster`:
    the cost model (None: RAY_CASTER_COST, read at the call)."""
    model = registry.model(config.TYPE)
    if model is None or config.problems():
        return None
    rays = model.rays_per_sample(config)
    if not rays:
        return None
    try:
        asked = sample_rate_hz(config)
    except TypeError:
        return None
    rate = min(asked, physics_hz) if physics_hz else asked
    per_sample = (caster or RAY_CASTER_COST).seconds(rays)
    return RayCost(rays_per_sample=rays, rate_hz=rate, rays_per_second=rays * rate,
                   core_share=rate * per_sample, capped=rate < asked)


def total_cost(configs: Iterable[SensorConfig], physics_hz: float | None = None,
               caster: CasterCost | None = None) -> RayCost | None:
    """The cost of all `configs` together (those that cast rays), or None when none of them does."""
    costs = [c for c in (ray_cost(config, physics_hz, caster) for config in configs) if c is not None]
    if not costs:
        return None
    return RayCost(rays_per_sample=sum(c.rays_per_sample for c in costs), rate_hz=0.0,
                   rays_per_second=sum(c.rays_per_second for c in costs),
                   core_share=sum(c.core_share for c in costs), capped=any(c.capped for c in costs))


def share_text(share: float) -> str:
    """A share of a core in words: 'about 27 % of one core', 'under 1 % of one core', 'about 1.9 cores'."""
    if share < 0.01:
        return "under 1 % of one core"
    if share < 1.995:
        return f"about {share * 100:.0f} % of one core"
    return f"about {share:.1f} cores"


def describe(cost: RayCost) -> str:
    """One sensor's cost as the wizard states it, e.g. '28,800 rays × 10 Hz = 288,000 rays/s · about 9 % of
    one core at real time', with a warning sentence when it is heavy."""
    rate = f"{cost.rate_hz:g} Hz" + (" (the physics rate)" if cost.capped else "")
    text = (f"{cost.rays_per_sample:,} rays × {rate} = {cost.rays_per_second:,.0f} rays/s · "
            f"{share_text(cost.core_share)} at real time")
    return text + _warning(cost, "this sensor alone")


def describe_total(cost: RayCost, sensors: int) -> str:
    """The cost of a project's `sensors` ray sensors together, e.g. '3 ray sensors together: 1,132 rays a
    sample, 24,980 rays/s · about 5 % of one core at real time'."""
    who = f"{sensors} ray sensors together" if sensors != 1 else "1 ray sensor"
    text = (f"{who}: {cost.rays_per_sample:,} rays a sample, "
            f"{cost.rays_per_second:,.0f} rays/s · {share_text(cost.core_share)} at real time")
    return text + _warning(cost, "these sensors alone" if sensors != 1 else "this sensor alone")


def _warning(cost: RayCost, who: str) -> str:
    if cost.core_share > 1.0:
        return f". {who.capitalize()} keep{'s' if who.startswith('this') else ''} the simulation below real " \
               "time on one core."
    if cost.heavy:
        return ". More than half a core: with the physics and the other sensors, the run may fall below real time."
    return ""
