"""The Robot Body Model tab's Drop start: off by default (the robot starts at rest), ticked it is saved and
the start altitudes, which only a drop uses, can be edited."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gl


def test_drop_start_is_off_and_ticking_it_enables_the_altitudes(window):
    tab = window.body_tab
    altitude = tab.numbers[("body", "start_altitude")]
    assert not window.project.body.drop_start and not tab.drop_start.isChecked()
    assert not altitude.isEnabled()
    tab.drop_start.setChecked(True)
    assert window.project.body.drop_start
    assert altitude.isEnabled()
    window.commands["undo"].trigger()
    assert not window.project.body.drop_start and not tab.drop_start.isChecked()
    assert not altitude.isEnabled()
