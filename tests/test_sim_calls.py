"""A `sim` call is declared once: the calls below are declared and registered here only, as a plug-in
would, with what they do on the simulation's side, and user code in its own controller process (started
as `sear run` starts it) calls them, gets their results and has bad arguments refused on its own line.
Declarations a controller could not be made from, and call tables a controller cannot read, are refused
with a message saying why."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from sear import protocol
from sear.errors import UserCodeError
from sear.runtime import sim as sim_calls
from sear.runtime.simulation import Simulation
from sear.simapi import COORDINATE, SIZE, Arg, DeclarationError, declare

from .physics.helpers import rover_project

CRATE = 0.5
"""m: the edge of a crate add_crate_row puts down."""
BEACONS: list[tuple[float, float]] = []
"""What set_beacon was told: (simulated time s, level), in the order the simulation made the calls."""


@declare("request", x=COORDINATE, y=COORDINATE, count=Arg(unit="crates", lo=1.0, hi=10.0))
def add_crate_row(self, x: float, y: float, count: float = 3.0) -> float:
    """A row of `count` crates (0.5 m cubes of 2 kg) eastwards from (x, y) m, 1 m apart, standing on the
    ground; returns how many obstacles the world holds then."""
    world = self._robot.world
    for i in range(int(count)):
        world.add_box(x + i, y, None, size=CRATE, mass=2.0)
    return float(len(world.obstacles))


@declare("command", level=Arg(unit="levels", lo=0.0, hi=1.0))
def set_beacon(self, level: float) -> None:
    """The beacon's brightness, 0 to 1; holds until changed."""
    BEACONS.append((self._robot.world.time, level))


@declare("property")
def crate_count(self) -> float:
    """How many crates (boxes) the world holds."""
    return float(sum(1 for obstacle in self._robot.world.obstacles if obstacle.kind == "box"))


REGISTERED = (add_crate_row, set_beacon, property(crate_count))


@pytest.fixture
def registered():
    for method in REGISTERED:
        sim_calls.register(method)
    BEACONS.clear()
    yield
    for name in ("add_crate_row", "set_beacon", "crate_count"):
        sim_calls.unregister(name)


def _simulation(tmp_path, code: str, out: list[str]) -> Simulation:
    project = rover_project(tmp_path / "p")
    path = tmp_path / "p" / "robot.py"
    path.write_text(textwrap.dedent(code))
    project.code.user_code = path
    return Simulation(project, output=out.append)


USER_CODE = """\
    import inspect

    def init(sim):
        total = sim.add_crate_row(2.0, 3.0, count=3)
        print("obstacles", total, type(total).__name__, "crates", sim.crate_count)
        print("signature", inspect.signature(sim.add_crate_row))
        print("help", sim.add_crate_row.__doc__.splitlines()[0])

    def main_loop(sim):
        sim.set_beacon(min(1.0, sim.time))
    """


def test_a_call_declared_in_one_place_is_made_from_a_controller_process(tmp_path, registered):
    out: list[str] = []
    simulation = _simulation(tmp_path, USER_CODE, out)
    try:
        pid = simulation.runner.pid
        assert pid is not None  # a process of its own, as `sear run` starts user code
        boxes = [o for o in simulation.world.obstacles if o.kind == "box"]
        assert len(boxes) == 3  # init's request reached the world before the first physics step
        for i, box in enumerate(boxes):
            position, _ = simulation.world.obstacle_pose(box)
            assert position[:2] == pytest.approx((2.0 + i, 3.0), abs=1e-6)
            assert position[2] == pytest.approx(CRATE / 2, abs=0.01)  # resting on the flat ground at z = 0
        simulation.start_user_code()
        simulation.run(0.1)
        assert simulation.user_error is None
    finally:
        simulation.close()
    text = "".join(out)
    assert "obstacles 3.0 float crates 3.0\n" in text  # the result and the property came back
    assert "signature (x: float, y: float, count: float = 3.0) -> float\n" in text
    assert "help A row of `count` crates (0.5 m cubes of 2 kg) eastwards from (x, y) m, 1 m apart, standing on " \
           "the\n" in text
    # The command went with each control tick's end: one per tick, in order, with the tick's time.
    ticks = [(k + 1) / 60 for k in range(6)]  # 0.1 s of 60 Hz control ticks
    assert [t for t, _level in BEACONS] == pytest.approx(ticks)
    assert [level for _t, level in BEACONS] == pytest.approx(ticks)


@pytest.mark.parametrize(("line", "expected"), [
    ("sim.add_crate_row(float('nan'), 0.0)", "sim.add_crate_row(x=nan): x must be a finite number of metres"),
    ("sim.add_crate_row(1.0, 2.0, count=11)",
     "sim.add_crate_row(count=11): count must be a finite number of crates from 1 to 10"),
    ("sim.set_beacon('on')", "sim.set_beacon(level='on'): level must be a finite number of levels from 0 to 1"),
])
def test_bad_arguments_of_a_registered_call_are_refused_on_the_users_line(tmp_path, registered, line, expected):
    code = f"""\
        def init(sim):
            sim.add_crate_row(0.0, 5.0, count=1)
            {line}

        def main_loop(sim):
            pass
        """
    with pytest.raises(UserCodeError) as info:
        _simulation(tmp_path, code, [])
    assert info.value.line == 3 and expected in str(info.value)


def test_the_simulation_refuses_a_bad_call_message_by_the_same_declaration(tmp_path, registered):
    # What a foreign controller sends unchecked: the simulation's side checks it by the declaration too.
    simulation = _simulation(tmp_path, "def main_loop(sim):\n    pass\n", [])
    try:
        robot = simulation.robots[0].sim
        with pytest.raises(ValueError, match=r"^sim\.add_crate_row\(count=0\.0\): count must be a finite number"):
            sim_calls.serve_call(robot, "add_crate_row", [1.0, 1.0, 0.0])
        assert sim_calls.serve_call(robot, "add_crate_row", [1.0, 1.0]) == 3.0  # the default count
        assert sim_calls.serve_call(robot, "crate_count", []) == 3.0
    finally:
        simulation.close()


def test_without_registering_the_call_does_not_exist(tmp_path):
    # The control for the tests above: the same user code, the call not registered.
    with pytest.raises(UserCodeError, match="'Sim' object has no attribute 'add_crate_row'") as info:
        _simulation(tmp_path, USER_CODE, [])
    assert info.value.line == 4
    assert "add_crate_row" not in sim_calls.calls() and not hasattr(sim_calls.Sim, "add_crate_row")


def test_register_refuses_what_is_not_a_new_declared_call(registered):
    def plain(self, x: float) -> None:
        """Not declared."""

    with pytest.raises(ValueError, match="not a declared sim call"):
        sim_calls.register(plain)
    with pytest.raises(ValueError, match=r"sim\.add_crate_row exists already"):
        sim_calls.register(add_crate_row)

    @declare("request", name=Arg(kind="name"))
    def read(self, name: str) -> float:
        """A name the protocol's turns serve."""
        return 0.0

    with pytest.raises(ValueError, match=r"sim\.read exists already"):
        sim_calls.register(read)
    sim_calls.unregister("accelerate")  # the built-in calls stay
    assert "accelerate" in sim_calls.calls() and hasattr(sim_calls.Sim, "accelerate")


def test_a_declaration_a_controller_could_not_be_made_from_is_refused():
    with pytest.raises(DeclarationError, match="every argument needs an Arg"):
        @declare("request", x=COORDINATE)
        def spot(self, x: float, y: float) -> None:
            """A spot."""

    with pytest.raises(DeclarationError, match="size is a number, so its type is written float"):
        @declare("request", size=SIZE)
        def cube(self, size: int) -> None:
            """A cube."""

    with pytest.raises(DeclarationError, match="needs a docstring"):
        @declare("command", size=SIZE)
        def grow(self, size: float) -> None:
            pass

    with pytest.raises(DeclarationError, match="a command returns nothing"):
        @declare("command", size=SIZE)
        def measure(self, size: float) -> float:
            """A command with a result."""
            return size

    with pytest.raises(DeclarationError, match="default of colour must be None"):
        @declare("request", colour=Arg(kind="any"))
        def paint(self, colour: Any = (1, 0, 0)) -> None:
            """A colour as a tuple."""


def test_the_welcome_carries_the_table_and_a_malformed_one_is_refused():
    table = sim_calls.calls()
    wire = protocol.calls_to_wire(table.values())
    assert protocol.calls_from_wire(wire) == table  # the controller reads back what the simulation declared
    box = next(entry for entry in wire if entry["name"] == "add_box")
    assert [a["name"] for a in box["args"]] == ["x", "y", "z", "size", "mass"]
    assert box["args"][2]["none_ok"] and box["args"][2]["default"] is None and "default" not in box["args"][0]
    assert box["args"][3]["lo"] == 0.0 and box["args"][3]["lo_open"] and box["args"][0]["hi"] == 100_000.0
    for bad, says in [
        (5, "must be an array"),
        ([{"name": "import", "kind": "request"}], "'import' is not a name"),
        ([{"name": "fly", "kind": "soon"}], "fly needs a kind"),
        ([{"name": "fly", "kind": "request", "args": [{"name": "self"}]}], "'self' is not a name"),
        ([{"name": "fly", "kind": "request", "args": [{"name": "x", "lo": "low"}]}], "lo of fly's x is 'low'"),
        ([{"name": "fly", "kind": "request", "args": [{"name": "x", "kind": "colour"}]}], "unknown kind 'colour'"),
        ([{"name": "fly", "kind": "request", "args": [{"name": "x", "default": [1]}]}], "the default of fly's x"),
    ]:
        with pytest.raises(protocol.ProtocolError, match=says):
            protocol.calls_from_wire(bad)
    later = [{**box, "colour": "red", "args": [{**box["args"][0], "step": 0.5}]}]  # fields a later version adds
    assert protocol.calls_from_wire(later)["add_box"].args[0].hi == 100_000.0


def test_the_controller_process_loads_neither_physics_nor_the_runtime():
    # It learns the calls from the welcome, so `python -m sear.controller` imports no pybullet, Qt or runtime.
    code = "import sys, sear.controller; print(' '.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                timeout=120).stdout.split())
    assert {"sear.controller", "sear.protocol", "sear.simapi", "msgpack"} <= loaded  # the check sees what loads
    assert not {m for m in loaded if m.split(".")[0] in ("pybullet", "PySide6", "trimesh")
                or m.startswith(("sear.physics", "sear.runtime", "sear.sensors", "sear.gui"))}


def test_a_fast_setter_is_checked_as_the_slow_path_checks_it():
    accelerate = sim_calls.calls()["accelerate"]
    assert accelerate.setter_range == (-1e6, 1e6)
    assert protocol.check_args(accelerate, [5.0]) == [5.0]
    for bad in (math.nan, math.inf, 2e6):
        with pytest.raises(ValueError, match=r"sim\.accelerate\(force="):
            protocol.check_args(accelerate, [bad])


def test_the_protocol_document_lists_every_builtin_call():
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "controller-protocol.md").read_text(encoding="utf-8")
    table = text.split("## Calls", 1)[1].split("## ", 1)[0]
    rows = set(re.findall(r"^\| `(\w+)` \|", table, flags=re.M))
    assert rows == set(sim_calls.BUILT_IN)
