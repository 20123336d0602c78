"""Every SEAR process runs numpy with one BLAS thread unless the user sets another figure: OpenBLAS's thread
pool spin-waits between SEAR's small matrix products (a quarter of a depth-camera run's CPU went to it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

THREADS = "import os, sys; {first}; import numpy; print(len(os.listdir('/proc/self/task')))"


def _threads(first: str, env_threads: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if env_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = env_threads
    done = subprocess.run([sys.executable, "-c", THREADS.format(first=first)], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
                    reason="counts threads in /proc on a machine with two cores or more")
def test_importing_sear_first_keeps_numpy_to_one_thread_and_a_users_figure_wins():
    # Positive control: numpy alone starts OpenBLAS's pool, a thread per core beside the main one.
    assert _threads("pass", None) > 1
    assert _threads("import sear", None) == 1
    assert _threads("import sear", "2") == 2  # the user's own setting is kept
