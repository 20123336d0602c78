"""`sear replay` and `sear render` on the command line: what they say when they cannot run (no display, a
film that exists), and `sear render` filming without a display (it starts its own Xvfb)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sear import exitcodes
from sear.cli import main
from tests import xserver


def test_replay_without_a_display_names_sear_render(monkeypatch, tmp_path, capsys):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert main(["replay", str(tmp_path / "run.mcap")]) == exitcodes.USER_ERROR
    err = capsys.readouterr().err
    assert "no display" in err and "sear render" in err


def test_render_keeps_an_existing_film_without_force(tmp_path, capsys):
    film = tmp_path / "film.mp4"
    film.write_bytes(b"mine")
    assert main(["render", str(tmp_path / "run.mcap"), str(film)]) == exitcodes.USER_ERROR
    assert "--force" in capsys.readouterr().err
    assert film.read_bytes() == b"mine"


def test_render_rejects_a_bad_size(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["render", "run.mcap", "out.mp4", "--size", "wide"])
    assert stopped.value.code == exitcodes.USAGE
    assert "WIDTHxHEIGHT" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not xserver.available(), reason="needs Xvfb")
def test_render_without_a_display_starts_its_own_x_server(tmp_path):
    from sear import resources
    from sear.gui.simcapture import read_film
    from sear.project import Project
    from sear.recording.writer import Recorder
    from sear.runtime.simulation import Simulation

    resources.copy_demo(tmp_path / "demo")
    simulation = Simulation(Project.load(tmp_path / "demo" / "demo.prj"), seed=1,
                            observer=Recorder(tmp_path / "run.mcap"))
    try:
        simulation.run(1.0)
    finally:
        simulation.close()
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([sys.executable, "-m", "sear", "render", str(tmp_path / "run.mcap"),
                           str(tmp_path / "run.mp4"), "--size", "320x240"], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert read_film(tmp_path / "run.mp4") == ((320, 240), 26, 25.0)  # 0.00, 0.04, ..., 1.00 s
