"""The Project Settings window: the first window a user sees (SPEC §1).

The window edits a `Project` (sear.project) and nothing else. Its tabs (one module each in this package)
write their fields of the model when an editor changes and tell the window, which records the change as
one step of the undo history (`history`: snapshots of the project compared after each edit; Edit >
Undo/Redo write one back and refresh every tab); the history's clean step is the saved project (the
title's *). The window holds what is not one tab's: the project's name, the robot list (robot_list.py),
the menus (menus.py), the file operations (new, open, save, recent files, watching the file for changes
by other programs), Simulate and Stop (simulation_process.py runs the process and its console), and the
Problems panel. Files are read and written only through the model's load/save and the validation
module; simulations run as a separate process.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import fields
from pathlib import Path

from PySide6.QtCore import QEvent, QFileSystemWatcher, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QMessageBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sear.errors import Problem, SearError
from sear.gui.geometry import restore_window, save_window, scrolling
from sear.gui.settings.body_tab import BodyTab
from sear.gui.settings.code_tab import CodeTab
from sear.gui.settings.dynamics_tab import DynamicsTab
from sear.gui.settings.menus import build_menus
from sear.gui.settings.robot_list import RobotList
from sear.gui.settings.simulation_process import SimulationProcess
from sear.gui.settings.tab import SettingsTab
from sear.gui.settings.terrain_tab import TerrainTab
from sear.gui.settings.wheels_tab import WheelsTab
from sear.gui.widgets import NumberField, UndoHistory, WindowUndoKeys, wrap_tooltips
from sear.project import Project, Robot
from sear.resources import copy_demo

PRJ_FILTER = "SEAR projects (*.prj);;All files (*)"
MAX_RECENT = 8


class SettingsWindow(QMainWindow):
    """Edits one project; Simulate runs it in its own process and shows its output."""

    # Made by menus.build_menus:
    commands: dict[str, QAction]
    """The window's menu and toolbar actions by name (not QWidget.actions(), the list Qt keeps)."""
    recent_menu: QMenu
    run_menu: QMenu
    simulate_button: QWidget
    stop_button: QWidget
    wizard_button: QWidget
    save_button: QWidget
    load_button: QWidget

    def __init__(self, project: Project | None = None) -> None:
        super().__init__()
        self._project = project or Project()
        self.robot_index = 0
        """Which of the project's robots the robot tabs edit (Project.robots' order)."""
        self.history = UndoHistory(self._snapshot, self._restore, self)
        """Undo/Redo of every edit of the project; its clean state is the saved project."""
        self.history.cleanChanged.connect(self._clean_changed)
        self._dirty = False
        self.settings = QSettings("SEAR", "SEAR")
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(lambda _path: QTimer.singleShot(300, self, self._check_disk))
        self._on_disk: str | None = None
        """Hash of the project file as this window last read or wrote it; None when there is none."""
        self._checking_disk = False
        self._build()
        restore_window(self, "settings", QSize(1100, 720))
        self.refresh()
        self._watch()

    # --- the project, its changes and their undo ------------------------------------------------------------

    @property
    def project(self) -> Project:
        """The project edited; another project put here (opened, new, reloaded) starts a new undo history."""
        return self._project

    @project.setter
    def project(self, project: Project) -> None:
        self._project = project
        self.robot_index = 0
        self.history.reset()

    @property
    def robot(self) -> Robot:
        """The robot the Robot Body, Wheel Models, Vehicle Dynamics and Code Setup tabs edit (chosen in the
        robot list; a one-robot project's only robot). Its parts are the project's own, not copies."""
        robots = self.project.robots
        self.robot_index = min(self.robot_index, len(robots) - 1)
        return robots[self.robot_index]

    @property
    def dirty(self) -> bool:
        """True while the project has changes not saved: the undo history is away from its saved step (or
        a change was marked that is not an edit of the project's fields)."""
        return self._dirty or not self.history.isClean()

    @dirty.setter
    def dirty(self, value: bool) -> None:
        self._dirty = value
        if not value:  # saved (or given up): this step is the saved one
            self.history.sync()
            self.history.setClean()
        self._update_title()

    def _snapshot(self) -> dict:
        """Everything an edit can change in the project (not where it is saved), as a copy to compare."""
        return copy.deepcopy({f.name: getattr(self.project, f.name) for f in fields(Project) if f.name != "path"})

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

    def _mark_dirty(self, what: str = "Edit") -> None:
        """Record the change just made to the project as one undo step named `what`."""
        if not self.history.record(what) and not self.history.restoring:
            self._dirty = True  # a change the snapshot does not cover: still unsaved
        self._update_title()

    def _clean_changed(self, _clean: bool) -> None:
        self._update_title()

    def _update_title(self) -> None:
        where = f" — {self.project.path}" if self.project.path else ""
        self.setWindowTitle(f"{self.project.name}[*]{where} — SEAR Project Settings")
        self.setWindowModified(self.dirty)

    # --- construction ------------------------------------------------------------------------------------

    def _build(self) -> None:
        self.terrain_tab = TerrainTab(self)
        self.body_tab = BodyTab(self)
        self.wheels_tab = WheelsTab(self, self.body_tab.show_robot)
        self.dynamics_tab = DynamicsTab(self)
        self.code_tab = CodeTab(self)
        self.tab_pages: list[SettingsTab] = [self.terrain_tab, self.body_tab, self.wheels_tab, self.dynamics_tab,
                                             self.code_tab]
        self.tabs = QTabWidget()
        for tab in self.tab_pages:
            # Each page scrolls when the window is smaller than its form (laptop screens, large scale factors).
            self.tabs.addTab(scrolling(tab), tab.TITLE)
            tab.edited.connect(self._tab_edited)
            tab.message.connect(self.statusBar().showMessage)
        self.tabs.currentChanged.connect(lambda _i: self._update_previews())

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
        build_menus(self)
        self._update_recent_menu()
        for number in self.findChildren(NumberField):
            number.refused.connect(lambda message: self.statusBar().showMessage(message, 8000))
        self._undo_keys = WindowUndoKeys(self)
        self._undo_keys.watch(self)
        wrap_tooltips(self)
        self.statusBar().showMessage("Ready")

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

    def _robot_chosen(self, index: int) -> None:
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

    # --- the project file: new, open, save, recent files --------------------------------------------------

    def _confirm_discard(self) -> bool:
        """True when it is fine to replace the current project (saved, or the user says so). A project
        whose file was deleted counts as unsaved: it exists only in this window."""
        gone = self.project.path is not None and not self.project.path.exists()
        if not self.dirty and not gone:
            return True
        text = (f"The project file {self.project.path} was deleted or moved away. Save {self.project.name!r} "
                "there again first?" if gone else f"Save the changes to {self.project.name!r} first?")
        answer = QMessageBox.question(
            self, "Unsaved changes", text,
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def _projects_folder(self) -> Path:
        """Where new projects and demo copies are offered: beside the current project's folder."""
        return self.project.path.parent.parent if self.project.path else Path.cwd()

    def new_project(self) -> bool:
        """File > New: a project that simulates at once (flat ground, a box robot on four cylinder wheels,
        the template user code and a sensors file), written where the user says (sear.starter)."""
        if not self._confirm_discard():
            return False
        start = self._projects_folder() / "new_project" / "new_project.prj"
        chosen, _ = QFileDialog.getSaveFileName(
            self, "Create a new project (its models, code and sensors files are written beside it)", str(start),
            PRJ_FILTER)
        if not chosen:
            return False
        path = Path(chosen) if chosen.endswith(".prj") else Path(chosen + ".prj")
        from sear.starter import create_new_project  # it makes meshes: trimesh is loaded only now

        try:
            project = create_new_project(path)
        except SearError as exc:
            QMessageBox.critical(self, "Cannot create the project", str(exc))
            return False
        self._show_project(project, f"Created {project.path} with its models, user code and sensors file")
        return True

    def open_demo(self, folder: str | Path | None = None) -> bool:
        """File > Open Demo: copy the bundled demo into a folder the user chooses (into a new subfolder
        'SEAR demo' when the chosen one is not empty) and open the copy, so it can be changed freely."""
        if not self._confirm_discard():
            return False
        if folder is None:
            chosen = QFileDialog.getExistingDirectory(self, "Choose a folder for a copy of the demo",
                                                      str(self._projects_folder()))
            if not chosen:
                return False
            folder = chosen
        target = Path(folder)
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            base = (target if target.is_dir() else target.parent) / "SEAR demo"
            target, number = base, 2
            while target.exists():
                target, number = base.with_name(f"{base.name} {number}"), number + 1
        try:
            copy_demo(target)
            project = Project.load(target / "demo.prj")
        except (OSError, SearError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            QMessageBox.critical(self, "Cannot copy the demo", f"The demo cannot be copied into {target} "
                                 f"({reason}); choose a folder you can write to.")
            return False
        self._show_project(project, f"Copied the demo into {target}")
        return True

    def open_project(self, path: str | Path | None = None) -> bool:
        if not self._confirm_discard():
            return False
        if path is None:
            start = str(self.project.path.parent) if self.project.path else str(Path.cwd())
            chosen, _ = QFileDialog.getOpenFileName(self, "Open a SEAR project", start, PRJ_FILTER)
            if not chosen:
                return False
            path = chosen
        try:
            project = Project.load(path)
        except SearError as exc:
            QMessageBox.critical(self, "Cannot open the project", str(exc))
            return False
        self._show_project(project, f"Opened {project.path}")
        return True

    def _show_project(self, project: Project, message: str) -> None:
        """Make `project` (just read or written) the window's, unchanged, and watch its file."""
        self.project = project
        self.dirty = False
        self._remember(project.path)
        self.refresh()
        self._watch()
        self.statusBar().showMessage(message, 4000)

    def save(self) -> bool:
        if self.project.path is None:
            return self.save_as()
        return self._save_to(self.project.path)

    def save_as(self) -> bool:
        """Save under a new name. In another folder the copy is a project of its own: its user code and
        sensors file are copied beside it (Project.copy_own_files), its models stay where they are."""
        start = str(self.project.path or Path.cwd() / f"{self.project.name}.prj")
        chosen, _ = QFileDialog.getSaveFileName(self, "Save the project as", start, PRJ_FILTER)
        if not chosen:
            return False
        if not chosen.endswith(".prj"):
            chosen += ".prj"
        if self.project.name == "Untitled":
            self.project.name = Path(chosen).stem
        before = [(robot.code.user_code, robot.code.sensors) for robot in self.project.robots]
        try:
            copied = self.project.copy_own_files(Path(chosen).parent)
        except OSError as exc:
            QMessageBox.critical(self, "Not saved", f"The user code and sensors files cannot be copied to "
                                 f"{Path(chosen).parent} ({exc.strerror or exc}); choose another folder.")
            return False
        if not self._save_to(Path(chosen)):
            for robot, (user_code, sensors) in zip(self.project.robots, before, strict=True):
                robot.code.user_code, robot.code.sensors = user_code, sensors
            return False
        if copied:
            self.statusBar().showMessage(f"Saved {self.project.path}; copied " + ", ".join(
                f"the {choice.label} {choice.path.name if choice.path else ''}" for choice, _ in copied)
                + " beside it", 8000)
        return True

    def _save_to(self, path: Path) -> bool:
        try:
            self.project.save(path)
        except SearError as exc:
            QMessageBox.critical(self, "Not saved", str(exc))
            return False
        self.dirty = False
        self._remember(self.project.path)
        self.refresh()  # paths now show relative to the project's folder
        self._watch()
        self.statusBar().showMessage(f"Saved {self.project.path}", 4000)
        return True

    def _remember(self, path: Path | None) -> None:
        if path is None:
            return
        recent = [p for p in self._recent() if p != str(path)]
        self.settings.setValue("recent", [str(path), *recent][:MAX_RECENT])
        self._update_recent_menu()

    def _recent(self) -> list[str]:
        """The recently opened project files, newest first. QSettings reads a one-entry list back as a plain
        string, which must not be taken letter by letter."""
        recent = self.settings.value("recent", []) or []
        if isinstance(recent, str):
            return [recent]
        return [str(entry) for entry in recent] if isinstance(recent, list | tuple) else []

    def _update_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self._recent()
        for entry in recent:
            action = self.recent_menu.addAction(entry)
            action.triggered.connect(lambda _=False, e=entry: self.open_project(e))
        self.recent_menu.setEnabled(bool(recent))

    # --- the project file changed by another program -------------------------------------------------------

    @staticmethod
    def _file_hash(path: Path | None) -> str | None:
        try:
            return hashlib.sha256(path.read_bytes()).hexdigest() if path is not None else None
        except OSError:
            return None

    def _watch(self) -> None:
        """Watch the project's file (after it was opened or saved): a change by another program or its
        deletion is noticed (_check_disk), as is every change found when the window is activated."""
        path = self.project.path
        self._on_disk = self._file_hash(path)
        watched = self._watcher.files()
        if watched:
            self._watcher.removePaths(watched)
        if path is not None and path.exists():
            self._watcher.addPath(str(path))

    def _check_disk(self) -> None:
        """Offer what to do when the project file was deleted (save it again) or changed by another
        program (reload it, or keep this window's version, which a save then writes). Either way a
        project whose file is gone is unsaved: closing the window offers to save it."""
        path = self.project.path
        if path is None or self._checking_disk:
            return
        now = self._file_hash(path)
        if now == self._on_disk:
            if path.exists() and str(path) not in self._watcher.files():
                self._watcher.addPath(str(path))  # replaced by a rename: watch the new file
            return
        self._checking_disk = True
        try:
            self._on_disk = now
            if now is None:
                self._mark_dirty()
                answer = QMessageBox.question(
                    self, "Project file deleted",
                    f"The project file {path} was deleted or moved away by another program. Save the project "
                    "there again now?\n\nIf you do not, it exists only in this window until you save it.",
                    QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Ignore,
                    QMessageBox.StandardButton.Save)
                if answer == QMessageBox.StandardButton.Save:
                    self.save()
                return
            if str(path) not in self._watcher.files():
                self._watcher.addPath(str(path))
            changes = " and the changes made here are lost" if self.dirty else ""
            answer = QMessageBox.question(
                self, "Project file changed",
                f"The project file {path} was changed by another program. Reload it (the window shows the file"
                f"{changes})?\n\nNo keeps this window's version; saving it then replaces the file.",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes)
            if answer == QMessageBox.StandardButton.Yes:
                try:
                    project = Project.load(path)
                except SearError as exc:
                    self._mark_dirty()
                    QMessageBox.critical(self, "Cannot reload the project", f"{exc}\n\nThis window's version is "
                                         "kept; save it to replace the file.")
                    return
                self._show_project(project, f"Reloaded {path}")
            else:
                self._mark_dirty()
        finally:
            self._checking_disk = False

    def changeEvent(self, event: QEvent) -> None:
        """When the window becomes active again, look at the project file (a watcher may miss a change on
        some file systems, e.g. network shares)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            QTimer.singleShot(0, self, self._check_disk)

    # --- simulate, and the problems that keep a project from it ------------------------------------------------

    def simulate(self) -> bool:
        """Save, check, and start `sear run PROJECT.prj` as a separate process."""
        from sear.validate import load_project

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
