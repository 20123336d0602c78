"""Loading and running the user's control code safely.

A user code file is a Python module: its module-level names are the user variables, `init(sim)` runs
once before the first physics step and `main_loop(sim)` every control tick once user code has started.
Or it defines `run(sim)`, ordinary blocking code that loops with `while sim.step():` and may call
`sim.wait(seconds)`; it runs in lock-step with the physics, so no finite-state machine is needed.

All user code runs on one worker thread, handed control by the simulation loop and handing it back,
so exactly one of the two runs at any time (runs are deterministic) and the loop can notice a hook that
does not return: after `timeout` seconds of wall-clock time it reports the file and line the hook is
stuck on. Errors name the user's file and line and show only the user's own frames.
"""

from __future__ import annotations

import _thread
import contextlib
import importlib
import os
import sys
import threading
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sear.errors import StuckHookError, UserCodeError

_SEAR_DIR = str(Path(__file__).resolve().parent)


class _StopRun(BaseException):
    """Raised inside a blocking run() to unwind it when the simulation ends (not an Exception, so a
    user's `except Exception` does not swallow it)."""


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


class _Signal:
    """A binary semaphore on a bare C lock, for the strict alternation of loop and worker.

    threading.Semaphore is Python code over a Condition; a hand-over through two of them cost ~19 us,
    every control tick. A second signal before the first is taken is the same signal."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._lock.acquire()

    def release(self) -> None:
        with contextlib.suppress(RuntimeError):  # already signalled
            self._lock.release()

    def acquire(self, timeout: float = -1) -> bool:
        return self._lock.acquire(timeout=timeout)


class UserCodeRunner:
    """Runs user code on a worker thread in strict alternation with the simulation loop."""

    def __init__(self, path: str | Path, timeout: float = 5.0, *, print_fn: Callable[..., None] | None = None) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self.print_fn = print_fn
        self._to_worker = _Signal()
        self._to_main = _Signal()
        self._job: Callable[[], Any] | None = None
        self._result: tuple[str, Any] = ("idle", None)
        self._stop = False
        self._stop_told = False
        self._dead = False
        self._thread = threading.Thread(target=self._serve, name="sear-user-code", daemon=True)
        self._thread.start()
        self.program: UserProgram | None = None
        self._blocking_started = False
        self._blocking_done = False
        self._sys_path_entry: str | None = None

    # --- the worker ----------------------------------------------------------------------------------

    def _serve(self) -> None:
        while True:
            self._to_worker.acquire()
            job, self._job = self._job, None
            if job is None:
                return
            try:
                self._result = ("done", job())
            except _StopRun:
                self._result = ("done", None)
            except BaseException as exc:  # the user's error, reported by the loop's thread
                self._result = ("error", exc)
            self._to_main.release()

    def _hand_over(self, what: str) -> Any:
        """Let the worker run until it finishes its job or yields; raise UserCodeError on error, and
        StuckHookError when it has not finished or yielded after `timeout` wall seconds."""
        if self._dead:
            raise UserCodeError("user code is no longer running.", file=self.path)
        self._to_worker.release()
        if not self._to_main.acquire(timeout=self.timeout):
            self._dead = True
            raise StuckHookError(self._stuck_message(what), file=self.path, line=self._stuck_line())
        kind, value = self._result
        self._result = ("idle", None)
        if kind == "error":
            self._dead = True
            if isinstance(value, UserCodeError):
                raise value
            raise UserCodeError(f"{what} raised an error; user code stopped.\n"
                                f"{format_user_exception(value, str(self.path))}",
                                file=self.path, line=self._error_line(value))
        return kind, value

    def _error_line(self, exc: BaseException) -> int | None:
        frames = _user_frames(exc.__traceback__, str(self.path))
        for frame in reversed(frames):
            if frame.filename == str(self.path):
                return frame.lineno
        if isinstance(exc, SyntaxError):
            return exc.lineno
        return None

    def _stuck_frame(self) -> types.FrameType | None:
        frame = sys._current_frames().get(self._thread.ident or -1)
        while frame is not None and frame.f_code.co_filename != str(self.path):
            frame = frame.f_back
        return frame

    def _stuck_line(self) -> int | None:
        frame = self._stuck_frame()
        return frame.f_lineno if frame is not None else None

    def _stuck_message(self, what: str) -> str:
        line = self._stuck_line()
        where = f" It is stuck at line {line}: `{_line_of(str(self.path), line)}`." if line else ""
        return (f"{what} did not return within {self.timeout:g} s of real time, so the run was ended.{where} "
                "Hooks must return quickly: move long loops into run(sim) with `while sim.step():`, "
                "or raise the hook time-out in Code Setup.")

    # --- what the loop calls ---------------------------------------------------------------------------

    def _forget_helpers(self) -> None:
        """Drop modules imported from the user's folder by an earlier load, so that helper modules are
        read afresh too (every Simulate loads the current files, not what an earlier run cached)."""
        # Helpers are imported through the sys.path entry added below (the folder as given), so their
        # __file__ starts with that folder; comparing strings avoids a realpath of every loaded module
        # (thousands once Qt and scipy are in), which made each load take seconds.
        folders = {str(self.path.parent), os.path.realpath(self.path.parent)}
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if file and not name.startswith("sear") and os.path.dirname(file) in folders:
                del sys.modules[name]
        importlib.invalidate_caches()  # helper files created since the last load are found

    def load(self, code: types.CodeType | None = None) -> UserProgram:
        """Execute the user's module (fresh every time) and find its hooks. `code` is the file compiled
        already (sear.validate.load_project does); without it the file is read and compiled here."""
        path = self.path
        if code is None:
            code = self._compile()
        module = types.ModuleType("sear_user_code")
        module.__file__ = str(path)
        if self.print_fn is not None:
            module.__dict__["print"] = self.print_fn
        self._forget_helpers()
        if self._sys_path_entry is None:
            # The user's own helper modules import, at load time and from inside hooks, until close().
            self._sys_path_entry = str(path.parent)
            sys.path.insert(0, self._sys_path_entry)
        self._job = lambda: exec(code, module.__dict__)
        self._hand_over("the file's top-level code (run when it is loaded)")
        self.program = UserProgram(path, module)
        return self.program

    def _compile(self) -> types.CodeType:
        path = self.path
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

    def call(self, name: str, sim: Any) -> None:
        """Run hook `name` (init or main_loop) with `sim` to completion."""
        assert self.program is not None
        hook = getattr(self.program, name)
        if hook is None:
            return
        self._job = lambda: hook(sim)
        self._hand_over(f"{name}(sim)")

    def start_blocking(self, sim: Any) -> bool:
        """Start run(sim); returns when it first calls sim.step() (True) or has returned (False)."""
        assert self.program is not None and self.program.run is not None
        self._blocking_started = True
        run = self.program.run

        def job() -> str:
            run(sim)
            return "returned"

        self._job = job
        return self._await_step()

    def resume(self) -> bool:
        """Let a blocked run(sim) continue from its sim.step() until the next one (True) or its end."""
        if self._blocking_done:
            return False
        self._result = ("idle", None)
        return self._await_step()

    def _await_step(self) -> bool:
        kind, value = self._hand_over("run(sim)")
        if kind == "done" and value == "returned":
            self._blocking_done = True
            return False
        return True

    def worker_step(self) -> bool:
        """Called on the worker thread by sim.step(): hand control to the loop, wait to be resumed."""
        if threading.current_thread() is not self._thread or not self._blocking_started:
            raise RuntimeError("sim.step() and sim.wait() belong in run(sim); main_loop(sim) is already called "
                               "once per control tick, so it must return instead of stepping")
        if self._stop_told:  # stepping on after being told the simulation ends: unwind
            raise _StopRun()
        self._result = ("stepped", None)
        self._to_main.release()
        self._to_worker.acquire()
        if self._stop:
            self._stop_told = True
            return False  # `while sim.step():` ends, and the code after the loop runs
        return True

    @property
    def blocking_done(self) -> bool:
        return self._blocking_done

    def close(self) -> None:
        """End the worker thread (unwinding a blocked run(sim)). A stuck thread cannot be stopped: it is
        left as a daemon, told to end should its hook ever return."""
        if self._sys_path_entry is not None:
            if self._sys_path_entry in sys.path:
                sys.path.remove(self._sys_path_entry)
            self._sys_path_entry = None
        if self._dead:
            self._stop = True
            self._job = None
            self._to_worker.release()  # a worker whose job has ended finds no next job, and returns
            return
        self._stop = True
        self._job = None
        if self._blocking_started and not self._blocking_done:
            self._to_worker.release()  # sim.step() returns False; stepping again raises _StopRun
            self._to_main.acquire(timeout=self.timeout)
        self._job = None
        self._to_worker.release()
        self._thread.join(timeout=1.0)
        self._dead = True
