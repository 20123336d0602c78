"""The tyre kernel (sear.physics.tyre): numba's compiled code against the same function run as plain Python,
on steps recorded from a drive of the demo rover (a drop onto the hills, full throttle with the steering
swinging, then a hard brake into a skid); and a headless run of the demo on the plain Python path, with
numba switched off and with numba missing, against its own odometry and against a run that switches to
the compiled kernels after 300 steps."""

from __future__ import annotations

import csv
import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sear import resources
from sear.models.loaded import load_models
from sear.physics import tyre
from sear.physics.world import World
from sear.project import Project
from sear.resources import demo_project

Record = tuple[list[float], list[float], list[float], list[float], list[float], list[float], list[float], float]
"""One step's kernel call: body, params, wheels, hits, impulses before, impulses after, out, result."""


@pytest.fixture(scope="module")
def recorded() -> list[Record]:
    """Every call of the plain Python kernel over ~5 s of a demo rover's drive."""
    records: list[Record] = []
    plain = tyre.solve  # the function itself, run as Python

    def recording(body, params, wheels, hits, impulses, out, work) -> float:
        before = list(impulses)
        result = plain(body, params, wheels, hits, impulses, out, work)
        records.append((list(body), list(params), list(wheels), list(hits), before, list(impulses), list(out), result))
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tyre, "kernels", lambda: (recording, tyre.wheel_rays))
        project = Project.load(demo_project())
        world = World(project, load_models(project))
        try:
            vehicle = world.vehicles[0]
            position, orientation = world.start_poses[0]
            vehicle.reset(tuple(position + np.array([0.0, 0.0, 0.4])), tuple(orientation))  # a drop: wheels free
            steps = round(1.0 / world.dt)
            for _ in range(steps):
                world.step()
            vehicle.accelerate(project.dynamics.engine_force)
            for index in range(3 * steps):
                vehicle.steer(math.sin(index * world.dt * 2.0))
                world.step()
            vehicle.accelerate(0.0)
            vehicle.brake(50 * project.dynamics.mass * 9.81)
            for _ in range(steps):
                world.step()
        finally:
            world.close()
    return records


W_CONTACT = [w * tyre.HIT + tyre.H_CONTACT for w in range(tyre.WHEELS)]


def _out(record: Record, wheel: int, what: int) -> float:
    return record[6][tyre.OUT_BODY + wheel * tyre.OUT_WHEEL + what]


def test_the_recording_covers_every_branch_of_the_kernel(recorded):
    hits = [r[3] for r in recorded]
    assert len(recorded) == 5 * 240
    assert any(h[i] == 0.0 for h in hits for i in W_CONTACT)  # a wheel in the air
    assert any(all(h[i] == 1.0 for i in W_CONTACT) for h in hits)  # all four on the ground
    assert any(_out(r, w, tyre.O_SKID) < 0.5 for r in recorded for w in range(tyre.WHEELS))  # skidding
    assert any(r[1][tyre.P_BRAKING] == 1.0 for r in recorded)
    wheels = [r[2] for r in recorded]
    assert any(w[i * tyre.WHEEL_IN + tyre.W_DRIVE] != 0.0 for w in wheels for i in range(tyre.WHEELS))
    assert any(abs(w[tyre.W_SIN]) > 0.1 for w in wheels)  # steered
    assert all(r[7] == 1.0 for r in recorded)


def test_the_tyres_stay_inside_the_friction_circle(recorded):
    # Coulomb: a wheel passes at most μ·N over the step, its forward and sideways impulses together.
    for record in recorded:
        params, after = record[1], record[5]
        limit = params[tyre.P_FRICTION] * params[tyre.P_DT]
        for w in range(tyre.WHEELS):
            load = _out(record, w, tyre.O_FORCE)
            assert math.hypot(after[2 * w], after[2 * w + 1]) <= limit * load * (1 + 1e-12) + 1e-15


def test_numba_computes_what_plain_python_computes(recorded):
    from sear.physics.tyrejit import compile_kernels

    solve, wheel_rays = compile_kernels(tyre.solve, tyre.wheel_rays)
    hard_points = np.array([0.5, 0.4, 0.1, 0.5, -0.4, 0.1, -0.5, 0.4, 0.1, -0.5, -0.4, 0.1])
    worst_force = worst_impulse = worst_ray = 0.0
    for body, params, wheels, hits, before, after, out, result in recorded:
        impulses = np.array(before)
        compiled_out = np.zeros(len(out))
        work = np.zeros(tyre.WORK * tyre.WHEELS)
        assert solve(np.array(body), np.array(params), np.array(wheels), np.array(hits), impulses, compiled_out,
                     work) == result
        worst_force = max(worst_force, float(np.max(np.abs(compiled_out - out))))
        worst_impulse = max(worst_impulse, float(np.max(np.abs(impulses - after))))
        rays = np.zeros(6 * tyre.WHEELS)
        plain_rays = [0.0] * (6 * tyre.WHEELS)
        wheel_rays(np.array(body), np.array(params), hard_points, np.array(wheels), rays)
        tyre.wheel_rays(body, params, hard_points.tolist(), wheels, plain_rays)
        worst_ray = max(worst_ray, float(np.max(np.abs(rays - plain_rays))))
    assert worst_force <= 1e-9  # N (and m, rad for the wheels' lengths and turns)
    assert worst_impulse <= 1e-9  # N·s
    assert worst_ray <= 1e-12  # m


def test_without_a_writable_cache_folder_the_kernels_compile_all_the_same(recorded, monkeypatch):
    # numba raises RuntimeError ("no locator available") at decoration when no cache folder will do.
    from numba.core import caching

    from sear.physics.tyrejit import compile_kernels

    implementation = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # its name in older numbas
    monkeypatch.setattr(implementation, "_locator_classes", [])
    solve, _ = compile_kernels(tyre.solve, tyre.wheel_rays)
    body, params, wheels, hits, before, after, out, result = recorded[len(recorded) // 2]
    impulses, compiled_out = np.array(before), np.zeros(len(out))
    assert solve(np.array(body), np.array(params), np.array(wheels), np.array(hits), impulses, compiled_out,
                 np.zeros(tyre.WORK * tyre.WHEELS)) == result
    assert np.max(np.abs(compiled_out - out)) <= 1e-9
    assert np.max(np.abs(impulses - after)) <= 1e-9


def test_kernels_numba_cannot_compile_run_as_plain_python_with_a_warning(monkeypatch):
    import sear.physics.tyrejit

    def fails(*args):
        raise TypeError("a numba that cannot type the kernel")

    monkeypatch.setattr(sear.physics.tyrejit, "compile_kernels", lambda solve, rays: (fails, fails))
    for name, value in (("_compiled", None), ("_tried", False), ("_plain_updates", 0), ("_threshold", 0)):
        monkeypatch.setattr(tyre, name, value)
    monkeypatch.delenv(tyre.NO_NUMBA_VARIABLE, raising=False)
    with pytest.warns(RuntimeWarning, match="cannot type the kernel"):
        chosen = tyre.kernels()
    assert chosen == (tyre.solve, tyre.wheel_rays)
    assert not tyre.uses_arrays(chosen)
    assert tyre.kernels() == (tyre.solve, tyre.wheel_rays)  # asked once only


# --- the plain Python path in a run -------------------------------------------------------------------

RUN = """
import os, sys
os.environ["SEAR_NUMBA_AFTER"] = "300"  # numba's kernels from the 300th update on, where they can be had
{block}
from sear.cli import main
code = main(["run", sys.argv[1], "--headless", "--duration", "4", "--seed", "3", "--log", sys.argv[2]])
print("numba imported:", sys.modules.get("numba") is not None)
sys.exit(code)
"""
BLOCKS = {
    "compiled": "",  # plain Python for 300 updates, then compiled: the switch itself is part of what is compared
    "switched off": "os.environ['SEAR_NO_NUMBA'] = '1'",
    "numba missing": "sys.modules['numba'] = None  # import numba raises ImportError",
    "default": "del os.environ['SEAR_NUMBA_AFTER']",
}


def _run(kind: str, project: Path, log: Path) -> list[dict[str, str]]:
    result = subprocess.run([sys.executable, "-c", RUN.format(block=BLOCKS[kind]), str(project), str(log)],
                            capture_output=True, text=True, timeout=300, cwd=log.parent)
    assert result.returncode == 0, result.stderr
    assert f"numba imported: {kind == 'compiled'}" in result.stdout
    return _rows(log)


def _rows(log: Path) -> list[dict[str, str]]:
    with log.open() as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def compiled_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    """The log of the demo's first 4 s with the compiled kernels: one run that both plain paths compare with."""
    folder = tmp_path_factory.mktemp("compiled")
    resources.copy_demo(folder / "demo")
    return _run("compiled", folder / "demo" / "demo.prj", folder / "compiled.csv")


@pytest.mark.parametrize("kind", ["switched off", "numba missing"])
def test_a_run_on_the_plain_python_path_drives_as_the_compiled_one(kind, demo_copy, tmp_path, compiled_rows):
    rows = _run(kind, demo_copy / "demo.prj", tmp_path / "plain.csv")
    # The robot drove its route's first leg: the path length of the true positions, and the odometer's
    # distance from the rear wheels' turns (the kernel's wheel rotation) agree while the tyres roll.
    path = sum(math.dist((float(a["truth.x"]), float(a["truth.y"])), (float(b["truth.x"]), float(b["truth.y"])))
               for a, b in itertools.pairwise(rows))
    assert path > 4.0
    assert float(rows[-1]["odometer.distance"]) == pytest.approx(path, rel=0.02)
    compiled = compiled_rows
    assert len(compiled) == len(rows)
    for plain_row, compiled_row in zip(rows, compiled, strict=True):
        for column, value in plain_row.items():
            if value and compiled_row[column]:
                assert abs(float(value) - float(compiled_row[column])) <= 1e-9, column


def test_a_short_run_does_not_load_numba(demo_copy, tmp_path):
    # Loading numba costs more CPU than a start-up: a 4 s run of one robot (960 updates) stays plain Python.
    result = subprocess.run([sys.executable, "-c", RUN.format(block=BLOCKS["default"]), str(demo_copy / "demo.prj"),
                             str(tmp_path / "run.csv")], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "numba imported: False" in result.stdout
    assert len(_rows(tmp_path / "run.csv")) == 240
