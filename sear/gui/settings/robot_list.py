"""The Project Settings window's robot row: the project's robots (the robot tabs edit the one chosen here)
and its Add, Duplicate, Rename and Remove buttons."""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QInputDialog, QLabel, QListWidget, QPushButton, QWidget

from sear.errors import ProjectError
from sear.gui.settings.tab import EditedProject
from sear.project import Robot

ROBOT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{0,39}")
"""What a robot's name may be (the schema's robotName kind)."""


class RobotList(QWidget):
    """The robot list and its buttons. The window keeps which robot is chosen (`source.robot`)."""

    chosen = Signal(int)
    """The user chose another robot (its index in Project.robots)."""
    edited = Signal(str, int)
    """The robot list changed (one undo step of that name); the robot to choose now."""
    message = Signal(str, int)
    """A status bar message and how long to show it, ms."""

    def __init__(self, source: EditedProject, index: Callable[[], int]) -> None:
        """`index` gives the chosen robot's index."""
        super().__init__()
        self.source = source
        self._index = index
        self.robot_list = QListWidget()
        self.robot_list.setFlow(QListWidget.Flow.LeftToRight)
        self.robot_list.setSpacing(3)
        self.robot_list.setMaximumHeight(self.fontMetrics().height() + 14)
        self.robot_list.setToolTip("The project's robots: the Robot Body Model, Wheel Models, Vehicle Dynamics and "
                                   "Code Setup tabs edit the one chosen here. Each has its own start pose, user code "
                                   "and sensors; its name prefixes its log columns.")
        self.robot_list.currentRowChanged.connect(self._robot_chosen)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
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

    def refresh(self) -> None:
        """The robot list as the project has it, the chosen robot selected."""
        robots = self.source.project.robots
        self.robot_list.blockSignals(True)
        self.robot_list.clear()
        for robot in robots:
            self.robot_list.addItem(robot.name)
        self.robot_list.setCurrentRow(self._index())
        self.robot_list.blockSignals(False)
        self.robot_buttons["remove"].setEnabled(len(robots) > 1)

    def _robot_chosen(self, row: int) -> None:
        if 0 <= row != self._index():
            self.chosen.emit(row)

    def _free_name(self, stem: str) -> str:
        taken = {r.name for r in self.source.project.robots}
        number = 2
        while f"{stem}_{number}" in taken:
            number += 1
        return f"{stem}_{number}"

    def _robot_edit(self, what: str, edit: Callable[[], int]) -> bool:
        """Make a change to the robot list (`edit` returns the robot to choose after it); a refusal is
        shown in the status bar and changes nothing."""
        try:
            index = edit()
        except ProjectError as exc:
            self.message.emit(exc.message, 8000)
            return False
        self.edited.emit(what, index)
        return True

    def add_robot(self) -> bool:
        """Add a robot with default fields (no models yet) and choose it."""
        project = self.source.project

        def add() -> int:
            project.add_robot(Robot(name=self._free_name("robot")))
            return len(project.robots) - 1
        return self._robot_edit("Add robot", add)

    def duplicate_robot(self) -> bool:
        """Add a copy of the chosen robot (starting DUPLICATE_OFFSET m north of it) and choose it."""
        project, index = self.source.project, self._index()
        original = self.source.robot.name

        def duplicate() -> int:
            project.duplicate_robot(index, self._free_name(original.rsplit("_", 1)[0]
                                                           if original[-1:].isdigit() else original))
            return len(project.robots) - 1
        return self._robot_edit("Duplicate robot", duplicate)

    def rename_robot(self, name: str | None = None) -> bool:
        """Rename the chosen robot (asking for the name unless given)."""
        current = self.source.robot.name
        if name is None:
            name, ok = QInputDialog.getText(self, "Rename robot", "Name (letters, digits, _ and -; it prefixes the "
                                            "robot's log columns):", text=current)
            if not ok:
                return False
        name = name.strip()
        if not ROBOT_NAME.fullmatch(name):
            self.message.emit(f"{name!r} is not a robot name: use letters, digits, _ and -, starting with a "
                              "letter.", 8000)
            return False
        if name == current:
            return False
        index = self._index()

        def rename() -> int:
            self.source.project.rename_robot(index, name)
            return index
        return self._robot_edit("Rename robot", rename)

    def remove_robot(self) -> bool:
        """Remove the chosen robot (the last one cannot be removed); Edit > Undo brings it back."""
        index = self._index()
        return self._robot_edit("Remove robot",
                                lambda: (self.source.project.remove_robot(index), max(0, index - 1))[1])
