"""Every `sim` call checks its arguments: NaN, ±inf, strings, None and numbers out of range are refused
with an error naming the call and the argument, reported as a user-code error on the user's line; valid
calls still work (positive controls). The controller's `sim` and the simulation's are made from the one
declaration of each call."""

from __future__ import annotations

import inspect
import math
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

from sear import protocol
from sear.controller import connected_sim
from sear.errors import UserCodeError
from sear.runtime.sim import Sim, SimulationCalls, calls
from sear.runtime.simulation import Simulation
from sear.simapi import TURN_CALLS, SimArgumentError, SimArgumentTypeError, check

from .physics.helpers import rover_project

SIM_API = {**TURN_CALLS, **calls()}
"""Every call of the `sim` object user code holds (docs/user-code.md lists them for users)."""
BAD_NUMBERS = [float("nan"), math.inf, -math.inf, "1.0", None, True, [1.0], 10**400]
VALID = {  # a valid value of every checked argument (in the middle of its range)
    "force": 10.0, "angle": 0.1, "x": 3.0, "y": -2.0, "z": 0.5, "x1": -3.0, "y1": 4.0, "x2": -3.0, "y2": 6.0,
    "size": 0.5, "mass": 2.0, "height": 0.8, "thickness": 0.1, "seconds": 0.05, "name": "range",
    "grid": [[0.0, 1.0]], "cell": 0.1, "title": "map",
    "left": 5.0, "right": -5.0, "width": 1.0, "depth": 0.6, "levels": 4.0, "yaw": 0.3,
}
OUT_OF_RANGE = {  # a finite number each numeric argument refuses
    ("gripper", "height"): -0.1,
    ("accelerate", "force"): 2e6, ("brake", "force"): -1.0, ("steer", "angle"): 7.0,
    ("add_tree", "x"): 1e6, ("add_tree", "y"): -1e6, ("add_tree", "z"): 2e5,
    ("add_box", "x"): 1e300, ("add_box", "y"): 1e300, ("add_box", "z"): -1e300, ("add_box", "size"): 0.0,
    ("add_box", "mass"): -1.0, ("add_wall", "x1"): 1e9, ("add_wall", "y1"): 1e9, ("add_wall", "x2"): -1e9,
    ("add_wall", "y2"): -1e9, ("add_wall", "height"): -0.5, ("add_wall", "thickness"): 1e4,
    ("wait", "seconds"): -1.0, ("drive", "left"): -2e6, ("drive", "right"): 2e6,
    ("add_table", "x"): 1e6, ("add_table", "y"): -1e6, ("add_table", "width"): 0.0,
    ("add_table", "depth"): -1.0, ("add_table", "height"): 1e4,
    ("add_shelf", "x"): 1e6, ("add_shelf", "y"): -1e6, ("add_shelf", "width"): 0.0, ("add_shelf", "depth"): -1.0,
    ("add_shelf", "height"): 1e4, ("add_shelf", "levels"): 1.0, ("add_shelf", "yaw"): 7.0,
    ("show_grid", "x"): 2e5, ("show_grid", "y"): -2e5, ("show_grid", "cell"): 0.0,
}
NUMERIC = [(call.name, arg.name) for call in SIM_API.values() for arg in call.args if arg.kind == "number"]


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def _controller_sim():
    """A controller's `sim` as the welcome of a simulation makes it (the table through the wire format)."""
    welcome = protocol.calls_from_wire(protocol.calls_to_wire(calls().values()))
    return connected_sim(SimpleNamespace(calls=welcome), lambda: False)


def test_the_builtin_calls_are_all_there():
    # The calls users know by name (docs/user-code.md): a declaration lost on the way would fail here.
    assert set(SIM_API) == {"time", "sensor_names", "pose", "speed", "gripper", "read", "read_sick", "accelerate",
                            "brake", "steer", "drive", "add_tree", "add_box", "add_wall", "add_table", "add_shelf",
                            "print", "show_grid", "step", "wait"}


@pytest.mark.parametrize("side", ["controller", "simulation"])
def test_the_table_lists_every_public_member_of_sim(side):
    """The `sim` users hold is the controller process's: exactly the table. The simulation side's Sim
    serves the same calls except step/wait, which only a controller can make (they end its turn); every
    member it has is in the table with the same arguments."""
    cls = type(_controller_sim()) if side == "controller" else Sim
    if side == "controller":
        assert _public(cls) == set(SIM_API)
    else:
        assert _public(cls) == set(SIM_API) - {"step", "wait"}
    for call in SIM_API.values():  # the table's arguments are the method's, in order, with its defaults
        if call.name not in _public(cls):
            continue
        member = inspect.getattr_static(cls, call.name)
        assert isinstance(member, property) == (call.kind == "property"), call.name
        if call.kind == "property":
            continue
        params = [p for p in inspect.signature(member).parameters.values()
                  if p.name != "self" and p.kind is not p.VAR_POSITIONAL]
        assert [p.name for p in params] == [a.name for a in call.args], call.name
        for p, a in zip(params, call.args, strict=True):
            assert (p.default is p.empty) == (a.default is ...), (call.name, p.name)
            if p.default is not p.empty:
                assert p.default == a.default, (call.name, p.name)


def _shown(annotation) -> str:
    """An annotation as help() writes it, a string one (an array's type, which a controller writes as a
    string so as not to import numpy) without its quotes."""
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def test_the_controllers_methods_read_as_their_declarations():
    """help(sim.add_box) in a controller shows the declared signature, types and help."""
    controller = type(_controller_sim())
    for name in calls():
        declared, made = inspect.getattr_static(SimulationCalls, name), inspect.getattr_static(controller, name)
        if isinstance(declared, property):
            assert isinstance(made, property) and made.__doc__ == inspect.cleandoc(declared.fget.__doc__)
            declared, made = declared.fget, made.fget
        assert made.__doc__ == inspect.cleandoc(declared.__doc__) and made.__qualname__ == f"Sim.{name}"
        ours, theirs = inspect.signature(declared), inspect.signature(made)
        assert list(ours.parameters) == list(theirs.parameters), name
        for mine, its in zip(ours.parameters.values(), theirs.parameters.values(), strict=True):
            assert mine.default == its.default, (name, mine.name)
            if mine.name != "self":  # the declaration writes the type the controller shows
                assert mine.annotation.replace("np.", "numpy.") == _shown(its.annotation), name
        assert ours.return_annotation.replace("np.", "numpy.") == _shown(
            theirs.return_annotation).replace("sear.protocol.", ""), name
    text = inspect.getdoc(controller.add_box)
    assert "A cube of edge `size` m" in text
    assert str(inspect.signature(controller.add_box)) == (
        "(self, x: float, y: float, z: float | None = None, size: float = 1.0, mass: float = 1.0) -> None")


def test_every_numeric_argument_has_an_out_of_range_case():
    assert sorted(NUMERIC) == sorted(OUT_OF_RANGE)


def _args(call: str, bad_name: str, bad_value):
    return {a.name: (bad_value if a.name == bad_name else VALID[a.name])
            for a in SIM_API[call].args if a.default is ... or a.name == bad_name}


@pytest.mark.parametrize(("call", "arg"), NUMERIC)
def test_bad_numbers_are_refused_naming_call_and_argument(call, arg):
    for bad in [*BAD_NUMBERS, OUT_OF_RANGE[(call, arg)]]:
        if bad is None and next(a for a in SIM_API[call].args if a.name == arg).none_ok:
            continue  # z=None means "on the ground": checked below as a valid call
        with pytest.raises(SimArgumentError) as info:
            check(SIM_API[call], (), _args(call, arg, bad))
        message = str(info.value)
        assert message.startswith(f"sim.{call}({arg}="), message
        assert f": {arg} must be a finite number of " in message
        if isinstance(bad, float) and not math.isfinite(bad):
            assert f"({arg}={bad})" in message  # nan, inf, -inf as written
        if isinstance(bad, str) or bad is None or isinstance(bad, list | bool):
            assert isinstance(info.value, TypeError) and isinstance(info.value, SimArgumentTypeError)
    # positive control: the valid value passes, converted to float
    _star, named = check(SIM_API[call], (), _args(call, arg, VALID[arg]))
    assert named[arg] == VALID[arg] and type(named[arg]) is float


def test_names_and_texts_refuse_other_types():
    for bad in (None, 3, math.nan, b"lidar"):
        with pytest.raises(SimArgumentTypeError, match=r"^sim\.read\(name=.*\): name must be a sensor name"):
            check(SIM_API["read"], (bad,), {})
    with pytest.raises(SimArgumentTypeError, match=r"sim\.print\(sep=3\): sep must be a string or None"):
        check(SIM_API["print"], ("a", "b"), {"sep": 3})
    assert check(SIM_API["print"], ("a", 1), {"end": None}) == (("a", 1), {"sep": " ", "end": None, "file": None,
                                                              "flush": False})


def test_numpy_scalars_are_numbers_and_counts_are_checked():
    assert check(SIM_API["add_box"], (np.float32(1.5), np.int64(2)), {})[1]["x"] == 1.5
    with pytest.raises(SimArgumentError, match="x must be a finite"):
        check(SIM_API["add_box"], (np.float64("nan"), 0.0), {})
    with pytest.raises(TypeError, match="missing required argument 'y'"):
        check(SIM_API["add_tree"], (1.0,), {})
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        check(SIM_API["add_tree"], (1.0, 2.0), {"colour": "red"})
    with pytest.raises(TypeError, match="takes 1 argument"):
        check(SIM_API["accelerate"], (1.0, 2.0), {})


def _project(tmp_path, code: str):
    project = rover_project(tmp_path / "p")
    path = tmp_path / "p" / "robot.py"
    path.write_text(textwrap.dedent(code))
    project.code.user_code = path
    return project


@pytest.mark.parametrize(("line", "expected"), [
    ("sim.add_tree(float('nan'), 50.0)", "sim.add_tree(x=nan): x must be a finite number of metres"),
    ("sim.add_box(float('inf'), 2)", "sim.add_box(x=inf): x must be a finite number of metres"),
    ("sim.add_box(1, 2, z=-float('inf'))", "sim.add_box(z=-inf): z must be a finite number of metres"),
    ("sim.add_wall(0, float('nan'), 1, 1)", "sim.add_wall(y1=nan): y1 must be a finite number of metres"),
    ("sim.accelerate('fast')", "sim.accelerate(force='fast'): force must be a finite number of newtons"),
    ("sim.steer(None)", "sim.steer(angle=None): angle must be a finite number of radians"),
])
def test_a_bad_call_in_init_is_a_user_code_error_on_the_users_line(tmp_path, line, expected):
    project = _project(tmp_path, f"""\
        def init(sim):
            sim.add_tree(3.0, 4.0)
            {line}

        def main_loop(sim):
            pass
        """)
    with pytest.raises(UserCodeError) as info:
        Simulation(project)
    assert info.value.line == 3 and expected in str(info.value)
    assert "sear/" not in str(info.value)  # only the user's frames


def test_valid_calls_still_work(tmp_path):
    project = _project(tmp_path, """\
        def init(sim):
            sim.add_tree(3.0, 4.0)
            sim.add_tree(-3, 4, z=None)
            sim.add_box(6.0, -4.0, size=0.8, mass=0)
            sim.add_box(x=-6, y=2, z=3.0)
            sim.add_wall(-8.0, -6.0, -8.0, 6.0, height=0.8, thickness=0.3)

        def run(sim):
            sim.accelerate(20)
            sim.steer(0.2)
            sim.wait(0.5)
            sim.brake(10.0)
            sim.accelerate(0.0)
            sim.print("at", round(sim.time, 2), sep="=")
            while sim.step():
                pass
        """)
    printed: list[str] = []
    simulation = Simulation(project, output=printed.append)
    try:
        assert len(simulation.world.obstacles) == 5
        simulation.start_user_code()
        simulation.run(1.0)
        assert simulation.user_error is None
        assert "".join(printed) == "at=0.5\n"
        vehicle = simulation.world.vehicles[0]
        assert vehicle.brake_force == 10.0 and vehicle.engine_force == 0.0
        assert simulation.sim.speed > 0.05  # it drove for half a second
    finally:
        simulation.close()


def test_the_user_guide_states_the_ranges():
    from pathlib import Path

    from sear import simapi

    guide = (Path(__file__).resolve().parent.parent / "docs" / "user-code.md").read_text(encoding="utf-8")
    for value in (simapi.WORLD_LIMIT, simapi.MAX_SIZE, simapi.MAX_MASS, simapi.MAX_FORCE):
        assert f"{value:,.0f}" in guide, value
    assert "sear/runtime/sim.py" in guide and "sear/simapi.py" in guide
    for name in SIM_API:
        assert f"`sim.{name}" in guide or f"`{name}(" in guide, name
