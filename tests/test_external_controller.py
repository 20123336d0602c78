"""`sear run --external`: a controller the simulation did not start connects over TCP on 127.0.0.1 with
the one-time token; the Python client and the C example drive the demo robot."""

from __future__ import annotations

import csv
import math
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sear import protocol
from sear.controller import ControllerError, connect
from sear.usercode import MAX_PENDING, ExternalListener

ROOT = Path(__file__).resolve().parent.parent


def _start(prj: Path, *args: str) -> tuple[subprocess.Popen, int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "sear", "run", str(prj), "--external", "--headless", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    match = re.search(r"127\.0\.0\.1 port (\d+), token ([0-9a-f]+)", line)
    assert match, line + proc.stderr.read()
    return proc, int(match.group(1)), match.group(2)


def _stop(proc: subprocess.Popen) -> None:
    """The run ended, or killed when a failed check left it running; its pipes closed either way."""
    proc.kill()
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()


def test_the_listener_binds_to_localhost_only():
    listener = ExternalListener()
    try:
        assert listener.sock.getsockname()[0] == "127.0.0.1" and listener.port > 0
        assert len(listener.token) >= 32
    finally:
        listener.close()


def test_a_python_script_drives_a_simulation_it_did_not_start(demo_copy, tmp_path):
    log = tmp_path / "ext.csv"
    proc, port, token = _start(demo_copy / "demo.prj", "--duration", "1", "--log", str(log))
    try:
        with pytest.raises(ControllerError, match="wrong or missing token"):
            connect(port, "0" * 32)
        with connect(port, token) as sim:
            assert "gps" in sim.sensor_names and sim.time == 0.0
            with pytest.raises(ControllerError, match="already connected"):
                connect(port, token)
            ticks, times = 0, []
            while sim.step():
                ticks += 1
                times.append(sim.time)
                sim.accelerate(30.0)
                if ticks == 30:
                    refused = r"^sim\.accelerate\(force=inf\): force must be a finite number"  # call and argument
                    with pytest.raises(ValueError, match=refused):
                        sim.accelerate(math.inf)
                    fix = sim.read("gps")
                    assert fix is not None and 30 < fix.latitude < 40
                    assert sim.pose.x > 0.05  # driven east by the forces it sent
        _out, err = proc.communicate(timeout=60)
    finally:
        _stop(proc)
    assert proc.returncode == 0, err
    assert "refused a connection: wrong or missing token" in err
    # The start turn at 0 s, then every control tick of the second: 60 of them.
    assert times[0] == 0.0 and times[1:] == pytest.approx([(k + 1) / 60 for k in range(60)])
    with open(log, newline="") as fh:
        assert len(list(csv.reader(fh))) == 1 + 60


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler")
def test_the_c_example_drives_the_demo_robot_round_its_corners(demo_copy, tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    exe = tmp_path / "square"
    subprocess.run([compiler, "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Werror", "-O2", "-o", str(exe),
                    str(ROOT / "examples" / "controllers" / "c" / "square.c"), "-lm"], check=True, timeout=120)
    log = tmp_path / "square.csv"
    proc, port, token = _start(demo_copy / "demo.prj", "--duration", "30", "--log", str(log))
    try:
        square = subprocess.run([str(exe), str(port), token], capture_output=True, text=True, timeout=300)
        proc.communicate(timeout=60)
    finally:
        _stop(proc)
    assert square.returncode == 0 and proc.returncode == 0, square.stderr
    assert "reached corner 3 (0, 12)" in square.stdout
    # Ground truth, not the controller's word: the robot passed each corner (east, north of its start).
    with open(log, newline="") as fh:
        rows = list(csv.DictReader(fh))
    x0, y0 = float(rows[0]["truth.x"]), float(rows[0]["truth.y"])
    visits = []
    for east, north in [(12.0, 0.0), (12.0, 12.0), (0.0, 12.0)]:
        gaps = [math.hypot(float(r["truth.x"]) - x0 - east, float(r["truth.y"]) - y0 - north) for r in rows]
        nearest = min(range(len(gaps)), key=gaps.__getitem__)
        assert gaps[nearest] < 2.5, (east, north, gaps[nearest])
        visits.append(nearest)
    assert visits == sorted(visits)  # in the order of the route


def _idle_connections(port: int, count: int) -> list[socket.socket]:
    """`count` connections that connect and say nothing (a slowloris)."""
    return [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(count)]


def _hello(port: int, token: str) -> protocol.Connection:
    conn = protocol.Connection(socket.create_connection(("127.0.0.1", port), timeout=3))
    conn.send({"t": "hello", "version": protocol.VERSION, "token": token, "name": "real"})
    return conn


def test_idle_connections_keep_the_real_controller_out_no_longer_than_the_hello_deadline(demo_copy):
    """20 connections that never say hello, then the real controller: it is welcomed within 12 s, where
    handshakes served one after the other would keep it out for 20 x HELLO_DEADLINE (2 s) = 40 s (the
    bound leaves room for a loaded machine: 3 s failed under a load of 6 on 2 cores), and every idle one is
    told why and closed."""
    proc, port, token = _start(demo_copy / "demo.prj", "--duration", "1")
    idle = _idle_connections(port, 20)
    try:
        conn = _hello(port, token)
        try:
            assert conn.recv(12.0)["t"] == "welcome"  # TimeoutError when the idle ones hold it up
        finally:
            conn.close()
        for sock in idle:  # each: an error reply saying why, then the end of the stream
            sock.settimeout(10.0)
            reply = protocol.Connection(sock).recv(10.0)
            assert reply["t"] == "error" and "connection refused" in reply["message"], reply
    finally:
        for sock in idle:
            sock.close()
        _stop(proc)


def test_pending_connections_are_capped_the_longest_waiting_closed_first():
    """More idle connections than MAX_PENDING: the ones that waited longest are closed as new ones come, and
    a controller behind all of them is still welcomed (the listener served in this thread, wait bounded)."""
    listener = ExternalListener()
    idle = _idle_connections(listener.port, MAX_PENDING + 8)
    good = _hello(listener.port, listener.token)
    try:
        host = listener.accept({"sensors": []}, timeout=1.0, wait=10.0)
        assert good.recv(3.0)["t"] == "welcome"
        host.conn.close()
        messages = []
        for sock in idle:
            messages.append(protocol.Connection(sock).recv(5.0)["message"])
        evicted = [m for m in messages if f"more than {MAX_PENDING} connections" in m]
        # 25 connections, 16 places: the nine that waited longest (the good one came last, so it made room too)
        assert messages[:9] == evicted
        assert all("another controller connected first" in m for m in messages[9:])  # the rest: when it came
    finally:
        good.close()
        for sock in idle:
            sock.close()
        listener.close()
