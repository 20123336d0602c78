"""The Project Settings window: the first window a user sees (SPEC §1).

The window edits a `Project` (sear.project) and nothing else: every widget writes its field of the
model when changed, and `refresh()` writes the model back into the widgets. Every change is one step of the
undo history (`history`: snapshots of the project compared after each edit; Edit > Undo/Redo write one
back and refresh); the history's clean step is the saved project (the title's *). Files are read and written
only through the model's load/save and the validation module; simulations run as a separate process.
"""

from __future__ import annotations

import copy
import hashlib
import re
import sys
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QFileSystemWatcher, QProcess, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QColor, QFont, QKeySequence, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QStyle,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from sear.errors import Problem, ProjectError, SearError
from sear.fielddocs import field_docs
from sear.fields import field_info
from sear.gui.editor import open_in_editor
from sear.gui.geometry import restore_window, save_window, scrolling
from sear.gui.preview import MeshPreview
from sear.gui.urdfview import BODY_COLOUR, MARKS, WHEEL_COLOUR, UrdfPanel
from sear.gui.widgets import FileField, NumberField, UndoHistory, WindowUndoKeys, wrap_tooltips
from sear.project import (
    DEFAULT_DYNAMICS,
    HEIGHTMAP_SUFFIXES,
    MESH_SUFFIXES,
    URDF_SUFFIXES,
    WHEEL_IDS,
    Body,
    CodeSetup,
    Dynamics,
    Gripper,
    Project,
    Robot,
    SimulationSettings,
    Terrain,
    Wheel,
    is_urdf,
    joint_names,
    model_suffix,
    package_root_paths,
)
from sear.resources import copy_demo, packaged

if TYPE_CHECKING:
    from sear.gui.urdfview import RobotRows
    from sear.robotdesc import RobotDescription

TEMPLATES = packaged("templates")
ROBOT_SECTIONS = ("body", "wheels", "dynamics", "code")
"""The parts of a project that belong to a robot: the tabs edit the chosen robot's."""
ROBOT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{0,39}")
"""What a robot's name may be (the schema's robotName kind)."""
MESH_FILTER = "Models (" + " ".join(f"*{s}" for s in MESH_SUFFIXES) + ");;All files (*)"
BODY_FILTER = ("Robot bodies (" + " ".join(f"*{s}" for s in URDF_SUFFIXES + MESH_SUFFIXES)
               + ");;URDF robot descriptions (" + " ".join(f"*{s}" for s in URDF_SUFFIXES) + ");;" + MESH_FILTER)
TERRAIN_FILTER = ("Terrain models and heightmaps (" + " ".join(f"*{s}" for s in MESH_SUFFIXES + HEIGHTMAP_SUFFIXES)
                  + ");;Models (" + " ".join(f"*{s}" for s in MESH_SUFFIXES)
                  + ");;Heightmap images (" + " ".join(f"*{s}" for s in HEIGHTMAP_SUFFIXES) + ");;All files (*)")
PY_FILTER = "Python files (*.py);;All files (*)"
XML_FILTER = "Sensor files (*.xml);;All files (*)"
PRJ_FILTER = "SEAR projects (*.prj);;All files (*)"
MAX_RECENT = 8

def _label(cls: type, name: str) -> str:
    return field_info(cls, name).label


SIMULATION_OUTPUT_LINES = 5000
"""Lines of a simulation's output the settings window's console keeps (the simulation window's console
keeps as many); older lines scroll away."""


class SettingsWindow(QMainWindow):
    """Edits one project; Simulate runs it in its own process and shows its output."""

    def __init__(self, project: Project | None = None) -> None:
        super().__init__()
        self._project = project or Project()
        self.robot_index = 0
        """Which of the project's robots the robot tabs edit (Project.robots' order)."""
        self.history = UndoHistory(self._snapshot, self._restore, self)
        """Undo/Redo of every edit of the project; its clean state is the saved project."""
        self.history.cleanChanged.connect(self._clean_changed)
        self._dirty = False
        self.process: QProcess | None = None
        self.settings = QSettings("SEAR", "SEAR")
        self._numbers: dict[tuple[str, str], NumberField] = {}
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(lambda _path: QTimer.singleShot(300, self, self._check_disk))
        self._on_disk: str | None = None
        """Hash of the project file as this window last read or wrote it; None when there is none."""
        self._checking_disk = False
        self._urdf_key: tuple | None = None
        """What the URDF shown was read from (file, time stamp, package roots): it is read again when that
        changes."""
        self._urdf: tuple[RobotDescription, RobotRows, list] | SearError | None = None
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
        tab = {"terrain": 0, "body": 1, "wheels": 2, "dynamics": 3, "code": 4, "simulation": 4}
        if len(changed) == 1 and changed[0] in tab:
            self.tabs.setCurrentIndex(tab[changed[0]])

    # --- construction ------------------------------------------------------------------------------------

    def _number(self, section: str, obj_cls: type, name: str) -> NumberField:
        """An editor of a number field: unit, limits, precision and tooltip as the field declares them."""
        info = field_info(obj_cls, name)
        field = NumberField(info.unit, info.bounds(), decimals=info.decimals or 4, tooltip=info.help)
        field.valueChanged.connect(lambda value, s=section, n=name: self._set(s, n, float(value)))
        self._numbers[(section, name)] = field
        return field

    def _form(self, section: str, cls: type, names: list[str]) -> QFormLayout:
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        for name in names:
            form.addRow(_label(cls, name) + ":", self._number(section, cls, name))
        return form

    def _build(self) -> None:
        self.tabs = QTabWidget()
        # Each page scrolls when the window is smaller than its form (laptop screens, large scale factors).
        self.tabs.addTab(scrolling(self._terrain_tab()), "Terrain Model")
        self.tabs.addTab(scrolling(self._body_tab()), "Robot Body Model")
        self.tabs.addTab(scrolling(self._wheels_tab()), "Wheel Models")
        self.tabs.addTab(scrolling(self._dynamics_tab()), "Vehicle Dynamics")
        self.tabs.addTab(scrolling(self._code_tab()), "Code Setup")
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

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(name_row)
        layout.addLayout(self._build_robot_row())
        layout.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self.console = QPlainTextEdit()
        self.console.setReadOnly(True)
        self.console.setFont(QFont("Monospace", 9))
        self.console.setMaximumBlockCount(SIMULATION_OUTPUT_LINES)  # a flood scrolls away: memory stays bounded
        self.console.setPlaceholderText(f"Output of the simulation (your prints, errors, exit status; its last "
                                        f"{SIMULATION_OUTPUT_LINES:,} lines) appears here.")
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
            ("wizard", "Sensor Wizard…", "F7", sp.SP_FileDialogDetailedView, self.open_wizard),
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
        self._update_recent_menu()

    def _build_edit_view_help_menus(self) -> None:
        """Edit (Undo/Redo of every edit, Reset Defaults), View (tabs, panels) and Help menus."""
        edit = self.menuBar().addMenu("&Edit")
        undo = self.history.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.history.createRedoAction(self, "&Redo")
        redo.setShortcuts([QKeySequence(QKeySequence.StandardKey.Redo), QKeySequence("Ctrl+Y")])
        icon = self.style().standardIcon
        undo.setIcon(icon(QStyle.StandardPixmap.SP_ArrowBack))
        redo.setIcon(icon(QStyle.StandardPixmap.SP_ArrowForward))
        edit.addAction(undo)
        edit.addAction(redo)
        edit.addSeparator()
        reset = QAction("Reset Vehicle Dynamics to Defaults…", self)
        reset.triggered.connect(self.reset_dynamics)
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

    def _with_preview(self, form_widget: QWidget, preview: MeshPreview) -> QWidget:
        page = QWidget()
        layout = QHBoxLayout(page)
        layout.addWidget(form_widget, 3)
        group = QGroupBox("Preview")
        QVBoxLayout(group).addWidget(preview)
        layout.addWidget(group, 2)
        return page

    def _terrain_tab(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        self.terrain_file = FileField("Choose the terrain model", TERRAIN_FILTER,
                                      tooltip=field_docs(Terrain)["file"])
        self.terrain_file.changed.connect(lambda path: self._set("terrain", "file", path))
        files = QFormLayout()
        files.addRow("Terrain model file:", self.terrain_file)
        layout.addLayout(files)
        where = QGroupBox("Where on Earth the terrain's centre is")
        where.setLayout(self._form("terrain", Terrain, ["latitude", "longitude", "altitude"]))
        layout.addWidget(where)
        model = QGroupBox("Model")
        model.setLayout(self._form("terrain", Terrain, ["scale", "heightmap_size", "heightmap_height"]))
        layout.addWidget(model)
        layout.addStretch(1)
        self.terrain_preview = MeshPreview()
        return self._with_preview(box, self.terrain_preview)

    def _body_tab(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        self.body_file = FileField("Choose the robot body model or URDF", BODY_FILTER, tooltip=field_docs(Body)["file"])
        self.body_file.changed.connect(lambda path: self._set("body", "file", path))
        files = QFormLayout()
        files.addRow("Body model or URDF:", self.body_file)
        files.addRow("Scale:", self._number("body", Body, "scale"))
        layout.addLayout(files)
        # A URDF's links, joints and wheels right under the file they come from (shown for a .urdf only)
        self.body_preview = MeshPreview()
        self.urdf_panel = UrdfPanel()
        self.urdf_panel.linkSelected.connect(self.body_preview.highlight)
        self.urdf_panel.wheelsChanged.connect(self._set_urdf_marks)
        self.urdf_panel.rootsChanged.connect(self._set_package_roots)
        self.urdf_panel.checkRequested.connect(self.check_urdf)
        self.urdf_group = QGroupBox("Robot description (URDF)")
        QVBoxLayout(self.urdf_group).addWidget(self.urdf_panel)
        self.urdf_group.setVisible(False)
        layout.addWidget(self.urdf_group, 1)
        start = QGroupBox("Start position (the robot is dropped there and settles on the terrain)")
        grid = QGridLayout(start)
        self.relative_radio = QRadioButton("Relative to the terrain centre")
        self.absolute_radio = QRadioButton("Absolute (geographic)")
        group = QButtonGroup(self)
        group.addButton(self.relative_radio)
        group.addButton(self.absolute_radio)
        self.relative_radio.toggled.connect(
            lambda on: self._set("body", "start_mode", "relative" if on else "absolute"))
        grid.addWidget(self.relative_radio, 0, 0)
        grid.addWidget(self.absolute_radio, 0, 1)
        rel = QWidget()
        rel.setLayout(self._form("body", Body, ["start_north", "start_east", "start_altitude"]))
        ab = QWidget()
        ab.setLayout(self._form("body", Body, ["start_latitude", "start_longitude", "start_abs_altitude"]))
        self.relative_box, self.absolute_box = rel, ab
        grid.addWidget(rel, 1, 0)
        grid.addWidget(ab, 1, 1)
        layout.addWidget(start)
        rotation = QGroupBox("Start rotation (quaternion x y z w, world frame; 0 0 0 1 faces east)")
        row = QHBoxLayout(rotation)
        self.rotation_fields = []
        for i, axis in enumerate("xyzw"):
            field = NumberField("", (-1.0, 1.0, False, "a number from -1 to 1"), decimals=4,
                                tooltip=field_docs(Body)["rotation"])
            field.valueChanged.connect(lambda value, i=i: self._set_rotation(i, float(value)))
            row.addWidget(QLabel(axis + ":"))
            row.addWidget(field)
            self.rotation_fields.append(field)
        layout.addWidget(rotation)
        layout.addWidget(self._gripper_box())
        layout.addStretch(1)
        # the form scrolls on its own (a URDF's box makes it tall), the preview stays in view beside it
        return self._with_preview(scrolling(box), self.body_preview)

    def _gripper_box(self) -> QGroupBox:
        """The Gripper group of the Robot Body Model tab: whether the robot has one, and its sizes and forces."""
        box = QGroupBox("Gripper (a paddle gripper with a lift at the robot's front)")
        layout = QVBoxLayout(box)
        self.gripper_check = QCheckBox("This robot has a gripper (keys G, T, B; sim.gripper; sensor \"gripper\")")
        self.gripper_check.setToolTip(field_docs(Body)["gripper"] + " " + (Gripper.__doc__ or "").split("\n\n")[1]
                                      .replace("\n", " ").strip())
        self.gripper_check.toggled.connect(self._set_gripper)
        layout.addWidget(self.gripper_check)
        self.gripper_fields = QWidget()
        self.gripper_fields.setLayout(self._form("body.gripper", Gripper, [
            "max_opening", "paddle_length", "paddle_height", "lift_travel", "grip_force", "lift_force"]))
        layout.addWidget(self.gripper_fields)
        return box

    def _set_gripper(self, on: bool) -> None:
        """The Gripper check box: a gripper with the default sizes, or none."""
        if (self.robot.body.gripper is not None) == on:
            return
        self.robot.body.gripper = Gripper() if on else None
        self._mark_dirty("Gripper")
        self.refresh()

    def _wheels_tab(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        intro = QLabel("Four wheel models, each with its centre relative to the body's origin "
                       "(x forward, y left, z up, metres). Untick 'Offset' to use the position the "
                       "model was exported at.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.wheels_urdf_note = QLabel("This robot is described by a URDF: its wheels are joints of it, marked "
                                       "left or right on the Robot Body Model tab (Wheels). The models below are "
                                       "not used.")
        self.wheels_urdf_note.setWordWrap(True)
        self.wheels_urdf_note.setStyleSheet("color: #8a4b00;")
        layout.addWidget(self.wheels_urdf_note)
        self.wheel_groups: list[QGroupBox] = []
        self.wheel_files: dict[str, FileField] = {}
        self.wheel_offsets: dict[str, QCheckBox] = {}
        self.wheel_positions: dict[str, list[NumberField]] = {}
        for wid in WHEEL_IDS:
            group = QGroupBox(wid.replace("_", " ").title() + " wheel")
            grid = QGridLayout(group)
            file_field = FileField(f"Choose the {wid.replace('_', ' ')} wheel model", MESH_FILTER,
                                   tooltip=field_docs(Wheel)["file"])
            file_field.changed.connect(lambda path, w=wid: self._set_wheel_file(w, path))
            grid.addWidget(QLabel("Model file:"), 0, 0)
            grid.addWidget(file_field, 0, 1, 1, 7)
            offset = QCheckBox("Offset")
            offset.setToolTip(field_docs(Wheel)["position"])
            offset.toggled.connect(lambda on, w=wid: self._set_wheel_offset(w, on))
            grid.addWidget(offset, 1, 0)
            fields_ = []
            for i, axis in enumerate("xyz"):
                f = NumberField("m", None, decimals=3, tooltip=f"Wheel centre {axis}, body frame, metres.")
                f.valueChanged.connect(lambda value, w=wid, i=i: self._set_wheel_position(w, i, float(value)))
                grid.addWidget(QLabel(axis + ":"), 1, 1 + 2 * i)
                grid.addWidget(f, 1, 2 + 2 * i)
                fields_.append(f)
            self.wheel_files[wid], self.wheel_offsets[wid], self.wheel_positions[wid] = file_field, offset, fields_
            self.wheel_groups.append(group)
            layout.addWidget(group)
        layout.addStretch(1)
        self.wheels_preview = MeshPreview()
        return self._with_preview(box, self.wheels_preview)

    def _dynamics_tab(self) -> QWidget:
        page = QWidget()
        layout = QHBoxLayout(page)
        main = QGroupBox("Vehicle dynamics (Bullet raycast vehicle)")
        form = self._form("dynamics", Dynamics, ["mass", "engine_force", "brake_force", "suspension_stiffness",
                                                  "suspension_compression", "suspension_damping"])
        reset = QPushButton("Reset Defaults")
        reset.setToolTip("The thesis's workable vehicle: mass 400, force 400, brake 1, stiffness 120, "
                         "compression 0.2, damping 0.3, and Bullet's defaults for the rest.")
        reset.clicked.connect(self.reset_dynamics)
        self.reset_button = reset
        form.addRow("", reset)
        main.setLayout(form)
        more = QGroupBox("More")
        form2 = self._form("dynamics", Dynamics, ["friction_slip", "rolling_resistance", "max_steering"])
        self.drive_type = QComboBox()
        self.drive_type.addItem("Car (Ackermann steering, rear-wheel drive)", "car")
        self.drive_type.addItem("Skid steer (sides driven differentially)", "skid")
        self.drive_type.addItem("Differential (rear wheels driven, front wheels casters)", "differential")
        self.drive_type.setToolTip(field_docs(Dynamics)["drive_type"])
        self.drive_type.currentIndexChanged.connect(
            lambda _i: self._set("dynamics", "drive_type", self.drive_type.currentData()))
        form2.addRow("Drive type:", self.drive_type)
        self.cog_fields = []
        cog_row = QHBoxLayout()
        for i, axis in enumerate("xyz"):
            f = NumberField("m", None, decimals=3, tooltip=field_docs(Dynamics)["cog_offset"])
            f.valueChanged.connect(lambda value, i=i: self._set_cog(i, float(value)))
            cog_row.addWidget(QLabel(axis))
            cog_row.addWidget(f)
            self.cog_fields.append(f)
        form2.addRow("Centre of gravity offset:", cog_row)
        self.auto_suspension: dict[str, QCheckBox] = {}
        for name in ("suspension_rest_length", "max_suspension_travel"):
            row = QHBoxLayout()
            number = self._number("dynamics", Dynamics, name)
            number.setSpecialValueText("auto")  # shown while the value sits at the minimum
            auto = QCheckBox("from the wheel size")
            auto.toggled.connect(lambda on, n=name: self._set_auto(n, on))
            row.addWidget(number)
            row.addWidget(auto)
            self.auto_suspension[name] = auto
            form2.addRow(_label(Dynamics, name) + ":", row)
        more.setLayout(form2)
        layout.addWidget(main, 1)
        layout.addWidget(more, 1)
        return page

    def _code_tab(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        code = QGroupBox("Control code")
        form = QFormLayout(code)
        self.code_file = FileField("Choose the user code file", PY_FILTER, tooltip=field_docs(CodeSetup)["user_code"])
        self.code_file.changed.connect(lambda path: self._set("code", "user_code", path))
        form.addRow("User code file:", self.code_file)
        row = QHBoxLayout()
        self.new_code_button = QPushButton("Create New User Code…")
        self.new_script_button = QPushButton("Create New Full Simulator Script…")
        self.edit_button = QPushButton("Open in Editor")
        for b in (self.new_code_button, self.new_script_button, self.edit_button):
            row.addWidget(b)
        row.addStretch(1)
        self.new_code_button.clicked.connect(lambda: self.create_from_template("user_code.py"))
        self.new_script_button.clicked.connect(lambda: self.create_from_template("simulator_script.py"))
        self.edit_button.clicked.connect(self.open_in_editor)
        form.addRow("", row)
        self.sensors_file = FileField("Choose the sensors file", XML_FILTER, tooltip=field_docs(CodeSetup)["sensors"])
        self.sensors_file.changed.connect(lambda path: self._set("code", "sensors", path))
        form.addRow("Sensors file:", self.sensors_file)
        layout.addWidget(code)
        run = QGroupBox("Running")
        form2 = QFormLayout(run)
        self.debug_shapes = QCheckBox("Debug physics shapes (draw collision shapes in the simulation window)")
        self.debug_shapes.toggled.connect(lambda on: self._set("code", "debug_shapes", bool(on)))
        form2.addRow("", self.debug_shapes)
        form2.addRow(_label(CodeSetup, "hook_timeout") + ":", self._number("code", CodeSetup, "hook_timeout"))
        form2.addRow(_label(SimulationSettings, "physics_hz") + ":",
                     self._number("simulation", SimulationSettings, "physics_hz"))
        form2.addRow(_label(SimulationSettings, "control_hz") + ":",
                     self._number("simulation", SimulationSettings, "control_hz"))
        layout.addWidget(run)
        layout.addStretch(1)
        return page

    # --- model <-> widgets -------------------------------------------------------------------------------

    def _section(self, name: str):
        """The part of the project a dotted section names ('dynamics', 'body.gripper'; the robot's sections
        are the chosen robot's); None when it is absent."""
        first, *rest = name.split(".")
        obj = getattr(self.robot if first in ROBOT_SECTIONS else self.project, first)
        for part in rest:
            obj = getattr(obj, part) if obj is not None else None
        return obj

    # --- the robot list -------------------------------------------------------------------------------

    @property
    def robot(self) -> Robot:
        """The robot the Robot Body, Wheel Models, Vehicle Dynamics and Code Setup tabs edit (chosen in the
        robot list; a one-robot project's only robot). Its parts are the project's own, not copies."""
        robots = self.project.robots
        self.robot_index = min(self.robot_index, len(robots) - 1)
        return robots[self.robot_index]

    def _build_robot_row(self) -> QHBoxLayout:
        """Robots: the list (the tabs edit the one chosen) and its Add, Duplicate, Rename, Remove buttons."""
        self.robot_list = QListWidget()
        self.robot_list.setFlow(QListWidget.Flow.LeftToRight)
        self.robot_list.setSpacing(3)
        self.robot_list.setMaximumHeight(self.fontMetrics().height() + 14)
        self.robot_list.setToolTip("The project's robots: the Robot Body Model, Wheel Models, Vehicle Dynamics and "
                                   "Code Setup tabs edit the one chosen here. Each has its own start pose, user code "
                                   "and sensors; its name prefixes its log columns.")
        self.robot_list.currentRowChanged.connect(self._robot_chosen)
        row = QHBoxLayout()
        row.addWidget(QLabel("Robots:"))
        row.addWidget(self.robot_list, 1)
        self.robot_buttons: dict[str, QPushButton] = {}
        for key, text, tip, slot in (
                ("add", "Add", "Add a robot with no models yet", self.add_robot),
                ("duplicate", "Duplicate", "Add a copy of the chosen robot, starting 2 m north of it",
                 self.duplicate_robot),
                ("rename", "Rename…", "Rename the chosen robot", self.rename_robot),
                ("remove", "Remove", "Remove the chosen robot (Edit > Undo brings it back)", self.remove_robot)):
            button = QPushButton(text)
            button.setToolTip(tip)
            button.clicked.connect(lambda _=False, f=slot: f())
            row.addWidget(button)
            self.robot_buttons[key] = button
        return row

    def _refresh_robots(self) -> None:
        """The robot list as the project has it, the chosen robot selected."""
        robots = self.project.robots
        index = min(self.robot_index, len(robots) - 1)
        self.robot_list.blockSignals(True)
        self.robot_list.clear()
        for robot in robots:
            self.robot_list.addItem(robot.name)
        self.robot_list.setCurrentRow(index)
        self.robot_list.blockSignals(False)
        self.robot_index = index
        self.robot_buttons["remove"].setEnabled(len(robots) > 1)

    def _robot_chosen(self, row: int) -> None:
        if 0 <= row != self.robot_index:
            self.robot_index = row
            self.refresh()

    def _free_name(self, stem: str) -> str:
        taken = {r.name for r in self.project.robots}
        number = 2
        while f"{stem}_{number}" in taken:
            number += 1
        return f"{stem}_{number}"

    def _robot_edit(self, what: str, edit: Callable[[], int]) -> bool:
        """Make a change to the robot list (`edit` returns the robot to choose after it); a refusal is
        shown in the status bar and changes nothing."""
        try:
            self.robot_index = edit()
        except ProjectError as exc:
            self.statusBar().showMessage(exc.message, 8000)
            return False
        self._mark_dirty(what)
        self.refresh()
        return True

    def add_robot(self) -> bool:
        """Add a robot with default fields (no models yet) and choose it."""
        def add() -> int:
            self.project.add_robot(Robot(name=self._free_name("robot")))
            return len(self.project.robots) - 1
        return self._robot_edit("Add robot", add)

    def duplicate_robot(self) -> bool:
        """Add a copy of the chosen robot (starting DUPLICATE_OFFSET m north of it) and choose it."""
        original = self.robot.name

        def duplicate() -> int:
            self.project.duplicate_robot(self.robot_index, self._free_name(original.rsplit("_", 1)[0]
                                                                           if original[-1:].isdigit() else original))
            return len(self.project.robots) - 1
        return self._robot_edit("Duplicate robot", duplicate)

    def rename_robot(self, name: str | None = None) -> bool:
        """Rename the chosen robot (asking for the name unless given)."""
        if name is None:
            name, ok = QInputDialog.getText(self, "Rename robot", "Name (letters, digits, _ and -; it prefixes the "
                                            "robot's log columns):", text=self.robot.name)
            if not ok:
                return False
        name = name.strip()
        if not ROBOT_NAME.fullmatch(name):
            self.statusBar().showMessage(f"{name!r} is not a robot name: use letters, digits, _ and -, starting "
                                         "with a letter.", 8000)
            return False
        if name == self.robot.name:
            return False
        index = self.robot_index

        def rename() -> int:
            self.project.rename_robot(index, name)
            return index
        return self._robot_edit("Rename robot", rename)

    def remove_robot(self) -> bool:
        """Remove the chosen robot (the last one cannot be removed); Edit > Undo brings it back."""
        index = self.robot_index
        return self._robot_edit("Remove robot", lambda: (self.project.remove_robot(index), max(0, index - 1))[1])

    def _set(self, section: str, name: str, value) -> None:
        obj = self._section(section)
        if obj is None or getattr(obj, name) == value:  # a field of a gripper the robot does not have
            return
        setattr(obj, name, value)
        self._mark_dirty(self._field_label(section, name))
        if name in ("file", "user_code") or (section == "body" and name == "start_mode"):
            self._update_enabled()
            self._update_previews()

    @staticmethod
    def _field_label(section: str, name: str) -> str:
        """How an undo step names a field ('Undo Mass')."""
        cls = {"terrain": Terrain, "body": Body, "dynamics": Dynamics, "code": CodeSetup,
               "simulation": SimulationSettings, "body.gripper": Gripper}[section]
        try:
            return _label(cls, name)
        except (KeyError, LookupError, ValueError):
            return name.replace("_", " ").capitalize()

    def _set_rotation(self, index: int, value: float) -> None:
        q = list(self.robot.body.rotation)
        q[index] = value
        self._set("body", "rotation", tuple(q))

    def _set_cog(self, index: int, value: float) -> None:
        c = list(self.robot.dynamics.cog_offset)
        c[index] = value
        self._set("dynamics", "cog_offset", tuple(c))

    def _set_auto(self, name: str, auto: bool) -> None:
        number = self._numbers[("dynamics", name)]
        number.setEnabled(not auto)
        if auto:
            number.set(number.minimum())
        elif number.value() == number.minimum():
            number.set(0.1)
        self._set("dynamics", name, None if auto else float(number.value()))

    def _set_wheel_file(self, wid: str, path: Path | None) -> None:
        if self.robot.wheels[wid].file != path:
            self.robot.wheels[wid].file = path
            self._mark_dirty(f"{wid.replace('_', ' ')} wheel model file")
            self._update_previews()

    def _set_wheel_offset(self, wid: str, on: bool) -> None:
        for f in self.wheel_positions[wid]:
            f.setEnabled(on)
        x, y, z = (float(f.value()) for f in self.wheel_positions[wid])
        position = (x, y, z) if on else None
        if self.robot.wheels[wid].position != position:
            self.robot.wheels[wid].position = position
            self._mark_dirty(f"{wid.replace('_', ' ')} wheel offset")
            self._update_previews()

    def _set_wheel_position(self, wid: str, index: int, value: float) -> None:
        position = self.robot.wheels[wid].position
        if position is None:
            return
        p = list(position)
        p[index] = value
        self.robot.wheels[wid].position = (p[0], p[1], p[2])
        self._mark_dirty(f"{wid.replace('_', ' ')} wheel position")
        self._update_previews()

    def _name_edited(self) -> None:
        name = self.name_edit.text().strip()
        if not name:  # a project always has a name: an emptied field goes back to the current one
            self.name_edit.setText(self.project.name)
        elif name != self.project.name:
            self.project.name = name
            self._mark_dirty("Project name")

    def refresh(self) -> None:
        """Write every field of the model into its widget (without marking the project changed)."""
        pr, rb = self.project, self.robot
        self._refresh_robots()
        self.name_edit.setText(pr.name)
        self.path_label.setText(f"Saved as {pr.path.name} in folder {pr.path.parent.name}" if pr.path
                                else "Not saved yet")
        self.path_label.setToolTip(str(pr.path) if pr.path else "")
        for (section, name), field in self._numbers.items():
            part = self._section(section)
            value = getattr(part if part is not None else Gripper(), name)  # no gripper: its defaults, greyed
            if value is not None:
                field.set(float(value))
        self.gripper_check.blockSignals(True)
        self.gripper_check.setChecked(rb.body.gripper is not None)
        self.gripper_check.blockSignals(False)
        self.gripper_fields.setEnabled(rb.body.gripper is not None)
        for f, v in zip(self.rotation_fields, rb.body.rotation, strict=True):
            f.set(v)
        for f, v in zip(self.cog_fields, rb.dynamics.cog_offset, strict=True):
            f.set(v)
        base = pr.path.parent if pr.path else None
        for ff in (self.terrain_file, self.body_file, self.code_file, self.sensors_file, *self.wheel_files.values()):
            ff.base = base
        self.terrain_file.set(pr.terrain.file)
        self.body_file.set(rb.body.file)
        self.code_file.set(rb.code.user_code)
        self.sensors_file.set(rb.code.sensors)
        for w in (self.relative_radio, self.absolute_radio, self.debug_shapes, self.drive_type):
            w.blockSignals(True)
        self.relative_radio.setChecked(rb.body.start_mode == "relative")
        self.absolute_radio.setChecked(rb.body.start_mode == "absolute")
        self.debug_shapes.setChecked(rb.code.debug_shapes)
        self.drive_type.setCurrentIndex(max(0, self.drive_type.findData(rb.dynamics.drive_type)))
        for w in (self.relative_radio, self.absolute_radio, self.debug_shapes, self.drive_type):
            w.blockSignals(False)
        for name, auto in self.auto_suspension.items():
            auto.blockSignals(True)
            auto.setChecked(getattr(rb.dynamics, name) is None)
            auto.blockSignals(False)
            number = self._numbers[("dynamics", name)]
            number.setEnabled(getattr(rb.dynamics, name) is not None)
            if getattr(rb.dynamics, name) is None:
                number.set(number.minimum())
        for wid in WHEEL_IDS:
            wheel = rb.wheels[wid]
            self.wheel_files[wid].set(wheel.file)
            self.wheel_offsets[wid].blockSignals(True)
            self.wheel_offsets[wid].setChecked(wheel.position is not None)
            self.wheel_offsets[wid].blockSignals(False)
            for i, f in enumerate(self.wheel_positions[wid]):
                f.set(wheel.position[i] if wheel.position is not None else 0.0)
                f.setEnabled(wheel.position is not None)
        self._update_enabled()
        self._update_title()
        self._update_previews()

    def _update_enabled(self) -> None:
        relative = self.robot.body.start_mode == "relative"
        self.relative_box.setEnabled(relative)
        self.absolute_box.setEnabled(not relative)
        heightmap = self.project.terrain.file is not None and \
            model_suffix(self.project.terrain.file) in HEIGHTMAP_SUFFIXES
        self._numbers[("terrain", "heightmap_size")].setEnabled(heightmap)
        self._numbers[("terrain", "heightmap_height")].setEnabled(heightmap)
        self._numbers[("terrain", "scale")].setEnabled(not heightmap)
        self.edit_button.setEnabled(self.robot.code.user_code is not None)
        urdf = is_urdf(self.robot.body.file)
        self.urdf_group.setVisible(urdf)
        self._numbers[("body", "scale")].setEnabled(not urdf)  # a URDF gives its meshes' scales itself
        self.wheels_urdf_note.setVisible(urdf)
        for group in self.wheel_groups:
            group.setEnabled(not urdf)

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

    def _update_previews(self) -> None:
        from sear.meshio import load_mesh, load_terrain

        index = self.tabs.currentIndex()
        pr, rb = self.project, self.robot
        try:
            if index == 0:
                if pr.terrain.file is None:
                    self.terrain_preview.show_message("Choose a terrain model to see it here.")
                else:
                    model = load_terrain(pr.terrain)
                    self.terrain_preview.show_meshes([(model.mesh, (0.45, 0.62, 0.35))])
            elif index in (1, 2):
                preview = self.body_preview if index == 1 else self.wheels_preview
                if is_urdf(rb.body.file):
                    self._show_urdf(preview)
                    return
                if rb.body.file is None:
                    preview.show_message("Choose a body model to see it here.")
                    return
                parts = [(load_mesh(rb.body.file, scale=rb.body.scale, tab="Robot Body Model"), (0.55, 0.6, 0.75))]
                for wid in WHEEL_IDS:
                    wheel = rb.wheels[wid]
                    if wheel.file is None or not wheel.file.exists():
                        continue
                    mesh = load_mesh(wheel.file, scale=rb.body.scale, tab="Wheel Models")
                    if wheel.position is not None:
                        mesh.apply_translation(-(mesh.bounds[0] + mesh.bounds[1]) / 2 + wheel.position)
                    parts.append((mesh, (0.2, 0.2, 0.22)))
                preview.show_meshes(parts)
        except SearError as exc:
            target = (self.terrain_preview, self.body_preview, self.wheels_preview)[min(index, 2)]
            target.show_message(str(exc))

    # --- a robot described by a URDF (Robot Body Model tab) --------------------------------------------------

    def _urdf_roots(self) -> list[Path]:
        return package_root_paths(self.robot.body, self.project.path.parent if self.project.path else None)

    def _read_urdf(self, again: bool = False) -> tuple[RobotDescription, RobotRows, list] | SearError | None:
        """The project's URDF as read (description, the panel's rows with the collision report, the preview's
        parts), read again only when the file, its time stamp or the package roots changed (or `again`)."""
        from sear.gui.urdfview import robot_parts, robot_rows
        from sear.robotdesc import load_urdf

        path = self.robot.body.file
        assert path is not None
        roots = self._urdf_roots()
        try:
            stamp: float | None = path.stat().st_mtime
        except OSError:
            stamp = None
        key = (path, stamp, tuple(roots))
        if again or key != self._urdf_key:
            self._urdf_key = key
            try:
                desc = load_urdf(path, roots)
                self._urdf = (desc, robot_rows(desc), robot_parts(desc))
            except SearError as exc:
                self._urdf = exc
        return self._urdf

    def _urdf_marks(self, proposal: dict[str, str]) -> dict[str, str]:
        """The joints the project marks as left/right wheels and steering; SEAR's proposal for a kind the
        project leaves out."""
        body = self.robot.body
        marks: dict[str, str] = {}
        for mark, text in zip(MARKS, (body.left_wheels, body.right_wheels, body.steering_joints), strict=True):
            names = joint_names(text)
            marks.update(dict.fromkeys(names if names is not None else
                                       [n for n, m in proposal.items() if m == mark], mark))
        return marks

    def _show_urdf(self, preview: MeshPreview) -> None:
        """Show the project's URDF in the panel (Robot Body Model tab) and in `preview`: its links at the zero
        pose, wheels darker, the link chosen in the panel highlighted."""
        self.urdf_panel.set_roots(self._urdf_roots())
        read = self._read_urdf()
        if read is None or isinstance(read, SearError):
            self.urdf_panel.clear(f"The URDF cannot be used: {read}")
            preview.show_message(str(read))
            return
        _desc, rows, parts = read
        marks = self._urdf_marks(rows.proposal)
        if self.urdf_panel.rows is not rows:
            self.urdf_panel.set_rows(rows, marks)
        elif self.urdf_panel.marks() != marks:
            self.urdf_panel.set_marks(marks)
        wheels = {j.child for j in rows.joints if marks.get(j.name) in ("left", "right")}
        preview.show_parts([(link, mesh, WHEEL_COLOUR if link in wheels else BODY_COLOUR)
                            for link, mesh, _colour in parts])
        if preview is self.body_preview:
            preview.highlight(self.urdf_panel.selected_link)

    def _set_urdf_marks(self, marks: dict[str, str] | None) -> None:
        """The user marked joints (None: they chose SEAR's proposal, which the project then leaves out)."""
        body = self.robot.body
        values = (None, None, None) if marks is None else \
            tuple(" ".join(n for n, m in marks.items() if m == mark) for mark in MARKS)
        if (body.left_wheels, body.right_wheels, body.steering_joints) == values:
            return
        body.left_wheels, body.right_wheels, body.steering_joints = values
        self._mark_dirty("Wheel joints")
        self._update_previews()

    def _set_package_roots(self, roots: list[Path]) -> None:
        """The user added or removed a package root: kept relative to the project's folder when inside it."""
        folder = self.project.path.parent if self.project.path else None
        entries = []
        for root in roots:
            inside = folder is not None and root.is_relative_to(folder)
            entries.append(str(root.relative_to(folder)) if inside and folder is not None else str(root))
        text = ";".join(entries) or None
        if text == self.robot.body.package_roots:
            return
        self.robot.body.package_roots = text
        self._mark_dirty(_label(Body, "package_roots"))
        self._update_previews()

    def check_urdf(self) -> None:
        """Check Again: read the URDF and its meshes anew and make the collision report again."""
        if not is_urdf(self.robot.body.file):
            return
        read = self._read_urdf(again=True)
        self._update_previews()
        if read is None or isinstance(read, SearError):
            self.statusBar().showMessage(f"The URDF cannot be used: {read}", 8000)
        else:
            found = len(read[1].report)
            self.statusBar().showMessage(f"Collision report made again: {found or 'nothing'} found", 6000)

    # --- actions ---------------------------------------------------------------------------------------------

    def reset_dynamics(self) -> bool:
        """Reset Defaults of the Vehicle Dynamics tab, once the user says so (Edit > Undo takes it back)."""
        tab = self.tabs.tabText(3)
        if self.robot.dynamics == DEFAULT_DYNAMICS:
            self.statusBar().showMessage(f"The {tab} tab has its default values already", 4000)
            return False
        answer = QMessageBox.question(
            self, "Reset Defaults",
            f"Reset every field of the {tab} tab to its default value?\n\nEdit > Undo (Ctrl+Z) takes it back.",
            QMessageBox.StandardButton.Reset | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel)
        if answer != QMessageBox.StandardButton.Reset:
            return False
        for f in fields(Dynamics):
            setattr(self.robot.dynamics, f.name, copy.deepcopy(getattr(DEFAULT_DYNAMICS, f.name)))
        self._mark_dirty(f"Reset Defaults of {tab}")
        self.refresh()
        self.statusBar().showMessage(f"{tab} reset to the defaults (Ctrl+Z undoes it)", 4000)
        return True

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

    # --- the project file on disk ------------------------------------------------------------------------

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

    def create_from_template(self, template: str) -> Path | None:
        """Copy a template into a folder the user chooses; a new user code file becomes the project's."""
        start = str(self.project.path.parent if self.project.path else Path.cwd())
        chosen, _ = QFileDialog.getSaveFileName(self, f"Create {template}", str(Path(start) / template), PY_FILTER)
        if not chosen:
            return None
        target = Path(chosen)
        if target.suffix != ".py":
            target = target.with_suffix(".py")
        target.write_bytes(TEMPLATES.joinpath(template).read_bytes())
        if template == "user_code.py":
            self.code_file.set(target)
            self._set("code", "user_code", target)
        self.statusBar().showMessage(f"Created {target}", 4000)
        return target

    def open_in_editor(self) -> None:
        path = self.robot.code.user_code
        if path is not None:
            open_in_editor(self, path)  # a dialog says what to set when no editor can open it

    def open_wizard(self) -> None:
        from sear.gui.wizard import SensorWizard

        # The wizard edits the chosen robot's sensors: a view of the project whose robot parts are that robot's.
        robot = self.robot
        wizard = SensorWizard(replace(self.project, body=robot.body, wheels=robot.wheels, dynamics=robot.dynamics,
                                      code=robot.code), self)
        if wizard.exec() and wizard.saved_path is not None:
            if self.robot.code.sensors != wizard.saved_path:
                self.robot.code.sensors = wizard.saved_path
                self._mark_dirty("Sensors file")
            self.sensors_file.set(wizard.saved_path)

    # --- simulate ----------------------------------------------------------------------------------------------

    def simulate(self) -> bool:
        """Save, check, and start `sear run PROJECT.prj` as a separate process."""
        from sear.validate import load_project

        if self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning:
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
        self.console.clear()
        self._append(f"$ sear run {path}\n")
        process = QProcess(self)
        process.setProgram(sys.executable)
        process.setArguments(["-m", "sear", "run", str(path)])
        process.setWorkingDirectory(str(path.parent))
        process.readyReadStandardOutput.connect(
            lambda: self._append(bytes(process.readAllStandardOutput().data()).decode(errors="replace")))
        process.readyReadStandardError.connect(
            lambda: self._append(bytes(process.readAllStandardError().data()).decode(errors="replace"), error=True))
        process.finished.connect(self._finished)
        process.errorOccurred.connect(self._process_error)
        self.process = process
        process.start()
        self._set_running(True)
        self.statusBar().showMessage("Simulating…")
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
        parts = field.split(".")
        files: dict[str, FileField] = {"terrain.file": self.terrain_file, "body.file": self.body_file,
                                       "code.user_code": self.code_file, "code.sensors": self.sensors_file}
        if len(parts) == 3 and parts[0] == "wheels" and parts[1] in self.wheel_files:
            return self.wheel_files[parts[1]].edit if parts[2] == "file" else self.wheel_offsets[parts[1]]
        if field in files:
            return files[field].edit
        if len(parts) == 2 and (parts[0], parts[1]) in self._numbers:
            return self._numbers[(parts[0], parts[1])]
        return {"dynamics.drive_type": self.drive_type, "code.debug_shapes": self.debug_shapes,
                "dynamics.cog_offset": self.cog_fields[0], "body.left_wheels": self.urdf_panel.wheel_table,
                "body.right_wheels": self.urdf_panel.wheel_table, "body.steering_joints": self.urdf_panel.wheel_table,
                "body.package_roots": self.urdf_panel.roots_list}.get(field)

    def focus_problem(self, problem: Problem) -> None:
        """Go to the field `problem` names: make its tab current and give its widget the focus."""
        widget = self.field_widget(problem.field)
        pages = [self.tabs.widget(i) for i in range(self.tabs.count())]
        for index, page in enumerate(pages):
            if (widget is not None and page is not None and page.isAncestorOf(widget)) or \
                    (widget is None and self.tabs.tabText(index) == problem.tab):
                self.tabs.setCurrentIndex(index)
                break
        if widget is not None:
            inner = self.urdf_panel.pages
            for index in range(inner.count()):  # a page of the URDF panel: show it
                page = inner.widget(index)
                if page is not None and (page is widget or page.isAncestorOf(widget)):
                    inner.setCurrentIndex(index)
            widget.setFocus(Qt.FocusReason.OtherFocusReason)
        self.statusBar().showMessage(str(problem), 10000)

    def _append(self, text: str, *, error: bool = False) -> None:
        """Add process output at the end of the console; the process's stderr is shown in red."""
        cursor = self.console.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        fmt = QTextCharFormat()
        if error:
            fmt.setForeground(QColor(176, 0, 32))
        cursor.insertText(text, fmt)
        self.console.setTextCursor(cursor)
        self.console.ensureCursorVisible()

    def _finished(self, code: int, status: QProcess.ExitStatus) -> None:
        if status == QProcess.ExitStatus.CrashExit and not getattr(self, "_stopping", False):
            self._append(f"\nThe simulation crashed (exit code {code}). Your project is unaffected.\n", error=True)
        elif getattr(self, "_stopping", False):
            self._append("\nSimulation stopped.\n")
        else:
            self._append(f"\nSimulation finished with exit status {code}.\n")
        self._stopping = False
        self._set_running(False)
        self.statusBar().showMessage("Ready")

    def _process_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._append("\nThe simulation could not be started.\n")
            self._set_running(False)

    def stop(self, *, wait: bool = False) -> None:
        """End the running simulation: SIGTERM, then SIGKILL if it is still there 3 s later.

        Without `wait` the window never blocks (the kill is scheduled); closing the window waits."""
        process = self.process
        if process is None or process.state() == QProcess.ProcessState.NotRunning:
            return
        self._stopping = True
        process.terminate()
        if wait:
            if not process.waitForFinished(3000):
                process.kill()
                process.waitForFinished(3000)
        else:
            # the process is the timer's context: no kill is attempted once it (or this window) is gone
            QTimer.singleShot(3000, process, process.kill)

    def _confirm_stop(self) -> bool:
        """True when no simulation runs, or the user agrees to stop the one running (then it is stopped)."""
        process = self.process
        if process is None or process.state() == QProcess.ProcessState.NotRunning:
            return True
        answer = QMessageBox.question(
            self, "A simulation is running",
            "A simulation started from this window is still running.\n\nYes stops it and closes Project "
            "Settings; Cancel keeps both open.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel)
        return answer == QMessageBox.StandardButton.Yes

    def closeEvent(self, event) -> None:
        if not self._confirm_stop() or not self._confirm_discard():
            event.ignore()
            return
        self.stop(wait=True)
        save_window(self, "settings")
        event.accept()
