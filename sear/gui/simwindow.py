"""The simulation window (SPEC §4): a 3-D view, keyboard driving, live sensor values and plots.

It wraps the same `Simulation.tick()` a headless run uses: a timer advances the simulation (in real time
or as fast as possible) and then draws one frame from pybullet's poses, so what the window shows is
what a headless run with the same seed and inputs computes. Drawing never changes the simulation.

The window puts together the 3-D view and its items (sear.gui.simview), its cameras (sear.gui.simcamera),
the HUD and the docks (sear.gui.simdocks), the console (sear.gui.simconsole), the keys
(sear.gui.simkeys) and the objects (sear.gui.simpick: click to see one, drag to pull one, the Objects
dock); this module holds its menus and toolbar, the stepping, the status bar and its life
cycle. With several robots, Tab chooses the driven robot: the keys drive it, and the camera, the HUD and
the sensor docks follow it.
"""

from __future__ import annotations

import signal
import time
from collections import deque
from pathlib import Path

from PySide6.QtCore import QEvent, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QWidget,
)

from sear import exitcodes
from sear.errors import ProjectError
from sear.gui.geometry import restore_window, save_window
from sear.gui.help import add_help_menu
from sear.gui.simcamera import Cameras
from sear.gui.simcapture import ViewCapture
from sear.gui.simconsole import Console
from sear.gui.simdocks import Hud, PlotsPanel, SensorDocks, collapse_empty_plots, give_pictures_room
from sear.gui.simkeys import CAMERA_KEYS, DRIVE_KEYS, HELP, KeyRouter
from sear.gui.simpick import ObjectsPanel, Picker
from sear.gui.simview import Scene, SimView
from sear.gui.startup import StartupProgress
from sear.project import save_camera_view
from sear.runtime.pacer import Pacer
from sear.runtime.simulation import Simulation, TickResult

PANEL_PERIOD = 0.12
"""Seconds between refreshes of the HUD and status bar, or of the docks, in turn (each every 0.24 s)."""
TICK_BUDGET = {True: 0.022, False: 0.05}
"""Wall seconds a frame may spend simulating, in real-time and in as-fast-as-possible mode: when the
physics cannot keep up the simulation slips behind the clock (the status bar says so) rather than the
frame rate collapsing, and as fast as possible still draws about 15 frames a second."""


class RateDisplay:
    """The status bar's speed of the simulation against the wall clock, steady enough to read.

    The rate is simulated over wall seconds across the last WINDOW wall seconds (not since the last
    restart of the pacer, which slips on every slow frame), once it spans at least SPAN; it reads "real
    time" within 4 % of 1, and only leaves that when it is more than 8 % off (hysteresis); a factor shown
    is changed only when the rate moves by more than 0.03 from it."""

    WINDOW, SPAN = 3.0, 2.0
    """Wall seconds the rate is measured over, at most and at least."""
    ENTER, LEAVE = 0.04, 0.08
    """Within ENTER of 1 the rate reads "real time"; it reads as a factor again beyond LEAVE."""
    STEP = 0.03
    """A factor on show changes only when the rate moves further than this from it."""

    def __init__(self) -> None:
        self.samples: deque[tuple[float, float]] = deque()
        self.shown: float | None = None
        """The factor on show (1.0 for "real time"), None before there is one."""

    def clear(self) -> None:
        """Forget the samples (pause, change of mode, a jump): the next text comes from fresh ones."""
        self.samples.clear()
        self.shown = None

    def add(self, wall: float, simulated: float) -> None:
        """One sample: wall clock and simulated time, s."""
        self.samples.append((wall, simulated))
        while len(self.samples) > 2 and wall - self.samples[1][0] >= self.WINDOW:
            self.samples.popleft()

    def rate(self) -> float | None:
        """Simulated seconds per wall second over the samples, None while they span less than SPAN."""
        if len(self.samples) < 2:
            return None
        (w0, s0), (w1, s1) = self.samples[0], self.samples[-1]
        return (s1 - s0) / (w1 - w0) if w1 - w0 >= self.SPAN else None

    def text(self, realtime: bool) -> str:
        """ "real time", "0.81× real time" (real-time mode) or "3.2× real time" (as fast as possible)."""
        rate = self.rate()
        if rate is not None:
            shown = self.shown
            if realtime and abs(rate - 1.0) <= (self.LEAVE if shown == 1.0 else self.ENTER):
                self.shown = 1.0
            elif shown is None or shown == 1.0 or abs(rate - shown) > self.STEP:
                self.shown = rate
        if self.shown is None:
            return "real time" if realtime else "fast"
        if realtime and self.shown == 1.0:
            return "real time"
        return f"{self.shown:.2f}× real time" if realtime else f"fast: {self.shown:.1f}× real time"


class SimulationWindow(QMainWindow):
    """Shows and drives one Simulation."""

    def __init__(self, simulation: Simulation, *, duration: float | None = None) -> None:
        super().__init__()
        self.simulation = simulation
        self.pacer = Pacer(simulation, realtime=True, until=duration)
        """The wall clock the timer keeps to (real time), or one simulated second a frame (fast); the
        window closes at `duration` simulated seconds."""
        self.paused = False
        self._manual_active = False
        self._frames: deque[float] = deque(maxlen=60)
        self._panels_drawn = 0.0
        self._panel_count = 0
        self.rate_display = RateDisplay()
        self.setWindowTitle(f"{simulation.project.name} — SEAR simulation")
        self._build()
        self._build_menus()
        self.key_router = KeyRouter(self, self)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self.key_router)
        for text in simulation.output_history:  # what init() printed before the window existed
            self.console.tail.add(text)
        self.console.show_pending(now=True)
        simulation.output_listeners.append(self.console.add)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.frame)
        self._restore_layout()
        if simulation.observer is not None:  # `sear run --record`: Record Run unticked finishes it
            self.commands["record_run"].blockSignals(True)
            self.commands["record_run"].setChecked(True)
            self.commands["record_run"].blockSignals(False)

    # --- construction ---------------------------------------------------------------------------------

    def _build(self) -> None:
        sim = self.simulation
        self.view = SimView()
        self.view.setBackgroundColor((176, 200, 224))
        self.scene = Scene(self.view, sim, debug_shapes=sim.project.code.debug_shapes)
        self.cameras = Cameras(self.view, sim.driven_robot, self.draw, ground=sim.world.terrain_height,
                               views=sim.project.views)
        self.hud = Hud(self.view)
        self.picked = QLabel(self.view)
        """What was clicked in the view and its pose (sear.gui.simpick), over the view's bottom left."""
        self.picked.setStyleSheet("background: rgba(255, 255, 255, 225); color: #111; padding: 6px; "
                                  "border: 1px solid #888; border-radius: 4px;")
        self.picked.setVisible(False)
        self.picker = Picker(self.view, sim, self.picked)
        self.help = QLabel(HELP, self.view)
        self.help.setStyleSheet("background: rgba(255, 255, 255, 235); color: #111; padding: 10px; "
                                "border: 1px solid #888; border-radius: 6px;")
        self.help.setVisible(False)
        self.view.setMinimumSize(320, 220)
        self.setCentralWidget(self.view)

        # Docks: plots, a dock per sensor that draws its readings (scans tabbed together), console.
        self.plots = PlotsPanel(sim)
        self.plots_dock = self._dock("Plots", self.plots, Qt.DockWidgetArea.RightDockWidgetArea)
        self.sensor_docks = SensorDocks(self, sim)
        self.console = Console()
        self.console_dock = self._dock("Console", self.console, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.objects = ObjectsPanel(sim, self.picker)
        self.objects.drive = self.drive_robot
        self.objects_dock = self._dock("Objects", self.objects, Qt.DockWidgetArea.BottomDockWidgetArea)
        # Beside the console, under the view: no room taken from the right-hand column, which the plots and
        # the sensors' pictures share (and a collapsed Plots dock leaves to the pictures). Not as a tab: the
        # tab bar QMainWindow makes for tabbed docks keeps its scroll buttons off the screen.
        self.splitDockWidget(self.console_dock, self.objects_dock, Qt.Orientation.Horizontal)
        # The right-hand docks reach down to the status bar; the console lies under the 3-D view only.
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)

        self.capture = ViewCapture(self, self.view, lambda text: self.console.note(text),
                                   lambda: self.simulation.project.name, lambda: self.simulation.world.time)
        """Pictures and films of the 3-D view (File > Save Picture, Record Video)."""
        self._build_toolbar()
        self.status = QLabel()
        self.statusBar().addWidget(self.status, 1)

    def _restore_layout(self) -> None:
        """Open as the window was last closed (size, docks), inside the screen; the first time 1400×880 or
        the screen's size if smaller, with the 3-D view given the largest share: the side docks a third of
        the width, the console an eighth of the height, and below the plots the sensor docks the larger part
        of the side (simdocks.give_pictures_room). A Plots dock with nothing to plot is collapsed."""
        restored = restore_window(self, "simulation", QSize(1400, 880))
        self.plots_collapsed = collapse_empty_plots(self.plots_dock, self.plots)
        if restored:
            return
        side = [d for d in self.findChildren(QDockWidget)
                if self.dockWidgetArea(d) == Qt.DockWidgetArea.RightDockWidgetArea]
        if side:
            self.resizeDocks(side, [max(260, self.width() // 3)] * len(side), Qt.Orientation.Horizontal)
        self.resizeDocks([self.console_dock], [max(70, self.height() // 8)], Qt.Orientation.Vertical)
        if self.sensor_docks.docks:
            give_pictures_room(self, self.sensor_docks.docks[0])

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_toolbar(self) -> None:
        bar = self.addToolBar("Simulation")
        bar.setObjectName("simulation-toolbar")
        self.toolbar = bar
        self.commands: dict[str, QAction] = {}
        """The window's menu and toolbar actions by name (not QWidget.actions(), the list Qt keeps)."""

        def add(key: str, text: str, checkable: bool, slot, shortcut: str | QKeySequence.StandardKey | None = None,
                checked: bool = False, shown_key: str | None = None, tool: str | None = None) -> QAction:
            """An action; `shortcut` a real one, `shown_key` a key the KeyRouter handles, shown in menus
            only; `tool` its text on the toolbar (None: not on the toolbar)."""
            action = QAction(text + (f"\t{shown_key}" if shown_key else ""), self)
            action.setCheckable(checkable)
            action.setChecked(checked)
            if shortcut:
                action.setShortcut(QKeySequence(shortcut))
            (action.toggled if checkable else action.triggered).connect(slot)
            if tool is not None:
                action.setIconText(tool)
                bar.addAction(action)
            else:
                self.addAction(action)  # its shortcut works in this window without a toolbar button
            self.commands[key] = action
            return action

        add("start", "Start User Code", False, lambda: self.start_user_code(), shown_key="Space",
            tool="Start user code (Space)")
        add("reset", "Reset Robot", False, lambda: self.reset(), shown_key="Enter", tool="Reset (Enter)")
        bar.addSeparator()
        add("pause", "Pause", True, self.set_paused, "P", tool="Pause")
        add("step", "Single Step", False, lambda: self.single_step(), "N", tool="Step")
        add("realtime", "Real Time", True, self.set_realtime, "Ctrl+T", checked=True, tool="Real time")
        bar.addSeparator()
        add("rays", "Sensor Rays", True, self.set_rays_visible, "R", tool="Sensor rays")
        if self.scene.cloud_items:
            add("cloud", "Point Cloud", True, self.set_cloud_visible, checked=True, tool="Point cloud")
        add("debug", "Physics Shapes", True, self.scene.set_debug_shapes, "Ctrl+D",
            checked=self.simulation.project.code.debug_shapes, tool="Physics shapes")
        add("record", "Record Log…", True, self.set_recording, "Ctrl+L", tool="Record log…")
        # In the File menu only: two more toolbar buttons would push the Camera box off a 1280-pixel-wide window.
        add("record_run", "Record Run…", True, self.set_recording_run, "Ctrl+R")
        add("film", "Record Video…", True, self.set_filming, "Ctrl+Shift+R")
        add("picture", "Save Picture of the View", False, lambda: self.capture.save_picture(), "F12")
        add("picture_as", "Save Picture As…", False, lambda: self.capture.save_picture(ask=True), "Shift+F12")
        add("help", "Keyboard Shortcuts", True, self.show_key_help, "F1", tool="Help (F1)")
        add("close", "Close Window", False, lambda: self.close(), QKeySequence.StandardKey.Close)
        add("quit", "Quit", False, quit_application, QKeySequence.StandardKey.Quit)
        add("copy", "Copy", False, lambda: self.copy_text(), QKeySequence.StandardKey.Copy)
        add("copy_readout", "Copy Sensor Readout", False, lambda: self.copy_readout(), "Ctrl+Shift+C")
        add("view_focus", "Back to the 3-D View", False, lambda: self.view.setFocus(), shown_key="Esc")
        add("reset_view", "Reset View", False, lambda: self.cameras.reset_view(), "Home", tool="Reset view")
        add("save_view", "Save View As…", False, lambda: self.save_view())
        bar.addSeparator()
        bar.addWidget(QLabel(" Camera: "))
        bar.addWidget(self.cameras.box)

    def _build_menus(self) -> None:
        """File, Edit, View, Simulation and Help, with every action's key shown."""
        c = self.commands
        menus = self.menuBar()
        file = menus.addMenu("&File")
        file.addAction(c["record_run"])
        file.addAction(c["record"])
        file.addAction(c["film"])
        file.addAction(c["picture"])
        file.addAction(c["picture_as"])
        file.addSeparator()
        file.addAction(c["close"])
        file.addAction(c["quit"])
        edit = menus.addMenu("&Edit")
        edit.addAction(c["copy"])
        edit.addAction(c["copy_readout"])
        view = menus.addMenu("&View")
        self.cameras.fill_menu(view.addMenu("&Camera"))
        view.addAction(c["reset_view"])
        view.addAction(c["save_view"])
        view.addAction(c["view_focus"])
        view.addSeparator()
        view.addAction(c["rays"])
        view.addAction(c["debug"])
        view.addSeparator()
        for dock in self.findChildren(QDockWidget):
            view.addAction(dock.toggleViewAction())
        toolbar = self.toolbar.toggleViewAction()
        toolbar.setText("Toolbar")
        view.addAction(toolbar)
        simulation = menus.addMenu("&Simulation")
        for key in ("start", "reset", None, "pause", "step", "realtime"):
            if key is None:
                simulation.addSeparator()
            else:
                simulation.addAction(c[key])
        # Help: the keys (F1 here, as the status bar says), then the user guide at this window's page and
        # About, as in every window (sear.gui.help).
        c.update(add_help_menu(self, guide_shortcut=False, page="simulation-window.md"))
        help_menu = menus.actions()[-1].menu()  # the menu add_help_menu added last
        assert isinstance(help_menu, QMenu)
        self.help_menu = help_menu
        first = help_menu.actions()[0]
        self.help_menu.insertAction(first, c["help"])
        self.help_menu.insertSeparator(first)

    # --- controls ------------------------------------------------------------------------------------------

    def show_key_help(self, on: bool) -> None:
        """The keys' help over the 3-D view's top right corner (clear of the HUD), or hidden."""
        self.help.setVisible(on)
        if on:
            self.help.adjustSize()
            self.help.move(max(0, self.view.width() - self.help.width() - 12), 12)

    def save_view(self, name: str | None = None) -> None:
        """View > Save View As...: the camera as it is now, under a name asked for (or `name`), into the
        project file, so this and every later run's Camera box lists it as "View: NAME"."""
        if name is None:
            name, ok = QInputDialog.getText(self, "Save View", "A name for this view:",
                                            text=f"view {len(self.cameras.views) + 1}")
            if not ok:
                return
        name = name.strip()
        path = self.simulation.project.path
        if not name or path is None:
            self.console.note("View not saved: " + ("it needs a name.\n" if not name else
                                                    "the project has no file to keep it in.\n"))
            return
        try:
            views = save_camera_view(path, self.cameras.saved_view(name))
        except ProjectError as exc:
            self.console.note(f"View not saved: {exc}\n")
            return
        self.simulation.project.views = views
        self.cameras.set_views(views, choose=name)
        self.console.note(f"View \u201c{name}\u201d saved in {path.name}\n")

    def copy_text(self) -> None:
        """Edit > Copy: the console's selected text."""
        if self.console.textCursor().hasSelection():
            self.console.copy()

    def copy_readout(self) -> None:
        """Edit > Copy Sensor Readout: the HUD's text (time, speed, every sensor's reading)."""
        self._update_hud()
        clipboard = QApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.hud.text())

    def start_user_code(self) -> None:
        """Space: start the user code, or restart it in a fresh process once it failed or finished."""
        if self.simulation.can_restart:
            self.simulation.restart_user_code()
        else:
            self.simulation.start_user_code()
        self.console.show_pending(now=True)  # what init printed, or why it could not start, shown with the key
        if self.cameras.mode == "free":
            self.cameras.choose("follow")

    def reset(self) -> None:
        self.simulation.reset()
        self.draw()

    def next_robot(self) -> None:
        """Tab: the keys drive the next robot; the camera, the HUD and the sensor docks follow it (the robot
        left lets go of the keys' pedals; its user code keeps driving it)."""
        self.drive_robot((self.simulation.driven + 1) % len(self.simulation.robots))

    def drive_robot(self, index: int) -> None:
        """The keys drive robot `index` and the camera, the HUD and the sensor docks follow it (Tab, or a
        double click on the robot in the Objects dock); the robot left lets go of the keys' pedals."""
        if self._manual_active:
            self.simulation.set_manual_input(0.0, 0.0, False)
            self._manual_active = False
        run = self.simulation.choose_robot(index)
        self.objects.show_driven()
        self.cameras.drive(run)
        self.sensor_docks.drive(run)
        self.draw()
        self._update_status()
        self._update_hud()
        self.refresh_docks()

    @property
    def realtime(self) -> bool:
        """Whether the simulation keeps to the wall clock (else it runs as fast as frames allow)."""
        return self.pacer.realtime

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pacer.restart()
        self.rate_display.clear()

    def set_realtime(self, on: bool) -> None:
        self.pacer.realtime = on
        self.pacer.restart()
        self.rate_display.clear()

    def single_step(self) -> None:
        if not self.commands["pause"].isChecked():
            self.commands["pause"].setChecked(True)
        self._advance_ticks(1)
        self.draw()

    def set_rays_visible(self, on: bool) -> None:
        self.scene.rays_item.setVisible(on)
        self.draw()

    def set_cloud_visible(self, on: bool) -> None:
        """Show or hide the point clouds of the multi-layer LIDARs."""
        self.scene.set_clouds_visible(on)
        self.draw()

    def set_recording(self, on: bool, path: str | Path | None = None) -> None:
        if on:
            if path is None:
                start = self.simulation.project.path.parent if self.simulation.project.path else Path.cwd()
                chosen, _ = QFileDialog.getSaveFileName(self, "Record a log", str(start / "record.csv"),
                                                        "CSV logs (*.csv)")
                if not chosen:
                    self.commands["record"].blockSignals(True)
                    self.commands["record"].setChecked(False)
                    self.commands["record"].blockSignals(False)
                    return
                path = chosen
            try:
                self.simulation.start_log(path)  # the dialog asked before replacing a file
            except ProjectError as exc:  # one of the project's own files, a folder, not writable
                self.console.note(f"Not recording: {exc}\n")
                self.commands["record"].blockSignals(True)
                self.commands["record"].setChecked(False)
                self.commands["record"].blockSignals(False)
                return
            self.console.note(f"Recording to {path}\n")
        else:
            written = self.simulation.stop_log()
            if written is not None:
                self.console.note(f"Log written to {written}\n")

    def set_recording_run(self, on: bool, path: str | Path | None = None) -> None:
        """File > Record Run (Ctrl+R): record the run from now into an MCAP file (sear.recording.writer: poses,
        every sensor sample, the log rows, prints, inputs and the project itself, for `sear replay`), or
        finish the recording. Started after t = 0 it replays from then on; it re-simulates (Continue from
        here) when the run kept a journal of its inputs (Simulation(journal=True), as `sear run` opens the
        window)."""
        from sear.recording.writer import Recorder, check_record_path

        sim = self.simulation
        if not on:
            recorder = sim.observer
            if recorder is not None:
                sim.observer = None
                recorder.closed(sim)
                if isinstance(recorder, Recorder):
                    self.console.note(f"Recording written to {recorder.path} (t = {sim.world.time:.2f} s; "
                                      f"open it with File > Open Recording or `sear replay`)\n")
            return
        if sim.observer is not None:
            return
        if path is None:
            start = sim.project.path.parent if sim.project.path else Path.cwd()
            chosen, _ = QFileDialog.getSaveFileName(self, "Record the run", str(start / "run.mcap"),
                                                    "MCAP recordings (*.mcap)")
            if not chosen:
                self._untick("record_run")
                return
            path = chosen if chosen.lower().endswith(".mcap") else chosen + ".mcap"
        try:
            recorder = Recorder(check_record_path(path, sim.project, force=True))  # the dialog asked to replace
            sim.observer = recorder
            recorder.started(sim)
        except (ProjectError, OSError) as exc:
            sim.observer = None
            self.console.note(f"Not recording: {exc}\n")
            self._untick("record_run")
            return
        later = "" if sim.steps == 0 or sim.journal is not None else (
            " (from the middle of a run that kept no journal of its inputs: it replays, but cannot be re-simulated)")
        self.console.note(f"Recording the run to {path} from t = {sim.world.time:.2f} s{later}\n")

    def _untick(self, key: str) -> None:
        action = self.commands[key]
        action.blockSignals(True)
        action.setChecked(False)
        action.blockSignals(False)

    def set_filming(self, on: bool, path: str | Path | None = None) -> None:
        """File > Record Video: film the 3-D view into an MP4 (a file dialog unless `path`), or finish it."""
        if on:
            if not self.capture.start_film(path):
                self.commands["film"].blockSignals(True)
                self.commands["film"].setChecked(False)
                self.commands["film"].blockSignals(False)
        else:
            self.capture.stop_film()
        self._update_status()

    # --- stepping --------------------------------------------------------------------------------------------

    def _before_tick(self) -> None:
        """Each tick's inputs: the held keys (the mouse's pull on a body the simulation puts on itself)."""
        self._drive_input()

    def _drive_input(self) -> None:
        held = {DRIVE_KEYS[k] for k in self.view.held if k in DRIVE_KEYS}
        if held:
            throttle = (1.0 if "forward" in held else 0.0) - (1.0 if "back" in held else 0.0)
            steer = (1.0 if "left" in held else 0.0) - (1.0 if "right" in held else 0.0)
            self.simulation.set_manual_input(throttle, steer, "brake" in held)
            self._manual_active = True
        elif self._manual_active:
            self.simulation.set_manual_input(0.0, 0.0, False)  # keys released: let go of the pedals
            self._manual_active = False

    def _advance_ticks(self, count: int, budget: float | None = None) -> None:
        """Run `count` ticks with the held keys, or fewer if `budget` wall seconds run out first."""
        self.simulation.advance(count, budget=budget, before_tick=self._before_tick, after_tick=self._ticked)

    def _ticked(self, result: TickResult) -> None:
        if result.control:
            self.plots.record()

    def advance(self, seconds: float) -> None:
        """Simulate `seconds` with the keys as they are now held (what the timer does, minus the clock)."""
        self._advance_ticks(round(seconds * self.simulation.physics_hz))
        self.pacer.restart()  # the real-time clock and factor count from here, not across this jump
        self.rate_display.clear()
        self.draw()
        self.console.show_pending(now=True)

    def frame(self) -> None:
        """Timer tick: advance the simulation as the clock says (stopping exactly at `duration`), then
        draw one frame."""
        if not self.paused:
            self._advance_ticks(self.pacer.due(), TICK_BUDGET[self.realtime])
        self.cameras.move_by_keys([CAMERA_KEYS[k] for k in self.view.held if k in CAMERA_KEYS])
        self.draw()
        self.console.show_pending()
        now = time.perf_counter()
        self._frames.append(now)
        if not self.paused:
            self.rate_display.add(now, self.simulation.world.time)
        if self.pacer.finished:
            self.close()

    # --- drawing ---------------------------------------------------------------------------------------------

    def draw(self) -> None:
        self.scene.draw(self.simulation.driven_robot)
        self.cameras.place()
        self.picker.refresh(text=False)
        # Text and plots change slowly to the eye and are costly to repaint (every widget over an
        # OpenGL view is recomposited in software): refresh them at about 4 Hz of wall time.
        # The docks (the costliest to repaint) on every other of those refreshes, the frames between
        # the text's, so that no frame pays for all of them.
        now = time.perf_counter()
        forced = self.paused or not self.timer.isActive()
        if now - self._panels_drawn >= PANEL_PERIOD or forced:
            self._panels_drawn = now
            self._panel_count += 1
            if self._panel_count % 2 or forced:
                self._update_hud()
                self._update_status()
            if not self._panel_count % 2 or forced:
                self.refresh_docks()
        self.capture.frame_drawn()

    def refresh_docks(self) -> None:
        """The plots, the sensor docks and the grids, from the latest readings."""
        self.plots.refresh()
        self.sensor_docks.refresh()
        if self.objects_dock.isVisible():
            self.objects.refresh()

    def _update_hud(self) -> None:
        self.hud.show_robot(self.simulation)
        self.picker.refresh()
        if self.help.isVisible():
            self.help.adjustSize()
            self.help.move(self.view.width() - self.help.width() - 12, 12)

    def _update_status(self) -> None:
        sim = self.simulation
        if sim.user_error is not None:
            why = "did not return in time" if sim.stuck else "stopped by an error"
            again = ": Space restarts it" if sim.can_restart else ""
            code = f"user code {why} (see the console){again}; you can still drive"
        elif sim.user_code_running:
            code = "user code running"
        elif all(run.runner is None for run in sim.robots):
            code = "no user code"
        elif sim.user_started:
            code = "user code finished: Space restarts it" if sim.can_restart else "user code finished"
        else:
            code = "user code not started: press Space"
        fps = 0.0
        if len(self._frames) > 1:
            fps = (len(self._frames) - 1) / max(self._frames[-1] - self._frames[0], 1e-9)
        speed = "paused" if self.paused else self.rate_display.text(self.realtime)
        robot = f"driving {sim.driven_robot.name} (Tab: next of {len(sim.robots)} robots)   |   " \
            if len(sim.robots) > 1 else ""
        recording = "● recording the run   |   " if sim.observer is not None else ""
        self.status.setText(f"{recording}{self.capture.status()}{robot}{code}   |   t = {sim.world.time:7.2f} s   |   "
                            f"{speed}   |   {fps:4.1f} frames/s   |   F1: keys")

    # --- life cycle -------------------------------------------------------------------------------------------

    def start(self) -> None:
        self.pacer.restart()
        self.timer.start(15)
        self.view.setFocus()
        self.cameras.look_at_robot()
        self.draw()

    def closeEvent(self, event) -> None:
        self.timer.stop()
        if self.capture.film is not None:
            self.commands["film"].setChecked(False)  # the film finished and its file closed
        if self.commands["record_run"].isChecked():
            self.commands["record_run"].setChecked(False)  # the recording's last chunk and index written
        self.view.held.clear()
        if self.plots_collapsed:  # collapsed for this run only: saved as the user had it
            self.plots_dock.show()
        save_window(self, "simulation")
        event.accept()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.ActivationChange and not self.isActiveWindow():
            self.view.held.clear()  # keys released in another window never reach this one
        super().changeEvent(event)


def quit_application() -> None:
    """File > Quit (Ctrl+Q): close every window (each may still say no), which ends the application with
    status 0 once the last one has closed."""
    QApplication.closeAllWindows()


def run_window(simulation: Simulation, *, duration: float | None = None,
               progress: StartupProgress | None = None) -> int:
    """Show the simulation window until it is closed (or `duration` simulated seconds pass); returns 0.
    `progress`: the start-up window (sear.gui.startup), closed once this window has drawn its first frame.

    A user code error (a hook stuck past its time-out, a crash of its process) is shown in the console
    while the window keeps running; Space restarts the user code. The caller closes the simulation."""
    from sear.gui.app import configure_qt, set_window_icon

    configure_qt()
    app = QApplication.instance() or QApplication([])
    set_window_icon()
    if progress is not None:
        progress.stage("Opening the simulation window")
    window = SimulationWindow(simulation, duration=duration)
    window.show()
    window.start()
    if progress is not None:
        window.view.first_frame = progress.finish
    stopped: list[int] = []

    def stop(signum: int, frame: object) -> None:  # runs in whatever Python code is under way (a frame)
        stopped.append(signum)
        # Closed from the event loop once that code has returned, as when the user closes it.
        QTimer.singleShot(0, window.close)

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        app.exec()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return exitcodes.for_signal(stopped[0]) if stopped else exitcodes.OK
