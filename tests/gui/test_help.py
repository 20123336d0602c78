"""Help (issue 13 item 10): F1 and Help > User Guide show the docs/ pages rendered in a help window,
offline; Help > About names the versions of SEAR, Python, Qt and pybullet."""

from __future__ import annotations

import platform
import re
from importlib import metadata
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtWidgets import QMessageBox

import sear
from sear.gui import help as help_
from sear.gui.settings import SettingsWindow

pytestmark = pytest.mark.gl
DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture
def window(qtbot, answers):
    w = SettingsWindow()
    qtbot.addWidget(w)
    w.show()
    yield w
    if help_._window is not None:
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
