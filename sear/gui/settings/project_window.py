"""The project the Project Settings window edits, and its file.

`ProjectWindow` is the window without its widgets: the project it edits and the robot chosen in it, the
undo history of its edits and whether it is saved (the title's *), and the file operations: new, open,
Open Demo, save, save as, recent files, and noticing when another program changed or deleted the file.
sear.gui.settings.window.SettingsWindow builds the widgets on it (`refresh` writes the project into them;
`_restore` puts an undo step back) and its File menu, whose Open Recent submenu is `recent_menu`.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import fields, replace
from pathlib import Path

from PySide6.QtCore import QEvent, QFileSystemWatcher, QSettings, QTimer
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMenu, QMessageBox

from sear.errors import SearError
from sear.gui.widgets import UndoHistory, commit_typing
from sear.project import Project, Robot
from sear.resources import copy_demo

PRJ_FILTER = "SEAR projects (*.prj);;All files (*)"
MAX_RECENT = 8


class ProjectWindow(QMainWindow):
    """A main window that edits one project and saves it to its .prj file."""

    recent_menu: QMenu
    """File > Open Recent (made with the subclass's File menu)."""

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

    def refresh(self) -> None:
        """Write every field of the project into the window's widgets (without marking it changed)."""
        raise NotImplementedError

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
        """Undo/Redo: put a snapshot (`_snapshot`) back into the project and the window's widgets."""
        raise NotImplementedError

    def commit_typing(self) -> None:
        """Take the value typed into the field that has the focus (widgets.commit_typing): every command
        that uses or replaces the project calls it first."""
        commit_typing(self)

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

    # --- the project file: new, open, save, recent files --------------------------------------------------

    def _confirm_discard(self) -> bool:
        """True when it is fine to replace the current project (saved, or the user says so). A project
        whose file was deleted counts as unsaved: it exists only in this window."""
        self.commit_typing()
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
        """Save the project to its file (Save As when it has none), the value being typed included."""
        self.commit_typing()
        if self.project.path is None:
            return self.save_as()
        return self._save_to(self.project.path)

    def save_as(self) -> bool:
        """Save under a new name. In another folder the copy is a project of its own: its user code and
        sensors file are copied beside it (Project.copy_own_files), its models stay where they are."""
        self.commit_typing()
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
            if self._adopt_views(path):
                return
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

    def _adopt_views(self, path: Path) -> bool:
        """When the file differs from this window's project only in its named camera views (the simulation
        window saved one: sear.project.save_camera_view), take them without asking, so a later save here
        keeps them. False when anything else differs (or the file cannot be read): then the user is asked."""
        try:
            disk = Project.load(path)
        except SearError:
            return False
        if replace(disk, views=self.project.views) != self.project:
            return False
        self.project.views = disk.views
        return True

    def changeEvent(self, event: QEvent) -> None:
        """When the window becomes active again, look at the project file (a watcher may miss a change on
        some file systems, e.g. network shares)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            QTimer.singleShot(0, self, self._check_disk)
