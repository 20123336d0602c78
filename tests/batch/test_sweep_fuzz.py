"""Fuzzing sweep files: every variant is either a sweep within every stated bound or one SweepError naming
the sweep file (and a line for a value in it); no other exception, no traceback.

A seeded RNG writes VARIANTS sweep files for the batch test project, each with random top-level settings
and [vary] / [set] entries drawn from hostile values: numbers that overflow a C time (1e300), TOML's nan
and inf, huge and negative integers, denormals, numbers near 0, text, booleans, dates, lists and tables,
ranges with millions of steps, seeds by the million. `make test-slow` (marker `slow`) loads all VARIANTS;
the default tier loads the first DEFAULT_VARIANTS of them.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from sear.batch import sweep as limits
from sear.batch.sweep import Sweep, SweepError, load_sweep
from tests.batch.helpers import make_project, write_sweep

SEED = 20261127
VARIANTS = 300
DEFAULT_VARIANTS = 25

NUMBERS = ("1e300", "-1e300", "1.7976931348623157e308", "nan", "inf", "-inf", "0", "-0.0", "-1", "1", "2.5",
           "1e-320", "5e-324", "1e-101", "1e6", "1000001", "1e7", "9223372036854775807", "-9223372036854775808",
           "4294967295", "4294967296", "100000", "100001", "64", "63.9", "0.5", "3")
OTHERS = ('"text"', '""', "true", "false", "1979-05-27T07:32:00Z", "07:32:00", "[]", "[1, 2]", '["a", 1]', "{}",
          "{min = 1}", '"1..3"', '"3..1"', '"-5..5"', '"0..4294967295"', '"1..1000000"', '"1..100001"')
SETTINGS = ("duration", "timeout", "seeds", "sampling", "samples", "sampling_seed", "retries", "retry_on",
            "keep_logs", "memory_limit_mb", "output", "unknown")
PATHS = ("dynamics.mass", "body.start_north", "code.SPEED", "code.MODE", "sensors.compass.accuracy_deg",
         "sensors.compass.noise", "simulation.control_hz", "terrain.file", "start", "dynamics.mas", "code.hook_timeout")


MILD = ("1.0", "2.0", "20.0", "0.5", "3", "1")
"""Values most fields take: a variant drawn mildly (MILD_SHARE of them) uses these, so that some load."""
MILD_SHARE = 0.4
MILD_SETTINGS = {"timeout": ("120", "60.5"), "seeds": ('"1..3"', "[1, 2]", "7"), "retries": ("0", "2"),
                 "sampling_seed": ("0", "9")}


class Draw:
    """The values of one variant: hostile, or mostly mild."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.mild = rng.random() < MILD_SHARE

    def scalar(self) -> str:
        rng = self.rng
        if self.mild and rng.random() < 0.9:
            return rng.choice(MILD)
        return rng.choice(NUMBERS) if rng.random() < 0.7 else rng.choice(OTHERS)


def _vary_value(draw: Draw) -> str:
    rng, _scalar = draw.rng, lambda _rng: draw.scalar()
    roll = rng.random()
    if roll < 0.35:
        return "[" + ", ".join(_scalar(rng) for _ in range(rng.randint(0, 4))) + "]"
    if roll < 0.75:
        keys = {"min": _scalar(rng), "max": _scalar(rng)}
        if rng.random() < 0.7:
            keys["steps"] = rng.choice(("1", "2", "5") if draw.mild else
                                       ("1", "2", "5", "1000", "1000000", "1000001", "0", "-3", "2.5", "true"))
        if rng.random() < 0.3:
            keys["integer"] = rng.choice(("true", "false", '"yes"'))
        if rng.random() < 0.1:
            keys["step"] = "1"
        return "{" + ", ".join(f"{k} = {v}" for k, v in keys.items()) + "}"
    if roll < 0.85:
        return "[{north = " + _scalar(rng) + ", yaw_deg = " + _scalar(rng) + "}]"
    return _scalar(rng)


def variant(rng: random.Random) -> str:
    """One sweep file's text for the batch test project."""
    draw = Draw(rng)
    _scalar = lambda _rng: draw.scalar()  # noqa: E731
    lines = [] if rng.random() < 0.03 else ['project = "bot.prj"']
    settings = {"duration": _scalar(rng) if rng.random() < 0.3 else "1.0"}
    for key in rng.sample(list(MILD_SETTINGS) if draw.mild else SETTINGS, rng.randint(0, 3)):
        if key == "sampling":
            settings[key] = rng.choice(('"grid"', '"random"', '"latin"', "1"))
        elif key == "retry_on":
            settings[key] = rng.choice(('["crash"]', '["sulk"]', '"crash"', "[]"))
        elif key == "output":
            settings[key] = rng.choice(('"out"', '""', '"' + "y" * 300 + '"', "3"))
        elif draw.mild and rng.random() < 0.8:
            settings[key] = rng.choice(MILD_SETTINGS[key])
        else:
            settings[key] = _scalar(rng)
    lines += [f"{key} = {value}" for key, value in settings.items()]
    for section in ("vary", "set"):
        if rng.random() < 0.8:
            lines.append(f"[{section}]")
            for path in rng.sample(PATHS, rng.randint(1, 3)):
                lines.append(f"{path} = {_vary_value(draw) if section == 'vary' else _scalar(rng)}")
    return "\n".join(lines) + "\n"


def _check_bounds(sweep: Sweep) -> None:
    assert 0 < sweep.duration <= limits.MAX_DURATION and math.isfinite(sweep.duration)
    assert 0 < sweep.timeout <= limits.MAX_TIMEOUT
    assert all(0 <= seed <= limits.MAX_SEED for seed in sweep.seeds) and len(set(sweep.seeds)) == len(sweep.seeds)
    assert 0 <= sweep.retries <= limits.MAX_RETRIES and 0 <= sweep.sampling_seed <= limits.MAX_SEED
    assert sweep.memory_limit_mb is None or limits.MIN_MEMORY_MB <= sweep.memory_limit_mb <= limits.MAX_MEMORY_MB
    sets = sweep.samples if sweep.sampling == "random" else math.prod(
        p.steps if p.steps is not None else len(p.values) for p in sweep.parameters)
    assert sets * len(sweep.seeds) <= limits.CONFIRM_RUNS <= limits.MAX_RUNS
    if sets * len(sweep.seeds) <= 2000:  # the runs themselves: every value finite where it is a number
        runs = sweep.runs()
        assert len(runs) == sets * len(sweep.seeds)
        for run in runs:
            for value in run.params.values():
                assert not (isinstance(value, float) and not math.isfinite(value)), run


def _fuzz(tmp_path: Path, indices: range) -> int:
    make_project(tmp_path)
    rng = random.Random(SEED)
    texts = [variant(rng) for _ in range(VARIANTS)]
    accepted = 0
    for index in indices:
        path = write_sweep(tmp_path, texts[index], name=f"v{index}.toml")
        try:
            sweep = load_sweep(path)
        except SweepError as exc:
            message = str(exc)
            assert message.startswith(str(path)), (index, texts[index], message)
            assert "Traceback" not in message and "Error:" not in message, (index, message)
            continue
        _check_bounds(sweep)
        accepted += 1
    return accepted


def test_sweep_fuzz_default_tier(tmp_path):
    accepted = _fuzz(tmp_path, range(DEFAULT_VARIANTS))
    assert accepted >= 1  # positive control: the variants are not all refused


@pytest.mark.slow
def test_sweep_fuzz_every_variant(tmp_path):
    accepted = _fuzz(tmp_path, range(VARIANTS))
    assert accepted >= 10
