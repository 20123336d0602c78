"""Small editors shared by the settings window and the Sensor Wizard."""

from __future__ import annotations

import copy
import html
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence, QUndoCommand, QUndoStack, QValidator
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QToolTip,
    QWidget,
)

from sear.fields import label_of, unit_of  # noqa: F401  (re-exported for the editors)

TOOLTIP_EM = 40
"""Width of a wrapped tooltip, in em (the issue asks for at most about 60)."""


def _might_be_rich(text: str) -> bool:
    from PySide6 import QtGui

    # QtGui's Qt namespace (not QtCore's) has mightBeRichText
    return bool(QtGui.Qt.mightBeRichText(text))


def rich_tip(text: str) -> str:
    """`text` as a rich-text tooltip, wrapped at TOOLTIP_EM em (a plain tooltip is one line, however long).

    Line breaks in `text` are kept; text that is rich already is returned as it is."""
    if not text or _might_be_rich(text):
        return text
    body = "<br>".join(html.escape(line, quote=False) for line in text.split("\n"))
    return f"<p>{body}</p>"


def wrap_tooltips(root: QWidget) -> None:
    """Make every plain tooltip below `root` (and its own) a wrapped rich-text one."""
    for widget in [root, *root.findChildren(QWidget)]:
        tip = widget.toolTip()
        if tip and not _might_be_rich(tip):
            widget.setToolTip(rich_tip(tip))


def commit_typing(window: QWidget) -> None:
    """Take the value typed into the field of `window` that has the keyboard focus, as leaving the field
    would: a spin box interprets its text (its valueChanged follows), a text field or an editable combo
    box's text sends editingFinished.

    A field takes what is typed only when it loses the focus (or on Enter), but a command started from
    the keyboard or a toolbar leaves the focus where it is: every command that uses or replaces the edited
    data (save, simulate, close, undo, switching what is shown) calls this first, so the typed value is
    the one it sees. Nothing happens when no field of `window` has the focus or nothing was typed."""
    focus = QApplication.focusWidget()
    if focus is None or focus.window() is not window.window():
        return
    parent = focus.parentWidget()
    spin = focus if isinstance(focus, QAbstractSpinBox) else parent if isinstance(parent, QAbstractSpinBox) else None
    if spin is not None:
        spin.interpretText()
        return
    edit = focus.lineEdit() if isinstance(focus, QComboBox) and focus.isEditable() else focus
    if isinstance(edit, QLineEdit) and edit.isModified():
        edit.editingFinished.emit()  # the handlers compare with the model: a value already taken is no new step


class StateCommand(QUndoCommand):
    """One edit as the state before and after it; undo and redo put one of them back with `apply`.

    The edit has already been made when the command is pushed, so its first redo does nothing."""

    def __init__(self, text: str, before: Any, after: Any, apply: Callable[[Any], None]) -> None:
        super().__init__(text)
        self.before, self.after, self._apply = before, after, apply
        self._done = True

    def redo(self) -> None:
        if self._done:
            self._done = False
            return
        self._apply(self.after)

    def undo(self) -> None:
        self._apply(self.before)


class UndoHistory(QUndoStack):
    """An undo stack of whole-state snapshots: every edit is recorded by comparing the state now with the
    state after the last step, so any change of the model, however it was made, becomes one step.

    `snapshot()` returns a comparable copy of the edited state (it must not share mutable parts with the
    model); `restore(state)` writes one back into the model and the widgets."""

    def __init__(self, snapshot: Callable[[], Any], restore: Callable[[Any], None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._snapshot, self._restore = snapshot, restore
        self.state = snapshot()
        """The state after the last recorded step (or the last restore)."""
        self.restoring = False
        """True while undo or redo writes a state back (edits seen then are not new steps)."""

    def record(self, text: str) -> bool:
        """Push what changed since the last step as one step named `text` ('Undo <text>'); False when
        nothing changed."""
        if self.restoring:
            return False
        now = self._snapshot()
        if now == self.state:
            return False
        before, self.state = self.state, now
        self.push(StateCommand(text, before, now, self._apply))
        return True

    def sync(self) -> None:
        """Take the model as it is now as the state of the current step (after a change that is not an edit
        of its own, e.g. a name given by Save As)."""
        self.state = self._snapshot()

    def reset(self) -> None:
        """Forget every step: the model as it is now is the new start (a project opened or created)."""
        self.clear()
        self.sync()
        self.setClean()

    def action(self, parent: QObject, prefix: str, commit: Callable[[], None], *, redo: bool = False) -> QAction:
        """An Undo (or, with `redo`, Redo) action named `prefix` and the step ('&Undo Mass'), which first
        calls `commit` (commit_typing): a value typed and not yet taken becomes the step it undoes, instead
        of the step before it being undone and the typed value taken afterwards."""
        action = QAction(prefix, parent)

        def name(text: str) -> None:
            action.setText(f"{prefix} {text}" if text else prefix)

        def trigger() -> None:
            commit()
            if redo:
                self.redo()
            else:
                self.undo()

        action.triggered.connect(trigger)
        # Fed by the stack's own signals (as QUndoStack.createUndoAction is): nothing asks the stack while it
        # is being destroyed with its window.
        (self.canRedoChanged if redo else self.canUndoChanged).connect(action.setEnabled)
        (self.redoTextChanged if redo else self.undoTextChanged).connect(name)
        action.setEnabled(self.canRedo() if redo else self.canUndo())
        name(self.redoText() if redo else self.undoText())
        return action

    def _apply(self, state: Any) -> None:
        self.restoring = True
        try:
            self._restore(copy.deepcopy(state))
        finally:
            self.restoring = False
        self.state = state


class WindowUndoKeys(QObject):
    """Lets Ctrl+Z / Ctrl+Shift+Z reach the window's Undo and Redo while a text field has the focus but
    nothing of its own to undo (a text field otherwise takes those keys for itself, always)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            undo = event.matches(QKeySequence.StandardKey.Undo)
            redo = event.matches(QKeySequence.StandardKey.Redo) or \
                (event.key() == Qt.Key.Key_Y and event.modifiers() == Qt.KeyboardModifier.ControlModifier)
            if undo or redo:
                edit = watched.lineEdit() if isinstance(watched, QAbstractSpinBox | QComboBox) else watched
                if isinstance(edit, QLineEdit) and not (edit.isUndoAvailable() if undo else edit.isRedoAvailable()):
                    event.ignore()
                    return True
        return False

    def watch(self, root: QWidget) -> None:
        """Filter every text field, spin box and editable combo box below `root`."""
        for widget in root.findChildren(QWidget):
            if isinstance(widget, QLineEdit | QAbstractSpinBox) or (isinstance(widget, QComboBox)
                                                                    and widget.isEditable()):
                widget.installEventFilter(self)


def cross_marks(x: np.ndarray, y: np.ndarray, size: float) -> tuple[np.ndarray, np.ndarray]:
    """Line-segment pairs (for connect='pairs') drawing a small '+' at each point."""
    h = size / 2.0
    xs = np.column_stack([x - h, x + h, x, x]).ravel()
    ys = np.column_stack([y, y, y - h, y + h]).ravel()
    return xs, ys


class NumberField(QDoubleSpinBox):
    """A number with its unit, limited to what the file format accepts.

    A keystroke that would make the value impossible (a minus sign in a mass, 123 in a latitude) is
    refused, and the reason pops up beside the field and is sent with `refused` (the settings window
    shows it in its status bar); the tooltip says it too.
    """

    refused = Signal(str)

    def __init__(self, unit: str = "", bounds: tuple[float, float, bool, str] | None = None, decimals: int = 4,
                 tooltip: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lo, hi, open_lo, meaning = bounds or (-1e9, 1e9, False, "")
        step = 10.0 ** -decimals
        self.setDecimals(decimals)
        self.setRange(lo + step if open_lo else lo, hi)
        self.setSuffix(f" {unit}" if unit else "")
        self.setSingleStep(1.0 if hi - lo > 10 else 0.1)
        self.setKeyboardTracking(False)
        self.setAccelerated(True)
        self.setMinimumWidth(110)
        self.setMaximumWidth(220)
        self.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.reason = f"Must be {meaning}." if meaning else ""
        tip = " ".join(t for t in (tooltip, self.reason) if t)
        self.setToolTip(rich_tip(tip))
        self.setStatusTip(self.reason)
        self.last_refusal = ""
        """The last reason shown for a refused entry ('' before any)."""

    def validate(self, text: str, pos: int):
        result = super().validate(text, pos)
        state = result[0] if isinstance(result, tuple) else result
        if state == QValidator.State.Invalid and (self.hasFocus() or self.lineEdit().isModified()):
            self._refuse(text)
        return result

    def fixup(self, text: str) -> str:
        """Called when editing ends on text that is not a value (0 in a mass, a lone minus sign): the field
        goes back to its value, and says so instead of doing it silently."""
        if self.lineEdit().isModified():
            self._refuse(text, kept=True)
        return super().fixup(text)

    def _refuse(self, text: str, kept: bool = False) -> None:
        typed = text.removeprefix(self.prefix()).removesuffix(self.suffix()).strip()
        lo, hi = self.minimum(), self.maximum()
        reason = self.reason or f"Must be a number from {lo:g} to {hi:g}."
        message = f"{typed!r} is not accepted here. {reason}" if typed else reason
        if kept:
            message += f" Kept {self.textFromValue(self.value())}{self.suffix()}."
        if message == self.last_refusal and QToolTip.isVisible():
            return
        self.last_refusal = message
        QToolTip.showText(self.mapToGlobal(self.rect().bottomLeft()), message, self)
        self.refused.emit(message)

    def set(self, value: float) -> None:
        self.blockSignals(True)
        self.setValue(value if math.isfinite(value) else 0.0)
        self.blockSignals(False)


class IntField(QSpinBox):
    def __init__(self, lo: int = 1, hi: int = 1_000_000_000, tooltip: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRange(lo, hi)
        self.setKeyboardTracking(False)
        self.setToolTip(rich_tip(tooltip))
        self.setAlignment(Qt.AlignmentFlag.AlignRight)

    def set(self, value: int) -> None:
        self.blockSignals(True)
        self.setValue(value)
        self.blockSignals(False)


class FileField(QWidget):
    """A file path with a Browse button; says when the file does not exist."""

    changed = Signal(object)  # Path | None

    def __init__(self, caption: str, filters: str, *, save: bool = False, tooltip: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.caption, self.filters, self.save = caption, filters, save
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("no file chosen")
        self.edit.setToolTip(rich_tip(tooltip))
        self.tooltip = tooltip
        self.base: Path | None = None
        """Folder that relative entries are relative to (the project's)."""
        self.browse = QPushButton("Browse…")
        self.status = QLabel()
        self.status.setStyleSheet("color: #b00020;")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.browse)
        layout.addWidget(self.status)
        self.browse.clicked.connect(self._browse)
        self.edit.editingFinished.connect(self._edited)

    def path(self) -> Path | None:
        """The chosen file, absolute (a relative entry is taken relative to `base`)."""
        text = self.edit.text().strip()
        if not text:
            return None
        path = Path(text).expanduser()
        return path if path.is_absolute() or self.base is None else self.base / path

    def set(self, path: Path | None) -> None:
        """Show `path`, relative to `base` (the project's folder) when it lies below it."""
        text = ""
        if path is not None:
            text = str(path)
            if self.base is not None and Path(path).is_relative_to(self.base):
                text = str(Path(path).relative_to(self.base))
        self.edit.setText(text)
        self.edit.setToolTip(rich_tip(f"{self.tooltip}\n{path}" if path else self.tooltip))
        self._update_status()

    def _update_status(self) -> None:
        path = self.path()
        missing = path is not None and not path.exists()
        self.status.setText("file not found" if missing else "")
        self.edit.setStyleSheet("border: 1px solid #b00020;" if missing else "")

    def _edited(self) -> None:
        self._update_status()
        self.changed.emit(self.path())

    def _browse(self) -> None:
        current = self.path()
        start = str(current.parent if current is not None else (self.base or Path.cwd()))
        if self.save:
            chosen, _ = QFileDialog.getSaveFileName(self, self.caption, start, self.filters)
        else:
            chosen, _ = QFileDialog.getOpenFileName(self, self.caption, start, self.filters)
        if chosen:
            self.set(Path(chosen))
            self.changed.emit(self.path())
