"""The bundled differential-drive demo (sear/data/diffbot, linked as assets/diffbot): shipped in the
package, its models what sear.demo makes, and `sear run` drives its 2 m square by odometry, turning on the
spot at the corners and passing under the table its code adds."""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

import numpy as np

from sear import resources
from sear.cli import main
from sear.demo import DIFFBOT_MODEL_FILES, write_diffbot_models
from sear.project import Project

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "sear" / "data" / "diffbot"
CORNERS = [(2.0, 0.0), (2.0, 2.0), (0.0, 2.0), (0.0, 0.0)]
"""The square diffbot_code.py drives, m east and north of the start (the robot's origin is the middle of
its driven axle, so odometry and ground truth speak of the same point)."""
TABLE = (0.6, 1.4, -0.35, 0.35)
"""The table's footprint its code adds (x from, x to, y from, y to), m."""


def test_the_shipped_models_are_what_the_generator_makes(tmp_path):
    write_diffbot_models(tmp_path)
    for name in DIFFBOT_MODEL_FILES:
        assert (SHIPPED / name).read_bytes() == (tmp_path / name).read_bytes(), (
            f"sear/data/diffbot/{name} differs from sear/demo.py's: "
            "run `python -m sear.demo --diffbot sear/data/diffbot`")
    assert main(["validate", str(REPO / "assets" / "diffbot" / "diffbot.prj")]) == 0


def test_it_is_packaged_and_linked_from_assets():
    assert os.readlink(REPO / "assets" / "diffbot") == "../sear/data/diffbot"
    packaged = resources.packaged("diffbot", "diffbot.prj")
    assert packaged.is_file()
    project = Project.load(Path(str(packaged)))
    assert project.dynamics.drive_type == "differential"
    for choice in project.file_choices().values():  # every file it names is shipped beside it
        assert choice.path is not None and choice.path.is_file(), choice.label


def test_sear_run_drives_the_square_turning_on_the_spot_and_under_the_table(tmp_path, capsys):
    log = tmp_path / "diffbot.csv"
    # One lap takes 30.6 s of simulated time.
    assert main(["run", str(REPO / "assets" / "diffbot" / "diffbot.prj"), "--headless", "--duration", "32",
                 "--log", str(log)]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "corner 4 at (0.0, 0.0) m" in out
    with log.open() as fh:
        rows = list(csv.DictReader(fh))
    t, x, y, z, yaw = (np.array([float(r[k]) for r in rows])
                       for k in ("time", "truth.x", "truth.y", "truth.z", "truth.yaw"))
    assert len(t) > 1000
    moving = t > 1.0
    visits = []
    for cx, cy in CORNERS:
        near = moving & (np.hypot(x - cx, y - cy) < 0.06)
        assert near.any(), f"never within 6 cm of ({cx}, {cy})"
        visits.append(t[near][0])
        # Turned on the spot there: within 6 cm of the corner its heading swept about a quarter turn.
        headings = np.unwrap(yaw[near])
        if (cx, cy) != (0.0, 0.0):  # the last corner is the end of the run's lap
            assert math.degrees(headings.max() - headings.min()) > 80.0
    assert visits == sorted(visits)  # in order
    # Along the first side it stayed on the line, so it passed under the table, between its legs, its
    # height unchanged (it neither climbed nor was pushed down).
    under = moving & (t < visits[0]) & (x > TABLE[0]) & (x < TABLE[1])
    assert under.any() and np.all((y[under] > TABLE[2] + 0.2) & (y[under] < TABLE[3] - 0.2))
    assert np.ptp(z[moving]) < 0.005
