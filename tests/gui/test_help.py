"""Help (issue 13 item 10): F1 and Help > User Guide show the docs/ pages rendered in a help window,
offline; Help > About names the versions of SEAR, Python, Qt and pybullet."""

from __future__ import annotations

import platform
import re
from importlib import metadata
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtWidgets import QApplication, QMessageBox

import sear
from sear.gui import help as help_
from sear.gui.settings.window import SettingsWindow

pytestmark = pytest.mark.gl
DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture
def window(qtbot, answers):
    w = SettingsWindow()
    qtbot.addWidget(w)
    w.show()
    yield w
    if help_._window is not None and shiboken6.isValid(help_._window):
        help_._window.close()


def _title(path: Path) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(line[2:].replace("`", "").strip() for line in lines if line.startswith("# "))


def test_f1_opens_the_user_guide_with_every_page_of_docs(window, qtbot):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.tabs, Qt.Key.Key_F1)
    guide = help_._window
    assert guide is not None and guide.isVisible() and guide.page() == "index.md"
    text = guide.browser.toPlainText()
    assert "SEAR user guide" in text and "# " not in text  # rendered, not the Markdown source
    pages = {guide.pages.item(i).text() for i in range(guide.pages.count())}
    expected = {_title(p) for p in DOCS.glob("*.md")}
    assert len(expected) >= 6 and pages == expected


def test_links_between_pages_are_followed_and_back_returns(window):
    window.commands["user_guide"].trigger()
    guide = help_._window
    assert guide is not None
    guide.browser.anchorClicked.emit(QUrl("user-code.md"))
    assert guide.page() == "user-code.md" and _title(DOCS / "user-code.md") in guide.browser.toPlainText()
    assert guide.pages.currentItem().text() == _title(DOCS / "user-code.md")
    guide.browser.backward()
    assert guide.page() == "index.md"
    guide.pages.setCurrentRow(guide.pages.count() - 1)
    assert guide.page() != "index.md"


def test_every_link_of_the_index_leads_to_a_page_of_the_guide():
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)", index)
    assert len(links) >= 5
    assert all((DOCS / link).is_file() for link in links), links


def test_about_names_the_versions(window, monkeypatch):
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.append(text))
    window.commands["about"].trigger()
    (text,) = shown
    for version in (sear.__version__, platform.python_version(), qVersion(), metadata.version("pybullet")):
        assert version in text
    for name in ("SEAR", "Python", "Qt", "pybullet"):
        assert name in text


def test_the_guide_is_found_through_the_package():
    folder = help_.docs_folder()
    assert folder is not None and folder.samefile(Path(sear.__file__).parent / "data" / "docs")
    assert sorted(p.name for p in folder.glob("*.md")) == sorted(p.name for p in DOCS.glob("*.md"))


def test_the_guide_opened_from_a_modal_dialog_is_not_blocked_by_it(window, qtbot):
    from PySide6.QtWidgets import QDialog

    dialog = QDialog(window)
    qtbot.addWidget(dialog)
    dialog.setWindowModality(Qt.WindowModality.ApplicationModal)
    dialog.show()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is dialog)
    guide = help_.show_user_guide(dialog, "sensors.md")
    assert guide is not None and guide.parent() is dialog and guide.isWindow() and guide.page() == "sensors.md"
    assert not guide.testAttribute(Qt.WidgetAttribute.WA_Disabled)
    dialog.close()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None)
    again = help_.show_user_guide(window)
    assert again is not None and again.parent() is None and again.page() == "index.md"
