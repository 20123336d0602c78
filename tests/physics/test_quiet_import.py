"""pybullet's "build time" line (standard error, shown red in the settings window's console on every
Simulate) is left out when SEAR imports the physics."""

from __future__ import annotations

import subprocess
import sys


def _stderr(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          timeout=120).stderr


def test_importing_the_physics_writes_no_build_time_line():
    assert "pybullet build time" in _stderr("import pybullet")  # positive control: pybullet itself does
    stderr = _stderr("import sys, sear.physics.world; print('after', file=sys.stderr)")
    assert "pybullet build time" not in stderr
    assert "after" in stderr  # standard error still works after the import


def test_a_simulation_run_writes_no_build_time_line(demo_copy, tmp_path):
    result = subprocess.run([sys.executable, "-m", "sear", "run", str(demo_copy / "demo.prj"), "--headless",
                             "--duration", "0.2", "--log", str(tmp_path / "run.csv")],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "sear: simulated" in result.stdout
    assert "pybullet build time" not in result.stderr + result.stdout
