"""Settings > Open in Editor: an editor that cannot be used is explained in a dialog, and no editor
process is left behind as a zombie."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from sear.gui.editor import editor_command
from sear.gui.settings.window import SettingsWindow


@pytest.fixture
def window(qtbot, answers, tmp_path):
    w = SettingsWindow()
    qtbot.addWidget(w)
    w.show()
    code = tmp_path / "robot.py"
    code.write_text("def main_loop(sim):\n    pass\n")
    w.code_tab.code_file.set(code)  # as the Code Setup tab's file field does
    w.code_tab.set_field("code", "user_code", code, preview=True)
    assert w.code_tab.edit_button.isEnabled()
    yield w
    w.dirty = False


def _zombie_children() -> list[int]:
    """Processes whose parent is this one and that have ended without being reaped (state Z)."""
    zombies = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat[stat.rindex(")") + 2:].split()[:2]
        if state == "Z" and int(ppid) == os.getpid():
            zombies.append(int(entry.name))
    return zombies


def test_an_editor_that_does_not_exist_is_explained_in_a_dialog(window, answers, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "no-such-editor-sear --wait")
    window.code_tab.edit_button.click()
    assert len(answers.shown) == 1
    kind, text = answers.shown[0]
    assert kind == "warning"
    assert "$EDITOR is set to “no-such-editor-sear --wait”" in text and "no program “no-such-editor-sear”" in text
    assert "export EDITOR=" in text  # what to set


def test_an_unreadable_editor_command_is_explained_in_a_dialog(window, answers, monkeypatch):
    monkeypatch.setenv("VISUAL", "'gedit")  # an unclosed quote: shlex cannot read it
    window.code_tab.edit_button.click()
    assert [kind for kind, _ in answers.shown] == ["warning"]
    assert "$VISUAL" in answers.shown[0][1] and "cannot be read as a command" in answers.shown[0][1]


def test_no_editor_and_no_desktop_default_is_explained_in_a_dialog(window, answers, monkeypatch, tmp_path):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no xdg-open: the desktop cannot open it
    window.code_tab.edit_button.click()
    assert [kind for kind, _ in answers.shown] == ["warning"]
    text = answers.shown[0][1]
    assert "neither VISUAL nor EDITOR is set" in text and "export EDITOR=" in text


def test_a_terminal_editor_without_a_terminal_program_is_explained(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "vim").write_text("#!/bin/sh\n")
    (bin_dir / "vim").chmod(0o755)
    message = editor_command(tmp_path / "a.py", {"EDITOR": "vim", "PATH": str(bin_dir)})
    assert isinstance(message, str) and "runs in a terminal" in message and "VISUAL" in message
    (bin_dir / "x-terminal-emulator").write_text("#!/bin/sh\n")
    (bin_dir / "x-terminal-emulator").chmod(0o755)
    command = editor_command(tmp_path / "a.py", {"EDITOR": "vim -p", "PATH": str(bin_dir)})
    assert command == (str(bin_dir / "x-terminal-emulator"), ["-e", str(bin_dir / "vim"), "-p", str(tmp_path / "a.py")])


def test_an_editor_that_ends_leaves_no_zombie(window, answers, monkeypatch, tmp_path, qtbot):
    # Positive control: a child this process does not wait for is seen as a zombie once it has ended.
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while child.pid not in _zombie_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert child.pid in _zombie_children()
    child.wait()
    assert child.pid not in _zombie_children()

    opened = tmp_path / "opened.txt"
    editor = tmp_path / "quick-editor"
    editor.write_text(f"#!/bin/sh\necho \"$1\" > '{opened}'\n")  # opens the file and ends at once
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    for _ in range(3):
        window.code_tab.edit_button.click()
    qtbot.waitUntil(lambda: opened.exists() and opened.read_text().strip() != "", timeout=60_000)
    assert opened.read_text().strip() == str(window.project.code.user_code)
    time.sleep(0.5)  # let the three editors end
    assert answers.shown == []
    assert _zombie_children() == []
