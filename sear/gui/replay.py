"""The replay window (`sear replay FILE.mcap`, File > Open Recording): a recorded run shown in the
simulation window, moment by moment, without the original project on disk; and "Continue from here",
which re-simulates the run to the moment shown and hands the robot to the keyboard or to user code.

The window is the simulation window (sear.gui.simwindow) on a simulation built from the project the
recording embeds (sear.recording.resume.resimulate to t = 0: the terrain, the robots, their sensors),
which never steps: each moment shown puts every robot's body where the recording has it (its ground-truth
pose at the last control tick at or before the moment) and gives every sensor its last recorded sample,
so the 3-D view, the HUD, the Plots dock (the recorded CSV rows), the LIDAR, point-cloud and depth docks
and the console (the recorded prints) show what the run saw, drawn by the same code as a live run.
Obstacles user code added (sim.add_tree, add_box, ...) are added again from the recorded calls, each shown
from the moment it was added, the movable ones where the recording has them. What is not recorded is not
shown: the sensors' rays, the suspension's travel (wheels are drawn at rest) and the gripper's paddles
(drawn open and lowered).

The replay clock runs in wall time: playing at speed s, the moment shown advances s simulated seconds per
wall second, however fast frames are drawn (ReplayClock).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import signal
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMenu,
    QMessageBox,
    QProgressDialog,
    QSlider,
    QToolBar,
)

from sear import exitcodes
from sear.errors import SearError
from sear.gui.simdocks import HISTORY
from sear.gui.simwindow import SimulationWindow
from sear.recording.reader import Recording, SensorSample
from sear.runtime.simulation import Simulation

WORLD_CALLS = frozenset({"add_tree", "add_box", "add_wall", "add_table", "add_shelf"})
"""The `sim` calls that add obstacles to the world (sear.runtime.sim), made again on the replay's world."""
SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
"""The replay speeds offered (simulated seconds per wall second)."""
TAKE_OVER = ("Drive it with the keyboard", "Its recorded user code", "User code from a file…")
"""What Continue from here hands the robot to."""


class ReplayClock:
    """The moment a replay shows (simulated s, 0..duration): paused, or playing at `speed` simulated seconds
    per wall second. `wall` is a clock in seconds (time.perf_counter; a test may give its own)."""

    def __init__(self, duration: float, wall: Callable[[], float] = time.perf_counter) -> None:
        self.duration = duration
        self.speed = 1.0
        self.wall = wall
        self._time = 0.0
        self._since: float | None = None
        """Wall time the clock last started playing or was last set (None: paused)."""

    @property
    def playing(self) -> bool:
        return self._since is not None

    @property
    def time(self) -> float:
        """The moment now: while playing, the moment set last plus speed × the wall time since, up to the end."""
        if self._since is None:
            return self._time
        return min(self.duration, self._time + self.speed * (self.wall() - self._since))

    def set(self, moment: float) -> None:
        """Show `moment` (clamped to the recording); playing goes on from it."""
        self._time = min(max(0.0, moment), self.duration)
        if self._since is not None:
            self._since = self.wall()

    def set_speed(self, speed: float) -> None:
        self.set(self.time)  # the time played so far at the old speed is kept
        self.speed = speed

    def play(self) -> None:
        if self._since is None:
            if self._time >= self.duration:
                self._time = 0.0  # played to the end: again from the start
            self._since = self.wall()

    def pause(self) -> None:
        self._time = self.time
        self._since = None

    @property
    def ended(self) -> bool:
        return self.playing and self.time >= self.duration


def sensor_reading(sample: SensorSample | None, fields: tuple[str, ...]) -> Any:
    """A recorded sample as the sensor's `reading` (what its HUD text, plot and picture are drawn from): a
    scan's or depth image's array, one field's value, or several fields' values as a named tuple (x, y, z of
    an IMU; latitude, longitude, altitude of a GPS)."""
    if sample is None:
        return None
    if sample.array is not None:
        return sample.array
    values = [sample.values.get(field) for field in fields]
    if len(fields) == 1:
        return values[0]
    if all(value is None for value in values):
        return None
    from collections import namedtuple

    reading_type: Any = namedtuple("RecordedReading", fields)  # type: ignore[misc]  # fields known at run time
    return reading_type(*values)


def _cell(text: str) -> float:
    if text == "":
        return float("nan")
    if text in ("True", "False", "true", "false"):
        return 1.0 if text.lower() == "true" else 0.0
    try:
        return float(text)
    except ValueError:
        return float("nan")


class RecordedTable:
    """The recording's CSV rows (its /log topic) as columns of floats over time, for the Plots dock."""

    def __init__(self, recording: Recording) -> None:
        rows = recording.csv_rows()
        header = next(csv.reader(io.StringIO(recording.csv_header))) if recording.csv_header else []
        self.times = np.array([t for t, _ in rows], dtype=float)
        cells = list(csv.reader(io.StringIO("".join(text for _, text in rows))))
        self.columns: dict[str, np.ndarray] = {}
        for index, name in enumerate(header):
            self.columns[name] = np.array([_cell(row[index]) if index < len(row) else np.nan for row in cells])

    def until(self, moment: float) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The last HISTORY rows at or before `moment`: their times and every column's values."""
        end = int(np.searchsorted(self.times, moment + 1e-9, side="right"))
        start = max(0, end - HISTORY)
        return self.times[start:end], {name: values[start:end] for name, values in self.columns.items()}


class ReplayWindow(SimulationWindow):
    """The simulation window on a recording: `simulation` is the recorded project built at t = 0 (it never
    steps); the Replay toolbar under the view moves through the recording."""

    def __init__(self, recording: Recording, simulation: Simulation) -> None:
        self.recording = recording
        self.clock = ReplayClock(recording.duration)
        self.moment = -1.0
        """The moment shown (s)."""
        self.table = RecordedTable(recording)
        self.prints = recording.prints()
        self._printed = 0
        """Recorded prints shown in the console."""
        self.taken_over: list[tuple[SimulationWindow, Simulation]] = []
        """The windows Continue from here opened, with their simulations (closed with their windows)."""
        self.obstacle_times: list[float] = []
        """When each obstacle of the world (by its index) was added (s; 0 for those of the start)."""
        self._add_obstacles(recording, simulation)
        super().__init__(simulation)
        self.setWindowTitle(f"{recording.path.name} — SEAR replay")
        for key in ("start", "reset", "realtime", "record", "record_run", "rays"):
            self.commands[key].setVisible(False)
            self.commands[key].setEnabled(False)
        for key in ("pause", "step"):  # on the Replay bar instead (and in the Simulation menu)
            self.toolbar.removeAction(self.commands[key])
        previous_shown = None
        for action in self.toolbar.actions():  # no separator left first or doubled by the actions taken off
            if not action.isVisible():
                continue
            if action.isSeparator() and (previous_shown is None or previous_shown.isSeparator()):
                self.toolbar.removeAction(action)
                continue
            previous_shown = action
        self.extra_obstacles: list[tuple[float, str, Any, bool]] = []
        """Obstacles the recording's scene holds but its inputs did not add (a recording begun after the
        user code's init: File > Record Run): (time added, frame, item, movable), drawn from the scene."""
        self._add_scene_obstacles()
        self.commands["pause"].setText("Play / Pause\tSpace, P")
        self.commands["pause"].setIconText("Pause")
        self.commands["step"].setText("Step Forward\tN, .")
        self._build_replay_bar()
        self.set_playing(False)
        self.clock.set(self.begins)
        self.show_moment(self.begins)
        self.cameras.choose("follow")  # the robot moves without keys: a camera that keeps it in view

    # --- construction ---------------------------------------------------------------------------------

    def _add_obstacles(self, recording: Recording, simulation: Simulation) -> None:
        """Make the recorded calls that added obstacles again on the replay's world (which never steps), and
        note when each obstacle appeared."""
        from sear.runtime.sim import serve_call

        world = simulation.world
        self.obstacle_times = [0.0] * len(world.obstacles)
        for item in recording.inputs():
            if item.kind != "call" or item.name not in WORLD_CALLS or not 0 <= item.robot < len(simulation.robots):
                continue
            serve_call(simulation.robots[item.robot].sim, item.name, item.args)
            self.obstacle_times += [item.time] * (len(world.obstacles) - len(self.obstacle_times))

    def _add_scene_obstacles(self) -> None:
        """The obstacles of the recorded scene (/scene: meshes as binary glTF) that the replayed calls did not
        add, as items of the 3-D view only (not in the Objects dock)."""
        import base64

        import trimesh

        from sear.gui.preview import lit_mesh_item
        from sear.gui.simview import pose_matrix

        known = len(self.simulation.world.obstacles)
        for moment, update in self.recording.scene():
            for entity in update.get("entities", []):
                name = str(entity.get("id", ""))
                if not name.startswith("obstacle/") or int(name.split("/")[1]) < known:
                    continue
                for model in entity.get("models", []):
                    mesh = trimesh.load(io.BytesIO(base64.b64decode(model["data"])), file_type="glb", force="mesh")
                    if not isinstance(mesh, trimesh.Trimesh):
                        continue
                    colour = model.get("color", {})
                    item = lit_mesh_item(mesh, (colour.get("r", 0.6), colour.get("g", 0.6), colour.get("b", 0.6)))
                    position, orientation = model["pose"]["position"], model["pose"]["orientation"]
                    item.setTransform(pose_matrix(np.array([position[k] for k in "xyz"]),
                                                  np.array([orientation[k] for k in "xyzw"])))
                    self.view.addItem(item)
                    self.extra_obstacles.append((moment, str(entity.get("frame_id", "world")), item,
                                                 bool(entity.get("frame_locked"))))

    def _build_replay_bar(self) -> None:
        bar = QToolBar("Replay")
        bar.setObjectName("replay-toolbar")
        self.addToolBar(Qt.ToolBarArea.BottomToolBarArea, bar)
        self.replay_bar = bar
        rec = self.recording
        self.ticks = max(1, round(rec.duration / rec.control_period)) if rec.control_period else 1
        """Control ticks in the recording: the slider's steps."""
        back = bar.addAction("◀ Tick", lambda: self.step(-1))
        back.setToolTip("One control tick back (,)")
        self.play_action = bar.addAction("▶ Play", lambda: self.toggle_play())
        forward = bar.addAction("Tick ▶", lambda: self.step(1))
        forward.setToolTip("One control tick forward (. or N)")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, self.ticks)
        self.slider.setMinimumWidth(240)
        self.slider.setPageStep(max(1, round(1.0 / max(rec.control_period, 1e-9))))  # a simulated second
        self.slider.valueChanged.connect(self._slider_moved)
        self.slider.setToolTip("The moment shown: drag to move through the recording")
        bar.addWidget(self.slider)
        self.time_label = QLabel()
        bar.addWidget(self.time_label)
        bar.addWidget(QLabel("  Speed: "))
        self.speed_box = QComboBox()
        for speed in SPEEDS:
            self.speed_box.addItem(f"{speed:g}×", speed)
        self.speed_box.setCurrentIndex(SPEEDS.index(1.0))
        self.speed_box.currentIndexChanged.connect(lambda _i: self.set_speed(float(self.speed_box.currentData())))
        bar.addWidget(self.speed_box)
        bar.addSeparator()
        self.continue_action = bar.addAction("Continue from here…", lambda: self.continue_from_here())
        self.continue_action.setToolTip("Re-simulate the run to this moment, then drive it yourself or "
                                        "give it to user code")
        self.begins = float(rec.start_time)
        """Simulated time (s) the recording began at: after 0 when Record Run was ticked mid-run."""
        if not rec.resumable or self.extra_obstacles:  # inputs before the recording began are not in it
            self.continue_action.setEnabled(False)
            self.continue_action.setToolTip(f"This recording began at t = {self.begins:.2f} s of a run that kept "
                                            "no journal of its inputs before: it cannot be re-simulated (record "
                                            "with `sear run --record`, or Record Run in the simulation window)")
        simulation_menu = next(a.menu() for a in self.menuBar().actions() if a.text() == "&Simulation")
        assert isinstance(simulation_menu, QMenu)
        simulation_menu.addSeparator()
        simulation_menu.addAction(self.continue_action)
        for key, delta in ((Qt.Key.Key_Comma, -1), (Qt.Key.Key_Period, 1)):
            action = self.addAction(f"step {delta}")
            action.setShortcut(QKeySequence(key))
            action.triggered.connect(lambda _checked=False, d=delta: self.step(d))

    # --- the moment shown ------------------------------------------------------------------------------

    def show_moment(self, moment: float) -> None:
        """Show the recording at `moment` (s): every robot where it was, every sensor's last sample, the
        console's prints up to then; the slider and the time follow."""
        rec = self.recording
        moment = min(max(0.0, moment), rec.duration)
        sim = self.simulation
        sim.world.time = moment
        for run in sim.robots:
            pose = rec.pose(moment, run.name)
            if pose is not None:
                run.vehicle.reset(tuple(pose.position), tuple(pose.orientation))
                gripper = sim.world.grippers.get(run.index)
                if gripper is not None:
                    gripper.reset()
                before = rec.pose(pose.time - rec.control_period + 1e-9, run.name) if pose.time > 0 else None
                velocity = np.zeros(3)
                if before is not None and pose.time > before.time:
                    velocity = (pose.position - before.position) / (pose.time - before.time)
                run._state = dataclasses.replace(run.vehicle.state(moment), linear_velocity=velocity)
            for sensor in run.sensors.sensors:
                sample = rec.sensor_value(moment, run.name, sensor.name)
                sensor.reading = sensor_reading(sample, tuple(sensor.log_fields))
                sensor.last_sample_time = None if sample is None else sample.time
        self._show_prints(moment)
        self.moment = moment
        self.slider.blockSignals(True)
        self.slider.setValue(round(moment / rec.control_period) if rec.control_period else 0)
        self.slider.blockSignals(False)
        self.time_label.setText(f"  t = {moment:7.2f} of {rec.duration:.2f} s")

    def _show_prints(self, moment: float) -> None:
        """The console shows the recorded prints up to `moment`: the new ones added, or (going back) all
        of them again."""
        shown = self._printed
        end = shown
        while end < len(self.prints) and self.prints[end].time <= moment + 1e-9:
            end += 1
        if end == shown and (shown == 0 or self.prints[shown - 1].time <= moment + 1e-9):
            return
        if shown and self.prints[shown - 1].time > moment + 1e-9:  # back in time: start the console again
            from sear.gui.simconsole import ConsoleTail

            self.console.tail = ConsoleTail()
            self.console.clear()
            end = 0
            while end < len(self.prints) and self.prints[end].time <= moment + 1e-9:
                end += 1
            shown = 0
        for item in self.prints[shown:end]:
            self.console.tail.add(item.text)
        self._printed = end
        self.console.show_pending(now=True)

    def _slider_moved(self, value: int) -> None:
        self.clock.set(value * self.recording.control_period)
        self.show_moment(self.clock.time)
        self.draw()

    def seek(self, moment: float) -> None:
        """Show `moment` (s) now; playing goes on from it."""
        self.clock.set(moment)
        self.show_moment(self.clock.time)
        self.draw()

    def step(self, ticks: int) -> None:
        """Pause, and move `ticks` control ticks forward (or back, negative)."""
        self.set_playing(False)
        period = self.recording.control_period
        current = round(self.moment / period) if period else 0
        self.seek((current + ticks) * period)

    def set_speed(self, speed: float) -> None:
        """Play at `speed` simulated seconds per wall second (0.1 to 16)."""
        self.clock.set_speed(speed)
        index = self.speed_box.findData(speed)
        if index >= 0 and index != self.speed_box.currentIndex():
            self.speed_box.blockSignals(True)
            self.speed_box.setCurrentIndex(index)
            self.speed_box.blockSignals(False)
        self._update_status()

    def set_playing(self, on: bool) -> None:
        self.paused = not on  # paused, every frame redraws the HUD and the docks (SimulationWindow.draw)
        if on:
            self.clock.play()
        else:
            self.clock.pause()
        self.play_action.setText("❚❚ Pause" if on else "▶ Play")
        self.commands["pause"].blockSignals(True)
        self.commands["pause"].setChecked(not on)
        self.commands["pause"].blockSignals(False)
        self._update_status()

    def toggle_play(self) -> None:
        self.set_playing(not self.clock.playing)

    # --- the simulation window's controls, for a recording ----------------------------------------------

    def start_user_code(self) -> None:
        """Space: play or pause."""
        self.toggle_play()

    def reset(self) -> None:
        """Enter: back to the start of the recording."""
        self.seek(0.0)

    def set_paused(self, paused: bool) -> None:
        """P (Simulation > Play / Pause)."""
        self.set_playing(not paused)

    def single_step(self) -> None:
        """N: one control tick forward."""
        self.step(1)

    def advance(self, seconds: float) -> None:
        """Show the moment `seconds` later (what playing does over time, at once)."""
        self.seek(self.moment + seconds)

    def frame(self) -> None:
        """Timer tick: the moment the replay clock has reached (playing), then one frame."""
        if self.clock.playing:
            moment = self.clock.time
            if abs(moment - self.moment) > 1e-12:
                self.show_moment(moment)
            if self.clock.ended:
                self.set_playing(False)
        from sear.gui.simkeys import CAMERA_KEYS

        self.cameras.move_by_keys([CAMERA_KEYS[k] for k in self.view.held if k in CAMERA_KEYS])
        self.draw()
        self._frames.append(time.perf_counter())

    def draw(self) -> None:
        """The live window's frame, then the obstacles as recorded: those not yet added hidden, the movable
        ones where the recording has them."""
        super().draw()
        if not hasattr(self, "recording"):
            return
        from sear.gui.simview import pose_matrix

        for index, item in self.scene.obstacle_items.items():
            shown = index < len(self.obstacle_times) and self.obstacle_times[index] <= self.moment + 1e-9
            item.setVisible(shown)
            if shown and self.simulation.world.obstacles[index].dynamic:
                pose = self.recording.pose(self.moment, f"obstacle/{index}")
                if pose is not None:
                    item.setTransform(pose_matrix(pose.position, pose.orientation))
        for added, frame, item, movable in getattr(self, "extra_obstacles", ()):
            item.setVisible(added <= self.moment + 1e-9)
            if movable:
                pose = self.recording.pose(self.moment, frame)
                if pose is not None:
                    item.setTransform(pose_matrix(pose.position, pose.orientation))

    def refresh_docks(self) -> None:
        """The plots from the recorded rows up to the moment shown, then the sensor docks as live."""
        times, columns = self.table.until(self.moment)
        plots = self.plots
        plots.history_t = deque(times.tolist(), maxlen=HISTORY)
        plots.history = {name: deque(values.tolist(), maxlen=HISTORY) for name, values in columns.items()}
        super().refresh_docks()

    def _update_hud(self) -> None:
        """The live HUD (time, speed, every sensor's last recorded reading) and the recorded pose."""
        super()._update_hud()
        pose = self.recording.pose(self.moment, self.simulation.driven_robot.name)
        if pose is not None:
            x, y, z = pose.position
            text = self.hud.text().split("\n")
            after = next((i + 1 for i, line in enumerate(text) if line.startswith("t =")), 1)  # under the time
            text.insert(after, f"pose x {x:8.3f}  y {y:8.3f}  z {z:6.3f} m  yaw {np.degrees(pose.yaw):7.2f}°")
            self.hud.setText("\n".join(text))
            self.hud.adjustSize()

    def _update_status(self) -> None:
        if not hasattr(self, "clock"):
            return
        fps = 0.0
        if len(self._frames) > 1:
            fps = (len(self._frames) - 1) / max(self._frames[-1] - self._frames[0], 1e-9)
        state = f"playing at {self.clock.speed:g}×" if self.clock.playing else "paused"
        ended = "" if self.recording.complete else "   |   the recorded run ended early (killed)"
        self.status.setText(f"{self.capture.status()}replay of {self.recording.path.name}   |   "
                            f"t = {max(self.moment, 0.0):7.2f} of {self.recording.duration:.2f} s   |   {state}   |   "
                            f"{fps:4.1f} frames/s   |   Space: play/pause, , and .: one tick{ended}")

    # --- rewind and take over ----------------------------------------------------------------------------

    def continue_from_here(self, take_over: int | None = None,
                           code: str | Path | None = None) -> SimulationWindow | None:
        """Re-simulate the recorded run to the moment shown (a progress dialog; Cancel stops it), then open a
        simulation window on it, driven by the keyboard (`take_over` 0), the recorded user code (1) or user
        code from a file (2: `code`, else a file dialog). None given: a dialog asks. Returns the window."""
        from sear.recording.resume import attach_user_code, resimulate

        self.set_playing(False)
        if take_over is None:
            choice, ok = QInputDialog.getItem(self, "Continue from here", f"At t = {self.moment:.2f} s, hand the "
                                              "robot to:", list(TAKE_OVER), 0, False)
            if not ok:
                return None
            take_over = TAKE_OVER.index(choice)
        if take_over == 2 and code is None:
            start = str(Path.home())
            chosen, _ = QFileDialog.getOpenFileName(self, "User code to take over with", start, "Python (*.py)")
            if not chosen:
                return None
            code = chosen
        progress = QProgressDialog(f"Re-simulating the run to t = {self.moment:.2f} s…", "Cancel", 0, 100, self)
        progress.setWindowTitle("Continue from here")
        progress.setWindowModality(Qt.WindowModality.WindowModal)
        progress.setMinimumDuration(0)
        progress.setValue(0)

        class Cancelled(Exception):
            pass

        def report(done: int, total: int) -> None:
            progress.setMaximum(max(total, 1))
            progress.setValue(done)
            QApplication.processEvents()
            if progress.wasCanceled():
                raise Cancelled

        try:
            simulation = resimulate(self.recording, self.moment, progress=report)
        except Cancelled:
            progress.close()
            self.console.note("Continue from here: cancelled.\n")
            return None
        except SearError as exc:
            progress.close()
            QMessageBox.warning(self, "Continue from here", str(exc))
            return None
        progress.close()
        driven = self.simulation.driven
        simulation.driven = driven
        try:
            if take_over in (1, 2):
                attach_user_code(simulation, driven, None if take_over == 1 else code)
        except SearError as exc:
            simulation.close()
            QMessageBox.warning(self, "Continue from here", str(exc))
            return None
        window = SimulationWindow(simulation)
        window.setWindowTitle(f"{simulation.project.name} — from {self.recording.path.name} at "
                              f"t = {simulation.world.time:.2f} s — SEAR simulation")
        window.show()
        window.start()
        if take_over in (1, 2):
            window.start_user_code()
        who = ("the keyboard" if take_over == 0 else "its recorded user code" if take_over == 1 else
               f"user code {Path(str(code)).name}")
        window.console.note(f"Re-simulated {self.recording.path.name} to t = {simulation.world.time:.2f} s; "
                            f"{who} drives it now.\n")
        self.taken_over.append((window, simulation))
        window.installEventFilter(_CloseSimulation(window, simulation))
        return window

    def closeEvent(self, event) -> None:
        super().closeEvent(event)
        for window, _simulation in self.taken_over:
            window.close()


class _CloseSimulation(QObject):
    """Closes a taken-over simulation once its window has closed."""

    def __init__(self, window: SimulationWindow, simulation: Simulation) -> None:
        super().__init__(window)
        self.simulation = simulation

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Close:
            QTimer.singleShot(0, self.simulation.close)
        return False


def open_replay(path: str | Path) -> ReplayWindow:
    """A replay window on the recording at `path` (RecordingError, a SearError, when it cannot be read or
    its project cannot be built); shown and started by the caller."""
    from sear.recording.resume import resimulate

    recording = Recording.open(path)
    simulation = resimulate(recording, 0.0)
    try:
        return ReplayWindow(recording, simulation)
    except BaseException:
        simulation.close()
        raise


def run_replay(path: str | Path) -> int:
    """`sear replay FILE.mcap`: the replay window until it is closed; the exit status."""
    from sear.gui.app import configure_qt, set_window_icon

    configure_qt()
    app = QApplication.instance() or QApplication([])
    set_window_icon()
    window = open_replay(path)
    stopped: list[int] = []

    def stop(signum: int, frame: object) -> None:  # Ctrl-C, kill: every window closed from the event loop
        stopped.append(signum)
        QTimer.singleShot(0, QApplication.closeAllWindows)

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        window.show()
        window.start()
        app.exec()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for _window, simulation in window.taken_over:
            simulation.close()
        window.simulation.close()
    return exitcodes.for_signal(stopped[0]) if stopped else exitcodes.OK
