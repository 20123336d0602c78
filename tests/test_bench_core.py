"""bench/bench_core.py still runs: a quick pass of its two kinds of row (a run timed inside a child, and
`sear run` timed from outside) against a baseline that has no SEAR at all, whose rows must say n/a."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_bench_core_quick_prints_figures_for_this_tree_and_na_for_a_tree_without_sear(tmp_path: Path) -> None:
    empty = tmp_path / "no-sear"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_core.py"), "--quick", "--rows", "demo,startup",
                           "--baseline-tree", str(empty)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    rows = {line[:46].strip(): line[46:].split() for line in done.stdout.splitlines() if line[:46].strip()}
    for label in ("demo, CPU RTF", "demo, wall RTF", "start-up, demo 0.1 s, CPU s"):
        this, baseline = rows[label][0], rows[label][1]
        assert math.isfinite(float(this)) and float(this) > 0, (label, this)
        assert baseline == "n/a", (label, baseline)
    # a 1-second quick run of the demo simulates faster than 0.1x real time per CPU second on any machine
    # that runs the suite, and its start-up (Python, numpy, pybullet, the meshes) takes more than 50 ms
    assert float(rows["demo, CPU RTF"][0]) > 0.1
    assert float(rows["start-up, demo 0.1 s, CPU s"][0]) > 0.05
    assert re.search(r"^n/a: demo on baseline: .*sear", done.stdout, re.MULTILINE), done.stdout
    assert not re.search(r"^n/a: \w+ on this", done.stdout, re.MULTILINE), done.stdout
