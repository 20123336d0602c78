"""The settings window's file handling (issues 12 item 7 and 13 items 8, 11, 12): File > New gives a project
that simulates at once, File > Open Demo copies the demo where the user says, a project file deleted or
changed by another program is noticed and the user is offered to save or reload, Save As to another folder
makes a project of its own."""

from __future__ import annotations

import filecmp
import shutil
import time

import pytest
from PySide6.QtCore import QProcess
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from sear.errors import Problem
from sear.gui.settings.window import SettingsWindow
from sear.loading import load_project
from sear.project import Project
from sear.resources import demo_folder
from sear.sensors.files import load_sensors, save_sensors

pytestmark = pytest.mark.gl


def _questions(answers, word: str) -> list[str]:
    return [text for kind, text in answers.shown if kind == "question" and word in text]


def test_file_new_gives_a_project_that_simulates_at_once(window, answers, tmp_path, qtbot):
    answers.save_path = str(tmp_path / "rover" / "rover")  # the .prj suffix is added
    assert window.commands["new"].text() == "&New"
    window.commands["new"].trigger()
    assert window.project.path == tmp_path / "rover" / "rover.prj" and window.project.path.is_file()
    assert not window.dirty and window.project.name == "rover"
    assert load_project(Project.load(window.project.path)).problems == []
    assert window.simulate()
    assert not [text for kind, text in answers.shown if kind == "warning"]
    qtbot.waitUntil(lambda: window.sim_process.process.state() == QProcess.ProcessState.Running, timeout=30_000)
    window.stop(wait=True)


@pytest.mark.parametrize("how", ["new", "open"])
def test_another_project_starts_with_an_empty_console_and_no_problems(window, answers, tmp_path, demo_copy, how):
    """Issue 24 item 6: the console and the Problems panel speak of the project shown, not of the one before."""
    window.open_project(demo_copy / "demo.prj")
    window.sim_process.append("$ sear run demo.prj\ndemo: route of 4 corners\n")  # a finished run's output
    window.show_problems([Problem("a problem of the demo")])
    assert "demo: route" in window.console.toPlainText() and not window.problem_dock.isHidden()  # to clear
    if how == "new":
        answers.save_path = str(tmp_path / "rover" / "rover.prj")
        assert window.new_project()
    else:
        other = tmp_path / "other"
        shutil.copytree(demo_copy, other)
        assert window.open_project(other / "demo.prj")
    assert window.console.toPlainText() == ""
    assert window.problem_list.count() == 0 and window.problem_dock.isHidden()


def test_reloading_the_same_project_keeps_the_console(window, answers, demo_copy):
    """The control of the test above: the console is kept while the project stays the same one."""
    window.open_project(demo_copy / "demo.prj")
    window.sim_process.append("demo: route of 4 corners\n")
    assert window.open_project(demo_copy / "demo.prj")
    assert "demo: route" in window.console.toPlainText()


def test_file_new_refuses_to_overwrite_and_keeps_the_current_project(window, answers, tmp_path, demo_copy):
    window.open_project(demo_copy / "demo.prj")
    (tmp_path / "sensors.xml").write_text("mine")
    answers.save_path = str(tmp_path / "p.prj")
    assert not window.new_project()
    assert any(kind == "critical" and "sensors.xml" in text for kind, text in answers.shown)
    assert (tmp_path / "sensors.xml").read_text() == "mine"
    assert window.project.path == demo_copy / "demo.prj"


def test_open_demo_copies_the_demo_into_the_chosen_folder_and_opens_it(window, answers, tmp_path, monkeypatch):
    chosen = tmp_path / "empty"
    chosen.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(chosen))
    window.commands["open_demo"].trigger()
    assert window.project.path == chosen / "demo.prj" and window.project.name == "SEAR demo"
    shipped = demo_folder()
    for entry in shipped.iterdir():
        if entry.is_file() and not entry.name.endswith((".bak", ".pyc")):
            assert (chosen / entry.name).read_bytes() == entry.read_bytes(), entry.name
    assert load_project(window.project).problems == []
    # A folder that is not empty gets the demo in a new subfolder, never over its files.
    assert window.open_demo()
    assert window.project.path == chosen / "SEAR demo" / "demo.prj"
    assert window.open_demo(chosen)
    assert window.project.path == chosen / "SEAR demo 2" / "demo.prj"


def test_a_deleted_project_file_is_noticed_and_can_be_saved_again(window, answers, demo_copy, qtbot):
    path = demo_copy / "demo.prj"
    assert window.open_project(path)
    answers.question = QMessageBox.StandardButton.Save
    path.unlink()
    qtbot.waitUntil(lambda: bool(_questions(answers, "deleted")), timeout=60_000)  # the watcher saw it
    assert path.is_file() and Project.load(path).name == "SEAR demo"
    assert not window.dirty


def test_a_deleted_project_file_is_offered_to_save_on_close(qtbot, answers, demo_copy):
    w = SettingsWindow()
    qtbot.addWidget(w)
    w.show()
    path = demo_copy / "demo.prj"
    assert w.open_project(path)
    answers.question = QMessageBox.StandardButton.Cancel
    w._watcher.removePaths(w._watcher.files())  # as if the watcher had missed it: the close still asks
    path.unlink()
    w.close()
    assert w.isVisible() and _questions(answers, "deleted")
    answers.question = QMessageBox.StandardButton.Save
    w.close()
    assert not w.isVisible() and path.is_file()


def test_a_project_file_changed_elsewhere_can_be_reloaded_or_kept(window, answers, demo_copy, qtbot):
    path = demo_copy / "demo.prj"
    assert window.open_project(path)
    answers.question = QMessageBox.StandardButton.Yes
    path.write_text(path.read_text().replace("<name>SEAR demo</name>", "<name>edited elsewhere</name>"))
    qtbot.waitUntil(lambda: bool(_questions(answers, "changed by another program")), timeout=60_000)
    assert window.project.name == "edited elsewhere" and window.name_edit.text() == "edited elsewhere"
    assert not window.dirty
    answers.shown.clear()
    answers.question = QMessageBox.StandardButton.No
    path.write_text(path.read_text().replace("edited elsewhere", "edited again"))
    qtbot.waitUntil(lambda: bool(_questions(answers, "changed by another program")), timeout=60_000)
    assert window.project.name == "edited elsewhere" and window.dirty  # kept, and unsaved


def test_the_windows_own_saves_are_not_taken_for_changes(window, answers, demo_copy, qtbot):
    """Positive control of the two tests above: saving from the window asks nothing."""
    assert window.open_project(demo_copy / "demo.prj")
    for mass in (21.0, 22.0, 23.0):
        window.field_widget("dynamics.mass").setValue(mass)
        assert window.save()
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.02)
    window._check_disk()
    assert not [kind for kind, _ in answers.shown if kind == "question"]
    assert Project.load(demo_copy / "demo.prj").dynamics.mass == 23.0


def test_save_as_to_another_folder_copies_the_code_and_sensors_files(window, answers, demo_copy, tmp_path):
    assert window.open_project(demo_copy / "demo.prj")
    answers.save_path = str(tmp_path / "copy" / "mine.prj")
    (tmp_path / "copy").mkdir()
    assert window.save_as()
    project = window.project
    assert project.path == tmp_path / "copy" / "mine.prj"
    assert project.code.user_code == tmp_path / "copy" / "demo_code.py"
    assert project.code.sensors == tmp_path / "copy" / "sensors.xml"
    assert filecmp.cmp(project.code.sensors, demo_copy / "sensors.xml", shallow=False)
    assert project.terrain.file == demo_copy / "terrain.obj"  # models stay where they are
    assert f"<file>{demo_copy / 'terrain.obj'}</file>" in project.path.read_text()
    assert load_project(Project.load(project.path)).problems == []
    # The copy is independent: changing its sensors leaves the first project's alone.
    sensors = load_sensors(project.code.sensors)
    save_sensors(project.code.sensors, sensors[:1])
    assert len(load_sensors(demo_copy / "sensors.xml")) == len(sensors) > 1
    assert Project.load(demo_copy / "demo.prj").code.sensors == demo_copy / "sensors.xml"


def test_save_as_in_the_same_folder_or_beside_a_different_file_copies_nothing(window, answers, demo_copy, tmp_path):
    assert window.open_project(demo_copy / "demo.prj")
    answers.save_path = str(demo_copy / "renamed.prj")
    assert window.save_as()
    assert window.project.code.sensors == demo_copy / "sensors.xml"
    other = tmp_path / "other"
    other.mkdir()
    (other / "sensors.xml").write_text("someone else's")
    answers.save_path = str(other / "p.prj")
    assert window.save_as()
    assert (other / "sensors.xml").read_text() == "someone else's"
    assert window.project.code.sensors == demo_copy / "sensors.xml"  # kept, never overwritten
    assert window.project.code.user_code == other / "demo_code.py"


RECENT = """
import sys
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
app.setApplicationName("SEAR"); app.setOrganizationName("SEAR")
from sear.errors import Problem
from sear.gui.settings.window import SettingsWindow
window = SettingsWindow()
for path in sys.argv[1:]:
    assert window.open_project(path)
window.settings.sync()
print("\\n".join(a.text() for a in window.recent_menu.actions()))
"""


def test_open_recent_after_a_restart_with_a_fresh_settings_folder(tmp_path, demo_copy):
    """Issue 13 item 3: one recent project, written by one process and read back by the next (QSettings
    gives a one-entry list back as a string), stays one entry, not one per letter."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "QT_QPA_PLATFORM": "offscreen"}

    def session(*paths):
        result = subprocess.run([sys.executable, "-c", RECENT, *map(str, paths)], capture_output=True, text=True,
                                env=env, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.split("\n")[:-1]

    project = demo_copy / "demo.prj"
    assert session(project) == [str(project)]
    assert session() == [str(project)]  # the restart
    other = tmp_path / "other" / "o.prj"
    other.parent.mkdir()
    Project(name="o").save(other)
    assert session(other) == [str(other), str(project)]
    assert session() == [str(other), str(project)]


def test_a_view_the_simulation_window_saved_is_taken_without_asking_and_kept_by_saves(window, answers, demo_copy,
                                                                                      qtbot):
    from sear.project import CameraView, save_camera_view

    path = demo_copy / "demo.prj"
    assert window.open_project(path)
    save_camera_view(path, CameraView("gate", (1.0, 2.0, 0.5), 12.0, 40.0, 30.0))  # what View > Save View does
    qtbot.waitUntil(lambda: [v.name for v in window.project.views] == ["gate"], timeout=60_000)
    assert not _questions(answers, "changed by another program") and not window.dirty
    window.field_widget("dynamics.mass").setValue(24.0)
    assert window.save()
    saved = Project.load(path)
    assert saved.dynamics.mass == 24.0 and [(v.name, v.center, v.distance) for v in saved.views] == \
        [("gate", (1.0, 2.0, 0.5), 12.0)]
