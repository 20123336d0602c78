"""The Project Settings window: the first window a user sees (SPEC §1).

The window edits a `Project` (sear.project) and nothing else. Its tabs (one module each in this package)
write their fields of the model when an editor changes and tell the window, which records the change as
one step of the undo history (Edit > Undo/Redo write one back and refresh every tab). The project, its
undo history, its unsaved state and its file (new, open, save, recent files, changes by other programs)
are project_window.py's; this module builds the widgets on it: the project's name, the robot row
(robot_list.py), the tabs, the menus and toolbar, Simulate and Stop (simulation_process.py runs the
process and its console), and the Problems panel. Files are read and written only through the model's
load/save and the validation module; simulations run as a separate process.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QStyle,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from sear.errors import Problem
from sear.gui.geometry import restore_window, save_window, scrolling
from sear.gui.settings.body_tab import BodyTab
from sear.gui.settings.code_tab import CodeTab
from sear.gui.settings.dynamics_tab import DynamicsTab
from sear.gui.settings.project_window import ProjectWindow
from sear.gui.settings.robot_list import RobotList
from sear.gui.settings.simulation_process import SimulationProcess
from sear.gui.settings.tab import SettingsTab
from sear.gui.settings.terrain_tab import TerrainTab
from sear.gui.settings.wheels_tab import WheelsTab
from sear.gui.settings.world_tab import WorldTab
from sear.gui.widgets import NumberField, WindowUndoKeys, wrap_tooltips
from sear.project import Project


class SettingsWindow(ProjectWindow):
    """Edits one project; Simulate runs it in its own process and shows its output."""

    def __init__(self, project: Project | None = None) -> None:
        super().__init__(project)
        self._build()
        restore_window(self, "settings", QSize(1100, 720))
        self.refresh()
        self._watch()

    # --- the project, its changes and their undo ------------------------------------------------------------

    def _restore(self, state: dict) -> None:
        """Undo/Redo: put a snapshot back into the project and its widgets, and show the tab it changed."""
        changed = [name for name, value in state.items() if getattr(self.project, name) != value]
        for name, value in state.items():
            setattr(self.project, name, value)
        self.refresh()
        if len(changed) == 1:
            for index, tab in enumerate(self.tab_pages):
                if changed[0] in tab.SECTIONS:
                    self.tabs.setCurrentIndex(index)
                    break

    # --- construction ------------------------------------------------------------------------------------

    def _build(self) -> None:
        self.terrain_tab = TerrainTab(self)
        self.body_tab = BodyTab(self)
        self.wheels_tab = WheelsTab(self, self.body_tab.show_robot)
        self.dynamics_tab = DynamicsTab(self)
        self.code_tab = CodeTab(self)
        self.world_tab = WorldTab(self)
        self.tab_pages: list[SettingsTab] = [self.terrain_tab, self.body_tab, self.wheels_tab, self.dynamics_tab,
                                             self.code_tab, self.world_tab]
        self.tabs = QTabWidget()
        for tab in self.tab_pages:
            # Each page scrolls when the window is smaller than its form (laptop screens, large scale factors).
            self.tabs.addTab(scrolling(tab), tab.TITLE)
            tab.edited.connect(self._tab_edited)
            tab.message.connect(self.statusBar().showMessage)
        self.tabs.currentChanged.connect(self._tab_changed)

        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("a name for this project")
        self.name_edit.setToolTip("The project's name, shown in the title bar and stored in the .prj file.")
        self.name_edit.setMaximumWidth(360)
        self.name_edit.editingFinished.connect(self._name_edited)
        self.path_label = QLabel()
        self.path_label.setStyleSheet("color: #555;")
        name_row = QHBoxLayout()
        name_row.addWidget(QLabel("Project name:"))
        name_row.addWidget(self.name_edit, 1)
        name_row.addSpacing(12)
        name_row.addWidget(self.path_label, 2)
        self.robots = RobotList(self, lambda: self.robot_index)
        self.robots.chosen.connect(self._robot_chosen)
        self.robots.edited.connect(self._robots_edited)
        self.robots.message.connect(self.statusBar().showMessage)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(name_row)
        layout.addWidget(self.robots)
        layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self.sim_process = SimulationProcess(self)
        self.sim_process.running.connect(self._set_running)
        self.sim_process.status.connect(self.statusBar().showMessage)
        self.console = self.sim_process.console
        dock = QDockWidget("Console", self)
        dock.setObjectName("console")
        dock.setWidget(self.console)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        self.resizeDocks([dock], [90], Qt.Orientation.Vertical)  # an empty console: a strip, the form the rest

        self.problems: list[Problem] = []
        self.problem_list = QListWidget()
        self.problem_list.setWordWrap(True)
        self.problem_list.setToolTip("Click a problem to go to its field.")
        self.problem_list.itemClicked.connect(self._problem_chosen)
        self.problem_list.itemActivated.connect(self._problem_chosen)
        self.problem_dock = QDockWidget("Problems", self)
        self.problem_dock.setObjectName("problems")
        self.problem_dock.setWidget(self.problem_list)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.problem_dock)
        self.problem_dock.hide()
        self._build_menus()
        self._build_edit_view_help_menus()
        self._update_recent_menu()
        for number in self.findChildren(NumberField):
            number.refused.connect(lambda message: self.statusBar().showMessage(message, 8000))
        self._undo_keys = WindowUndoKeys(self)
        self._undo_keys.watch(self)
        wrap_tooltips(self)
        self.statusBar().showMessage("Ready")

    def _build_menus(self) -> None:
        icon = self.style().standardIcon
        sp = QStyle.StandardPixmap
        menu = self.menuBar().addMenu("&File")
        toolbar = self.addToolBar("File")
        toolbar.setObjectName("file-toolbar")
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.commands: dict[str, QAction] = {}
        """The window's menu and toolbar actions by name (not QWidget.actions(), the list Qt keeps)."""
        slot: Callable[[], object]
        for key, text, shortcut, pixmap, slot in (
            ("new", "&New", QKeySequence.StandardKey.New, sp.SP_FileIcon, self.new_project),
            ("open", "&Open…", QKeySequence.StandardKey.Open, sp.SP_DialogOpenButton, lambda: self.open_project()),
            ("save", "&Save", QKeySequence.StandardKey.Save, sp.SP_DialogSaveButton, self.save),
            ("save_as", "Save &As…", QKeySequence.StandardKey.SaveAs, sp.SP_DriveHDIcon, self.save_as),
        ):
            action = QAction(icon(pixmap), text, self)
            action.setShortcut(shortcut)
            action.setToolTip(f"{text.replace('&', '').rstrip('…')} ({action.shortcut().toString()})")
            action.triggered.connect(slot)
            menu.addAction(action)
            toolbar.addAction(action)
            self.commands[key] = action
            if key == "open":
                self.recent_menu = menu.addMenu("Open &Recent")
                demo = menu.addAction("Open &Demo…")
                demo.setToolTip("Copy the demo project into a folder you choose and open the copy")
                demo.triggered.connect(lambda: self.open_demo())
                self.commands["open_demo"] = demo
                replay = menu.addAction("Open Re&cording…")
                replay.setToolTip("Replay a recorded run (sear run --record, or Record Run in the simulation "
                                  "window) in the replay window")
                replay.triggered.connect(lambda: self.open_recording())
                self.commands["open_recording"] = replay
        menu.addSeparator()
        quit_action = QAction(icon(sp.SP_DialogCloseButton), "&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        menu.addAction(quit_action)
        self.commands["quit"] = quit_action

        run_menu = self.run_menu = self.menuBar().addMenu("&Simulation")
        toolbar.addSeparator()
        for key, text, keys, pixmap, slot in (
            ("simulate", "Simulate", "F5", sp.SP_MediaPlay, self.simulate),
            ("stop", "Stop", "Shift+F5", sp.SP_MediaStop, self.stop),
            ("wizard", "Sensor Wizard…", "F7", sp.SP_FileDialogDetailedView, self.code_tab.open_wizard),
        ):
            action = QAction(icon(pixmap), text, self)
            action.setShortcut(QKeySequence(keys))
            action.setToolTip(f"{text.rstrip('…')} ({keys})")
            action.triggered.connect(slot)
            run_menu.addAction(action)
            toolbar.addAction(action)
            self.commands[key] = action
        self.commands["stop"].setEnabled(False)
        # The toolbar is the window's one row of buttons (the actions' buttons, named for scripts and tests).
        self.simulate_button, self.stop_button, self.wizard_button, self.save_button, self.load_button = (
            toolbar.widgetForAction(self.commands[key]) for key in ("simulate", "stop", "wizard", "save", "open"))

    def _build_edit_view_help_menus(self) -> None:
        """Edit (Undo/Redo of every edit, Reset Defaults), View (tabs, panels) and Help menus."""
        edit = self.menuBar().addMenu("&Edit")
        undo = self.history.action(self, "&Undo", self.commit_typing)
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.history.action(self, "&Redo", self.commit_typing, redo=True)
        redo.setShortcuts([QKeySequence(QKeySequence.StandardKey.Redo), QKeySequence("Ctrl+Y")])
        icon = self.style().standardIcon
        undo.setIcon(icon(QStyle.StandardPixmap.SP_ArrowBack))
        redo.setIcon(icon(QStyle.StandardPixmap.SP_ArrowForward))
        edit.addAction(undo)
        edit.addAction(redo)
        edit.addSeparator()
        reset = QAction(f"Reset {self.dynamics_tab.TITLE} to Defaults…", self)
        reset.triggered.connect(self.dynamics_tab.reset_defaults)
        edit.addAction(reset)
        self.commands.update(undo=undo, redo=redo, reset_dynamics=reset)

        view = self.menuBar().addMenu("&View")
        for index in range(self.tabs.count()):
            action = QAction(self.tabs.tabText(index), self)
            action.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
            action.triggered.connect(lambda _=False, i=index: self.tabs.setCurrentIndex(i))
            view.addAction(action)
            self.commands[f"tab{index + 1}"] = action
        view.addSeparator()
        for dock in self.findChildren(QDockWidget):
            view.addAction(dock.toggleViewAction())
        for toolbar in self.findChildren(QToolBar):
            toggle = toolbar.toggleViewAction()
            toggle.setText("Toolbar")
            view.addAction(toggle)

        # before Simulation in the bar: File, Edit, View, Simulation, Help
        self.menuBar().insertMenu(self.run_menu.menuAction(), edit)
        self.menuBar().insertMenu(self.run_menu.menuAction(), view)
        from sear.gui import help as help_

        self.commands.update(help_.add_help_menu(self))

    def _set_running(self, running: bool) -> None:
        """Enable Simulate or Stop (menu, toolbar) as a run starts or ends."""
        self.commands["simulate"].setEnabled(not running)
        self.commands["stop"].setEnabled(running)

    # --- model <-> widgets -------------------------------------------------------------------------------

    def _tab_edited(self, what: str, preview: bool) -> None:
        """A tab changed the project: one undo step; every tab's editors enabled as the fields now say."""
        self._mark_dirty(what)
        self._update_enabled()
        if preview:
            self._update_previews()

    def _tab_changed(self, _index: int) -> None:
        """Another tab shown: the value typed on the tab left is taken (if the focus is still there), and
        the new tab's preview drawn."""
        self.commit_typing()
        self._update_previews()

    def _robot_chosen(self, index: int) -> None:
        self.commit_typing()  # a value typed for the robot shown is that robot's, not the next one's
        self.robot_index = index
        self.refresh()

    def _robots_edited(self, what: str, index: int) -> None:
        """The robot list changed: one undo step, and the robot `index` chosen."""
        self.robot_index = index
        self._mark_dirty(what)
        self.refresh()

    def _name_edited(self) -> None:
        name = self.name_edit.text().strip()
        if not name:  # a project always has a name: an emptied field goes back to the current one
            self.name_edit.setText(self.project.name)
        elif name != self.project.name:
            self.project.name = name
            self._mark_dirty("Project name")

    def _show_project(self, project: Project, message: str) -> None:
        """Another project (new, opened, the demo) shows without the console output and problems of the one
        before; the same file reloaded keeps them, as does a run still going (its output keeps coming)."""
        another = project.path != self.project.path
        super()._show_project(project, message)
        if another:
            self.show_problems([])
            if not self.sim_process.is_running():
                self.console.clear()

    def refresh(self) -> None:
        """Write every field of the model into its widget (without marking the project changed)."""
        pr = self.project
        self.robot_index = min(self.robot_index, len(pr.robots) - 1)  # a robot removed by undo or reload
        self.robots.refresh()
        self.name_edit.setText(pr.name)
        self.path_label.setText(f"Saved as {pr.path.name} in folder {pr.path.parent.name}" if pr.path
                                else "Not saved yet")
        self.path_label.setToolTip(str(pr.path) if pr.path else "")
        for tab in self.tab_pages:
            tab.refresh()
        self._update_enabled()
        self._update_title()
        self._update_previews()

    def _update_enabled(self) -> None:
        for tab in self.tab_pages:
            tab.update_enabled()

    def _update_previews(self) -> None:
        """Draw the current tab's preview anew."""
        self.tab_pages[self.tabs.currentIndex()].update_preview()

    # --- simulate, and the problems that keep a project from it ------------------------------------------------

    def simulate(self) -> bool:
        """Save, check, and start `sear run PROJECT.prj` as a separate process."""
        from sear.loading import load_project

        self.commit_typing()
        if self.sim_process.is_running():
            QMessageBox.information(self, "Already simulating", "A simulation is running; stop it first.")
            return False
        self._check_disk()
        if (self.dirty or self.project.path is None) and not self.save():
            return False
        path = self.project.path
        assert path is not None  # saved just above
        problems = load_project(self.project).problems
        self.show_problems(problems)
        if problems:
            QMessageBox.warning(self, "The project cannot be simulated yet",
                                f"{len(problems)} problem(s) to fix first (click one in the Problems list to go "
                                "to its field):\n\n" + "\n\n".join(str(p) for p in problems))
            return False
        self.sim_process.start(path)
        return True

    def open_recording(self, path: str | Path | None = None) -> bool:
        """File > Open Recording: `sear replay FILE.mcap` as a separate process (as Simulate runs `sear run`);
        the recording holds its own project, so the one open here is neither needed nor changed."""
        if self.sim_process.is_running():
            QMessageBox.information(self, "Already simulating", "A simulation is running; stop it first.")
            return False
        if path is None:
            start = str(self.project.path.parent) if self.project.path is not None else str(Path.home())
            chosen, _ = QFileDialog.getOpenFileName(self, "Open a recording", start, "MCAP recordings (*.mcap)")
            if not chosen:
                return False
            path = chosen
        self.sim_process.start(Path(path), command="replay")
        return True

    def show_problems(self, problems: list[Problem]) -> None:
        """List `problems` in the Problems panel (shown while there are any)."""
        self.problems = list(problems)
        self.problem_list.clear()
        for index, problem in enumerate(self.problems):
            item = QListWidgetItem(str(problem))
            item.setData(Qt.ItemDataRole.UserRole, index)
            self.problem_list.addItem(item)
        self.problem_dock.setVisible(bool(self.problems))

    def _problem_chosen(self, item: QListWidgetItem) -> None:
        self.focus_problem(self.problems[item.data(Qt.ItemDataRole.UserRole)])

    def field_widget(self, field: str | None) -> QWidget | None:
        """The widget that edits a dotted project field ('dynamics.mass', 'wheels.left_front.file'), or
        None for a field the window does not show."""
        if not field:
            return None
        return next((w for tab in self.tab_pages if (w := tab.field_widget(field)) is not None), None)

    def focus_problem(self, problem: Problem) -> None:
        """Go to the field `problem` names: make its tab current and give its widget the focus."""
        widget = self.field_widget(problem.field)
        for index, tab in enumerate(self.tab_pages):
            if (widget is not None and tab.isAncestorOf(widget)) or (widget is None and problem.tab == tab.TITLE):
                self.tabs.setCurrentIndex(index)
                if widget is not None:
                    tab.reveal(widget)
                break
        if widget is not None:
            widget.setFocus(Qt.FocusReason.OtherFocusReason)
        self.statusBar().showMessage(str(problem), 10000)

    def stop(self, *, wait: bool = False) -> None:
        """End the running simulation (SimulationProcess.stop)."""
        self.sim_process.stop(wait=wait)

    def closeEvent(self, event) -> None:
        if not self.sim_process.confirm_stop() or not self._confirm_discard():
            event.ignore()
            return
        self.stop(wait=True)
        save_window(self, "settings")
        event.accept()
