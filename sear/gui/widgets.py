"""Small editors shared by the settings window and the Sensor Wizard."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import (
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
        self.setToolTip(tip)
        self.setStatusTip(self.reason)
        self.last_refusal = ""
        """The last reason shown for a refused entry ('' before any)."""

    def validate(self, text: str, pos: int):
        result = super().validate(text, pos)
        state = result[0] if isinstance(result, tuple) else result
        if state == QValidator.State.Invalid and (self.hasFocus() or self.lineEdit().isModified()):
            self._refuse(text)
        return result

    def _refuse(self, text: str) -> None:
        typed = text.removeprefix(self.prefix()).removesuffix(self.suffix()).strip()
        lo, hi = self.minimum(), self.maximum()
        reason = self.reason or f"Must be a number from {lo:g} to {hi:g}."
        message = f"{typed!r} is not accepted here. {reason}" if typed else reason
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
        self.setToolTip(tooltip)
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
        self.edit.setToolTip(tooltip)
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
        self.edit.setToolTip(f"{self.tooltip}\n{path}" if path else self.tooltip)
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
