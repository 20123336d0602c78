"""Starting a simulation from the command line (`sear run`): window or headless, the run, its summary,
Ctrl-C and the process's exit status.

Above sear.gui (it opens the simulation window when there is a display) and below sear.cli (which reads
the arguments); the loop itself (sear.runtime) knows neither. Importing this module loads neither the
physics nor numpy (they are imported when a run starts), so `sear` can ask has_display() before it opens
the settings window, which has no use for them.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sear import exitcodes
from sear.errors import SearError, UserCodeError

if TYPE_CHECKING:
    from sear.gui.startup import StartupProgress
    from sear.runtime.robotrun import RunObserver
    from sear.runtime.simulation import Simulation, TickResult
    from sear.usercode import ControllerHost, UserCodeRunner

HEADLESS_DURATION = 60.0
"""Simulated seconds of a headless run given no --duration."""

WindowRunner = Callable[..., int]
"""sear.gui.simwindow.run_window: shows a simulation until its window closes; returns the exit status."""


def has_display() -> bool:
    """Whether a window can be shown: an X11 or Wayland display, or a Qt platform chosen explicitly that
    needs no display server (e.g. QT_QPA_PLATFORM=offscreen). xcb or wayland without their server would
    make Qt abort, so they do not count."""
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return True
    platform = os.environ.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    return bool(platform) and platform not in ("xcb", "wayland", "wayland-egl")


def run_from_cli(project_path: Path, *, headless: bool, duration: float | None, log: str | None, seed: int,
                 realtime: bool | None, force: bool = False, external: bool = False, record: str | None = None,
                 record_format: str = "foxglove", foxglove: int | None = None) -> int:
    """`sear run`: validate, build, simulate (in the window, or headless), summarise. Returns the exit
    status: 0, 1 for a problem with the project or its user code, 130 when interrupted (Ctrl-C, SIGINT),
    143 when terminated (SIGTERM). `log` never overwrites the project or its files, nor (without `force`)
    any existing file. `external`: instead of the project's user code, wait for a controller to connect
    (TCP on 127.0.0.1, the port and one-time token printed). `record`: an MCAP recording of the run
    (sear.recording.writer), under the same rules as the log; `record_format` 'foxglove' or 'ros2'.
    `foxglove`: serve the run live on that port of 127.0.0.1 (sear.recording.live)."""
    progress = startup_progress(project_path) if not headless else None
    try:
        return _run(project_path, progress, headless=headless, duration=duration, log=log, seed=seed,
                    realtime=realtime, force=force, external=external, record=record, record_format=record_format,
                    foxglove=foxglove)
    finally:
        if progress is not None:
            progress.close()  # closed already once the window is up; here when the run ended before


def startup_progress(project_path: Path) -> StartupProgress | None:
    """The start-up window (sear.gui.startup) on the screen, None when no window can open (the reason is
    window_runner()'s to print)."""
    if not has_display():
        return None
    try:
        from sear.gui.startup import show_startup
    except ImportError:
        return None
    return show_startup(project_path.stem)


def _run(project_path: Path, progress: StartupProgress | None, *, headless: bool, duration: float | None,
         log: str | None, seed: int, realtime: bool | None, force: bool, external: bool,
         record: str | None = None, record_format: str = "foxglove", foxglove: int | None = None) -> int:
    """run_from_cli's run, each stage shown in `progress` (None: headless, or no start-up window)."""
    window = None if headless else window_runner()
    early = early_user_code(project_path) if window is not None and not external else None
    try:
        return _simulate(project_path, progress, window, early, headless=headless, duration=duration, log=log,
                         seed=seed, realtime=realtime, force=force, external=external, record=record,
                         record_format=record_format, foxglove=foxglove)
    finally:
        if early is not None and early.runner is not None:  # the run ended before it was greeted
            early.runner.discard()


class EarlyUserCode:
    """The first robot's user code process, started before the models are loaded so that its start (a
    Python interpreter, numpy, the controller) overlaps theirs: the simulation greets it as it would one
    it started itself (`controller`)."""

    def __init__(self, runner: UserCodeRunner) -> None:
        self.runner: UserCodeRunner | None = runner
        """The process, until the simulation takes it."""

    def controller(self, welcome: dict[str, Any]) -> ControllerHost:
        """Simulation's `controller`: the process, greeted with `welcome`."""
        runner, self.runner = self.runner, None
        assert runner is not None
        try:
            runner.take_hello(welcome)
        except BaseException:
            runner.discard()
            raise
        return runner


def early_user_code(project_path: Path) -> EarlyUserCode | None:
    """The first robot's user code process started now, or None when the project, its user code file or
    its start fails (loading and the simulation then say why, as without an early start) or it has none."""
    from sear.errors import SearError
    from sear.project import Project
    from sear.usercode import UserCodeRunner

    try:
        project = Project.load(project_path)
        code = project.code
        if code.user_code is None or not Path(code.user_code).is_file():
            return None
        if project.simulation.swarm and sum(r.code.user_code is not None for r in project.robots) > 1:
            return None  # the swarm's one process starts with every robot's file
        runner = UserCodeRunner(code.user_code, code.hook_timeout)
        runner.launch()
    except (SearError, OSError):
        return None
    return EarlyUserCode(runner)


def _simulate(project_path: Path, progress: StartupProgress | None, window: WindowRunner | None,
              early: EarlyUserCode | None, *, headless: bool, duration: float | None, log: str | None, seed: int,
              realtime: bool | None, force: bool, external: bool, record: str | None = None,
              record_format: str = "foxglove", foxglove: int | None = None) -> int:
    """_run's simulation, `early` the first robot's user code already started (or None)."""
    if progress is not None:
        progress.stage("Loading the models")
    from sear.loading import load_project
    from sear.runtime.logs import check_log_path
    from sear.runtime.simulation import Simulation

    loaded = load_project(project_path)
    if loaded.project is None:  # the project file itself: one paragraph, as for any SearError
        print(f"sear: {loaded.problems[0]}", file=sys.stderr)
        return exitcodes.USER_ERROR
    problems = loaded.problems
    if problems:
        print(f"sear: {project_path}: cannot simulate, {len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return exitcodes.USER_ERROR
    if log is not None:
        check_log_path(log, loaded.project, force=force)  # a ProjectError: one sentence, before the run
    observer: RunObserver | None = None
    if record is not None:
        from sear.recording.writer import check_record_path

        observer = recorder(check_record_path(record, loaded.project, force=force, log=log), record_format)
    if foxglove is not None:
        from sear.recording.fanout import Observers
        from sear.recording.live import LiveServer

        server = LiveServer(foxglove)
        port = server.listen()
        print(f"sear: serving the run to Foxglove on ws://127.0.0.1:{port} (Open connection > Foxglove WebSocket)",
              flush=True)
        observer = server if observer is None else Observers(observer, server)
        if realtime is None:
            realtime = True
    if progress is not None:
        progress.stage("Building the world and starting the user code")
    listener = None
    controller = early.controller if early is not None else None
    if external:
        from sear.usercode import ExternalListener

        listener = ExternalListener()
        timeout = loaded.project.code.hook_timeout
        print(f"sear: waiting for a controller on 127.0.0.1 port {listener.port}, token {listener.token}; "
              "see docs/controller-protocol.md", flush=True)

        def controller(welcome: dict[str, Any]) -> ControllerHost:
            assert listener is not None
            return listener.accept(welcome, timeout=timeout, on_refused=lambda why: print(
                f"sear: refused a connection: {why}", file=sys.stderr, flush=True))
    try:
        # A window's run keeps a journal of its inputs: a recording ticked on later (Record Run) re-simulates.
        simulation = Simulation(loaded, seed=seed, log_path=log, controller=controller, observer=observer,
                                realtime=bool(realtime) if realtime is not None else window is not None,
                                journal=window is not None)
    except BaseException as exc:
        if listener is not None:  # once a controller is connected its connection closes the listener
            listener.close()
        if not isinstance(exc, UserCodeError):
            raise
        print(f"sear: {exc}", file=sys.stderr)
        return exitcodes.USER_ERROR
    if window is not None:
        status = window(simulation, duration=duration, progress=progress)
        if status in (exitcodes.INTERRUPTED, exitcodes.TERMINATED):  # SIGINT or SIGTERM closed the window
            print(f"sear: {'terminated' if status == exitcodes.TERMINATED else 'interrupted'}"
                  f"{_log_kept(simulation)}.", file=sys.stderr)
    else:
        status = run_headless(simulation, duration if duration is not None else HEADLESS_DURATION)
    return leave(simulation, status)


def recorder(path: Path | str, record_format: str = "foxglove") -> RunObserver:
    """The observer that records a run into `path` in `record_format` ('foxglove' or 'ros2'); a SearError
    naming the extra to install when the ROS 2 format's library is missing."""
    if record_format == "ros2":
        try:
            from sear.recording.ros2 import Ros2Recorder
        except ImportError as exc:
            raise SearError(f"--record-format ros2 needs mcap-ros2-support ({exc}); install it with "
                            "`pip install 'sear[tools]'`.") from None
        return Ros2Recorder(path)
    from sear.recording.writer import Recorder

    return Recorder(path)


def resume_from_cli(recording: Path, *, at: float, headless: bool, duration: float | None, log: str | None,
                    code: str | None, record: str | None, realtime: bool | None, force: bool = False,
                    record_format: str = "foxglove") -> int:
    """`sear run --resume FILE.mcap --at T`: re-simulate the recorded run to T (sear.recording.resume),
    then hand it to user code (the recorded project's, or `code`) and simulate `duration` s more.
    Headless only for now (the window's replay is sear.gui's); the summary and exit status are a
    headless run's."""
    from sear.recording.reader import Recording
    from sear.recording.resume import attach_user_code, resimulate, resume_step
    from sear.runtime.logs import check_log_path

    if not headless:
        print("sear: --resume runs headless here (add --headless); the replay window opens recordings.",
              file=sys.stderr)
    rec = Recording.open(recording)
    if not rec.complete:
        print(f"sear: {recording} ends early (the recorded run was killed); it is readable up to "
              f"{rec.duration:.2f} s.", file=sys.stderr)
    target = resume_step(rec, at) / rec.physics_hz
    if at > rec.duration + rec.tick:
        print(f"sear: --at {at:g} s is past the recording's end ({rec.duration:.2f} s); resuming at "
              f"{target:.2f} s.", file=sys.stderr)
    observer = None
    if record is not None:
        if Path(record).resolve() == Path(recording).resolve():
            print("sear: --record must not overwrite the recording being resumed; choose another file.",
                  file=sys.stderr)
            return exitcodes.USER_ERROR
        if Path(record).exists() and not force:
            print(f"sear: {record} exists; choose another path for the recording, or add --force to overwrite it.",
                  file=sys.stderr)
            return exitcodes.USER_ERROR
        observer = recorder(record, record_format)
    if log is not None and Path(log).exists() and not force:
        print(f"sear: {log} exists; choose another path for the log, or add --force to overwrite it.",
              file=sys.stderr)
        return exitcodes.USER_ERROR
    wall0 = time.perf_counter()
    shown = [0]

    def progress(done: int, total: int) -> None:  # every tenth of the way, on standard error
        tenth = done * 10 // max(total, 1)
        if tenth > shown[0] and done < total:
            shown[0] = tenth
            print(f"sear: re-simulating {recording.name}: {done / max(total, 1):.0%}", file=sys.stderr, flush=True)

    simulation = resimulate(rec, at, log_path=log, observer=observer, realtime=bool(realtime), progress=progress)
    if log is not None:
        check_log_path(log, simulation.project, force=True)
    print(f"sear: re-simulated {simulation.world.time:.2f} s of {recording} in {time.perf_counter() - wall0:.2f} s; "
          "taking over.", flush=True)
    try:
        for index, run in enumerate(simulation.robots):
            if code is not None and index == 0:
                attach_user_code(simulation, 0, code)
            elif run.robot.code.user_code is not None:
                attach_user_code(simulation, index)
    except UserCodeError as exc:
        print(f"sear: {exc}", file=sys.stderr)
        return leave(simulation, exitcodes.USER_ERROR)
    status = run_headless(simulation, duration if duration is not None else HEADLESS_DURATION)
    return leave(simulation, status)


def window_runner() -> WindowRunner | None:
    """The simulation window's runner, or None, saying why, when no window can open (a headless run then)."""
    if not has_display():
        print("sear: no display is available, so the simulation window cannot open; running headless.",
              file=sys.stderr)
        return None
    try:
        from sear.gui.simwindow import run_window
    except ImportError as exc:
        print(f"sear: the simulation window is not available ({exc}); running headless.", file=sys.stderr)
        return None
    return run_window


def _log_kept(simulation: Simulation) -> str:
    """What a run that ended early says of its log: that it is kept, and where, when the run writes one
    (`--log`); nothing when it writes none, where "the log so far is kept" would promise a file that
    does not exist."""
    log = simulation.log
    return f"; the log so far is kept in {log.path}" if log is not None else ""


def leave(simulation: Simulation, status: int) -> int:
    """The end of every run: close the simulation (the controller stopped, the log flushed, the physics
    freed) and return `status`."""
    simulation.close()
    from sear.runtime.stdstreams import reopen_std_streams

    reopen_std_streams()  # user code may have closed them
    sys.stdout.flush()
    sys.stderr.flush()
    return status


def run_headless(simulation: Simulation, duration: float) -> int:
    """Start the user code, simulate `duration` s (Ctrl-C ends it early, keeping the log; a failure of
    the user code or the controller ends it at that tick, its log row written) and print a summary.
    Returns the exit status; the caller's leave() closes the simulation, which flushes the log."""
    import numpy as np

    from sear.runtime.stdstreams import reopen_std_streams

    wall0 = time.perf_counter()
    robots = simulation.robots
    starts = [run.state.position.copy() for run in robots]
    path_lengths, lasts = [0.0] * len(robots), [start.copy() for start in starts]

    def measure(tick: TickResult) -> bool:  # each robot's path, from one control tick's position to the next
        if tick.control:
            for i, run in enumerate(robots):
                here = run.state.position
                path_lengths[i] += float(np.linalg.norm(here - lasts[i]))
                lasts[i] = here.copy()
        return simulation.user_error is not None  # a failed controller ends a headless run at that tick

    stop = _StopSignals()

    def after_tick(tick: TickResult) -> bool:
        failed = measure(tick)
        return failed or stop.signal is not None or simulation.output_gone or simulation.log_failure is not None

    with stop:
        simulation.start_user_code()
        try:
            simulation.run(duration, after_tick=after_tick)
        except KeyboardInterrupt:  # a second Ctrl-C, or one before the run: end at once
            stop.signal = stop.signal or signal.SIGINT
    if simulation.log is not None:  # the rows since the last flush: a failure to write them is this run's
        simulation.log.flush()
    reopen_std_streams()  # user code may have closed them; the summary is still printed
    interrupted = stop.signal is not None
    if simulation.output_gone and not interrupted:
        print(f"sear: the output's reader went away (a closed pipe, such as `| head`), so the run ended at "
              f"{simulation.world.time:.2f} s{_log_kept(simulation)}.", file=sys.stderr)
    if interrupted:
        what = "terminated" if stop.signal == signal.SIGTERM else "interrupted"
        print(f"sear: {what}{_log_kept(simulation)}.", file=sys.stderr)
    wall = time.perf_counter() - wall0
    sim_time = simulation.world.time
    log_path = simulation.log.path if simulation.log is not None else None
    rows = simulation.log.rows if simulation.log is not None else 0
    error = simulation.user_error
    drives = []
    for run, start, path_length in zip(robots, starts, path_lengths, strict=True):
        end = run.state.position
        who = "the robot" if len(robots) == 1 else run.name
        drives.append(f"{who} drove {path_length:.1f} m and ended {np.linalg.norm(end[:2] - start[:2]):.1f} m "
                      f"from its start at x={end[0]:.2f} y={end[1]:.2f} z={end[2]:.2f}")
    print(f"sear: simulated {sim_time:.2f} s in {wall:.2f} s of real time ({sim_time / max(wall, 1e-9):.1f}x real "
          f"time); {'; '.join(drives)}.")
    if log_path is not None:
        print(f"sear: log written to {log_path} ({rows} rows).")
    if error is not None:
        print("sear: the run ended with an error in the user code (above).", file=sys.stderr)
        return exitcodes.USER_ERROR
    if simulation.log_failure is not None:
        print("sear: the run ended early because its log could not be written (above).", file=sys.stderr)
        return exitcodes.USER_ERROR
    if stop.signal == signal.SIGTERM:
        return exitcodes.TERMINATED
    if interrupted:
        return exitcodes.INTERRUPTED
    return exitcodes.BROKEN_PIPE if simulation.output_gone else exitcodes.OK


class _StopSignals:
    """While active, SIGINT (Ctrl-C) and SIGTERM (the settings window's Stop, `kill`) ask a headless run to
    end after the tick under way, so the log is closed whole; a second SIGINT interrupts at once."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signal is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signal = signum

    def __enter__(self) -> _StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()


def replay_from_cli(recording: Path) -> int:
    """`sear replay FILE.mcap`: the replay window on a recording (sear.gui.replay). It needs a display;
    without one the message names `sear render`, which films a recording without a screen."""
    if not has_display():
        print("sear: no display is available, so the replay window cannot open; `sear render "
              f"{recording} OUT.mp4` films the recording without one.", file=sys.stderr)
        return exitcodes.USER_ERROR
    from sear.gui.replay import run_replay

    return run_replay(recording)


XVFB_START_SECONDS = 30.0
"""How long `sear render` waits for its private X server to accept connections."""


def private_display() -> tuple[str, Callable[[], None]]:
    """Start a private Xvfb (Debian's xvfb) with GLX for this process: its display (":N") and a function
    that stops it. Qt's offscreen platform has no OpenGL, so drawing the 3-D view without a screen needs
    an X server; Xvfb picks a free display number itself (-displayfd)."""
    import shutil
    import subprocess
    import tempfile

    if shutil.which("Xvfb") is None:
        raise RenderError("no display is available and Xvfb is not installed; install it (Debian: "
                          "`apt-get install xvfb`) or run `sear render` where a display is set (DISPLAY).")
    folder = tempfile.mkdtemp(prefix="sear-render-xvfb-")
    number_file = Path(folder) / "display"
    with open(number_file, "w") as out:
        server = subprocess.Popen(["Xvfb", "-displayfd", str(out.fileno()), "-screen", "0", "4200x4200x24",
                                   "-nolisten", "tcp", "+extension", "GLX"], pass_fds=(out.fileno(),),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop() -> None:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)

    deadline = time.monotonic() + XVFB_START_SECONDS
    while time.monotonic() < deadline:
        text = number_file.read_text()
        if text.endswith("\n") and text.strip().isdigit():
            return f":{text.strip()}", stop
        if server.poll() is not None:
            break
        time.sleep(0.02)
    stop()
    raise RenderError("the private X server (Xvfb) for `sear render` did not start; run it where a display "
                      "is set (DISPLAY).")


class RenderError(Exception):
    """`sear render` cannot draw (no display and no Xvfb)."""


def render_from_cli(recording: Path, output: Path, *, camera: str, start: float, end: float | None,
                    size: tuple[int, int], force: bool = False) -> int:
    """`sear render FILE.mcap OUT.mp4`: film a recording's 3-D view (HUD included) with camera `camera`
    from `start` to `end` s (None: its end) at `size` (width, height) pixels, FPS frames a simulated
    second (sear.gui.simcapture). Without a display it starts a private Xvfb for the run (the 3-D view
    needs OpenGL, which Qt's offscreen platform lacks); with DISPLAY set it draws there."""
    if output.exists() and not force:
        print(f"sear: {output} exists; choose another name for the film, or add --force to overwrite it.",
              file=sys.stderr)
        return exitcodes.USER_ERROR
    if output.resolve() == recording.resolve():
        print("sear: the film must not overwrite the recording; choose another name.", file=sys.stderr)
        return exitcodes.USER_ERROR
    if not os.environ.get("DISPLAY"):
        # The drawing runs in a child process on a private X server: the server outlives every X
        # connection (Qt aborts when its server goes first, and tears its connection down only at exit).
        import subprocess

        try:
            display, stop = private_display()
        except RenderError as exc:
            print(f"sear: {exc}", file=sys.stderr)
            return exitcodes.USER_ERROR
        try:
            command = [sys.executable, "-m", "sear", "render", str(recording), str(output), "--camera", camera,
                       "--start", repr(start), "--size", f"{size[0]}x{size[1]}", "--force"]
            if end is not None:
                command += ["--end", repr(end)]
            child = subprocess.run(command, env={**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"},
                                   check=False)
            return child.returncode
        finally:
            stop()
    from sear.gui.render import render

    live = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        """A line rewritten on a terminal; else a line every 100 frames and at the end."""
        if live:
            print(f"\rsear: rendering frame {done} of {total}", end="\n" if done == total else "", file=sys.stderr,
                  flush=True)
        elif done % 100 == 0 or done == total:
            print(f"sear: rendering frame {done} of {total}", file=sys.stderr, flush=True)

    written = render(recording, output, camera=camera, start=start, end=end, size=size, progress=progress)
    print(f"sear: film written to {written.path} ({written.frames} frames, {written.seconds:.2f} s, "
          f"{written.size[0]}×{written.size[1]})." if written.size else f"sear: film written to {output}.")
    return exitcodes.OK
