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
