"""Window sizes that fit the screen, and window layouts remembered between sessions.

Every window opens inside the screen's available area (QScreen.availableGeometry, in logical pixels, so
`QT_SCALE_FACTOR` is accounted for) and can be made as small as 1280×720 with nothing cut off: tall forms
scroll instead of setting the window's minimum height. Sizes of windows, docks and splitters are kept in
QSettings("SEAR", "SEAR") under the window's key.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QPoint, QRect, QSettings, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QMainWindow, QScrollArea, QSplitter, QWidget

SMALLEST = QSize(1280, 720)
"""The smallest screen (logical pixels) every window must fit: a laptop's 1366×768, or 1920×1080 at 1.5
scale."""
FRAME_ALLOWANCE = QSize(16, 40)
"""Room left around a window for a window manager's title bar and borders (pixels), which Qt does not
know before the window is shown."""


def settings() -> QSettings:
    """The application's settings store (the same one the settings window keeps recent projects in)."""
    return QSettings("SEAR", "SEAR")


def available(widget: QWidget | None = None) -> QRect:
    """The available area (without panels and docks) of the screen `widget` is on, or the primary one."""
    screen = widget.screen() if widget is not None else None
    screen = screen or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def fit_window(window: QWidget, preferred: QSize) -> None:
    """Give `window` its preferred size, or less where the screen is smaller, and place it inside the
    screen's available area, centred."""
    area = available(window)
    room = area.size() - FRAME_ALLOWANCE
    size = preferred.boundedTo(room).expandedTo(window.minimumSizeHint().boundedTo(room))
    window.resize(size)
    left = area.left() + max(0, (area.width() - size.width()) // 2)
    top = area.top() + max(0, (area.height() - size.height() - FRAME_ALLOWANCE.height()) // 2)
    window.move(QPoint(left, top))


def keep_inside(window: QWidget) -> None:
    """Shrink and move `window` (a restored geometry, say) so that it lies inside the available area."""
    area = available(window)
    size = window.size().boundedTo(area.size() - FRAME_ALLOWANCE)
    if size != window.size():
        window.resize(size)
    left = min(max(window.x(), area.left()), area.right() + 1 - size.width())
    top = min(max(window.y(), area.top()), area.bottom() + 1 - size.height() - FRAME_ALLOWANCE.height())
    window.move(QPoint(max(left, area.left()), max(top, area.top())))


def restore_window(window: QWidget, key: str, preferred: QSize, splitters: dict[str, QSplitter] | None = None) -> bool:
    """Size `window` as it was last closed (geometry, docks and toolbars of a main window, `splitters` by
    name), kept inside the screen; the first time, its preferred size fitted to the screen. True when a
    remembered layout was restored (False: the caller sets its first-time dock sizes)."""
    store = settings()
    geometry = store.value(f"{key}/geometry")
    restored = isinstance(geometry, QByteArray) and window.restoreGeometry(geometry)
    if restored:
        keep_inside(window)
    else:
        fit_window(window, preferred)
    state = store.value(f"{key}/state")
    if isinstance(window, QMainWindow) and isinstance(state, QByteArray):
        restored = window.restoreState(state) and restored
    for name, splitter in (splitters or {}).items():
        sizes = store.value(f"{key}/{name}")
        if isinstance(sizes, QByteArray):
            splitter.restoreState(sizes)
    return restored


def save_window(window: QWidget, key: str, splitters: dict[str, QSplitter] | None = None) -> None:
    """Remember `window`'s geometry, its docks and toolbars (a main window) and `splitters` by name."""
    store = settings()
    store.setValue(f"{key}/geometry", window.saveGeometry())
    if isinstance(window, QMainWindow):
        store.setValue(f"{key}/state", window.saveState())
    for name, splitter in (splitters or {}).items():
        store.setValue(f"{key}/{name}", splitter.saveState())


def scrolling(widget: QWidget) -> QScrollArea:
    """`widget` in a frameless scroll area that scrolls only when the window is smaller than the form."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    return area
