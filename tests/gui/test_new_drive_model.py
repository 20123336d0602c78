"""Acceptance: a drive model declared in this file alone is a word a project file may name (it loads, saves
and validates), an entry of the settings window's drop-down (choosing it writes it to the project) and what
moves the robot in a headless run, with no edit anywhere else (issue 22)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from sear.cli import main
from sear.drives import registry
from sear.drives.base import DriveModel
from sear.errors import ProjectError
from sear.project import Project

from ..physics.helpers import ROVER, rover_project

pytestmark = pytest.mark.gl

FORCE = 10.0
"""N: the engine force the run's user code asks for (each wheel's grip is about μ·m·g/4 = 49 N)."""


# --- the new model ----------------------------------------------------------------------------------------

class BoostDrive(DriveModel):
    """Four motors wired in parallel: every wheel pushes with the whole engine force; none steers."""

    NAME = "boost"
    LABEL = "Boost (every wheel pushes with the whole engine force)"
    HELP = "Every wheel is driven with the whole engine force (four times a skid steer's); no wheel steers."

    def wheel_forces(self, *, engine_force: float, sides: tuple[float, float] | None, turn: float,
                     full_force: float) -> list[float]:
        return [engine_force] * len(self.wheels)


# --- the checks ----------------------------------------------------------------------------------------------

@pytest.fixture
def boost():
    registry.register(BoostDrive)
    yield BoostDrive
    registry.unregister("boost")
    assert "boost" not in registry.names()


def _rover_file(folder: Path, drive_type: str) -> Path:
    """A .prj of the test rover on flat ground naming `drive_type` (written as a car, then the word put in:
    saving checks the word), with user code that asks for FORCE from the first tick."""
    project = rover_project(folder, engine_force=FORCE, rolling_resistance=0.0)
    code = folder / "code.py"
    code.write_text(f"def init(sim):\n    sim.accelerate({FORCE})\n\n\ndef main_loop(sim):\n    pass\n",
                    encoding="utf-8")
    project.code.user_code = code
    path = project.save(folder / "rover.prj")
    text = path.read_text(encoding="utf-8")
    assert text.count("<drive_type>car</drive_type>") == 1
    path.write_text(text.replace("<drive_type>car</drive_type>", f"<drive_type>{drive_type}</drive_type>"),
                    encoding="utf-8")
    return path


def test_an_unregistered_model_is_refused_naming_the_field(tmp_path):
    # Control for the tests below: without registering, the same file does not load.
    with pytest.raises(ProjectError) as info:
        Project.load(_rover_file(tmp_path, "boost"))
    assert info.value.field == "dynamics.drive_type"
    assert "'boost' is not allowed; use one of: car, skid, differential." in str(info.value)


def test_a_project_naming_it_loads_saves_and_validates(boost, tmp_path, capsys):
    path = _rover_file(tmp_path, "boost")
    project = Project.load(path)
    assert project.dynamics.drive_type == "boost"
    saved = project.save(tmp_path / "again.prj")
    assert "<drive_type>boost</drive_type>" in saved.read_text(encoding="utf-8")
    assert Project.load(saved) == project
    assert main(["validate", str(saved)]) == 0, capsys.readouterr().err
    # The schema SEAR ships lists the built-in models only.
    from sear.schemas import generate

    assert "boost" not in generate.builtin_texts()["project.xsd"]
    assert 'value="boost"' in generate.schema_text("project.xsd")


def test_the_settings_window_offers_it_and_writes_it(boost, tmp_path, qtbot, answers):
    from PySide6.QtCore import Qt

    from sear.gui.settings.window import SettingsWindow

    window = SettingsWindow(Project.load(_rover_file(tmp_path, "car")))
    qtbot.addWidget(window)
    combo = window.dynamics_tab.drive_type
    index = combo.findData("boost")
    assert index == combo.count() - 1 and combo.itemText(index) == BoostDrive.LABEL
    assert BoostDrive.HELP in combo.itemData(index, Qt.ItemDataRole.ToolTipRole)
    assert combo.currentData() == "car"  # control: the file's model is shown
    combo.setCurrentIndex(index)
    assert window.project.dynamics.drive_type == "boost" and window.dirty
    assert window.save()
    assert Project.load(tmp_path / "rover.prj").dynamics.drive_type == "boost"
    window.dirty = False


@pytest.mark.parametrize(("drive_type", "wheel_force"), [
    ("boost", FORCE),         # the new model: every wheel the whole engine force
    ("skid", FORCE / 4.0),    # control: a built-in model, every wheel a quarter of it
])
def test_a_headless_run_moves_as_its_wheel_forces_say(boost, tmp_path, capsys, drive_type, wheel_force):
    log = tmp_path / "run.csv"
    assert main(["run", str(_rover_file(tmp_path, drive_type)), "--headless", "--duration", "2",
                 "--log", str(log)]) == 0, capsys.readouterr().err
    with log.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if 0.6 <= float(r["time"]) <= 1.6]  # settled on its wheels
    assert len(rows) >= 50
    t, speed, y = (np.array([float(r[k]) for r in rows]) for k in ("time", "truth.speed", "truth.y"))
    # Newton: four driven wheels, each pushing with wheel_force inside its grip, and no rolling resistance
    # (driven wheels have none): the rover speeds up at 4·wheel_force / m, straight ahead.
    expected = 4.0 * wheel_force / ROVER.mass
    acceleration = np.polyfit(t, speed, 1)[0]
    assert acceleration == pytest.approx(expected, rel=0.02)
    assert np.max(np.abs(y)) < 0.01
