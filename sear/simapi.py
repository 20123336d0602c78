"""How a `sim` call is declared, the one check of its arguments, and the calls the protocol's turns serve.

A call of the `sim` object user code holds is declared once, with `declare`: a method whose signature
(argument names, order, defaults), docstring (the help users read) and decorator (each argument's kind,
unit and range, from the templates below, and whether the call is a property, a request or a command)
say everything a controller and the protocol need, and whose body is what the call does on the
simulation's side. The built-in ones are the methods of sear.runtime.sim.SimulationCalls; a plug-in or
a test registers more there (sear.runtime.sim.register). The simulation sends the declarations (`Call`,
pure data) in the protocol's welcome, and a controller makes its `sim` methods from them.

A few calls are served by the protocol's turns themselves rather than by a call message: `TURN_CALLS`
(time, sensor_names, read, print, step, wait). Their implementations, in the controller and in the
simulation's Sim, take their arguments through `checked`.

Every value that reaches the physics from user code passes through `check` or `check_arg`: a NaN, an
infinity, a string or None where a number belongs, or a number the simulation cannot honour (a box
1e9 m wide, a tree 1e300 m away), is refused with an error that names the call and the argument, e.g.
``sim.add_tree(x=nan): x must be a finite number of metres``. The error is raised in the user's code, so
it reaches the user as a user-code error on their own line. Pure Python: a controller process uses it
without the physics.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import keyword
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
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

NDARRAY = "numpy.ndarray"
"""How an array argument's or result's type is shown in a controller's signatures: written as a string (as
`from __future__ import annotations` writes every annotation), so making the methods imports no numpy."""

ArgKind = Literal["number", "name", "text", "flag", "grid", "any"]
CallKind = Literal["property", "request", "command"]
"""property: read as an attribute, no arguments, a round trip (sim.pose). request: a method whose result,
or its refusal, comes back before the user's next line (sim.add_box, sim.read_sick). command: a setter
with no result that holds until changed (sim.accelerate), sent with the turn's end: no round trip."""
CALL_KINDS: tuple[CallKind, ...] = ("property", "request", "command")
ARG_KINDS: tuple[ArgKind, ...] = ("number", "name", "text", "flag", "grid", "any")


class SimArgumentError(ValueError):
    """A `sim` call was given an argument it cannot use (NaN, infinite, out of range)."""


class SimArgumentTypeError(SimArgumentError, TypeError):
    """A `sim` call was given an argument of the wrong type (a string or None for a number, ...)."""


@dataclass(frozen=True)
class Arg:
    """One argument of a `sim` call.

    kind: "number" (a real number, given as int or float; not bool), "name" (a string: a sensor's name),
    "text" (a string or None, as print's sep and end), "flag" (True or False, not 1 or 0), "grid" (a 2-D
    array of numbers, NaN allowed, at most MAX_GRID_CELLS cells; checked as float32), "any" (anything).
    Numbers lie in lo..hi (either end open when lo_open/hi_open); none_ok lets None through (its meaning
    is in the call's help). Without a name it is a template (COORDINATE, ...): `declare` names it after
    the parameter it describes and takes the default from there."""

    name: str = ""
    kind: ArgKind = "number"
    unit: str = ""
    """What a number measures, plural, as errors say it: 'metres', 'newtons'."""
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

    def named(self, name: str, default: Any = ...) -> Arg:
        """This template as the argument `name` (with `default`; `...`: required)."""
        return dataclasses.replace(self, name=name, default=default)

    @property
    def annotation(self) -> Any:
        """The Python type of the values it takes, as a signature shows it (float | None, str, ...)."""
        if self.kind == "grid":  # written, not imported: a controller process loads numpy only if its user code does
            return NDARRAY + " | None" if self.none_ok else NDARRAY
        base: Any = {"number": float, "name": str, "text": str, "flag": bool, "any": Any}[self.kind]
        return base | None if self.none_ok or self.kind == "text" else base

    @property
    def fixed_range(self) -> tuple[float, float] | None:
        """(lo, hi) when the argument is a number in a closed, finite range: then a float `lo <= v <= hi`
        passes the check as it is (a NaN fails the comparison), the protocol's fast path for setters."""
        if (self.kind == "number" and not (self.lo_open or self.hi_open) and math.isfinite(self.lo)
                and math.isfinite(self.hi)):
            return self.lo, self.hi
        return None


@dataclass(frozen=True)
class Call:
    """One `sim` call, as data: what `declare` reads off a method, what the protocol's welcome carries,
    and what a controller makes its method from."""

    name: str
    args: tuple[Arg, ...] = ()
    kind: CallKind = "request"
    help: str = ""
    """What it does, in its units: the declaring method's docstring."""
    returns: str = "None"
    """Its result's type as written in the declaration ('None', 'float', 'Pose', 'np.ndarray | None')."""
    varargs: bool = False
    """Takes *args of anything before its named arguments (print)."""
    setter_range: tuple[float, float] | None = field(default=None, init=False, repr=False, compare=False)
    """A command of one number in a closed range: that range (sear.protocol.check_args' fast path)."""

    def __post_init__(self) -> None:
        if self.kind == "command" and len(self.args) == 1:
            object.__setattr__(self, "setter_range", self.args[0].fixed_range)


COORDINATE = Arg(unit="metres", lo=-WORLD_LIMIT, hi=WORLD_LIMIT)
"""A position in the world frame, m from the terrain centre."""
COORDINATE_OR_NONE = dataclasses.replace(COORDINATE, none_ok=True)
"""A height whose None means 'on the ground' (the call's help says which ground)."""
SIZE = Arg(unit="metres", lo=0.0, hi=MAX_SIZE, lo_open=True)
"""An edge, a height, a thickness: more than 0 m, at most MAX_SIZE."""
MASS = Arg(unit="kilograms", lo=0.0, hi=MAX_MASS)
YAW = Arg(unit="radians", lo=-2 * math.pi, hi=2 * math.pi)
"""A heading about the vertical, counter-clockwise from east."""
SHELF_LEVELS = Arg(unit="boards", lo=2.0, hi=50.0)
"""A shelf's number of boards (a whole number; sear.scene.MAX_SHELF_LEVELS)."""
FORCE = Arg(unit="newtons", lo=-MAX_FORCE, hi=MAX_FORCE)
"""A drive force, negative backwards."""
BRAKE_FORCE = Arg(unit="newtons", lo=0.0, hi=MAX_FORCE)
STEERING_ANGLE = Arg(unit="radians", lo=-2 * math.pi, hi=2 * math.pi)
LIFT_HEIGHT = Arg(unit="metres", lo=0.0, hi=MAX_SIZE, none_ok=True)
FLAG_OR_NONE = Arg(kind="flag", none_ok=True)
SENSOR_NAME = Arg(kind="name")
TEXT = Arg(kind="text")
GRID = Arg(kind="grid")
DURATION = Arg(unit="seconds", lo=0.0)
ANYTHING = Arg(kind="any")

TURN_CALLS: dict[str, Call] = {call.name: call for call in (
    Call("time", kind="property", returns="float", help="Simulated time since the start, s."),
    Call("sensor_names", kind="property", returns="list[str]", help="Names of the project's sensors, for read()."),
    Call("read", (SENSOR_NAME.named("name"),), returns="Any",
         help="Latest reading of the sensor called `name` (None until its first sample or when nothing is in "
              "range). Raises an error listing the sensor names when there is no such sensor."),
    Call("print", (TEXT.named("sep", " "), TEXT.named("end", "\n"), ANYTHING.named("file", None),
                   ANYTHING.named("flush", False)), kind="command", varargs=True, help="Print to the console."),
    Call("step", returns="bool", help="run(sim) style: wait for the next control tick; False when the simulation "
                                      "is ending."),
    Call("wait", (DURATION.named("seconds"),), returns="bool",
         help="run(sim) style: let `seconds` of simulated time pass."),
)}
"""The calls the protocol's turns serve (a turn's time and readings, the welcome's sensor names, print
messages, the turns themselves) instead of a call message: a controller answers them itself."""


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
    import numpy as np  # only a grid argument needs it (a controller whose user code never sends one skips it)

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


def check(call: Call, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of a call of `sim.<call.name>` bound as Python binds them and checked: returns the
    star arguments (print's) and every named argument by name, defaults filled in. Raises TypeError for
    a wrong count or an unknown keyword (as Python would), SimArgumentError for a bad value."""
    name = call.name
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


def _checking(call: Call, method: Callable[..., Any]) -> Callable[..., Any]:
    """`method` with its arguments checked (and converted) by `check` first; it receives them by keyword."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        star, named = check(call, args, kwargs)
        return method(self, *star, **named)

    return wrapper


def checked(method: F) -> F:
    """Decorate an implementation of a turn call (TURN_CALLS, by the method's name): its arguments are
    checked by `check` before it runs."""
    call = TURN_CALLS.get(method.__name__)
    if call is None:
        raise KeyError(f"{method.__name__} is not a call the protocol's turns serve (sear.simapi.TURN_CALLS)")
    return _checking(call, method)  # type: ignore[return-value]


# --- declaring a call -----------------------------------------------------------------------------------

_SPELLINGS: dict[tuple[str, bool], tuple[str, ...]] = {
    ("number", False): ("float",), ("number", True): ("float | None",),
    ("flag", False): ("bool",), ("flag", True): ("bool | None",),
    ("name", False): ("str",), ("text", False): ("str | None",), ("text", True): ("str | None",),
    ("grid", False): ("np.ndarray", "numpy.ndarray"), ("any", False): ("Any", "typing.Any"),
}
"""How a declaration writes each kind's type: the type a controller's method shows for it (Arg.annotation)."""


def _written(annotation: Any) -> str:
    """An annotation as written ('float | None'), whether or not the module postpones annotations."""
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


class DeclarationError(TypeError):
    """A `sim` call's declaration is not one a controller can be made from (the message says why)."""


def declare(kind: CallKind, **arg_specs: Arg) -> Callable[[F], F]:
    """Declare a `sim` call: decorate the method that does it on the simulation's side (its first
    parameter the simulation's Sim, sear.runtime.sim.SimulationCalls), giving its kind and each other
    parameter's Arg (a template such as COORDINATE; its name and default are the parameter's):

        @declare("request", x=COORDINATE, y=COORDINATE, size=SIZE)
        def add_crate(self, x: float, y: float, size: float = 0.5) -> None:
            \"\"\"A crate of edge `size` m at (x, y) m.\"\"\"
            self._robot.world.add_box(x, y, None, size=size, mass=2.0)

    The method is returned with its arguments checked, and carries the declaration (a Call) as
    `sim_call`; for a property, decorate the getter and wrap the result in `property`. DeclarationError
    when the declaration is incomplete: an argument without its Arg, a type the Arg's kind does not
    take, no docstring, a default that cannot travel in the protocol's welcome."""

    def decorate(method: F) -> F:
        name = method.__name__
        where = f"the declaration of sim.{name}"
        if kind not in CALL_KINDS:
            raise DeclarationError(f"{where}: kind {kind!r} is not one of {', '.join(CALL_KINDS)}")
        if not name.isidentifier() or name.startswith("_") or keyword.iskeyword(name):
            raise DeclarationError(f"{where}: a call's name is an identifier that does not start with '_'")
        help_text = inspect.cleandoc(method.__doc__ or "")
        if not help_text:
            raise DeclarationError(f"{where}: it needs a docstring (the help users read)")
        signature = inspect.signature(method)
        params = list(signature.parameters.values())[1:]  # after the simulation's Sim
        names = [p.name for p in params]
        if sorted(names) != sorted(arg_specs):
            raise DeclarationError(f"{where}: every argument needs an Arg, and only they: arguments "
                                   f"{names}, Args given for {sorted(arg_specs)}")
        args = []
        for param in params:
            spec = arg_specs[param.name]
            if param.kind is not param.POSITIONAL_OR_KEYWORD or param.name.startswith("_"):
                raise DeclarationError(f"{where}: {param.name} must be an ordinary argument (positional or "
                                       "keyword, its name not starting with '_')")
            if _written(param.annotation) not in _SPELLINGS[(spec.kind, spec.none_ok)]:
                raise DeclarationError(f"{where}: {param.name} is a {spec.kind}{' or None' if spec.none_ok else ''}, "
                                       f"so its type is written {' or '.join(_SPELLINGS[(spec.kind, spec.none_ok)])}")
            default = ... if param.default is param.empty else param.default
            if default is not ... and not (default is None or isinstance(default, bool | int | float | str)):
                raise DeclarationError(f"{where}: the default of {param.name} must be None, True/False, a number or "
                                       "a string (it travels in the protocol's welcome)")
            args.append(spec.named(param.name, default))
        returns = _written(signature.return_annotation) if signature.return_annotation is not signature.empty else "Any"
        if kind == "property" and args:
            raise DeclarationError(f"{where}: a property takes no arguments")
        if kind == "command" and returns != "None":
            raise DeclarationError(f"{where}: a command returns nothing (-> None); make it a request")
        call = Call(name, tuple(args), kind, help_text, returns)
        wrapper = _checking(call, method) if args else method  # no arguments: Python's own check is the check
        wrapper.sim_call = call  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
