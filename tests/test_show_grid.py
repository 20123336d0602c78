"""sim.show_grid: user code publishes a 2-D grid (an occupancy map) that the simulation keeps for the window.

The grid crosses the controller protocol as an ndarray; what arrives is what was sent (float32), with
its placement; bad grids are refused naming the call, on the user's line."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from sear import protocol
from sear.errors import UserCodeError
from sear.runtime.sim import calls
from sear.runtime.simulation import Simulation
from sear.simapi import MAX_GRID_CELLS, SimArgumentError, SimArgumentTypeError, check

from .physics.helpers import rover_project

SHOW_GRID = calls()["show_grid"]


def test_a_grid_is_checked_and_converted_to_float32():
    _star, named = check(SHOW_GRID, ([[0, 1], [0.5, np.nan]],), {"x": -2, "cell": 0.25})
    grid = named["grid"]
    assert grid.dtype == np.float32 and grid.shape == (2, 2) and grid.flags["C_CONTIGUOUS"]
    assert grid[0, 1] == 1.0 and grid[1, 0] == 0.5 and np.isnan(grid[1, 1])  # NaN: unknown, allowed
    assert named == {"grid": named["grid"], "x": -2.0, "y": 0.0, "cell": 0.25, "title": "grid"}


@pytest.mark.parametrize(("bad", "error", "says"), [
    ([1.0, 2.0], SimArgumentError, "not an array of shape (2,)"),
    (np.zeros((2, 2, 3)), SimArgumentError, "not an array of shape (2, 2, 3)"),
    (np.zeros((0, 4)), SimArgumentError, "not an array of shape (0, 4)"),
    ([[1.0, np.inf]], SimArgumentError, "holds infinities"),
    ([[1e300]], SimArgumentError, "holds infinities"),
    (np.zeros((MAX_GRID_CELLS + 1, 1)), SimArgumentError, "cells"),
    ("map", SimArgumentTypeError, "not a str"),
    (None, SimArgumentTypeError, "not None"),
    ([[1.0, "a"]], SimArgumentTypeError, "not a list"),
    ({"a": 1}, SimArgumentTypeError, "not a dict"),
])
def test_bad_grids_are_refused_naming_the_call(bad, error, says):
    with pytest.raises(error) as info:
        check(SHOW_GRID, (bad,), {})
    message = str(info.value)
    assert message.startswith("sim.show_grid(grid=...): grid must be a 2-D array of numbers"), message
    assert says in message, message


def test_the_grid_crosses_the_protocol_exactly_and_junk_is_refused():
    grid = np.random.default_rng(3).random((7, 9)).astype(np.float32)
    grid[2, 3] = np.nan
    call, args = protocol.check_call(calls(), "show_grid", [protocol.to_wire(grid), 1.5, -2.0, 0.2, "m"])
    assert call is SHOW_GRID and args[1:] == [1.5, -2.0, 0.2, "m"]
    assert args[0].tobytes() == grid.tobytes()  # bit for bit, NaN included
    for junk in ({"_type": "ndarray", "dtype": "|O", "shape": [1], "data": b"12345678"},
                 {"_type": "ndarray", "dtype": "<f4", "shape": [5, 5], "data": b"1234"},
                 {"_type": "Fix", "fields": ["a"], "values": [1], "attrs": {}}, {"x": 1}):
        with pytest.raises(TypeError, match=r"sim\.show_grid"):
            protocol.check_call(calls(), "show_grid", [junk])


def _simulation(tmp_path, code: str) -> Simulation:
    project = rover_project(tmp_path / "p")
    path = tmp_path / "p" / "robot.py"
    path.write_text(textwrap.dedent(code))
    project.code.user_code = path
    return Simulation(project, output=lambda text: None)


def test_user_code_shows_a_grid_and_the_simulation_keeps_the_latest_of_each_title(tmp_path):
    simulation = _simulation(tmp_path, """\
        import numpy as np

        def main_loop(sim):
            grid = np.arange(12, dtype=float).reshape(3, 4) / 11.0
            grid[0, 0] = float("nan")
            sim.show_grid(grid * (1 if sim.time < 0.1 else 0.5), x=-1.0, y=2.0, cell=0.5, title="map")
            sim.show_grid([[1.0]], title=None)
        """)
    try:
        assert simulation.grids == {}  # positive control below: nothing before the user code runs
        simulation.start_user_code()
        simulation.run(0.2)
        assert simulation.user_error is None
        assert list(simulation.grids) == ["map", "grid"]
        shown = simulation.grids["map"]
        expected = np.arange(12, dtype=np.float32).reshape(3, 4) / np.float32(11.0) * np.float32(0.5)
        assert np.isnan(shown.values[0, 0])
        np.testing.assert_allclose(shown.values.ravel()[1:], expected.ravel()[1:], rtol=1e-6)
        assert (shown.x, shown.y, shown.cell) == (-1.0, 2.0, 0.5)
        assert 0.1 <= shown.time <= 0.2 + 1e-9  # the latest call's (t >= 0.1: the halved grid)
        assert simulation.grids["grid"].values.tolist() == [[1.0]]
    finally:
        simulation.close()


def test_a_bad_grid_is_a_user_code_error_on_the_users_line(tmp_path):
    simulation = _simulation(tmp_path, """\
        def main_loop(sim):
            sim.show_grid([[0.0, 1.0]], cell=0.1)
            sim.show_grid([0.0, 1.0])
        """)
    try:
        simulation.start_user_code()
        simulation.run(0.1)
        error = simulation.user_error
        assert isinstance(error, UserCodeError)
        assert "sim.show_grid(grid=...): grid must be a 2-D array" in str(error) and error.line == 3
        assert simulation.grids["grid"].values.tolist() == [[0.0, 1.0]]  # the good call before it arrived
    finally:
        simulation.close()
