"""Pictures and films of the simulation window's 3-D view (sear.gui.simcapture), read back from the files."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest

from sear.gui.simcapture import FPS, PICTURES_KEY, read_film
from sear.gui.simwindow import SimulationWindow
from sear.project import Project
from sear.runtime.simulation import Simulation

pytestmark = pytest.mark.gl


@pytest.fixture
def window(qtbot, demo_copy, answers):
    QSettings().remove(PICTURES_KEY)  # as on a first run: no pictures folder chosen yet
    simulation = Simulation(Project.load(demo_copy / "demo.prj"), seed=2)
    w = SimulationWindow(simulation)
    qtbot.addWidget(w)
    w.resize(760, 520)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    w.view.setFocus()
    w.timer.stop()  # stepped by the test
    yield w
    w.close()
    simulation.close()


@pytest.mark.slow
def test_f12_saves_a_picture_of_the_view_first_asking_where_then_at_once(window, answers, tmp_path):
    w = window
    first = tmp_path / "pictures" / "first.png"
    answers.save_path = str(first)
    w.start_user_code()
    w.advance(1.0)
    QTest.keyClick(w.view, Qt.Key.Key_F12)  # no folder chosen yet: the dialog (answered by the test)
    image = QImage(str(first))
    assert (image.width(), image.height()) == (w.view.width(), w.view.height())
    answers.save_path = ""  # a dialog now would cancel: the second picture must not ask
    w.advance(1.0)
    QTest.keyClick(w.view, Qt.Key.Key_F12)
    second = tmp_path / "pictures" / f"SEAR_demo-t{w.simulation.world.time:.2f}s.png"  # project "SEAR demo"
    assert second.is_file()
    a, b = (np.asarray(QImage(str(p)).convertToFormat(QImage.Format.Format_RGB888).constBits()).copy()
            for p in (first, second))
    assert a.std() > 10  # a drawn scene, not a blank buffer
    assert np.abs(a.astype(int) - b.astype(int)).mean() > 0.5  # the robot moved and the HUD's time changed


def test_a_ten_second_video_holds_ten_seconds_of_frames_at_the_views_size(window, answers, tmp_path):
    w = window
    answers.save_path = str(tmp_path / "film.mp4")
    w.start_user_code()
    w.commands["film"].trigger()  # File > Record Video…: the dialog gives the path
    assert w.commands["film"].isChecked()
    start = w.simulation.world.time
    while w.simulation.world.time - start < 10.0 - 1e-9:
        w.advance(1.0)  # frames drawn 1 s apart: each written as the 25 film frames that fell due
        assert "REC video" in w.status.text()
    end = w.simulation.world.time
    w.commands["film"].trigger()
    assert not w.commands["film"].isChecked()
    (width, height), frames, fps = read_film(answers.save_path)
    assert (width, height) == (w.view.width() // 2 * 2, w.view.height() // 2 * 2)
    assert fps == FPS
    assert frames == math.floor((end - start) * FPS + 1e-6) + 1  # a frame at start, then one each 1/FPS s
    assert 10.0 <= frames / FPS <= 10.6
