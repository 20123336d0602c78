"""The tyre kernels compiled ahead of time (sear.physics.tyreaot): built once into a folder, they compute
what the plain Python kernel computes on steps recorded from a drive of the demo rover, and a run finds
them there and uses them from its first update without importing numba; a changed kernel source is never
matched to a module built from another."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sear.physics import tyre, tyreaot

from . import test_tyre_kernel as kernel_tests
from .test_tyre_kernel import recorded  # noqa: F401  (the fixture: the recorded kernel calls)

SOURCE = Path(tyre.__file__)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the module built from this install's kernels: the one `make setup` built (what runs
    load), else one built here (numba, pycc and a C compiler; 30-60 s of CPU, so not twice per suite)."""
    installed = tyreaot.folder()
    if tyreaot.path(SOURCE, installed).exists():
        return installed
    folder = tmp_path_factory.mktemp("aot")
    try:
        kernels = tyreaot.build(SOURCE, tyre.solve, tyre.wheel_rays, folder, batched=tyre.batched)
    except tyreaot.BuildError as error:
        pytest.skip(f"cannot build ahead of time here: {error}")
    assert kernels is not None
    return folder


def test_the_ahead_of_time_kernels_compute_what_plain_python_computes(built, recorded, monkeypatch):  # noqa: F811
    # test_tyre_kernel's comparison of numba's kernels with the plain Python one, on its recorded drive
    # (wheels in the air, rolling, steering, a braked skid: it checks they cover every branch), given the
    # ahead-of-time kernels instead of the just-in-time ones: the same bounds, 1e-9 N and 1e-12 m.
    import sear.physics.tyrejit

    ahead = tyreaot.load(SOURCE, built)
    assert ahead is not None
    monkeypatch.setattr(sear.physics.tyrejit, "compile_kernels", lambda solve, wheel_rays: ahead)
    kernel_tests.test_numba_computes_what_plain_python_computes(recorded)


def test_the_batched_kernels_compute_what_each_vehicles_own_call_computes(built, recorded):  # noqa: F811
    # The recorded drive's kernel calls (test_tyre_kernel) as the rows of one batch: solve_many and
    # wheel_rays_many give each row what the plain Python kernels give its call, to 1e-9 N and 1e-12 m.
    batched = tyreaot.load_batched(SOURCE, built)
    assert batched is not None
    solve_many, wheel_rays_many = batched
    calls = recorded[::len(recorded) // 60]  # spread over the drop, the drive and the braked skid
    assert len(calls) >= 60
    bodies, params, wheels, hits, impulses = (np.array([call[column] for call in calls], dtype=float)
                                              for column in range(5))
    out = np.zeros((len(calls), tyre.OUT_BODY + tyre.OUT_WHEEL * tyre.WHEELS))
    work = np.zeros((len(calls), tyre.WORK * tyre.WHEELS))
    finite = np.zeros(len(calls))
    solve_many(bodies, params, wheels, hits, impulses, out, work, finite)
    hard_points = np.ascontiguousarray(np.tile(np.linspace(-0.3, 0.3, 12), (len(calls), 1)))
    rays = np.zeros((len(calls), 6 * tyre.WHEELS))
    wheel_rays_many(bodies, params, hard_points, wheels, rays)
    for index, call in enumerate(calls):
        body, param, wheel, hit, impulse = (list(map(float, argument)) for argument in call[:5])
        plain_out, plain_work = [0.0] * len(out[index]), [0.0] * len(work[index])
        assert finite[index] == tyre.solve(body, param, wheel, hit, impulse, plain_out, plain_work)
        np.testing.assert_allclose(out[index, :6], plain_out[:6], rtol=0.0, atol=1e-9)
        np.testing.assert_allclose(out[index, 6:], plain_out[6:], rtol=0.0, atol=1e-12)
        np.testing.assert_allclose(impulses[index], impulse, rtol=0.0, atol=1e-12)
        plain_rays = [0.0] * 24
        tyre.wheel_rays(body, param, hard_points[index].tolist(), wheel, plain_rays)
        np.testing.assert_allclose(rays[index], plain_rays, rtol=0.0, atol=1e-12)


RUN = """
import os, sys
{block}
from sear.cli import main
from sear.physics import tyre
code = main(["run", sys.argv[1], "--headless", "--duration", "0.5", "--seed", "3"])
print("compiled:", tyre.uses_arrays(tyre.kernels()), "numba imported:", sys.modules.get("numba") is not None)
sys.exit(code)
"""


@pytest.mark.parametrize(("block", "expected"), [
    ("", "compiled: True numba imported: False"),  # the module from the first update, no numba
    ("os.environ['SEAR_NO_NUMBA'] = '1'", "compiled: False numba imported: False"),  # switched off: plain
    pytest.param("os.environ['SEAR_NUMBA_AFTER'] = '0'", "compiled: True numba imported: True",  # numba's own,
                 marks=pytest.mark.slow),  # asked for: the positive control of "numba imported" (compiles: slow)
])
def test_a_run_uses_the_module_from_its_first_update_without_numba(built, block, expected, demo_copy):
    # 0.5 s is 120 updates, far below COMPILE_AFTER: compiled kernels here come from the module (or from
    # numba when SEAR_NUMBA_AFTER asks for them, the positive control of "numba imported").
    env = {k: v for k, v in os.environ.items() if k not in ("SEAR_NUMBA_AFTER", "SEAR_NO_NUMBA")}
    env["NUMBA_CACHE_DIR"] = str(built)
    result = subprocess.run([sys.executable, "-c", RUN.format(block=block), str(demo_copy / "demo.prj")],
                            capture_output=True, text=True, timeout=300, cwd=demo_copy, env=env)
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout


def test_a_module_is_found_only_for_the_source_it_was_built_from(tmp_path, built):
    # The built module is found for this source (positive control), not for a kernel edited since.
    assert tyreaot.load(SOURCE, built) is not None
    edited = tmp_path / "tyre.py"
    edited.write_bytes(SOURCE.read_bytes() + b"\n# edited\n")
    assert tyreaot.module_name(edited) != tyreaot.module_name(SOURCE)
    assert tyreaot.load(edited, built) is None
    assert tyreaot.load(SOURCE, tmp_path) is None  # nor in a folder it was not built in
