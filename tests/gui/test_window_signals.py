"""SIGTERM (the settings window's Stop) and SIGINT end a windowed `sear run` cleanly: exit status 128 +
the signal, and the log whole (the CSV ends with a whole row, every .npy header counts every row)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from sear.runtime.logs import load_arrays

pytestmark = pytest.mark.gl


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_a_windowed_run_with_its_log_whole(demo_copy, tmp_path, sig):
    log = tmp_path / "win.csv"
    command = [sys.executable, "-X", "faulthandler", "-m", "sear", "run", str(demo_copy / "demo.prj"),
               "--log", str(log)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ))
    try:
        deadline = time.monotonic() + 120
        # Rows reach the file every simulated second: wait for more than one second's worth (60 Hz).
        while not (log.exists() and log.read_bytes().count(b"\r\n") > 80):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.2)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err and ("terminated" if sig == signal.SIGTERM else "interrupted") in err
    data = log.read_bytes()
    assert data.endswith(b"\r\n")
    rows = data.decode().split("\r\n")[:-1]
    assert len(rows) > 80 and {len(r.split(",")) for r in rows} == {len(rows[0].split(","))}
    arrays = load_arrays(log)
    assert len(arrays["lidar.time"]) == len(arrays["lidar.ranges"]) >= 10
    for key, values in arrays.items():  # closed properly: the headers count every row
        assert np.array_equal(np.load(log.with_suffix(".arrays") / f"{key}.npy"), values, equal_nan=True)
