"""Running the user's control code safely: every controller is a process of its own.

A user code file is a Python module: its module-level names are the user variables, `init(sim)` runs
once before the first physics step and `main_loop(sim)` every control tick once user code has started.
Or it defines `run(sim)`, ordinary blocking code that loops with `while sim.step():` and may call
`sim.wait(seconds)`; it runs in lock-step with the physics, so no finite-state machine is needed.

The simulation starts the user code in a process of its own (`python -m sear.controller`, connected by
a socketpair) and gives it turns over the SEAR controller protocol (sear.protocol,
docs/controller-protocol.md): exactly one of the two runs at any time, so runs are deterministic. A
turn that does not end within the hook time-out is stopped (the process dumps its stack, then is
killed) and reported with the line it was stuck on; a process that crashes is reported with its signal
or exit status. Either way the simulation goes on, and the user code can be restarted in a fresh
process. An external controller (`sear run --external`, any language) is the same protocol over TCP on
127.0.0.1 (ExternalListener). A swarm (project <simulation><swarm>) runs several robots' user code in one
process, each robot over a socketpair of its own (SwarmProcess, SwarmMember): 100 robots, one process.

Longer than most modules (~870 lines): the simulation's end of every controller, the user code process,
the swarm process and the external port, which share the handshake and the turns (ControllerHost).
"""

from __future__ import annotations

import contextlib
import hmac
import os
import re
import secrets
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol

from sear import protocol
from sear.errors import StuckHookError, UserCodeError

_SEAR_DIR = str(Path(__file__).resolve().parent)

STARTUP_TIMEOUT = 60.0
"""s: how long a user code process may take to start (Python and its imports) before its code runs."""
HELLO_DEADLINE = 2.0
"""s: how long an external controller has, once connected, to send its hello (docs/controller-protocol.md).
Handshakes are served side by side, so connections that say nothing keep a real controller out no
longer than this."""
MAX_PENDING = 16
"""External connections waiting for their hello at once; one more closes the one waiting longest, so a
flood of idle connections cannot fill the listener either."""


def _user_frames(tb: types.TracebackType | None, user_file: str) -> traceback.StackSummary:
    frames = traceback.extract_tb(tb)
    keep = [f for f in frames if not f.filename.startswith(_SEAR_DIR) and "threading.py" not in f.filename]
    if not keep:
        keep = [f for f in frames if f.filename == user_file]
    return traceback.StackSummary.from_list(keep)


def format_user_exception(exc: BaseException, user_file: str) -> str:
    """A traceback of the user's own frames and the error line, as Python would print it."""
    lines = ["Traceback (most recent call last):\n"]
    lines += _user_frames(exc.__traceback__, user_file).format()
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def user_error_line(exc: BaseException, user_file: str) -> int | None:
    """The line of the user's file an error came from (its innermost frame there), if any."""
    for frame in reversed(_user_frames(exc.__traceback__, user_file)):
        if frame.filename == user_file:
            return frame.lineno
    if isinstance(exc, SyntaxError):
        return exc.lineno
    return None


def _read_dump(stack: IO[bytes] | None) -> str | None:
    """The whole of a controller process's stack-dump file (faulthandler writes it when a turn hangs), or
    None when there is none or it cannot be read."""
    if stack is None:
        return None
    try:
        size = os.fstat(stack.fileno()).st_size
        return os.pread(stack.fileno(), size, 0).decode(errors="replace")
    except (OSError, ValueError):
        return None


def _line_of(path: str, lineno: int) -> str:
    try:
        return Path(path).read_text(errors="replace").splitlines()[lineno - 1].strip()
    except (OSError, IndexError):
        return ""


class UserProgram:
    """A loaded user code module and the hooks it defines."""

    def __init__(self, path: Path, module: types.ModuleType) -> None:
        self.path = path
        self.module = module
        self.init: Callable[[Any], Any] | None = getattr(module, "init", None)
        self.main_loop: Callable[[Any], Any] | None = getattr(module, "main_loop", None)
        self.run: Callable[[Any], Any] | None = getattr(module, "run", None)
        for name in ("init", "main_loop", "run"):
            hook = getattr(self, name)
            if hook is not None and not callable(hook):
                raise UserCodeError(f"'{name}' must be a function taking sim, e.g. def {name}(sim): ...",
                                    file=path)
        if self.run is not None and self.main_loop is not None:
            raise UserCodeError("defines both main_loop(sim) and run(sim); use one style: main_loop is called "
                                "every control tick, run(sim) loops itself with `while sim.step():`.", file=path)
        if self.run is None and self.main_loop is None:
            raise UserCodeError("defines neither main_loop(sim) nor run(sim), so it would do nothing; start "
                                "from the template (Code Setup > Create New).", file=path)

    @property
    def blocking(self) -> bool:
        return self.run is not None


def compile_user_code(path: Path) -> types.CodeType:
    """The user's file compiled, or a UserCodeError naming the line of a syntax error."""
    try:
        source = path.read_bytes()
    except OSError as exc:
        raise UserCodeError(f"the user code file cannot be read ({exc.strerror}).", file=path) from None
    try:
        return compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        text = (exc.text or "").strip()
        raise UserCodeError(f"syntax error: {exc.msg}" + (f": {text}" if text else ""),
                            file=path, line=exc.lineno) from None
    except ValueError as exc:
        raise UserCodeError(f"the file is not valid Python source ({exc}).", file=path) from None


Dispatch = Callable[[Any, Any], Any]
"""The simulation's side of a call message's call: (name, arguments) as the controller sent them -> the
result on the wire; it checks them (sear.runtime.sim.serve_call) and raises to refuse the call."""


class Emit(Protocol):
    """Where a controller's output goes: `error` for its standard error (stderr when headless)."""

    def __call__(self, text: str, *, error: bool = False) -> None: ...


class Refused(Exception):
    """A connection that failed the handshake (it was told why and closed)."""


class ControllerHost:
    """The simulation's end of one controller connection: it gives the controller its turns, serves its
    calls, shows its output, and notices when it hangs, breaks the protocol or goes away.

    `turn()` raises UserCodeError (StuckHookError for a time-out) when the controller failed; the
    connection is closed then, and the simulation carries on without it."""

    label = "the controller"

    def __init__(self, conn: protocol.Connection, *, timeout: float) -> None:
        self.conn = conn
        self.timeout = timeout
        self.emit: Emit = lambda text, *, error=False: None
        self.dispatch: Dispatch = _no_calls
        self.finished = False
        """The controller said goodbye (a run(sim) that returned): no more turns."""
        self.failed = False
        self.turn_result: Any = None
        """What the controller's `done` of a `collect` turn carried (sear batch's result(sim) hook)."""
        self.turn_kind = ""
        self._deadline = 0.0
        self.listener: ExternalListener | None = None

    # --- handshake -----------------------------------------------------------------------------------------

    def handshake(self, token: str | None, welcome: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Take the controller's hello: the right version and (for external ones) `token`, then welcome it
        with `welcome`'s fields. Refused (after an error reply and closing) otherwise."""
        try:
            hello = self.conn.recv(timeout)
        except TimeoutError:
            self._refuse(f"no hello within {timeout:g} s")
        except (protocol.Closed, protocol.ProtocolError) as exc:
            self._refuse(str(exc))
        return self.greet(hello, token, welcome)

    def greet(self, hello: dict[str, Any], token: str | None, welcome: dict[str, Any]) -> dict[str, Any]:
        """The second half of handshake(): check the `hello` received, then welcome (or refuse)."""
        if hello["t"] != "hello":
            self._refuse(f"the first message must be hello, not {hello['t']!r}")
        if hello.get("version") != protocol.VERSION:
            self._refuse(f"protocol version {hello.get('version')!r} is not spoken here; this simulation speaks "
                         f"version {protocol.VERSION}")
        if token is not None and not (isinstance(hello.get("token"), str)
                                      and hmac.compare_digest(hello["token"].encode(), token.encode())):
            self._refuse("wrong or missing token (use the one `sear run --external` printed)")
        self.conn.send({"t": "welcome", "version": protocol.VERSION, **welcome})
        return hello

    def _refuse(self, why: str) -> Any:
        with contextlib.suppress(protocol.Closed):
            self.conn.send({"t": "error", "message": f"connection refused: {why}"})
        self.conn.close()
        raise Refused(why)

    # --- turns ---------------------------------------------------------------------------------------------

    def turn(self, kind: str, fields: dict[str, Any]) -> None:
        """Give the controller the turn `kind` ('init', 'start', 'tick' or 'stop') with `fields`, serve
        its calls and output until it ends the turn (done) or says goodbye (bye)."""
        if self.give_turn(kind, fields):
            self.finish_turn()

    def give_turn(self, kind: str, fields: dict[str, Any]) -> bool:
        """The first half of turn(): send the turn (False when there is no controller to send it to). The
        simulation may do work that does not depend on the controller's answer before finish_turn()."""
        if self.failed or self.finished:
            return False
        self.turn_kind = kind
        self._deadline = time.monotonic() + self.timeout
        try:
            self.conn.send({"t": kind, **fields})
        except protocol.Closed:
            self._fail(self._gone())
        return True

    def finish_turn(self) -> None:
        """The second half of turn(): serve the controller until it ends its turn."""
        deadline = self._deadline
        conn = self.conn
        while True:
            try:
                message = conn.recv(deadline - time.monotonic())
            except TimeoutError:
                self._fail(self._stuck())
            except protocol.Closed:
                self._fail(self._gone())
            except protocol.ProtocolError as exc:
                self._send_error(str(exc))
                self._fail(UserCodeError(f"{self.label} broke the protocol ({exc}); it was disconnected."))
            what = message["t"]
            if what == "print":
                text, err = message.get("text"), message.get("err", False)
                if isinstance(text, str) and isinstance(err, bool):
                    self.emit(text, error=err)
                else:
                    self._send_error("print: 'text' must be a string (and 'err', when given, true or false)")
            elif what == "call":
                values = self._calls(message.get("calls"))
                if values is not None:
                    self._send({"t": "result", "values": values})
            elif what in ("done", "bye"):
                if self.turn_kind == "collect":
                    self.turn_result = message.get("result")
                calls = message.get("calls", [])
                if calls:
                    self._calls(calls)
                if what == "bye":
                    self.finished = True
                return
            elif what == "fail":
                text = message.get("message")
                line = message.get("line")
                self._fail(self._failure(str(text) if text is not None else "gave up",
                                         line if isinstance(line, int) and line > 0 else None))
            else:
                self._send_error(f"a {_short(what)} message is not expected from a controller during a turn "
                                 "(expected print, call, done, bye or fail)")

    def _calls(self, calls: Any) -> list[Any] | None:
        """Run a message's calls in order; their results, or None after an error reply (the calls after
        the refused one are not made)."""
        if not isinstance(calls, list):
            self._send_error("'calls' must be an array of [name, [arguments]]")
            return None
        values = []
        for call in calls:
            if not (isinstance(call, list) and len(call) == 2):
                self._send_error(f"a call must be [name, [arguments]], not {_short(call)}")
                return None
            name = call[0]
            try:
                values.append(self.dispatch(name, call[1]))
            except Exception as exc:  # refused: a clear sentence to the controller, never a traceback
                self._send_error(str(exc), call=name if isinstance(name, str) else None)
                return None
        return values

    def _send(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(protocol.Closed):  # noticed at the next read
            self.conn.send(message)

    def _send_error(self, text: str, *, call: str | None = None) -> None:
        message: dict[str, Any] = {"t": "error", "message": text}
        if call is not None:
            message["call"] = call
        self._send(message)

    def _fail(self, error: UserCodeError) -> Any:
        self.failed = True
        self._disconnect()
        raise error

    def _failure(self, text: str, line: int | None) -> UserCodeError:
        return UserCodeError(f"{self.label} failed: {text}")

    def _stuck(self) -> UserCodeError:
        return StuckHookError(f"{self.label} did not end its {self.turn_kind} turn within {self.timeout:g} s of "
                              "real time, so it was disconnected; the simulation goes on without it.")

    def _gone(self) -> UserCodeError:
        return UserCodeError(f"{self.label} closed the connection during its {self.turn_kind} turn; the "
                             "simulation goes on without it.")

    def _disconnect(self) -> None:
        self.conn.close()

    def stop(self) -> UserCodeError | None:
        """The last turn, 'stop': a run(sim) sees sim.step() return False and may finish up. Returns the
        error when that fails (it is reported, not raised: the simulation is ending anyway)."""
        if self.failed or self.finished or self.conn.closed:
            return None
        try:
            self.turn("stop", {})
        except UserCodeError as exc:
            return exc
        return None

    def close(self) -> None:
        """Stop the controller and close the connection (and an external listener). Closing twice does
        nothing more."""
        error = self.stop()
        if error is not None:
            self.emit(f"{error}\n")
        self._disconnect()
        if self.listener is not None:
            self.listener.close()
            self.listener = None


def _no_calls(name: str, args: list[Any]) -> Any:
    raise ValueError(f"sim.{name} is not available yet")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_STACK_LINE = re.compile(r'File "(.*)", line (\d+) in (\S+)')
_TURNS = {"init": "init(sim) or the file's top-level code", "start": "run(sim)", "tick": "a control tick's turn",
          "stop": "the end of the run", "collect": "result(sim)"}
_HOOKS = {"<module>": "the file's top-level code (run when it is loaded)", "init": "init(sim)",
          "main_loop": "main_loop(sim)", "run": "run(sim)", "result": "result(sim)"}
_SIGNALS: dict[int, str] = {
    signal.SIGSEGV: "a crash in native code: segmentation fault",
    signal.SIGKILL: "killed from outside; the system's out-of-memory killer ends processes this way",
    signal.SIGABRT: "aborted",
    signal.SIGBUS: "a crash in native code: bus error",
    signal.SIGFPE: "a crash in native code: arithmetic error",
    signal.SIGTERM: "terminated from outside",
}


class UserCodeRunner(ControllerHost):
    """A user code file run in a process of its own (python -m sear.controller), over a socketpair."""

    label = "the user code"

    def __init__(self, path: str | Path, timeout: float = 5.0, *, code: types.CodeType | None = None) -> None:
        """Compiles the file (`code`: compiled already, as sear.loading.load_project does), so a syntax
        error is reported before any process starts; start() starts it."""
        self.path = Path(path)
        if code is None:
            code = self._compile()
        self.proc: subprocess.Popen[bytes] | None = None
        self._group: subprocess.Popen[bytes] | None = None
        """The process whose process group is still to be ended (_end_group)."""
        self._stack: IO[bytes] | None = None
        parent, self._child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        super().__init__(protocol.Connection(parent), timeout=timeout)

    def _compile(self) -> types.CodeType:
        return compile_user_code(self.path)

    def start(self, welcome: dict[str, Any]) -> None:
        """Start the process and take its hello (UserCodeError when it cannot start)."""
        self.launch()
        self.take_hello(welcome)

    def launch(self) -> None:
        """Start the process (UserCodeError when it cannot): it loads what it needs, then waits to be
        greeted. start()'s first half, so a process can load while the simulation is still being built
        (sear.launcher starts the first robot's before loading the models); discard() ends one never
        greeted."""
        # Where the process writes its stack when stuck or crashed: a file with no name (gone with its last
        # descriptor), so a simulation killed by SIGKILL leaves nothing behind in the temporary folder.
        self._stack = tempfile.TemporaryFile()  # noqa: SIM115 - open for the process's lifetime
        child = self._child_sock
        env = dict(os.environ)
        package_root = str(Path(_SEAR_DIR).parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "sear.controller", "--fd", str(child.fileno()),
                 "--stack-fd", str(self._stack.fileno()), *(["--own-group"] if os.name == "posix" else []),
                 str(self.path)],
                pass_fds=(child.fileno(), self._stack.fileno()), stdin=subprocess.DEVNULL, env=env,
                cwd=str(self.path.parent),
                process_group=0 if os.name == "posix" else None)  # its own group: what it forks ends with it
        except OSError as exc:
            self.failed = True
            self.conn.close()
            self._stack.close()
            self._stack = None
            raise UserCodeError(f"the user code process cannot be started ({exc.strerror}).",
                                file=self.path) from None
        finally:
            child.close()
        self._group = self.proc

    def take_hello(self, welcome: dict[str, Any]) -> None:
        """Take the launched process's hello and welcome it (UserCodeError when it does not start); start()'s
        second half. (Not `greet`: that is ControllerHost's check of a hello received.)"""
        try:
            self.handshake(None, welcome, STARTUP_TIMEOUT)
        except Refused as exc:
            self.failed = True
            status = self._wait_exit(2.0)
            self._disconnect()
            raise UserCodeError(f"the user code process did not start ({exc}; exit status {status}).",
                                file=self.path) from None

    def discard(self) -> None:
        """End a launched process that was never greeted (the run did not get that far)."""
        self.failed = True  # nothing to stop: closing the connection ends its wait for the welcome
        self._disconnect()

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def _wait_exit(self, timeout: float) -> int | None:
        proc = self.proc
        if proc is None:
            return None
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()

    def _end_group(self) -> None:
        """Kill whatever the user code started that is still running (subprocesses, os.fork children,
        their children): the process was started as the leader of a process group of its own, which they
        inherit, so they end with the run instead of outliving SEAR. A process that left the group on
        purpose (setsid, a daemon) is out of reach."""
        proc, self._group = self._group, None  # once: the group's number is free again after that
        if proc is None or not hasattr(os, "killpg"):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def _dump(self) -> list[tuple[str, int, str]]:
        """The user's frames of the process's last stack dump, innermost first: (file, line, function)."""
        text = _read_dump(self._stack)
        if text is None:
            return []
        path = str(self.path)
        return [(f, int(n), fn) for f, n, fn in _STACK_LINE.findall(text) if f == path]

    def _traceback(self, frames: list[tuple[str, int, str]]) -> str:
        lines = ["Traceback (most recent call last):"]
        for file, line, func in reversed(frames):
            lines.append(f'  File "{file}", line {line}, in {func}')
            source = _line_of(file, line)
            if source:
                lines.append(f"    {source}")
        return "\n".join(lines) if frames else ""

    def _what(self, frames: list[tuple[str, int, str]]) -> str:
        if frames:
            return _HOOKS.get(frames[-1][2], _TURNS.get(self.turn_kind, "the user code"))
        return _TURNS.get(self.turn_kind, "the user code")

    def _stuck(self) -> UserCodeError:
        proc = self.proc
        frames: list[tuple[str, int, str]] = []
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGUSR1)  # faulthandler in the process writes its stack
            end = time.monotonic() + 2.0
            while time.monotonic() < end and not (frames := self._dump()):
                time.sleep(0.01)
            proc.kill()
        self._wait_exit(5.0)
        line = frames[0][1] if frames else None
        where = f" It is stuck at line {line}: `{_line_of(str(self.path), line)}`." if line else ""
        return StuckHookError(f"{self._what(frames)} did not return within {self.timeout:g} s of real time, so its "
                              f"process was ended.{where} Hooks must return quickly: move long loops into run(sim) "
                              "with `while sim.step():`, or raise the hook time-out in Code Setup. The simulation "
                              "goes on; Space restarts the user code.", file=self.path, line=line)

    def _gone(self) -> UserCodeError:
        status = self._wait_exit(5.0)
        frames = self._dump()
        what = self._what(frames)
        if status is not None and status < 0:
            name = protocol.signal_name(-status)
            why = _SIGNALS.get(-status, "a signal")
            text = f"the user code's process was killed by {name} ({why}) during {what}; user code stopped."
        else:
            text = (f"the user code's process ended with exit status {status} during {what} without a Python "
                    "error (os._exit() or a native library ending the process); user code stopped.")
        trace = self._traceback(frames)
        line = frames[0][1] if frames else None
        return UserCodeError(text + (f"\n{trace}" if trace else ""), file=self.path, line=line)

    def _failure(self, text: str, line: int | None) -> UserCodeError:
        return UserCodeError(text, file=self.path, line=line)

    def _disconnect(self) -> None:
        self.conn.close()
        self._wait_exit(0.5 if self.failed else self.timeout)  # killed if it does not end by itself
        self._end_group()
        if self._stack is not None:
            self._stack.close()
            self._stack = None


_THREAD_LINE = re.compile(r"^sear swarm robot (.+) thread (0x[0-9a-f]+)$")
_DUMP_THREAD = re.compile(r"^(?:Current thread|Thread) (0x[0-9a-f]+)")


class SwarmProcess:
    """One process (python -m sear.controller --robot ...) that runs the user code of several robots, so
    that 100 robots are not 100 Python processes: each robot keeps its own connection (a socketpair), its
    own module, `sim` and state, and is served as a process of its own would be (SwarmMember). A robot
    whose code raises is stopped alone; a hook that does not return, or a crash of the process, stops
    every robot's user code, with one message saying which robot and where."""

    def __init__(self, robots: list[tuple[str, Path]], timeout: float) -> None:
        """`robots`: each robot's name and user code file, in the order the simulation gives their turns;
        `timeout`: the hook time-out, s (the project's first robot's)."""
        self.proc: subprocess.Popen[bytes] | None = None
        self._stack: IO[bytes] | None = None
        self.ended: str | None = None
        """Why the process was ended (a robot's hang), once it was: the other robots' user code stopped."""
        self.members: list[SwarmMember] = []
        self._children: list[socket.socket] = []
        self._group_ended = False
        for name, path in robots:
            parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            self._children.append(child)
            self.members.append(SwarmMember(self, name, Path(path), protocol.Connection(parent), timeout))

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def launch(self) -> None:
        """Start the process (UserCodeError when it cannot); each member's start() then takes its hello."""
        self._stack = tempfile.TemporaryFile()  # noqa: SIM115 - open for the process's lifetime
        env = dict(os.environ)
        package_root = str(Path(_SEAR_DIR).parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        robots: list[str] = []
        for member, child in zip(self.members, self._children, strict=True):
            robots += ["--robot", member.name, str(child.fileno()), str(member.path)]
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "sear.controller", "--stack-fd", str(self._stack.fileno()),
                 *(["--own-group"] if os.name == "posix" else []), *robots],
                pass_fds=(*(c.fileno() for c in self._children), self._stack.fileno()), stdin=subprocess.DEVNULL,
                env=env, cwd=str(self.members[0].path.parent), process_group=0 if os.name == "posix" else None)
        except OSError as exc:
            for member in self.members:
                member.failed = True
                member.conn.close()
            self._close_stack()
            raise UserCodeError(f"the swarm's user code process cannot be started ({exc.strerror}).",
                                file=self.members[0].path) from None
        finally:
            for child in self._children:
                child.close()
            self._children = []

    def dump(self, name: str) -> list[tuple[str, int, str]]:
        """Robot `name`'s frames in the user code (innermost first) from a stack dump of every thread that
        the process writes on SIGUSR1; [] when it writes none within 3 s. A second signal goes after 1 s
        without the robot's frames: a whole-suite run on a loaded machine once got none from the first."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return self._frames(name)
        for wait in (1.0, 2.0):
            proc.send_signal(signal.SIGUSR1)
            end = time.monotonic() + wait
            while time.monotonic() < end:
                frames = self._frames(name)
                if frames:
                    return frames
                time.sleep(0.01)
            if proc.poll() is not None:
                break
        return []

    def _frames(self, name: str) -> list[tuple[str, int, str]]:
        text = _read_dump(self._stack)
        if text is None:
            return []
        threads = {m.group(2): m.group(1) for m in map(_THREAD_LINE.match, text.splitlines()) if m}
        member = next((m for m in self.members if m.name == name), None)
        path = str(member.path) if member is not None else ""
        frames: list[tuple[str, int, str]] = []
        current: str | None = None
        for line in text.splitlines():
            thread = _DUMP_THREAD.match(line)
            if thread is not None:
                current = threads.get(thread.group(1))
                continue
            if current == name:
                found = _STACK_LINE.search(line)
                if found and found.group(1) == path:
                    frames.append((found.group(1), int(found.group(2)), found.group(3)))
        return frames

    def end(self, why: str) -> None:
        """End the process (a robot hung): every member's user code stops; `why` is kept for them."""
        if self.ended is None:
            self.ended = why
        for member in self.members:
            if not member.failed:
                member.failed = True
                member.conn.close()
        self._wait_exit(0.0)

    def _wait_exit(self, timeout: float) -> int | None:
        proc = self.proc
        if proc is None:
            return None
        try:
            status = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = proc.wait()
        self._end_group()
        return status

    def _end_group(self) -> None:
        """Kill what the user code started that still runs (the process leads a process group of its own)."""
        proc = self.proc
        if proc is not None and hasattr(os, "killpg") and not self._group_ended:
            self._group_ended = True  # once: the group's number is free again after that
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

    def member_closed(self, timeout: float) -> None:
        """A member's connection closed: once every member's is, the process ends (killed after
        `timeout` s) and its stack file is closed."""
        if all(member.conn.closed for member in self.members):
            self._wait_exit(timeout)
            self._close_stack()

    def close(self) -> None:
        """End the process once the simulation is done with it: members never attached (a start that failed
        half-way) are closed too. Closing twice does nothing more."""
        for member in self.members:
            member.conn.close()
        self._wait_exit(1.0)
        self._close_stack()

    def _close_stack(self) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None


class SwarmMember(ControllerHost):
    """One robot's user code in a SwarmProcess: the simulation's end of its own connection to the shared
    process, served like a process of its own. Restarting one robot's code is not offered (the process is
    shared)."""

    def __init__(self, swarm: SwarmProcess, name: str, path: Path, conn: protocol.Connection,
                 timeout: float) -> None:
        super().__init__(conn, timeout=timeout)
        self.swarm = swarm
        self.name = name
        self.path = path
        self.label = f"robot {name}'s user code"

    def start(self, welcome: dict[str, Any]) -> None:
        """Take the robot's hello and welcome it (UserCodeError when the process did not start)."""
        try:
            self.handshake(None, welcome, STARTUP_TIMEOUT)
        except Refused as exc:
            self.failed = True
            status = self.swarm._wait_exit(2.0)
            raise UserCodeError(f"the swarm's user code process did not start ({exc}; exit status {status}).",
                                file=self.path) from None

    def _what(self, frames: list[tuple[str, int, str]]) -> str:
        if frames:
            return _HOOKS.get(frames[-1][2], _TURNS.get(self.turn_kind, "the user code"))
        return _TURNS.get(self.turn_kind, "the user code")

    def _stuck(self) -> UserCodeError:
        frames = self.swarm.dump(self.name)
        line = frames[0][1] if frames else None
        where = f" It is stuck at line {line}: `{_line_of(str(self.path), line)}`." if line else ""
        count = len(self.swarm.members)
        text = (f"robot {self.name}'s {self._what(frames)} did not return within {self.timeout:g} s of real "
                f"time.{where} "
                f"The swarm's process, which runs the user code of all {count} robots, was ended, so every "
                "robot's user code stopped (one thread of a process cannot be stopped alone). Hooks must return "
                "quickly: move long loops into run(sim) with `while sim.step():`, or raise the hook time-out in "
                "Code Setup.")
        self.swarm.end(text)
        return StuckHookError(text, file=self.path, line=line)

    def _gone(self) -> UserCodeError:
        if self.swarm.ended is not None:
            return UserCodeError(f"robot {self.name}'s user code stopped with the swarm's process.", file=self.path)
        status = self.swarm._wait_exit(5.0)
        count = len(self.swarm.members)
        if status is not None and status < 0:
            how = f"was killed by {protocol.signal_name(-status)} ({_SIGNALS.get(-status, 'a signal')})"
        else:
            how = f"ended with exit status {status} without a Python error"
        text = (f"the swarm's process, which runs the user code of all {count} robots, {how} during robot "
                f"{self.name}'s {self._what([])}; every robot's user code stopped.")
        self.swarm.end(text)
        return UserCodeError(text, file=self.path)

    def _failure(self, text: str, line: int | None) -> UserCodeError:
        return UserCodeError(text, file=self.path, line=line)

    def _disconnect(self) -> None:
        self.conn.close()
        self.swarm.member_closed(0.5 if self.failed else self.timeout)


class ExternalListener:
    """`sear run --external`: a TCP port on 127.0.0.1 where one controller, with the one-time token,
    may connect. Connections without the token are refused (and waited past); once a controller is
    connected, every further one is refused with an error reply until the listener closes.

    Handshakes are served side by side: every connection has HELLO_DEADLINE s to send its hello, and at
    most MAX_PENDING wait at once, so connections that connect and say nothing (any local user can make
    them) keep the real controller out for at most HELLO_DEADLINE."""

    def __init__(self, port: int = 0) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(64)
        self.token = secrets.token_hex(16)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.refusals: list[str] = []

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def accept(self, welcome: dict[str, Any], *, timeout: float, wait: float | None = None,
               on_refused: Callable[[str], None] | None = None) -> ControllerHost:
        """Wait (`wait` s, None: as long as it takes) for a controller with the token; its host. Later
        connections are refused by a thread until close()."""
        end = None if wait is None else time.monotonic() + wait
        pending: dict[socket.socket, tuple[ControllerHost, float]] = {}  # by socket: its host, its hello deadline

        def refuse(host: ControllerHost, why: str, *, tell: bool = True) -> None:
            if tell:
                with contextlib.suppress(Refused):
                    host._refuse(why)
            else:
                host.conn.close()
            self.refusals.append(why)
            if on_refused is not None:
                on_refused(why)

        try:
            while True:
                now = time.monotonic()
                for sock, (host, deadline) in list(pending.items()):
                    if deadline <= now:
                        del pending[sock]
                        refuse(host, f"no hello within {HELLO_DEADLINE:g} s")
                left = None if end is None else end - now
                if left is not None and left <= 0:
                    raise UserCodeError(f"no controller connected within {wait:g} s.")
                soonest = min((deadline for _host, deadline in pending.values()), default=None)
                if soonest is not None:
                    left = soonest - now if left is None else min(left, soonest - now)
                ready, _, _ = select.select([self.sock, *pending], [], [], None if left is None else max(0.0, left))
                for sock in ready:
                    if sock is self.sock:
                        self._take(pending, refuse)
                        continue
                    if sock not in pending:  # closed just now, to make room (_take)
                        continue
                    host, _deadline = pending[sock]
                    try:
                        hello = host.conn.recv_ready()  # what has arrived; a part of a frame stays buffered
                    except (protocol.Closed, protocol.ProtocolError) as exc:
                        del pending[sock]
                        refuse(host, str(exc), tell=isinstance(exc, protocol.ProtocolError))
                        continue
                    if hello is None:
                        continue
                    del pending[sock]
                    try:
                        host.greet(hello, self.token, welcome)
                    except Refused as exc:
                        self.refusals.append(str(exc))
                        if on_refused is not None:
                            on_refused(str(exc))
                        continue
                    except protocol.Closed as exc:  # it said hello and left before the welcome
                        refuse(host, str(exc), tell=False)
                        continue
                    host.timeout = timeout
                    host.listener = self
                    self._thread = threading.Thread(target=self._refuse_others, name="sear-refuse-controllers",
                                                    daemon=True)
                    self._thread.start()
                    return host
        finally:
            for host, _deadline in pending.values():
                with contextlib.suppress(Refused):
                    host._refuse("another controller connected first")

    def _take(self, pending: dict[socket.socket, tuple[ControllerHost, float]],
              refuse: Callable[..., None]) -> None:
        """Accept a new connection into `pending` (its hello deadline starts now), closing the one that has
        waited longest when MAX_PENDING are waiting already."""
        try:
            conn, _addr = self.sock.accept()
        except OSError:
            return
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if len(pending) >= MAX_PENDING:
            oldest = min(pending, key=lambda s: pending[s][1])
            host, _deadline = pending.pop(oldest)
            refuse(host, f"more than {MAX_PENDING} connections waited for their hello at once")
        pending[conn] = (ControllerHost(protocol.Connection(conn), timeout=HELLO_DEADLINE),
                         time.monotonic() + HELLO_DEADLINE)

    def _refuse_others(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.sock], [], [], 0.1)
            if not ready or self._stop.is_set():
                continue
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                return
            try:
                conn.settimeout(1.0)
                conn.sendall(protocol.frame({"t": "error", "message": "connection refused: a controller is "
                                             "already connected to this simulation"}))
            except OSError:
                pass
            finally:
                conn.close()
            self.refusals.append("a controller is already connected")

    def close(self) -> None:
        """Stop refusing and close the port (closing twice does nothing more)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.sock.close()
