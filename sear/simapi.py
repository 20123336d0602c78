"""The `sim` API's calls and the arguments each takes, in one table, and the one check of them.

User code drives the simulation only through the `sim` object (sear.runtime.Sim, or a controller
process's stand-in for it), so every value that reaches the physics from user code passes through here:
a NaN, an infinity, a string or None where a number belongs, or a number the simulation cannot honour
(a box 1e9 m wide, a tree 1e300 m away), is refused with an error that names the call and the argument,
e.g. ``sim.add_tree(x=nan): x must be a finite number of metres``. The error is raised in the user's
code, so it reaches the user as a user-code error on their own line.

`SIM_API` describes every call: its arguments in order, with kind, unit, range and default. `check(name,
args, kwargs)` binds a call's arguments as Python would and checks them, returning them converted
(numbers as float). `checked` decorates the methods of an object that implements the API with that check.
Pure Python: a controller process can use the same table without the physics.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

WORLD_LIMIT = 100_000.0
"""m: obstacles' coordinates stay within this distance of the terrain centre on each axis (beyond it
single-precision physics loses centimetres)."""
MAX_SIZE = 1_000.0
"""m: the largest box edge, wall height or wall thickness."""
MAX_MASS = 1_000_000.0
"""kg: the heaviest movable box."""
MAX_FORCE = 1_000_000.0
"""N: the largest engine or brake force a call may ask for."""
MAX_GRID_CELLS = 1_000_000
"""Cells of the largest grid show_grid takes (4 MB as float32: one protocol frame holds it)."""


class SimArgumentError(ValueError):
    """A `sim` call was given an argument it cannot use (NaN, infinite, out of range)."""


class SimArgumentTypeError(SimArgumentError, TypeError):
    """A `sim` call was given an argument of the wrong type (a string or None for a number, ...)."""


@dataclass(frozen=True)
class Arg:
    """One argument of a `sim` call.

    kind: "number" (a real number, given as int or float; not bool), "name" (a string: a sensor's name),
    "text" (a string or None, as print's sep and end), "grid" (a 2-D array of numbers, NaN allowed, at
    most MAX_GRID_CELLS cells; checked as float32), "any" (anything). Numbers lie in lo..hi (either
    end open when lo_open/hi_open); none_ok lets None through (its meaning is in the call's help)."""

    name: str
    kind: str = "number"
    """The kinds above, and "flag": True or False (not 1 or 0)."""
    unit: str = ""
    lo: float = -math.inf
    hi: float = math.inf
    lo_open: bool = False
    hi_open: bool = False
    none_ok: bool = False
    default: Any = ...
    """`...`: the argument is required."""

    def describe(self) -> str:
        """The rule, as the error states it: 'a finite number of metres from -1e+05 to 1e+05'."""
        if self.kind == "name":
            return "a sensor name (a string)"
        if self.kind == "text":
            return "a string or None"
        if self.kind == "flag":
            return "True or False" + (", or None" if self.none_ok else "")
        if self.kind == "any":
            return "anything"
        if self.kind == "grid":
            return (f"a 2-D array of numbers (NaN for unknown; at most {MAX_GRID_CELLS:,} cells, "
                    "no infinities)")
        text = "a finite number" + (f" of {self.unit}" if self.unit else "")
        lo, hi = self.lo, self.hi
        if lo == 0 and math.isinf(hi):
            text += " greater than 0" if self.lo_open else " (0 or more)"
        elif lo == -hi and not (self.lo_open or self.hi_open):
            text += f" from {lo:g} to {hi:g}"
        elif math.isfinite(lo) or math.isfinite(hi):
            low = ("above " if self.lo_open else "from ") + f"{lo:g}"
            high = ("below " if self.hi_open else "to ") + f"{hi:g}"
            text += f" {low} {high}"
        if self.none_ok:
            text += ", or None"
        return text


@dataclass(frozen=True)
class Call:
    """One `sim` call: its name, its arguments in order, and whether it is a read-only property."""

    name: str
    args: tuple[Arg, ...] = ()
    property: bool = False
    varargs: bool = False
    """Takes *args of anything before its named arguments (print)."""
    help: str = ""


def _coord(name: str, *, none_ok: bool = False, default: Any = ...) -> Arg:
    return Arg(name, unit="metres", lo=-WORLD_LIMIT, hi=WORLD_LIMIT, none_ok=none_ok, default=default)


def _length(name: str, default: Any = ...) -> Arg:
    return Arg(name, unit="metres", lo=0.0, hi=MAX_SIZE, lo_open=True, default=default)


SIM_API: dict[str, Call] = {call.name: call for call in (
    Call("time", property=True, help="simulated time since the start, s"),
    Call("sensor_names", property=True, help="the project's sensor names"),
    Call("pose", property=True, help="ground-truth pose (x, y, z m; roll, pitch, yaw rad)"),
    Call("speed", property=True, help="ground-truth speed, m/s"),
    Call("gripper", (Arg("open", "flag", none_ok=True, default=None),
                     Arg("height", unit="metres", lo=0.0, hi=MAX_SIZE, none_ok=True, default=None)),
         help="gripper: open (True) or close (False) the paddles; lift them to height m above their lowest "
              "position (clamped to the lift's travel); None keeps either as it is"),
    Call("read", (Arg("name", "name"),), help="latest reading of a sensor"),
    Call("read_sick", (Arg("name", "name"),), help="latest LIDAR scan packed as SICK LMS2xx values"),
    Call("accelerate", (Arg("force", unit="newtons", lo=-MAX_FORCE, hi=MAX_FORCE),),
         help="engine force, N (negative reverses)"),
    Call("brake", (Arg("force", unit="newtons", lo=0.0, hi=MAX_FORCE),), help="brake force, N (0 releases)"),
    Call("steer", (Arg("angle", unit="radians", lo=-2 * math.pi, hi=2 * math.pi),),
         help="steering angle, rad, positive left, clamped to the project's steering limit"),
    Call("drive", (Arg("left", unit="newtons", lo=-MAX_FORCE, hi=MAX_FORCE),
                   Arg("right", unit="newtons", lo=-MAX_FORCE, hi=MAX_FORCE)),
         help="drive force of the left and right side, N (negative reverses), shared by the side's driven "
              "wheels (which those are: the project's drive type)"),
    Call("add_tree", (_coord("x"), _coord("y"), _coord("z", none_ok=True, default=None)),
         help="a static tree at (x, y) m, its foot at z m (None: on the ground)"),
    Call("add_box", (_coord("x"), _coord("y"), _coord("z", none_ok=True, default=None),
                     _length("size", 1.0), Arg("mass", unit="kilograms", lo=0.0, hi=MAX_MASS, default=1.0)),
         help="a cube of edge size m and mass kg (0: immovable) centred on (x, y, z) m"),
    Call("add_wall", (_coord("x1"), _coord("y1"), _coord("x2"), _coord("y2"), _length("height", 1.0),
                      _length("thickness", 0.2)),
         help="a static wall along (x1, y1)-(x2, y2) m"),
    Call("add_table", (_coord("x"), _coord("y"), _length("width"), _length("depth"), _length("height")),
         help="a static table centred on (x, y) m, width m along x, depth m along y, its top height m up"),
    Call("print", (Arg("sep", "text", default=" "), Arg("end", "text", default="\n"),
                   Arg("file", "any", default=None), Arg("flush", "any", default=False)), varargs=True,
         help="print to the console"),
    Call("show_grid", (Arg("grid", "grid"), _coord("x", default=0.0), _coord("y", default=0.0),
                       Arg("cell", unit="metres", lo=0.0, hi=MAX_SIZE, lo_open=True, default=0.1),
                       Arg("title", "text", default="grid")),
         help="show a 2-D grid (rows south to north, 0 white to 1 black, NaN unknown) in the window's "
              "Grids dock, its south-west corner at (x, y) m, cells cell m wide, under title"),
    Call("step", help="run(sim) style: wait for the next control tick"),
    Call("wait", (Arg("seconds", unit="seconds", lo=0.0),),
         help="run(sim) style: let seconds of simulated time pass"),
)}
"""Every call of the `sim` object user code receives, by name (docs/user-code.md lists them for users)."""


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)  # nan, inf, -inf as written in Python
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _type_name(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def check_arg(call: str, arg: Arg, value: Any) -> Any:
    """`value` checked against `arg` (a number converted to float), or SimArgumentError naming the call."""
    where = f"sim.{call}({arg.name}={_shown(value)}): {arg.name} must be {arg.describe()}"
    if value is None and arg.none_ok:
        return None
    if arg.kind == "any":
        return value
    if arg.kind == "flag":
        if isinstance(value, bool):
            return value
        raise SimArgumentTypeError(f"{where}, not {_type_name(value)}")
    if arg.kind == "text":
        if value is None or isinstance(value, str):
            return value
        raise SimArgumentTypeError(f"{where}, not {_type_name(value)}")
    if arg.kind == "name":
        if isinstance(value, str):
            return value
        raise SimArgumentTypeError(f"{where}, not {_type_name(value)}")
    if arg.kind == "grid":
        return _check_grid(f"sim.{call}({arg.name}=...): {arg.name} must be {arg.describe()}", value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise SimArgumentTypeError(f"{where}, not {_type_name(value)}")
    try:
        number = float(value)
    except (OverflowError, ValueError):  # an int too large for a float
        raise SimArgumentError(where) from None
    if not math.isfinite(number):
        raise SimArgumentError(where)
    below = number <= arg.lo if arg.lo_open else number < arg.lo
    above = number >= arg.hi if arg.hi_open else number > arg.hi
    if below or above:
        raise SimArgumentError(where)
    return number


def _check_grid(where: str, value: Any) -> np.ndarray:
    """`value` as a C-contiguous float32 (rows, columns) array, or SimArgumentError saying what it is."""
    if isinstance(value, str | bytes | dict) or value is None:
        raise SimArgumentTypeError(f"{where}, not {_type_name(value)}")
    try:
        with np.errstate(over="ignore"):  # a number too large for float32 becomes inf, refused below
            grid = np.ascontiguousarray(value, dtype=np.float32)
    except (TypeError, ValueError, OverflowError):
        raise SimArgumentTypeError(f"{where}, not {_type_name(value)} of that") from None
    if grid.ndim != 2 or 0 in grid.shape:
        raise SimArgumentError(f"{where}, not an array of shape {grid.shape}")
    if grid.size > MAX_GRID_CELLS:
        raise SimArgumentError(f"{where}, not {grid.size:,} cells")
    if np.isinf(grid).any():
        raise SimArgumentError(f"{where}, and this one holds infinities (or numbers too large for float32)")
    return grid


def check(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of a call of `sim.<name>` bound as Python binds them and checked: returns the star
    arguments (print's) and every named argument by name, defaults filled in. Raises TypeError for a
    wrong count or an unknown keyword (as Python would), SimArgumentError for a bad value."""
    call = SIM_API[name]
    star: tuple[Any, ...] = ()
    if call.varargs:
        star, args = args, ()
    if len(args) > len(call.args):
        raise TypeError(f"sim.{name}() takes {len(call.args)} argument(s) but {len(args)} were given")
    bound: dict[str, Any] = {}
    for arg, value in zip(call.args, args, strict=False):
        bound[arg.name] = value
    for key, value in kwargs.items():
        if key in bound:
            raise TypeError(f"sim.{name}() got multiple values for argument '{key}'")
        if not any(a.name == key for a in call.args):
            raise TypeError(f"sim.{name}() got an unexpected keyword argument '{key}'")
        bound[key] = value
    out: dict[str, Any] = {}
    for arg in call.args:
        if arg.name in bound:
            out[arg.name] = check_arg(name, arg, bound[arg.name])
        elif arg.default is ...:
            raise TypeError(f"sim.{name}() missing required argument '{arg.name}'")
        else:
            out[arg.name] = arg.default
    return star, out


F = TypeVar("F", bound=Callable[..., Any])


def checked(method: F) -> F:
    """Decorate a method of the `sim` object named as a call in SIM_API: its arguments are checked (and
    converted) by `check` before the method runs; the method receives them by keyword."""
    name = method.__name__
    if name not in SIM_API:
        raise KeyError(f"{name} is not a call of the sim API (sear.simapi.SIM_API)")

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        star, named = check(name, args, kwargs)
        return method(self, *star, **named)

    return wrapper  # type: ignore[return-value]
