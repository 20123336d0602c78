"""Simulate from the Project Settings window: `sear run PROJECT.prj` in a process of its own (the window
stays responsive, every run starts clean), its output in a console, Stop ending it."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QMessageBox, QPlainTextEdit, QWidget

SIMULATION_OUTPUT_LINES = 5000
"""Lines of a simulation's output the settings window's console keeps (the simulation window's console
keeps as many); older lines scroll away."""


class SimulationProcess(QObject):
    """The window's simulation: at most one process at a time, and the console showing its output."""

    running = Signal(bool)
    """A run started (True) or ended (False)."""
    status = Signal(str)
    """What the status bar says about the run."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._parent = parent
        self.process: QProcess | None = None
        self._stopping = False
        self.console = QPlainTextEdit()
        self.console.setReadOnly(True)
        self.console.setFont(QFont("Monospace", 9))
        self.console.setMaximumBlockCount(SIMULATION_OUTPUT_LINES)  # a flood scrolls away: memory stays bounded
        self.console.setPlaceholderText(f"Output of the simulation (your prints, errors, exit status; its last "
                                        f"{SIMULATION_OUTPUT_LINES:,} lines) appears here.")

    def is_running(self) -> bool:
        return self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning

    def start(self, path: Path, command: str = "run") -> None:
        """Run the saved project `path` (in its folder), or with `command` "replay" open the recording `path`
        in the replay window; its output replaces the console's."""
        self.console.clear()
        self.append(f"$ sear {command} {path}\n")
        process = QProcess(self._parent)
        process.setProgram(sys.executable)
        process.setArguments(["-m", "sear", command, str(path)])
        process.setWorkingDirectory(str(path.parent))
        process.readyReadStandardOutput.connect(
            lambda: self.append(bytes(process.readAllStandardOutput().data()).decode(errors="replace")))
        process.readyReadStandardError.connect(
            lambda: self.append(bytes(process.readAllStandardError().data()).decode(errors="replace"), error=True))
        process.finished.connect(self._finished)
        process.errorOccurred.connect(self._process_error)
        self.process = process
        process.start()
        self.running.emit(True)
        self.status.emit("Simulating…" if command == "run" else "Replaying a recording…")

    def append(self, text: str, *, error: bool = False) -> None:
        """Add process output at the end of the console; the process's stderr is shown in red."""
        cursor = self.console.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        fmt = QTextCharFormat()
        if error:
            fmt.setForeground(QColor(176, 0, 32))
        cursor.insertText(text, fmt)
        self.console.setTextCursor(cursor)
        self.console.ensureCursorVisible()

    def _finished(self, code: int, status: QProcess.ExitStatus) -> None:
        if status == QProcess.ExitStatus.CrashExit and not self._stopping:
            self.append(f"\nThe simulation crashed (exit code {code}). Your project is unaffected.\n", error=True)
        elif self._stopping:
            self.append("\nSimulation stopped.\n")
        else:
            self.append(f"\nSimulation finished with exit status {code}.\n")
        self._stopping = False
        self.running.emit(False)
        self.status.emit("Ready")

    def _process_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self.append("\nThe simulation could not be started.\n")
            self.running.emit(False)

    def stop(self, *, wait: bool = False) -> None:
        """End the running simulation: SIGTERM, then SIGKILL if it is still there 3 s later.

        Without `wait` the window never blocks (the kill is scheduled); closing the window waits."""
        process = self.process
        if process is None or process.state() == QProcess.ProcessState.NotRunning:
            return
        self._stopping = True
        process.terminate()
        if wait:
            if not process.waitForFinished(3000):
                process.kill()
                process.waitForFinished(3000)
        else:
            # the process is the timer's context: no kill is attempted once it (or this window) is gone
            QTimer.singleShot(3000, process, process.kill)

    def confirm_stop(self) -> bool:
        """True when no simulation runs, or the user agrees to stop the one running (the caller stops it)."""
        if not self.is_running():
            return True
        answer = QMessageBox.question(
            self._parent, "A simulation is running",
            "A simulation started from this window is still running.\n\nYes stops it and closes Project "
            "Settings; Cancel keeps both open.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Cancel)
        return answer == QMessageBox.StandardButton.Yes
