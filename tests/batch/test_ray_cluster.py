"""`sear batch SWEEP --ray ADDRESS` on a two-node Ray cluster started here with Ray's own command line, as
docs/batch.md tells a user to: `ray start --head` and a second node (`ray start --address`), each with its
own temporary folder and one CPU, on 127.0.0.1. A 16-run sweep spreads over both nodes (the manifest's
`ran_on` names each run's node, and both nodes ran some), the project's files travel with the job (the
cluster's nodes run it from Ray's copy, not from the project's folder), the run logs come back, and the
table equals the local pool's cell by cell. Both nodes are stopped afterwards (their process sessions
killed) and no process of theirs is left.

Ray is an optional extra (`make test-slow` installs it); without it this test is skipped."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sear.batch.command import run_batch
from tests.batch.helpers import make_project, write_sweep

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray", reason="the optional Ray extra is not installed (pip install -e '.[ray]')")

RAY = str(Path(sys.executable).with_name("ray"))
NOT_DETERMINISTIC = {"wall_time_s", "attempts", "earlier_errors"}
"""Columns that depend on the machine's load (see test_ray.py)."""
START_TIMEOUT = 180.0
"""s: a node of Ray takes 10-30 s to start on 2 loaded cores."""
ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
"""A throw-away cluster on loopback: no token (the machine's ~/.ray token is another cluster's business),
no usage report."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _session(sid: int) -> list[int]:
    """The live (not zombie) processes of session `sid` (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry))
    return found


def _wait_for(path: Path, text: str, proc: subprocess.Popen) -> None:
    end = time.monotonic() + START_TIMEOUT
    while time.monotonic() < end:
        if text in path.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    raise AssertionError(f"the Ray node did not start:\n{path.read_text(errors='replace')[-3000:]}")


@pytest.fixture
def cluster(monkeypatch) -> Iterator[tuple[str, Path]]:
    """A head node and a second node (one CPU each) on 127.0.0.1; the address and the logs' folder."""
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    folder = Path(tempfile.mkdtemp(prefix="sr"))  # short: Ray's socket paths live below it
    port = _free_port()
    env = {**os.environ, **ENV}
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats",
              "--include-log-monitor=false"]
    nodes: list[subprocess.Popen] = []
    try:
        head_log = folder / "head.log"
        with open(head_log, "w") as out:
            nodes.append(subprocess.Popen(
                [RAY, "start", "--head", f"--port={port}", "--include-dashboard=false",
                 f"--temp-dir={folder / 'h'}", *common], env=env, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True))
        _wait_for(head_log, "Ray runtime started", nodes[0])
        second_log = folder / "second.log"
        with open(second_log, "w") as out:
            nodes.append(subprocess.Popen(
                [RAY, "start", f"--address=127.0.0.1:{port}", f"--temp-dir={folder / 's'}", *common],
                env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))
        _wait_for(second_log, "Ray runtime started", nodes[1])
        ray.init(address=f"127.0.0.1:{port}", _node_ip_address="127.0.0.1", include_dashboard=False,
                 log_to_driver=False)
        try:
            end = time.monotonic() + START_TIMEOUT
            while sum(node["Alive"] for node in ray.nodes()) < 2 and time.monotonic() < end:
                time.sleep(0.5)
            assert sum(node["Alive"] for node in ray.nodes()) == 2
        finally:
            ray.shutdown()
        yield f"127.0.0.1:{port}", folder
    finally:
        for node in nodes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.pid, signal.SIGKILL)  # each node is a session of its own: every Ray process of it
        for node in nodes:
            node.wait()
        end = time.monotonic() + 15.0
        while any(_session(node.pid) for node in nodes) and time.monotonic() < end:
            time.sleep(0.2)
        left = [pid for node in nodes for pid in _session(node.pid)]
        shutil.rmtree(folder, ignore_errors=True)
        assert left == [], f"Ray processes left behind: {left}"


def table(folder: Path) -> list[dict[str, str]]:
    with open(folder / "results.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_a_sweep_spreads_over_two_nodes_and_gives_the_local_pools_table(cluster, tmp_path):
    address, nodes_folder = cluster
    make_project(tmp_path)
    sweep = write_sweep(tmp_path, """project = "bot.prj"
duration = 1.0
seeds = "1..8"
timeout = 600

[vary]
code.SPEED = [0.2, 2.0]
""")
    out = io.StringIO()
    assert run_batch(sweep, use_ray=True, ray=address, output=tmp_path / "ray-results", stream=out,
                     report=False) == 0, out.getvalue()
    assert f"on the Ray cluster at {address}" in out.getvalue() and not ray.is_initialized()
    assert run_batch(sweep, workers=2, output=tmp_path / "local-results", stream=out, report=False) == 0, \
        out.getvalue()
    local, remote = table(tmp_path / "local-results"), table(tmp_path / "ray-results")
    assert len(local) == len(remote) == 16 and list(local[0]) == list(remote[0])
    for a, b in zip(local, remote, strict=True):
        assert a["status"] == b["status"] == "ok", (a, b)
        for column in a.keys() - NOT_DETERMINISTIC:
            assert a[column] == b[column], (a["run_id"], column)
        kept = Path("runs") / a["run_id"] / "log.csv"  # the logs came back from the nodes
        assert (tmp_path / "local-results" / kept).read_bytes() == (tmp_path / "ray-results" / kept).read_bytes()
    # The project travelled with the job: Ray unpacked a copy of its folder on the nodes.
    assert list(nodes_folder.rglob("working_dir_files/*/bot.prj")), "no copy of the project on the nodes"
    assert len({row["final_x"] for row in local}) == 16  # sixteen different paths: the comparison means something
    manifest = json.loads((tmp_path / "ray-results" / "manifest.json").read_text())
    places = [run.get("ran_on") for run in manifest["runs"]]
    assert all(place is not None and place["ray_node"] for place in places), places
    assert len({place["ray_node"] for place in places}) == 2, "the runs did not spread over both nodes"
    local_manifest = json.loads((tmp_path / "local-results" / "manifest.json").read_text())
    assert all("ray_node" not in run["ran_on"] for run in local_manifest["runs"])
