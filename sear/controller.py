"""The controller's end of the SEAR controller protocol, in Python: drive a simulation from a script.

A script drives a simulation it did not start (`sear run PRJ --external` prints the port and token):

    from sear.controller import connect

    with connect(port, token) as sim:
        sim.add_tree(6.0, 16.0)          # before the first physics step
        while sim.step():                # one control tick of the simulation
            fix = sim.read("gps")
            sim.accelerate(20.0)

The same `sim` API as user code run by the simulation, which is this module too: every user code file
runs in a process of its own, started by the simulation as `python -m sear.controller --fd N FILE`
(serve_user_code), so a hang or a crash of the user's code never takes the simulation down. The `sim`
methods are made from the calls the simulation declares in the protocol's welcome (sear.runtime.sim),
so this process needs neither the physics nor the runtime. A swarm (`--robot NAME FD FILE`, repeated;
serve_swarm) runs several robots' user code in one such process, a thread and a connection per robot.
Protocol: docs/controller-protocol.md.

Longer than most modules (~770 lines) because the script client and the user code process share Link
(turns, calls, output from any thread, flood gathering) and Sim: splitting them would split that one
connection's rules across two files.
"""

from __future__ import annotations

import argparse
import builtins
import codecs
import contextlib
import faulthandler
import functools
import io
import operator
import os
import signal
import socket
import sys
import threading
import time
import types
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sear import protocol, simapi
from sear.errors import SearError, UserCodeError
from sear.protocol import Pose, check_args, from_wire
from sear.usercode import UserProgram, format_user_exception, user_error_line

PRINTS_AT_ONCE = 50
"""Prints a turn sends one message each, at once; after that many in one turn (a flood) the output is
gathered into messages of up to GATHER_CHARS characters, sent at least every GATHER_SECONDS and before
anything else the controller sends. One message per print costs a system call and a wake-up of the
simulation each (~40 µs on 2 shared cores): a million prints took 40 s and ran past the hook time-out."""
GATHER_CHARS = 1 << 16
"""Characters of gathered output per message, at most (see PRINTS_AT_ONCE)."""
GATHER_SECONDS = 0.02
"""s: gathered output waits at most this long for more before it is sent (see PRINTS_AT_ONCE)."""

PRINT_PIECE = protocol.MAX_FRAME // 8
"""Characters of output per print message: at most 4 UTF-8 bytes each, so a piece's frame stays well within
protocol.MAX_FRAME however long one print is (the console joins the pieces)."""


class ControllerError(SearError):
    """The simulation refused a call or a connection (the message says why)."""


class SimThreadError(SearError):
    """A `sim` call that goes to the simulation (a command, a request, step, wait) made, in user code run
    by the simulation, from a thread other than the one running the hooks. The simulation and the
    controller take turns, and only the hooks' thread knows whose turn it is, so such a call is refused in
    the thread that made it; print() and reading sim.time, sim.sensor_names and sim.read() work from any
    thread."""


class _StopRun(BaseException):
    """Raised inside a blocking run() to unwind it when the simulation ends (not an Exception, so a
    user's `except Exception` does not swallow it)."""


class Link:
    """A controller's connection to a simulation: the turns it is given and the calls it makes."""

    def __init__(self, conn: protocol.Connection) -> None:
        self.conn = conn
        self.time = 0.0
        self.sensor_names: list[str] = []
        self.readings: dict[str, Any] = {}
        self.pending: list[list[Any]] = []
        """Setter calls (accelerate, brake, steer, drive) made this turn, sent with the next message."""
        self.turn = ""
        self.welcome: dict[str, Any] = {}
        self.result: Any = None
        """A `collect` turn's answer (what result(sim) returned), sent with the turn's `done`."""
        self.calls: dict[str, simapi.Call] = {}
        """The calls the simulation declared in its welcome, by name: what `sim`'s methods are made from."""
        self.owner: int | None = None
        """The thread that takes the turns (the hooks' thread of user code run by the simulation), the only
        one whose calls reach the simulation; None: any thread (a script of its own, connect())."""
        self._prints = 0
        """Prints of the hooks' thread in this turn (PRINTS_AT_ONCE)."""
        self._gathered: deque[tuple[str, bool]] = deque()
        """A flood's output not yet sent, (text, err) in order: appended by the hooks' thread, sent by
        whichever of it and the output thread flushes (under _sending, so output never overtakes output)."""
        self._gathered_chars = 0
        self._gathered_since = 0.0
        self._sending = threading.Lock()
        self._wake = threading.Event()
        """Set when gathering starts: the output thread sends what is GATHER_SECONDS old, also while the
        hooks' thread is stuck in a loop or in native code."""
        self._flusher: threading.Thread | None = None

    def send(self, message: dict[str, Any]) -> None:
        """Send a message of the hooks' thread, after the output gathered so far (so the simulation shows
        it first, in order)."""
        if self._gathered:
            self.flush_output()
        self.conn.send(message)

    def flush_output(self) -> None:
        """Send the output gathered during a flood of prints (PRINTS_AT_ONCE)."""
        gathered = self._gathered
        with self._sending:
            self._gathered_chars = 0
            pieces: list[str] = []
            err = False
            while gathered:
                text, text_err = gathered.popleft()
                if pieces and text_err != err:
                    self._send_text("".join(pieces), err)
                    pieces = []
                pieces.append(text)
                err = text_err
            if pieces:
                self._send_text("".join(pieces), err)

    def _gather(self, text: str, err: bool) -> None:
        """Add a flood's print to the gathered output (sent when GATHER_CHARS, GATHER_SECONDS old, or
        before anything else the hooks' thread sends)."""
        gathered = self._gathered
        if not gathered:
            self._gathered_since = time.monotonic()
            gathered.append((text, err))
            self._wake.set()
            if self._flusher is None:
                self._flusher = threading.Thread(target=self._flush_when_old, name="sear-output", daemon=True)
                self._flusher.start()
        else:
            gathered.append((text, err))
        self._gathered_chars += len(text)
        if self._gathered_chars >= GATHER_CHARS:
            self.flush_output()

    def _flush_when_old(self) -> None:
        """The output thread: sends gathered output once it is GATHER_SECONDS old, until the connection
        closes."""
        while True:
            self._wake.wait()
            left = self._gathered_since + GATHER_SECONDS - time.monotonic()
            if left > 0:
                time.sleep(left)
            self._wake.clear()  # before taking the output: gathering that starts after it sets it again
            try:
                self.flush_output()
            except protocol.Closed:
                return

    def _send_text(self, text: str, err: bool) -> None:
        for start in range(0, len(text), PRINT_PIECE):  # a frame holds at most protocol.MAX_FRAME bytes
            piece = text[start:start + PRINT_PIECE]
            self.conn.send({"t": "print", "text": piece, "err": True} if err else {"t": "print", "text": piece})

    def check_thread(self, name: str) -> None:
        """SimThreadError unless called on the thread that takes the turns (`name`: the call, for the message)."""
        if self.owner is not None and threading.get_ident() != self.owner:
            thread = threading.current_thread().name
            raise SimThreadError(
                f"sim.{name}() was called from the thread {thread!r}; sim calls that reach the simulation "
                "work only in the thread that runs init, main_loop and run(sim), which takes the turns. Let "
                "the thread hand its results to the hooks (a queue.Queue), and make the call there. "
                "print(), sim.time and sim.read() work from any thread.")

    def hello(self, token: str = "", name: str = "python") -> dict[str, Any]:
        """The handshake: say who we are, get the simulation's welcome (ControllerError if refused)."""
        self.send({"t": "hello", "version": protocol.VERSION, "token": token, "name": name})
        reply = self.conn.recv()
        if reply.get("t") != "welcome":
            raise ControllerError(f"the simulation refused the connection: {reply.get('message', reply)}")
        self.welcome = reply
        self.sensor_names = list(reply.get("sensors", []))
        self.time = float(reply.get("time", 0.0))
        try:
            self.calls = protocol.calls_from_wire(reply.get("calls", []))
        except protocol.ProtocolError as exc:
            raise ControllerError(f"the simulation's welcome cannot be read: {exc}") from None
        return reply

    def next_turn(self) -> str:
        """End the current turn (sending the pending setters with `done`) unless none is open, then wait
        for the next one: 'init', 'start', 'tick' or 'stop'."""
        if self.turn:
            done: dict[str, Any] = {"t": "done", "calls": self.pending}
            if self.turn == "collect":
                done["result"] = self.result
                self.result = None
            self.send(done)
            self.pending = []
        self._prints = 0
        while True:
            message = self.conn.recv()
            kind = message["t"]
            if kind == "error":  # a setter of the last turn was refused
                raise ControllerError(str(message.get("message")))
            if kind in ("init", "start", "tick", "stop", "collect"):
                self.turn = kind
                self.time = float(message.get("time", self.time))
                for name, value in message.get("readings", {}).items():
                    self.readings[name] = from_wire(value)
                return kind
            raise ControllerError(f"unexpected message from the simulation: {kind!r}")

    def call(self, name: str, args: list[Any]) -> Any:
        """A call with a result: one round trip (pending setters go first, in order)."""
        self.send({"t": "call", "calls": [*self.pending, [name, args]]})
        self.pending = []
        reply = self.conn.recv()
        if reply.get("t") == "error":
            raise ControllerError(str(reply.get("message")))
        if reply.get("t") != "result":
            raise ControllerError(f"unexpected reply from the simulation: {reply.get('t')!r}")
        return from_wire(reply["values"][-1])

    def print(self, text: str, *, err: bool = False) -> None:
        """Console output (`err`: the user's standard error): sent at once (no reply), so it is not lost
        whatever happens next; in a flood (more than PRINTS_AT_ONCE prints in one turn) gathered and sent
        every GATHER_SECONDS or GATHER_CHARS, and before anything else. From any thread: only the turns'
        thread sends its pending setters first (a round trip), another thread's output goes out as it is,
        at once (the simulation shows it when it reads it, at the latest at the next turn)."""
        if self.owner is not None and threading.get_ident() != self.owner:
            with self._sending:
                self._send_text(text, err)
            return
        if self.pending:
            self.send({"t": "call", "calls": self.pending})
            self.pending = []
            reply = self.conn.recv()
            if reply.get("t") == "error":
                raise ControllerError(str(reply.get("message")))
        self._prints += 1
        if self._prints > PRINTS_AT_ONCE:
            self._gather(text, err)
            return
        if self._gathered:
            self.flush_output()
        with self._sending:
            self._send_text(text, err)

    def bye(self) -> None:
        with contextlib.suppress(protocol.Closed):
            self.send({"t": "bye", "calls": self.pending})


if TYPE_CHECKING:
    from sear.runtime.sim import SimulationCalls as _Declared
else:
    _Declared = object  # the methods come from the simulation's welcome (calls_from_wire, _sim_class)


class Sim(_Declared):
    """The `sim` object of a controller: the same calls as user code run by the simulation.

    The calls the protocol's turns serve (time, sensor_names, read, print, step, wait) are methods here;
    every other call is made from the declarations the simulation sent in its welcome (names, signatures,
    help and argument checks: the simulation's sear.runtime.sim.SimulationCalls, where type checkers and
    editors read them), so a call the simulation declares is a method here too. Units: metres, seconds,
    newtons, radians. Drive inputs hold until changed, like pedals."""

    def __init__(self, link: Link, step: Callable[[], bool]) -> None:
        self._link = link
        self._step = step

    @property
    def time(self) -> float:
        """Simulated time since the start, s (of the control tick now running)."""
        return self._link.time

    @property
    def sensor_names(self) -> list[str]:
        """Names of the project's sensors, for read()."""
        return list(self._link.sensor_names)

    @simapi.checked
    def read(self, name: str) -> Any:
        """Latest reading of the sensor called `name` (None until its first sample or when nothing is in
        range). Raises an error listing the sensor names when there is no such sensor."""
        link = self._link
        if name not in link.sensor_names:
            known = ", ".join(repr(n) for n in link.sensor_names) or "none (the project has no sensors file)"
            raise SearError(f"there is no sensor named {name!r}; the sensors are: {known}")
        return link.readings.get(name)

    def _declared_print(self, *args: Any, sep: str | None = " ", end: str | None = "\n", file: Any = None,
                        flush: bool = False) -> None:
        """Print to the simulation's console. Takes print()'s arguments; `file=` an open file of the
        user's writes there instead (standard output and standard error mean the console)."""
        if file is not None and file is not sys.stdout and file is not sys.stderr:
            builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
            return
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        self._link.print(sep.join(str(a) for a in args) + end, err=file is not None and file is sys.stderr)

    _declared_print.__name__ = _declared_print.__qualname__ = "print"
    _print_checked = simapi.checked(_declared_print)

    @functools.wraps(_print_checked)
    def print(self, *args: Any, **kwargs: Any) -> None:  # the checked print, with a fast path
        if kwargs:  # sep, end, file or flush: checked as declared
            self._print_checked(*args, **kwargs)
        else:  # print(a, b): nothing to check, and floods of it must be cheap (PRINTS_AT_ONCE)
            self._link.print(" ".join([a if type(a) is str else str(a) for a in args]) + "\n")

    @simapi.checked
    def step(self) -> bool:
        """Let the simulation run to the next control tick. False when the simulation is ending."""
        self._link.check_thread("step")
        return self._step()

    @simapi.checked
    def wait(self, seconds: float) -> bool:
        """Let `seconds` of simulated time pass (the robot keeps its inputs)."""
        self._link.check_thread("wait")
        end = self.time + seconds - 1e-9
        while self.time < end:
            if not self.step():
                return False
        return True

    def _command(self, call: simapi.Call, args: tuple[Any, ...]) -> None:
        """A command: checked now, sent with the turn's end (no round trip)."""
        self._link.check_thread(call.name)
        self._link.pending.append([call.name, [protocol.to_wire(v) for v in check_args(call, args)]])

    def _request(self, call: simapi.Call, returns: Any, args: tuple[Any, ...]) -> Any:
        """A request or a property: checked, sent, and its result (ValueError when the simulation refuses
        it) as the type `returns` (the declaration's result type) has it."""
        self._link.check_thread(call.name)
        values = [protocol.to_wire(v) for v in check_args(call, args)]
        try:
            result = self._link.call(call.name, values)
        except ControllerError as exc:
            raise ValueError(str(exc)) from None
        if isinstance(returns, type) and issubclass(returns, tuple) and isinstance(result, list):
            return returns(*result)  # a named tuple (Pose) travels as the array of its values
        if returns is float and isinstance(result, int | float) and not isinstance(result, bool):
            return float(result)
        return result


_RESULT_TYPES: dict[str, Any] = {"None": None, "float": float, "int": int, "bool": bool, "str": str,
                                 "Any": Any, "Pose": Pose, "np.ndarray": simapi.NDARRAY, "list[str]": list[str]}
"""The result types a declaration may write that a controller knows by name; another reads as Any. An
array is written as a string (simapi.NDARRAY), so making the methods imports no numpy."""


def _result_type(written: str) -> Any:
    """The type a declaration's result is written as ('np.ndarray | None'), or Any; with an array in it,
    as a string ('numpy.ndarray | None')."""
    parts = [_RESULT_TYPES.get(part.strip(), Any) for part in written.split("|")]
    if len(parts) == 1 or Any in parts:
        return parts[0] if len(parts) == 1 else Any
    if any(isinstance(part, str) for part in parts):
        return " | ".join(part if isinstance(part, str) else written_part.strip()
                          for part, written_part in zip(parts, written.split("|"), strict=True))
    return functools.reduce(operator.or_, parts)


def _method(call: simapi.Call) -> Any:
    """The controller's method (a property for a property) for the declared call: a real function with
    the declaration's signature, defaults, types and help, as dataclasses writes its __init__, that
    checks its arguments and sends the call."""
    returns = _result_type(call.returns)
    namespace: dict[str, Any] = {"_call": call, "_returns": returns}
    params = ["self"]
    for i, arg in enumerate(call.args):
        if arg.default is ...:
            params.append(arg.name)
        else:
            namespace[f"_default_{i}"] = arg.default
            params.append(f"{arg.name}=_default_{i}")
    send = "self._command(_call, " if call.kind == "command" else "return self._request(_call, _returns, "
    values = "".join(f"{arg.name}, " for arg in call.args)
    source = f"def {call.name}({', '.join(params)}):\n    {send}({values}))\n"
    exec(source, namespace)  # names are identifiers (calls_from_wire); values come in through the namespace
    function = namespace[call.name]
    function.__annotations__ = {**{arg.name: arg.annotation for arg in call.args}, "return": returns}
    function.__doc__ = call.help
    function.__qualname__ = f"Sim.{call.name}"
    function.__module__ = __name__
    return property(function, doc=call.help) if call.kind == "property" else function


def _sim_class(calls: dict[str, simapi.Call]) -> type[Sim]:
    """Sim with a method for each call the simulation declared (a name the turns serve stays theirs)."""
    methods = {name: _method(call) for name, call in calls.items() if not hasattr(Sim, name)}
    return type("Sim", (Sim,), {"__module__": __name__, "__qualname__": "Sim", "__doc__": Sim.__doc__, **methods})


def connected_sim(link: Link, step: Callable[[], bool]) -> Sim:
    """The `sim` of a controller connected over `link` (its welcome taken): its methods are the calls
    the simulation declared in the welcome; `step` ends the turn (run(sim)'s sim.step())."""
    return _sim_class(link.calls)(link, step)


class Controller:
    """An external controller's connection (connect()): `sim` drives, `close()` (or `with`) ends it."""

    def __init__(self, conn: protocol.Connection, token: str, name: str) -> None:
        self.link = Link(conn)
        self.link.hello(token, name)
        self._stopped = self.link.next_turn() == "stop"  # the init turn: calls before the first step()
        if self._stopped:
            raise ControllerError("the simulation ended before the controller's first turn")
        self.sim = connected_sim(self.link, self._step)

    def _step(self) -> bool:
        if self._stopped:
            return False
        kind = self.link.next_turn()
        if kind == "stop":
            self._stopped = True
            return False
        return True

    def close(self) -> None:
        """Say goodbye (the simulation carries on without a controller) and close the connection."""
        if not self.link.conn.closed:
            self.link.bye()
            self.link.conn.close()

    def __enter__(self) -> Sim:
        return self.sim

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(port: int, token: str, host: str = "127.0.0.1", *, name: str = "python",
            timeout: float = 10.0) -> Controller:
    """Connect to `sear run PRJ --external` on `port` with its one-time `token`. The first sim.step()
    ends the setup turn (obstacles added before it are there before the first physics step)."""
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.settimeout(None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn = protocol.Connection(sock)
    try:
        return Controller(conn, token, name)
    except BaseException:
        conn.close()
        raise


# --- the user code process ---------------------------------------------------------------------------------

class _ConsoleBytes(io.RawIOBase):
    """sys.stdout.buffer (sys.stderr.buffer) of the user code process: code that writes bytes, as to a real
    standard stream, gets them to the console decoded as UTF-8 (an invalid byte shows as U+FFFD; a
    character split across two writes is joined)."""

    def __init__(self, console: _Console) -> None:
        super().__init__()
        self._console = console
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        text = self._decoder.decode(view.tobytes())
        if text:
            self._console.write(text)
        return len(view)


class _Console(io.TextIOBase):
    """sys.stdout or (`err`) sys.stderr of the user code process: every write goes to the simulation's
    console (headless: the simulation's stdout or stderr). Its `buffer` takes bytes, as a real standard
    stream's does."""

    def __init__(self, link: Link, *, err: bool = False) -> None:
        self._link = link
        self._err = err
        self._buffer = _ConsoleBytes(self)

    @property
    def buffer(self) -> _ConsoleBytes:
        """The binary side (sys.stdout.buffer.write(b"...")): bytes to the console as UTF-8 text."""
        return self._buffer

    encoding = "utf-8"  # what the bytes of `buffer` are read as
    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text:
            self._link.print(text, err=self._err)
        return len(text)


class UserCodeProcess:
    """Runs one user code file for the simulation: init, then main_loop every tick or run(sim)."""

    def __init__(self, link: Link, path: Path) -> None:
        self.link = link
        self.path = path
        self.sim = connected_sim(link, self._step)
        self.program: UserProgram | None = None
        self._in_run = False
        self._stop_told = False
        self.simulation_gone = False
        """The connection closed or broke without the simulation ending the run (it was killed outright)."""

    def _step(self) -> bool:
        if not self._in_run:
            raise RuntimeError("sim.step() and sim.wait() belong in run(sim); main_loop(sim) is already called "
                               "once per control tick, so it must return instead of stepping")
        if self._stop_told:  # stepping on after being told the simulation ends: unwind
            raise _StopRun()
        kind = self.link.next_turn()
        while kind == "collect":  # a batch asks for result(sim) before it stops the run
            self._give_result()
            kind = self.link.next_turn()
        if kind == "stop":
            self._stop_told = True
            return False  # `while sim.step():` ends, and the code after the loop runs
        return True

    def _give_result(self) -> None:
        """A `collect` turn (sear batch, at the end of a run): what the optional result(sim) hook returns, a
        dict of names to numbers, text, true/false or None, goes back with the turn's `done` (None
        without the hook)."""
        hook = getattr(self.program.module, "result", None) if self.program is not None else None
        value = hook(self.sim) if callable(hook) else None
        if value is not None and not (isinstance(value, dict) and all(
                isinstance(k, str) and (v is None or isinstance(v, bool | int | float | str))
                for k, v in value.items())):
            raise UserCodeError("result(sim) must return a dict of names to numbers or text (or None), "
                                f"not {repr(value)[:60]}", file=self.path)
        self.link.result = value

    def load(self) -> UserProgram:
        """Execute the user's module and find its hooks (UserCodeError when it has none or cannot load)."""
        path = self.path
        try:
            code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except SyntaxError as exc:
            raise UserCodeError(f"syntax error: {exc.msg}", file=path, line=exc.lineno) from None
        except (OSError, ValueError) as exc:
            raise UserCodeError(f"the user code file cannot be read ({exc}).", file=path) from None
        module = types.ModuleType("sear_user_code")
        module.__file__ = str(path)
        module.__dict__["print"] = self.sim.print
        sys.path.insert(0, str(path.parent))  # the user's helper modules import
        exec(code, module.__dict__)
        return UserProgram(path, module)

    def serve(self) -> int:
        """Take turns until the simulation says stop; returns the process's exit status."""
        link = self.link
        try:
            while True:
                kind = link.next_turn()
                if kind == "stop":
                    break
                if kind == "init":
                    self.program = self.load()
                    if self.program.init is not None:
                        self.program.init(self.sim)
                elif self.program is None:
                    raise UserCodeError("the simulation started user code before init", file=self.path)
                elif kind == "start" and self.program.run is not None:
                    self._in_run = True
                    with contextlib.suppress(_StopRun):
                        self.program.run(self.sim)
                    break  # run(sim) returned: the user code is finished
                elif kind == "tick" and self.program.main_loop is not None:
                    self.program.main_loop(self.sim)
                elif kind == "collect":
                    self._give_result()
        except (protocol.Closed, protocol.ProtocolError, ControllerError):
            self.simulation_gone = True
            return 1  # the simulation went away or broke off: nothing to report to
        except UserCodeError as exc:
            link.send({"t": "fail", "message": exc.message, "line": exc.line or 0})
            return 1
        except BaseException as exc:
            what = {"init": "init(sim)", "start": "run(sim)", "tick": "run(sim)" if self._in_run else "main_loop(sim)",
                    "collect": "result(sim)"}
            where = what.get(link.turn, "the user code")
            if self.program is None:
                where = "the file's top-level code (run when it is loaded)"
            status = 1
            if isinstance(exc, SystemExit):
                code = exc.code
                status = code if isinstance(code, int) and 0 <= code < 256 else 1
                headline = f"{where} called sys.exit({code!r}); user code stopped."
            else:
                headline = f"{where} raised an error; user code stopped."
            text = f"{headline}\n{format_user_exception(exc, str(self.path))}"
            with contextlib.suppress(protocol.Closed):
                link.send({"t": "fail", "message": text, "line": user_error_line(exc, str(self.path)) or 0})
            return status
        link.bye()
        return 0


def serve_user_code(fd: int, path: str, stack_fd: int | None, *, own_group: bool = False) -> int:
    """The user code process's main: the connection is the inherited socket `fd`; the stack is written
    to the inherited file `stack_fd` (the simulation reads it) when stuck (SIGUSR1) or crashed. With
    `own_group` (this process leads a process group of its own) the processes the user code started are
    killed when the simulation went away without ending the run (killed outright): otherwise the
    simulation kills them itself (UserCodeRunner)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the simulation's to handle, which ends us
    if stack_fd is not None:
        faulthandler.enable(file=stack_fd)
        faulthandler.register(signal.SIGUSR1, file=stack_fd, all_threads=False)
    sock = socket.socket(fileno=fd)
    link = Link(protocol.Connection(sock))
    link.owner = threading.get_ident()  # the hooks run here; user code's own threads may not take turns
    try:
        link.hello(name="sear user code")
    except (protocol.Closed, protocol.ProtocolError, ControllerError):
        return 1
    sys.stdout, sys.stderr = _Console(link), _Console(link, err=True)
    process = UserCodeProcess(link, Path(path))
    if own_group:
        threading.Thread(target=_end_with_the_simulation, args=(os.getppid(),), name="sear-parent-watch",
                         daemon=True).start()
    status = process.serve()
    if own_group and process.simulation_gone:
        _end_own_group()
    return status


class _ThreadLinks:
    """The swarm process's standard streams' target: the link of the robot whose hooks' thread writes; a
    thread of the user's own (which owns no link) writes to the first robot's console."""

    def __init__(self, links: dict[int, Link], default: Link) -> None:
        self.links = links
        """Each robot's link by the ident of the thread that runs its hooks."""
        self.default = default

    def print(self, text: str, *, err: bool = False) -> None:
        self.links.get(threading.get_ident(), self.default).print(text, err=err)


SWARM_THREAD_STACK = 1 << 20
"""Bytes of stack per robot thread of a swarm process (1 MiB, against the 8 MiB default: 100 robots'
threads reserve 100 MiB of address space rather than 800; Python's own recursion limit is reached first)."""


def serve_swarm(robots: list[tuple[str, int, str]], stack_fd: int | None, *, own_group: bool = False) -> int:
    """The swarm process's main: the user code of several robots in one process, each robot's `init`,
    `main_loop` or `run` with its own module (its own globals), its own `sim` and its own connection
    (`robots`: name, inherited socket, user code file), in a thread of its own so that a blocking
    run(sim) waits for its turn without holding up the others. The simulation gives the robots' turns in
    order and serves each robot's connection in that order, so the threads take turns as separate
    processes would. A robot whose code raises reports it on its own connection and its thread ends; the
    others go on. A hook that never returns cannot be stopped alone in a shared process: the simulation
    ends the whole process then (sear.usercode.SwarmProcess). The stack dump (SIGUSR1, or a crash) covers
    every thread, and each robot's thread is named in the stack file first so that the simulation can
    find the stuck robot's frames."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if stack_fd is not None:
        faulthandler.enable(file=stack_fd, all_threads=True)
        faulthandler.register(signal.SIGUSR1, file=stack_fd, all_threads=True)
    links: dict[int, Link] = {}
    processes: list[UserCodeProcess] = []
    ready = threading.Barrier(len(robots) + 1)

    def robot_thread(name: str, fd: int, path: str) -> None:
        ident = threading.get_ident()
        if stack_fd is not None:
            os.write(stack_fd, f"sear swarm robot {name} thread 0x{ident:016x}\n".encode())
        link = Link(protocol.Connection(socket.socket(fileno=fd)))
        link.owner = ident
        links[ident] = link
        ready.wait()  # every link known before any user code runs (the standard streams' targets)
        try:
            link.hello(name=f"sear swarm user code ({name})")
        except (protocol.Closed, protocol.ProtocolError, ControllerError):
            return
        process = UserCodeProcess(link, Path(path))
        processes.append(process)
        process.serve()

    threading.stack_size(SWARM_THREAD_STACK)
    threads = [threading.Thread(target=robot_thread, args=robot, name=f"sear-robot-{robot[0]}", daemon=True)
               for robot in robots]
    threading.stack_size(0)
    for thread in threads:
        thread.start()
    ready.wait()
    first = next(iter(links.values()))
    streams = _ThreadLinks(links, first)
    sys.stdout, sys.stderr = _Console(streams), _Console(streams, err=True)  # type: ignore[arg-type]
    if own_group:
        threading.Thread(target=_end_with_the_simulation, args=(os.getppid(),), name="sear-parent-watch",
                         daemon=True).start()
    for thread in threads:
        thread.join()
    if own_group and any(process.simulation_gone for process in processes):
        _end_own_group()
    return 0


PARENT_CHECK_SECONDS = 0.5
"""s between two looks of the parent-watch thread at whether the simulation process still runs."""


def _end_with_the_simulation(parent: int) -> None:
    """A thread of the user code process: when the simulation process that started it is gone (killed
    outright, so its process group's kill did not reach this group), end this process and what the user
    code started, even while a hook is stuck in a loop and never reads the closed connection."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    _end_own_group()
    os._exit(1)


def _end_own_group() -> None:
    """Kill what the user code started: every process of this process's group but itself (it is the
    group's leader, started so by the simulation). Linux: the group's members are read from /proc."""
    me = os.getpid()
    if not hasattr(os, "killpg") or os.getpgrp() != me:
        return
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != me:
                with contextlib.suppress(OSError, ValueError, IndexError):
                    with open(f"/proc/{entry}/stat", "rb") as fh:
                        fields = fh.read().rsplit(b")", 1)[1].split()
                    if int(fields[2]) == me:  # its process group
                        os.kill(int(entry), signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sear.controller",
                                     description="The user code process a SEAR simulation starts.")
    parser.add_argument("--fd", type=int, help="the inherited socket to the simulation")
    parser.add_argument("--stack-fd", type=int, default=None,
                        help="the inherited file where the stack is written when stuck or crashed")
    parser.add_argument("--own-group", action="store_true",
                        help="this process leads a process group of its own: what the user code started is "
                             "killed when the simulation goes away without ending the run")
    parser.add_argument("--robot", nargs=3, action="append", metavar=("NAME", "FD", "FILE"), default=[],
                        help="a swarm process: one robot's name, inherited socket and user code file (repeated "
                             "for each robot; --fd and the positional file are then not given)")
    parser.add_argument("user_code", nargs="?", help="the user code file")
    args = parser.parse_args(argv)
    if args.robot:
        status = serve_swarm([(name, int(fd), path) for name, fd, path in args.robot], args.stack_fd,
                             own_group=args.own_group)
    else:
        if args.fd is None or args.user_code is None:
            parser.error("--fd and the user code file are required (or --robot for a swarm)")
        status = serve_user_code(args.fd, args.user_code, args.stack_fd, own_group=args.own_group)
    with contextlib.suppress(ValueError, OSError):  # the user's code may have closed or broken sys.stdout
        sys.stdout.flush()
    os._exit(status)  # no interpreter teardown: user threads left behind must not keep the process


if __name__ == "__main__":
    sys.exit(main())
