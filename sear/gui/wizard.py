"""The Sensor Wizard (SPEC §2): one tab per registered sensor type, filled from datasheets or presets.

Each tab is a SensorForm (sear.gui.sensorform), built from the type's declaration. Added sensors are
listed on the left, where they can be selected to edit, duplicated or removed; every change is one undo
step. Save and Close writes the sensors file through `save_sensors`. Under the list, what the ray
sensors added cost together (sear.sensors.cost), at the project's physics rate.
"""

from __future__ import annotations

import copy
from pathlib import Path

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenuBar,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from sear.errors import SearError
from sear.gui.geometry import restore_window, save_window, scrolling
from sear.gui.sensorform import COST_STYLE, COST_WARNING_STYLE, SensorForm, load_presets, title_of
from sear.gui.widgets import UndoHistory, WindowUndoKeys, commit_typing, wrap_tooltips
from sear.project import Project
from sear.sensors import registry
from sear.sensors.config import SensorConfig
from sear.sensors.cost import describe_total, ray_cost, total_cost
from sear.sensors.files import load_sensors, save_sensors


class SensorWizard(QDialog):
    """Edits the list of sensors of a project and saves it to the project's sensors file."""

    def __init__(self, project: Project, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("SEAR Sensor Wizard")
        self.project = project
        self.saved_path: Path | None = None
        self.sensors: list[SensorConfig] = []
        self.editing: int | None = None
        presets = load_presets()

        self.tabs = QTabWidget()
        self.forms: list[SensorForm] = []
        self.add_buttons: list[QPushButton] = []
        self.type_names = list(registry.models())
        """The sensor type of each tab."""
        for type_name, model in registry.models().items():
            form = SensorForm(model, presets, physics_hz=project.simulation.physics_hz)
            page = QWidget()
            layout = QVBoxLayout(page)
            layout.addWidget(scrolling(form), 1)  # scrolls when the window is smaller than the form
            row = QHBoxLayout()
            add = QPushButton(f"Add {title_of(type_name)}")
            add.clicked.connect(self.add_current)
            clear = QPushButton("Clear All Fields")
            clear.clicked.connect(form.clear_fields)
            form.edited.connect(self.record)
            row.addWidget(add)
            row.addWidget(clear)
            row.addStretch(1)
            layout.addLayout(row)
            self.tabs.addTab(page, title_of(type_name))
            self.forms.append(form)
            self.add_buttons.append(add)
        self._last_tab = 0
        self.tabs.currentChanged.connect(self._tab_changed)

        self.list = QListWidget()
        self.list.setWordWrap(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.itemClicked.connect(self._select)
        self.edit_button = QPushButton("Edit")
        self.duplicate_button = QPushButton("Duplicate")
        self.remove_button = QPushButton("Remove")
        self.edit_button.clicked.connect(lambda: self._select(self.list.currentItem()))
        self.duplicate_button.clicked.connect(self.duplicate)
        self.remove_button.clicked.connect(self.remove)
        side = QWidget()
        side.setMinimumWidth(220)
        side_layout = QVBoxLayout(side)
        side_layout.addWidget(QLabel("Sensors added:"))
        side_layout.addWidget(self.list, 1)
        self.cost_total = QLabel()
        """What the added sensors that cast rays cost together (hidden when none does)."""
        self.cost_total.setWordWrap(True)
        self.cost_total.setToolTip("The ray sensors above together: rays per simulated second and the share of "
                                   "one CPU core they need to keep up with real time (each sensor's own cost is "
                                   "shown on its tab).")
        side_layout.addWidget(self.cost_total)
        buttons = QHBoxLayout()
        for b in (self.edit_button, self.duplicate_button, self.remove_button):
            buttons.addWidget(b)
        side_layout.addLayout(buttons)

        splitter = QSplitter()
        splitter.setChildrenCollapsible(False)
        self.splitter = splitter
        splitter.addWidget(side)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([280, 1000])
        bottom = QHBoxLayout()
        self.file_label = QLabel()
        self.file_label.setStyleSheet("color: #555;")
        self.save_button = QPushButton("Save and Close")
        self.save_button.setDefault(True)
        self.save_button.setShortcut(QKeySequence.StandardKey.Save)
        self.save_button.setToolTip(f"Write the sensors file and close ({self.save_button.shortcut().toString()})")
        cancel = QPushButton("Cancel")
        self.save_button.clicked.connect(self.save_and_close)
        cancel.clicked.connect(self.reject)
        bottom.addWidget(self.file_label, 1)
        bottom.addWidget(cancel)
        bottom.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addLayout(bottom)
        restore_window(self, "wizard", QSize(1300, 760), {"splitter": splitter})

        if project.code.sensors is not None and project.code.sensors.exists():
            try:
                self.sensors = load_sensors(project.code.sensors)
            except SearError as exc:
                QMessageBox.warning(self, "Sensors file not loaded", f"{exc}\n\nStarting with no sensors; saving "
                                    "will replace the file (its previous version is kept as .bak).")
        self._saved_sensors = copy.deepcopy(self.sensors)
        self.file_label.setText(f"Saves to {project.code.sensors.name}" if project.code.sensors
                                else "Save and Close asks where to save the sensors file.")
        if project.code.sensors:
            self.file_label.setToolTip(str(project.code.sensors))
        self._refresh_list()

        self.history = UndoHistory(self._snapshot, self._restore, self)
        """Undo/Redo of every change in the wizard: fields, presets, sensors added, updated, duplicated,
        removed; its clean state is the wizard as opened (the title shows * away from it)."""
        self.history.cleanChanged.connect(self._clean_changed)
        self.setWindowTitle("SEAR Sensor Wizard[*]")
        self._build_menus(layout)
        self._undo_keys = WindowUndoKeys(self)
        self._undo_keys.watch(self)
        wrap_tooltips(self)

    def _clean_changed(self, clean: bool) -> None:
        self.setWindowModified(not clean)

    def _build_menus(self, layout: QVBoxLayout) -> None:
        from sear.gui import help as help_

        bar = QMenuBar(self)
        layout.setMenuBar(bar)
        edit = bar.addMenu("&Edit")
        undo = self.history.action(self, "&Undo", self.commit_typing)
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.history.action(self, "&Redo", self.commit_typing, redo=True)
        redo.setShortcuts([QKeySequence(QKeySequence.StandardKey.Redo), QKeySequence("Ctrl+Y")])
        edit.addAction(undo)
        edit.addAction(redo)
        edit.addSeparator()
        duplicate = edit.addAction("&Duplicate Sensor", self.duplicate)
        duplicate.setShortcut(QKeySequence("Ctrl+D"))
        remove = edit.addAction("Re&move Sensor", self.remove)
        remove.setShortcut(QKeySequence("Ctrl+Delete"))
        clear = edit.addAction("&Clear All Fields", lambda: self.form.clear_fields())
        for action in (undo, redo, duplicate, remove, clear):
            self.addAction(action)
        self.commands = {"undo": undo, "redo": redo, "duplicate": duplicate, "remove": remove, "clear": clear}
        """The wizard's menu actions by name."""
        self.commands.update(help_.add_help_menu(self, bar, page="sensors.md"))

    # --- undo ---------------------------------------------------------------------------------------------

    def _snapshot(self) -> tuple:
        """What an edit can change: the sensors, which one is edited, and each tab's fields and note."""
        return copy.deepcopy((self.sensors, self.editing,
                              tuple((f.config(), f.loaded, f.source.text()) for f in self.forms)))

    def _restore(self, state: tuple) -> None:
        sensors, editing, forms = state
        tab = None
        for index, (form, (config, loaded, note)) in enumerate(zip(self.forms, forms, strict=True)):
            if form.config() != config:
                tab = index
            form.set_config(config)
            form.loaded = loaded
            form.source.setText(note)
        self.sensors = sensors
        self._refresh_list()
        self._set_editing(editing)
        if tab is None and editing is not None:
            tab = self.type_names.index(sensors[editing].TYPE)
        if tab is not None:
            self.tabs.blockSignals(True)
            self.tabs.setCurrentIndex(tab)
            self.tabs.blockSignals(False)
            self._last_tab = tab

    def commit_typing(self) -> None:
        """Take the value typed into the field that has the focus (widgets.commit_typing): adding, saving,
        closing, switching tabs and undo call it first, so they see what the form shows."""
        commit_typing(self)

    def record(self, what: str) -> bool:
        """Make the change just made one undo step named `what`."""
        return self.history.record(what)

    @property
    def form(self) -> SensorForm:
        return self.forms[self.tabs.currentIndex()]

    def _refresh_list(self) -> None:
        self.list.clear()
        for i, sensor in enumerate(self.sensors):
            text = f"{sensor.name}  —  {title_of(sensor.TYPE)}" + (f"\n      {sensor.model_number}"
                                                               if sensor.model_number else "")
            item = QListWidgetItem(text)
            item.setToolTip(text.replace("\n     ", ""))
            item.setData(Qt.ItemDataRole.UserRole, i)
            self.list.addItem(item)
        for b in (self.edit_button, self.duplicate_button, self.remove_button):
            b.setEnabled(bool(self.sensors))
        self._update_total()

    def _update_total(self) -> None:
        """State what the added ray sensors cost together."""
        physics_hz = self.project.simulation.physics_hz
        total = total_cost(self.sensors, physics_hz)
        if total is None:
            self.cost_total.hide()
            self.cost_total.setText("")
            self.cost_total.setProperty("warning", False)
            return
        count = sum(ray_cost(s, physics_hz) is not None for s in self.sensors)
        self.cost_total.setText("Ray cost: " + describe_total(total, count))
        self.cost_total.setProperty("warning", total.heavy)
        self.cost_total.setStyleSheet(COST_WARNING_STYLE if total.heavy else COST_STYLE)
        self.cost_total.show()

    def _set_editing(self, index: int | None) -> None:
        self.editing = index
        for button, type_name in zip(self.add_buttons, self.type_names, strict=True):
            button.setText(f"Update {self.sensors[index].name}" if index is not None and
                           type_name == self.sensors[index].TYPE else f"Add {title_of(type_name)}")

    def add_current(self) -> bool:
        """Add (or update, when editing one) the sensor in the current tab's fields."""
        self.commit_typing()
        form = self.form
        problems = form.problems()
        config = form.config()
        clash = [i for i, s in enumerate(self.sensors) if s.name == config.name and i != self.editing]
        if clash:
            problems.append(f"A sensor named {config.name!r} exists already ({title_of(self.sensors[clash[0]].TYPE)}); "
                            "sensor names must be unique.")
        updating = self.editing is not None and self.sensors[self.editing].TYPE == config.TYPE
        if problems:
            QMessageBox.warning(self, "Cannot update this sensor" if updating else "Cannot add this sensor",
                                "\n".join(problems))
            return False
        if updating:
            assert self.editing is not None
            self.sensors[self.editing] = config
        else:
            self.sensors.append(config)
        self._set_editing(None)
        self._refresh_list()
        form.clear()
        self.record(f"{'Update' if updating else 'Add'} {config.name}")
        return True

    def _select(self, item: QListWidgetItem | None, *, step: bool = True) -> None:
        """Edit the sensor of `item`: its tab, its values in the form (an undo step unless `step` is False)."""
        if item is None:
            return
        index = item.data(Qt.ItemDataRole.UserRole)
        sensor = self.sensors[index]
        tab = self.type_names.index(sensor.TYPE)
        self.tabs.setCurrentIndex(tab)
        if self.tabs.currentIndex() != tab:
            return  # the user chose to stay with unsaved fields
        self.forms[tab].set_config(copy.deepcopy(sensor))
        self._set_editing(index)
        self.list.setCurrentRow(index)
        if step:
            self.record(f"Edit {sensor.name}")

    def duplicate(self) -> None:
        """Add a copy of the selected sensor (named name_2, name_3, ...) and edit the copy."""
        item = self.list.currentItem()
        if item is None:
            return
        sensor = copy.deepcopy(self.sensors[item.data(Qt.ItemDataRole.UserRole)])
        names = {s.name for s in self.sensors}
        base, n = sensor.name, 2
        while f"{base}_{n}" in names:
            n += 1
        sensor.name = f"{base}_{n}"
        self.sensors.append(sensor)
        self._refresh_list()
        self._select(self.list.item(len(self.sensors) - 1), step=False)
        self.record(f"Duplicate as {sensor.name}")

    def remove(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        index = item.data(Qt.ItemDataRole.UserRole)
        name = self.sensors[index].name
        del self.sensors[index]
        if self.editing == index:
            self._set_editing(None)
        elif self.editing is not None and self.editing > index:
            self._set_editing(self.editing - 1)
        self._refresh_list()
        self.record(f"Remove {name}")

    def _tab_changed(self, index: int) -> None:
        self.commit_typing()  # the focus may still be in a field of the tab left
        previous = self.forms[self._last_tab]
        if self._last_tab != index and previous.is_modified():
            choice = self.ask_leave(self.tabs.tabText(self._last_tab))
            if choice == "add":
                self.tabs.blockSignals(True)
                self.tabs.setCurrentIndex(self._last_tab)
                added = self.add_current()
                if added:
                    self.tabs.setCurrentIndex(index)
                self.tabs.blockSignals(False)
                if not added:
                    return
            elif choice == "discard":
                previous.clear()
                self._set_editing(None)
                self.record(f"Discard the {self.tabs.tabText(self._last_tab)} fields")
            else:
                self.tabs.blockSignals(True)
                self.tabs.setCurrentIndex(self._last_tab)
                self.tabs.blockSignals(False)
                return
        self._last_tab = self.tabs.currentIndex()

    def ask_leave(self, tab: str) -> str:
        """Ask what to do with values typed on `tab` but not added: 'add', 'discard' or 'stay'."""
        box = QMessageBox(QMessageBox.Icon.Question, "Fields not added",
                          f"The {tab} tab has values that were not added. Add them as a sensor, discard them, "
                          "or stay on that tab?", parent=self)
        add = box.addButton("Add", QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole)
        stay = box.addButton("Stay", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(stay)
        box.exec()
        clicked = box.clickedButton()
        return "add" if clicked is add else "discard" if clicked is discard else "stay"

    def reject(self) -> None:
        """Cancel, Escape or the window's close button: ask before throwing added or typed sensors away."""
        self.commit_typing()
        changed = self.sensors != self._saved_sensors or self.form.is_modified()
        if changed and self.saved_path is None:
            answer = QMessageBox.question(
                self, "Discard the sensor changes?",
                "Sensors were added, edited or removed (or typed and not added) since the file was last saved. "
                "Close the wizard and discard those changes?",
                QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Cancel)
            if answer != QMessageBox.StandardButton.Discard:
                return
        super().reject()

    def save_and_close(self) -> None:
        """Write the sensors file (first asking whether to add the fields typed but not added) and close."""
        self.commit_typing()
        if self.form.is_modified():
            answer = QMessageBox.question(
                self, "Fields not added", "The current tab has values that were not added. Add them before saving?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No | QMessageBox.StandardButton.Cancel)
            if answer == QMessageBox.StandardButton.Cancel:
                return
            if answer == QMessageBox.StandardButton.Yes and not self.add_current():
                return
        path = self.project.code.sensors
        if path is None:
            start = (self.project.path.parent if self.project.path else Path.cwd()) / "sensors.xml"
            chosen, _ = QFileDialog.getSaveFileName(self, "Save the sensors file", str(start),
                                                    "Sensor files (*.xml)")
            if not chosen:
                return
            path = Path(chosen)
        try:
            save_sensors(path, self.sensors)
        except SearError as exc:
            QMessageBox.critical(self, "Not saved", str(exc))
            return
        self.saved_path = path
        self.accept()

    def done(self, result: int) -> None:
        """Close (saved, cancelled or discarded): remember the window's size and its splitter first."""
        save_window(self, "wizard", {"splitter": self.splitter})
        super().done(result)
