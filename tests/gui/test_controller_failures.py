"""In the simulation window, a failing user code process is reported in the console, the window keeps
simulating and driving, the status bar says what happened, and Space restarts the user code."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from sear.gui.simwindow import SimulationWindow
from sear.runtime.logs import TRUTH_COLUMNS
from sear.runtime.simulation import Simulation

from ..failure_cases import CASES
from ..physics.helpers import rover_project

pytestmark = pytest.mark.gl


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_window_survives_a_failing_controller_and_space_restarts_it(qtbot, tmp_path, case):
    code, expected = CASES[case]
    project = rover_project(tmp_path / "p")
    path = tmp_path / "p" / "robot.py"
    path.write_text(code + "\n\ndef init(sim):\n    print('init ran')\n")
    project.code.user_code = path
    project.code.hook_timeout = 0.5
    simulation = Simulation(project, log_path=tmp_path / "log.csv")
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.show()
    try:
        QTest.keyClick(w.view, Qt.Key.Key_Space)
        w.advance(0.5)
        console = w.console.toPlainText()
        for words in expected:
            assert words in console, (words, console)
        assert console.index("failing at") < console.index("robot.py")
        w._update_status()
        status = w.status.text()
        assert ("did not return in time" if case == "stuck" else "stopped by an error") in status
        assert "Space restarts it" in status and "you can still drive" in status
        assert simulation.world.time == pytest.approx(0.5)
        QTest.keyPress(w.view, Qt.Key.Key_U)  # driving by hand still works
        before = simulation.state.position.copy()
        w.advance(1.0)
        QTest.keyRelease(w.view, Qt.Key.Key_U)
        assert simulation.world.time == pytest.approx(1.5)
        assert np.linalg.norm(simulation.state.position[:2] - before[:2]) > 0.3
        QTest.keyClick(w.view, Qt.Key.Key_Space)  # restart: a fresh process, init again
        w._update_status()
        assert "user code running" in w.status.text()
        assert w.console.toPlainText().count("init ran") == 2
        w.advance(0.1)
        assert simulation.world.time == pytest.approx(1.6)
    finally:
        w.timer.stop()
        simulation.close()
    with open(tmp_path / "log.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:8] == ["time", *TRUTH_COLUMNS] and {len(r) for r in rows} == {len(rows[0])}
    assert [float(r[0]) for r in rows[1:]] == pytest.approx([(k + 1) / 60 for k in range(96)])
