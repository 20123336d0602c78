"""What every tab of the Project Settings window shares.

A tab is a widget that edits part of the window's `Project` (sear.project): the terrain, or a part of the
robot chosen in the window's robot list. It writes a field of the model as soon as its editor changes and
then tells the window (`edited`: the undo step's name, and whether the tab's preview must be drawn again);
`refresh()` writes the model back into its editors without telling anyone. The window records the undo
step, updates every tab's enabled state (`update_enabled`), and redraws the current tab's preview.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QHBoxLayout, QVBoxLayout, QWidget

from sear.fields import field_info
from sear.gui.preview import MeshPreview
from sear.gui.widgets import NumberField
from sear.models.meshfiles import MESH_SUFFIXES
from sear.project import (
    Body,
    CodeSetup,
    Dynamics,
    Gripper,
    Project,
    Robot,
    SimulationSettings,
    Terrain,
)

MESH_FILTER = "Models (" + " ".join(f"*{s}" for s in MESH_SUFFIXES) + ");;All files (*)"
"""The file dialogs' filter for model files (a body's, a wheel's)."""
ROBOT_SECTIONS = ("body", "wheels", "dynamics", "code")
"""The parts of a project that belong to a robot: the tabs edit the chosen robot's."""
SECTION_CLASSES: dict[str, type] = {"terrain": Terrain, "body": Body, "dynamics": Dynamics, "code": CodeSetup,
                                    "simulation": SimulationSettings, "body.gripper": Gripper}
"""The dataclass of each dotted section a tab's editors name (their labels name undo steps)."""


def label(cls: type, name: str) -> str:
    """A field's label as its declaration gives it ('Mass')."""
    return field_info(cls, name).label


class EditedProject(Protocol):
    """What the tabs edit: the window's project and the robot chosen in its robot list."""

    @property
    def project(self) -> Project: ...

    @property
    def robot(self) -> Robot: ...


class SettingsTab(QWidget):
    """One tab of the Project Settings window (its page: the window puts it in a scroll area)."""

    TITLE: ClassVar[str] = ""
    """The tab's title ('Vehicle Dynamics'), as problems and the View menu name it."""
    SECTIONS: ClassVar[tuple[str, ...]] = ()
    """The project's parts it edits ('dynamics'): an undo step that changed only one of them shows this tab."""

    edited = Signal(str, bool)
    """The tab changed the project: the undo step's name, and whether the preview must be drawn again."""
    message = Signal(str, int)
    """A status bar message and how long to show it, ms."""

    def __init__(self, source: EditedProject) -> None:
        super().__init__()
        self.source = source
        self.numbers: dict[tuple[str, str], NumberField] = {}
        """The tab's number editors by (dotted section, field name)."""

    @property
    def project(self) -> Project:
        return self.source.project

    @property
    def robot(self) -> Robot:
        """The robot the robot tabs edit (chosen in the window's robot list)."""
        return self.source.robot

    # --- editors bound to fields ------------------------------------------------------------------------

    def section(self, name: str) -> Any:
        """The part of the project a dotted section names ('dynamics', 'body.gripper'; the robot's sections
        are the chosen robot's); None when it is absent."""
        first, *rest = name.split(".")
        obj = getattr(self.robot if first in ROBOT_SECTIONS else self.project, first)
        for part in rest:
            obj = getattr(obj, part) if obj is not None else None
        return obj

    def number(self, section: str, cls: type, name: str) -> NumberField:
        """An editor of a number field: unit, limits, precision and tooltip as the field declares them."""
        info = field_info(cls, name)
        field = NumberField(info.unit, info.bounds(), decimals=info.decimals or 4, tooltip=info.help)
        field.valueChanged.connect(lambda value, s=section, n=name: self.set_field(s, n, float(value)))
        self.numbers[(section, name)] = field
        return field

    def form(self, section: str, cls: type, names: list[str]) -> QFormLayout:
        """A form of number editors, one row per field, labelled as the fields declare."""
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        for name in names:
            form.addRow(label(cls, name) + ":", self.number(section, cls, name))
        return form

    def set_field(self, section: str, name: str, value: Any, *, preview: bool = False) -> None:
        """Write a field of the project (one undo step, named after the field's label) unless it holds the
        value already or its part is absent (a gripper the robot does not have). `preview`: the change
        shows in the tab's preview."""
        obj = self.section(section)
        if obj is None or getattr(obj, name) == value:
            return
        setattr(obj, name, value)
        self.edited.emit(self.field_label(section, name), preview)

    @staticmethod
    def field_label(section: str, name: str) -> str:
        """How an undo step names a field ('Undo Mass')."""
        try:
            return label(SECTION_CLASSES[section], name)
        except (KeyError, LookupError, ValueError):
            return name.replace("_", " ").capitalize()

    # --- what the window asks of every tab --------------------------------------------------------------

    def refresh(self) -> None:
        """Write the project into the tab's editors (without telling the window). Subclasses extend it."""
        for (section, name), field in self.numbers.items():
            part = self.section(section)
            value = getattr(part if part is not None else Gripper(), name)  # no gripper: its defaults, greyed
            if value is not None:
                field.set(float(value))

    def update_enabled(self) -> None:
        """Enable, disable, show or hide editors as the project's fields say (after any change)."""

    def update_preview(self) -> None:
        """Draw the tab's preview of the project anew (the window calls it on the current tab)."""

    def field_widget(self, field: str) -> QWidget | None:
        """The editor of a dotted project field ('dynamics.mass'), or None when this tab has none."""
        section, _, name = field.rpartition(".")
        return self.numbers.get((section, name))

    def reveal(self, widget: QWidget) -> None:
        """Make `widget`, an editor of this tab, visible (a page of an inner tab widget) before it is focused."""


def with_preview(form_widget: QWidget, preview: MeshPreview, page: QWidget) -> None:
    """Lay `page` out as a form beside a 3-D preview of what it edits."""
    layout = QHBoxLayout(page)
    layout.addWidget(form_widget, 3)
    group = QGroupBox("Preview")
    QVBoxLayout(group).addWidget(preview)
    layout.addWidget(group, 2)
