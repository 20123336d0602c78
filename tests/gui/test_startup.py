"""`sear run` with a window shows its start-up (issue 24 item 5): the start-up window goes through its
stages in order and closes once the simulation window has drawn its first frame; a headless run shows none."""

from __future__ import annotations

import pytest

from sear import launcher
from sear.gui import startup

pytestmark = pytest.mark.gl


@pytest.fixture
def shown(monkeypatch) -> list[startup.StartupProgress]:
    """Every start-up window the run opens."""
    windows: list[startup.StartupProgress] = []
    show = startup.show_startup

    def recorded(name: str) -> startup.StartupProgress:
        windows.append(show(name))
        return windows[-1]

    monkeypatch.setattr(startup, "show_startup", recorded)
    return windows


def test_the_start_up_window_goes_through_its_stages_and_closes_at_the_first_frame(qtbot, demo_copy, shown):
    status = launcher.run_from_cli(demo_copy / "demo.prj", headless=False, duration=0.2, log=None, seed=0,
                                   realtime=False)
    assert status == 0
    assert len(shown) == 1
    progress = shown[0]
    assert [name for name, _seconds in progress.done] == list(startup.STAGES)
    seconds = [seconds for _name, seconds in progress.done]
    assert seconds == sorted(seconds)
    assert progress.bar.value() == len(startup.STAGES)  # finish(): the window's first frame was drawn
    assert not progress.isVisible()


def test_a_headless_run_shows_no_start_up_window(demo_copy, shown):
    status = launcher.run_from_cli(demo_copy / "demo.prj", headless=True, duration=0.2, log=None, seed=0,
                                   realtime=False)
    assert status == 0
    assert shown == []


@pytest.fixture
def early(monkeypatch) -> list[launcher.EarlyUserCode]:
    """The first robot's user code processes started before the models load."""
    started: list[launcher.EarlyUserCode] = []
    start = launcher.early_user_code

    def recorded(path):
        found = start(path)
        if found is not None:
            started.append(found)
        return found

    monkeypatch.setattr(launcher, "early_user_code", recorded)
    return started


def test_the_user_code_process_started_early_runs_the_robot_and_ends_with_the_run(qtbot, demo_copy, early,
                                                                                  monkeypatch, capfd):
    from sear.runtime.robotrun import RobotRun

    spawned = []
    monkeypatch.setattr(RobotRun, "_spawn", lambda self, welcome: spawned.append(self) or None)
    log = demo_copy / "run.csv"
    status = launcher.run_from_cli(demo_copy / "demo.prj", headless=False, duration=0.5, log=str(log), seed=0,
                                   realtime=False)
    assert status == 0
    assert len(early) == 1 and early[0].runner is None  # started early, then taken by the simulation
    assert spawned == []  # no other user code process was started
    assert "demo: route of 4 corners" in capfd.readouterr().out  # the demo's init() ran in it
    assert len(log.read_text().splitlines()) > 10  # and the run went on with it: half a second of log rows


def test_a_project_that_cannot_simulate_ends_the_early_user_code_process(qtbot, demo_copy, early, monkeypatch):
    from sear.usercode import UserCodeRunner

    processes = []
    discard = UserCodeRunner.discard

    def recorded(self):
        processes.append(self.proc)
        discard(self)

    monkeypatch.setattr(UserCodeRunner, "discard", recorded)
    (demo_copy / "sensors.xml").write_text("<sensors><broken")  # a problem loading finds after the start
    status = launcher.run_from_cli(demo_copy / "demo.prj", headless=False, duration=0.5, log=None, seed=0,
                                   realtime=False)
    assert status == 1
    assert len(early) == 1 and len(processes) == 1  # the process had started, and was ended
    assert processes[0] is not None and processes[0].poll() is not None
