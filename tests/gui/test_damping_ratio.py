"""The Vehicle Dynamics tab shows each damper's damping ratio ζ beside its coefficient, takes a ratio typed
there, and warns under ζ = 0.1. Expected ratios from the heave of a chassis of mass M on four springs
k = stiffness·M and four dampers c = damping·M (both fields per kg, as btRaycastVehicle defines them):
ζ = 4c / (2·sqrt(4k·M)) = damping / sqrt(stiffness)."""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.gl


def test_the_thesis_defaults_show_their_small_ratio_and_warn(window):
    tab = window.dynamics_tab
    dynamics = window.project.dynamics
    assert (dynamics.suspension_stiffness, dynamics.suspension_damping) == (120.0, 0.3)  # the thesis's
    assert tab.ratios["suspension_damping"].value() == pytest.approx(0.3 / math.sqrt(120.0), abs=1e-3)
    assert tab.ratios["suspension_compression"].value() == pytest.approx(0.2 / math.sqrt(120.0), abs=1e-3)
    assert not tab.ratio_warnings["suspension_damping"].isHidden()


def test_a_typed_ratio_sets_the_coefficient_and_the_warning_goes(window):
    tab = window.dynamics_tab
    tab.ratios["suspension_damping"].setValue(0.4)
    assert window.project.dynamics.suspension_damping == pytest.approx(0.4 * math.sqrt(120.0), abs=1e-3)
    assert tab.ratio_warnings["suspension_damping"].isHidden()
    assert not tab.ratio_warnings["suspension_compression"].isHidden()  # the other damper's is still low
    # A stiffer spring with the same damper is damped less: its ratio follows the stiffness.
    tab.numbers[("dynamics", "suspension_stiffness")].setValue(480.0)
    assert tab.ratios["suspension_damping"].value() == pytest.approx(0.4 * math.sqrt(120.0) / math.sqrt(480.0),
                                                                     abs=1e-3)
    window.commands["undo"].trigger()
    window.commands["undo"].trigger()
    assert window.project.dynamics.suspension_damping == pytest.approx(0.3)
    assert tab.ratios["suspension_damping"].value() == pytest.approx(0.3 / math.sqrt(120.0), abs=1e-3)


def test_the_demo_rovers_dampers_are_in_the_road_vehicle_range(demo_window):
    tab, dynamics = demo_window.dynamics_tab, demo_window.project.dynamics
    for name in ("suspension_compression", "suspension_damping"):
        zeta = getattr(dynamics, name) / math.sqrt(dynamics.suspension_stiffness)
        assert 0.3 <= zeta <= 0.5
        assert tab.ratios[name].value() == pytest.approx(zeta, abs=1e-3)
        assert tab.ratio_warnings[name].isHidden()
