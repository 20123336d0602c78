"""The Project Settings window's menus and toolbar: File, Edit, View, Simulation and Help, each action
also in `window.commands` by name (for scripts and tests)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QStyle, QToolBar

if TYPE_CHECKING:
    from sear.gui.settings.window import SettingsWindow


def build_menus(window: SettingsWindow) -> None:
    """Give `window` its menu bar and toolbar; set `commands`, `recent_menu`, `run_menu` and the toolbar's
    buttons (`simulate_button`, `stop_button`, `wizard_button`, `save_button`, `load_button`)."""
    _file_and_simulation_menus(window)
    _edit_view_help_menus(window)


def _file_and_simulation_menus(window: SettingsWindow) -> None:
    icon = window.style().standardIcon
    sp = QStyle.StandardPixmap
    menu = window.menuBar().addMenu("&File")
    toolbar = window.addToolBar("File")
    toolbar.setObjectName("file-toolbar")
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    window.commands = {}
    slot: Callable[[], object]
    for key, text, shortcut, pixmap, slot in (
        ("new", "&New", QKeySequence.StandardKey.New, sp.SP_FileIcon, window.new_project),
        ("open", "&Open…", QKeySequence.StandardKey.Open, sp.SP_DialogOpenButton, lambda: window.open_project()),
        ("save", "&Save", QKeySequence.StandardKey.Save, sp.SP_DialogSaveButton, window.save),
        ("save_as", "Save &As…", QKeySequence.StandardKey.SaveAs, sp.SP_DriveHDIcon, window.save_as),
    ):
        action = QAction(icon(pixmap), text, window)
        action.setShortcut(shortcut)
        action.setToolTip(f"{text.replace('&', '').rstrip('…')} ({action.shortcut().toString()})")
        action.triggered.connect(slot)
        menu.addAction(action)
        toolbar.addAction(action)
        window.commands[key] = action
        if key == "open":
            window.recent_menu = menu.addMenu("Open &Recent")
            demo = menu.addAction("Open &Demo…")
            demo.setToolTip("Copy the demo project into a folder you choose and open the copy")
            demo.triggered.connect(lambda: window.open_demo())
            window.commands["open_demo"] = demo
    menu.addSeparator()
    quit_action = QAction(icon(sp.SP_DialogCloseButton), "&Quit", window)
    quit_action.setShortcut(QKeySequence.StandardKey.Quit)
    quit_action.triggered.connect(window.close)
    menu.addAction(quit_action)
    window.commands["quit"] = quit_action

    run_menu = window.run_menu = window.menuBar().addMenu("&Simulation")
    toolbar.addSeparator()
    for key, text, keys, pixmap, slot in (
        ("simulate", "Simulate", "F5", sp.SP_MediaPlay, window.simulate),
        ("stop", "Stop", "Shift+F5", sp.SP_MediaStop, window.stop),
        ("wizard", "Sensor Wizard…", "F7", sp.SP_FileDialogDetailedView, window.code_tab.open_wizard),
    ):
        action = QAction(icon(pixmap), text, window)
        action.setShortcut(QKeySequence(keys))
        action.setToolTip(f"{text.rstrip('…')} ({keys})")
        action.triggered.connect(slot)
        run_menu.addAction(action)
        toolbar.addAction(action)
        window.commands[key] = action
    window.commands["stop"].setEnabled(False)
    # The toolbar is the window's one row of buttons (the actions' buttons, named for scripts and tests).
    window.simulate_button, window.stop_button, window.wizard_button, window.save_button, window.load_button = (
        toolbar.widgetForAction(window.commands[key]) for key in ("simulate", "stop", "wizard", "save", "open"))


def _edit_view_help_menus(window: SettingsWindow) -> None:
    """Edit (Undo/Redo of every edit, Reset Defaults), View (tabs, panels) and Help menus."""
    edit = window.menuBar().addMenu("&Edit")
    undo = window.history.createUndoAction(window, "&Undo")
    undo.setShortcut(QKeySequence.StandardKey.Undo)
    redo = window.history.createRedoAction(window, "&Redo")
    redo.setShortcuts([QKeySequence(QKeySequence.StandardKey.Redo), QKeySequence("Ctrl+Y")])
    icon = window.style().standardIcon
    undo.setIcon(icon(QStyle.StandardPixmap.SP_ArrowBack))
    redo.setIcon(icon(QStyle.StandardPixmap.SP_ArrowForward))
    edit.addAction(undo)
    edit.addAction(redo)
    edit.addSeparator()
    reset = QAction(f"Reset {window.dynamics_tab.TITLE} to Defaults…", window)
    reset.triggered.connect(window.dynamics_tab.reset_defaults)
    edit.addAction(reset)
    window.commands.update(undo=undo, redo=redo, reset_dynamics=reset)

    view = window.menuBar().addMenu("&View")
    for index in range(window.tabs.count()):
        action = QAction(window.tabs.tabText(index), window)
        action.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
        action.triggered.connect(lambda _=False, i=index: window.tabs.setCurrentIndex(i))
        view.addAction(action)
        window.commands[f"tab{index + 1}"] = action
    view.addSeparator()
    for dock in window.findChildren(QDockWidget):
        view.addAction(dock.toggleViewAction())
    for toolbar in window.findChildren(QToolBar):
        toggle = toolbar.toggleViewAction()
        toggle.setText("Toolbar")
        view.addAction(toggle)

    # before Simulation in the bar: File, Edit, View, Simulation, Help
    window.menuBar().insertMenu(window.run_menu.menuAction(), edit)
    window.menuBar().insertMenu(window.run_menu.menuAction(), view)
    from sear.gui import help as help_

    window.commands.update(help_.add_help_menu(window))
