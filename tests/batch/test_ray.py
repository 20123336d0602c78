"""`sear batch --ray`: the same sweep as Ray tasks on a local Ray instance with 2 CPUs gives the local
pool's table, cell by cell, and the same run logs. Only what is deterministic is compared: not the wall
times, nor how many attempts a run took (a loaded machine may time a run out and retry it on one side),
but every row must end `ok`.

Ray is an optional extra (`pip install -e '.[ray]'`; `make test-slow` installs it): without it this test
is skipped."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from sear.batch.command import run_batch
from tests.batch.helpers import make_project, write_sweep

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray", reason="the optional Ray extra is not installed (pip install -e '.[ray]')")

NOT_DETERMINISTIC = {"wall_time_s", "attempts", "earlier_errors"}
"""Columns that depend on the machine's load: a run that timed out and was retried has 2 attempts and
the first one's error."""


def table(folder: Path) -> list[dict[str, str]]:
    with open(folder / "results.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_a_sweep_on_ray_gives_the_local_pools_table_cell_by_cell(tmp_path):
    make_project(tmp_path)
    sweep = write_sweep(tmp_path, """project = "bot.prj"
duration = 1.0
seeds = "1..3"
timeout = 600

[vary]
code.SPEED = [0.2, 2.0]
""")
    out = io.StringIO()
    assert run_batch(sweep, workers=2, output=tmp_path / "local-results", stream=out, report=False) == 0, \
        out.getvalue()
    assert run_batch(sweep, use_ray=True, workers=2, output=tmp_path / "ray-results", stream=out,
                     report=False) == 0, out.getvalue()
    assert "on a local Ray instance (2 CPUs)" in out.getvalue() and not ray.is_initialized()
    local, remote = table(tmp_path / "local-results"), table(tmp_path / "ray-results")
    assert len(local) == len(remote) == 6 and list(local[0]) == list(remote[0])
    for a, b in zip(local, remote, strict=True):
        assert a["status"] == b["status"] == "ok", (a, b)
        for column in a.keys() - NOT_DETERMINISTIC:
            assert a[column] == b[column], (a["run_id"], column)
        kept = Path("runs") / a["run_id"] / "log.csv"
        assert (tmp_path / "local-results" / kept).read_bytes() == (tmp_path / "ray-results" / kept).read_bytes()
    # The comparison means something: the seeds and speeds give six different paths.
    assert len({row["final_x"] for row in local}) == 6
