"""Help for every window: the user guide and About.

The user guide is the Markdown of the repository's `docs/` folder, shipped inside the package as
sear/data/docs (a link to docs/ in a checkout, real files in an installed wheel), rendered offline in a
help window (QTextBrowser): links between the pages, and their images, work; web links open in the
browser. About lists the versions of SEAR, Python, Qt (and PySide6) and pybullet.

Any window adds the Help menu with `add_help_menu(window)`: Help > User Guide (F1) and Help > About.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from pathlib import Path

import shiboken6
from PySide6.QtCore import QSize, Qt, QUrl, qVersion
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenuBar,
    QMessageBox,
    QSplitter,
    QTextBrowser,
    QWidget,
)

import sear
from sear.gui.geometry import fit_window
from sear.resources import packaged

INDEX_PAGE = "index.md"
"""The guide's first page."""


def docs_folder() -> Path | None:
    """The folder of the user guide's Markdown pages, or None when SEAR was installed without them."""
    docs = packaged("docs")
    path = Path(str(docs))
    return path if path.is_dir() and (path / INDEX_PAGE).is_file() else None


def page_title(path: Path) -> str:
    """A page's title: its first '# ' heading (its file name when it has none)."""
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                return line[2:].replace("`", "").strip()
    except (OSError, UnicodeDecodeError):
        pass
    return path.stem.replace("-", " ").capitalize()


def guide_pages(folder: Path) -> list[Path]:
    """The guide's pages in reading order: the index first, then the others by title."""
    pages = sorted((p for p in folder.glob("*.md") if p.name != INDEX_PAGE), key=page_title)
    index = folder / INDEX_PAGE
    return [index, *pages] if index.is_file() else pages


def versions() -> dict[str, str]:
    """The versions About shows: SEAR, Python, Qt, PySide6 and pybullet (read from the installed package's
    metadata: the Settings window never loads the physics)."""

    def installed(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    import PySide6

    return {"SEAR": sear.__version__, "Python": platform.python_version(), "Qt": qVersion(),
            "PySide6": PySide6.__version__, "pybullet": installed("pybullet")}


def about_text() -> str:
    rows = "".join(f"<tr><td>{name}</td><td>&nbsp;{version}</td></tr>" for name, version in versions().items())
    return (f"<h3>SEAR {sear.__version__}</h3><p>Simulation Environment for Autonomous Robots: a desktop "
            f"simulator for people who build their own robots.</p><table>{rows}</table>"
            f"<p>{sys.platform}, {platform.machine()}</p>")


def show_about(parent: QWidget | None = None) -> None:
    """Help > About: the versions of SEAR, Python, Qt and pybullet."""
    QMessageBox.about(parent, "About SEAR", about_text())


class HelpWindow(QMainWindow):
    """The user guide: its pages on the left, the page read on the right."""

    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle("SEAR User Guide")
        self.folder = folder
        self.pages = QListWidget()
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)  # links are followed by _link: pages here, the web in the browser
        self.browser.anchorClicked.connect(self._link)
        self.browser.sourceChanged.connect(self._source_changed)
        for path in guide_pages(folder):
            item = QListWidgetItem(page_title(path))
            item.setData(Qt.ItemDataRole.UserRole, path.name)
            self.pages.addItem(item)
        self.pages.currentItemChanged.connect(self._page_chosen)
        splitter = QSplitter()
        splitter.addWidget(self.pages)
        splitter.addWidget(self.browser)
        splitter.setStretchFactor(1, 4)
        splitter.setSizes([220, 760])
        self.setCentralWidget(splitter)
        back = QAction("Back", self)
        back.setShortcuts([QKeySequence(QKeySequence.StandardKey.Back), QKeySequence("Backspace")])
        back.triggered.connect(self.browser.backward)
        forward = QAction("Forward", self)
        forward.setShortcut(QKeySequence(QKeySequence.StandardKey.Forward))
        forward.triggered.connect(self.browser.forward)
        close = QAction("Close", self)
        close.setShortcuts([QKeySequence(QKeySequence.StandardKey.Close), QKeySequence("Esc")])
        close.triggered.connect(self.close)
        toolbar = self.addToolBar("Navigation")
        toolbar.setObjectName("help-navigation")
        for action in (back, forward, close):
            toolbar.addAction(action)
        self.browser.backwardAvailable.connect(back.setEnabled)
        self.browser.forwardAvailable.connect(forward.setEnabled)
        back.setEnabled(False)
        forward.setEnabled(False)
        fit_window(self, QSize(1000, 680))  # inside the screen, smaller on small screens

    def show_page(self, name: str, fragment: str = "") -> None:
        """Show the page `name` (a file of the guide's folder), scrolled to `fragment` when given."""
        url = QUrl.fromLocalFile(str(self.folder / name))
        if fragment:
            url.setFragment(fragment)
        shown = self.browser.source()
        if shown.toLocalFile() != url.toLocalFile():
            self.browser.setSource(url)
        elif fragment:
            self.browser.scrollToAnchor(fragment)

    def _page_chosen(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None = None) -> None:
        if item is not None:
            self.show_page(item.data(Qt.ItemDataRole.UserRole))

    def page(self) -> str:
        """The file name of the page shown."""
        return Path(self.browser.source().toLocalFile()).name

    def _link(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)
            return
        target = Path(self.browser.source().resolved(url).toLocalFile())
        if target.suffix == ".md" and target.parent == self.folder and target.is_file():
            self.show_page(target.name, url.fragment())
        elif not url.path() and url.fragment():
            self.browser.scrollToAnchor(url.fragment())
        else:
            self.statusBar().showMessage(f"{url.toString()} is not a page of this guide", 6000)

    def _source_changed(self, url: QUrl) -> None:
        name = Path(url.toLocalFile()).name
        for row in range(self.pages.count()):
            item = self.pages.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == name and self.pages.currentRow() != row:
                self.pages.blockSignals(True)
                self.pages.setCurrentRow(row)
                self.pages.blockSignals(False)
        self.setWindowTitle(f"{page_title(self.folder / name)} — SEAR User Guide")


_window: HelpWindow | None = None


def show_user_guide(parent: QWidget | None = None, page: str = INDEX_PAGE) -> HelpWindow | None:
    """Open (or raise) the user guide at `page`; None, after saying why, when the guide is not installed."""
    global _window
    folder = docs_folder()
    if folder is None:
        QMessageBox.warning(parent, "No user guide", "This installation of SEAR has no user guide (sear/data/docs "
                            "is missing). It is also online with the sources, in the docs folder.")
        return None
    # While a modal dialog runs (the Sensor Wizard), every other window is blocked: the guide is then that
    # dialog's own window, so it can be read and scrolled.
    owner = QApplication.activeModalWidget()
    if _window is not None and not shiboken6.isValid(_window):  # deleted with the dialog that owned it
        _window = None
    if _window is None or _window.folder != folder or _window.parent() is not owner:
        if _window is not None:
            _window.close()
            _window.deleteLater()
        _window = HelpWindow(folder, owner)
    _window.show_page(page)
    _window.show()
    _window.raise_()
    _window.activateWindow()
    return _window


def add_help_menu(window: QWidget, menubar: QMenuBar | None = None, *, guide_shortcut: bool = True,
                  page: str = INDEX_PAGE) -> dict[str, QAction]:
    """Add the Help menu to a window's menu bar (`window.menuBar()` of a QMainWindow, or `menubar`): User
    Guide at `page` (F1 unless `guide_shortcut` is False, for a window whose F1 does something else) and
    About SEAR. Returns the actions by name: 'user_guide', 'about'."""
    if menubar is None:
        if not isinstance(window, QMainWindow):
            raise TypeError("add_help_menu needs the menu bar of a window that is not a QMainWindow")
        menubar = window.menuBar()
    menu = menubar.addMenu("&Help")
    guide = QAction("&User Guide", window)
    if guide_shortcut:
        guide.setShortcut(QKeySequence(QKeySequence.StandardKey.HelpContents))
    guide.setToolTip("The user guide, offline (F1)")
    guide.triggered.connect(lambda: show_user_guide(window, page))
    about = QAction("&About SEAR", window)
    about.setMenuRole(QAction.MenuRole.AboutRole)
    about.triggered.connect(lambda: show_about(window))
    menu.addAction(guide)
    menu.addSeparator()
    menu.addAction(about)
    window.addAction(guide)  # F1 works wherever the focus is in the window
    return {"user_guide": guide, "about": about}
