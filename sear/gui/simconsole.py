"""The simulation window's console: the end of the run's output (the user code's prints and errors, the
window's own notes), bounded in lines and in line length, and brought up to date at most every
CONSOLE_REFRESH s however fast output comes, so a flood of prints costs the window one bounded update.
"""

from __future__ import annotations

import sys
import time
from collections import deque

from PySide6.QtGui import QFont, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from sear.runtime.stdstreams import reopen_std_streams

CONSOLE_LINES = 5000
"""Lines the console keeps: older output scrolls away (the terminal, or a log, keeps all of it)."""
CONSOLE_WIDTH = 2000
"""Characters of one console line shown; the rest of a longer line is replaced by a note."""
CONSOLE_REFRESH = 0.1
"""s of wall time between two updates of the console."""


class ConsoleTail:
    """The end of a stream of output, bounded: the last `lines` lines, each cut to `width` characters,
    whatever is printed (100 MB of prints, or one line of 100 MB); the console shows what it holds.

    `take()` says how to bring the console up to date: append the few lines that came since the last
    take, or (after many) replace the console's text with everything kept, which costs Qt far less than
    appending thousands of lines to a full console and having it drop as many from the top."""

    REPLACE_AFTER = 200
    """New lines since the last take beyond which take() replaces the text instead of appending."""

    def __init__(self, lines: int = CONSOLE_LINES, width: int = CONSOLE_WIDTH) -> None:
        self.lines: deque[str] = deque(maxlen=lines)
        """The last whole lines, without their newline."""
        self.partial = ""
        """The start of the line being printed (at most `width` characters)."""
        self.width = width
        self.total = 0
        """Whole lines ever added."""
        self.fresh = 0
        """Lines at the end of `lines` not yet taken."""
        self._shown = 0
        """Characters of `partial` taken already (the console shows them)."""
        self._more = 0
        """Characters of the line being printed beyond `width`, left out."""

    @property
    def pending(self) -> bool:
        return self.fresh > 0 or len(self.partial) > self._shown

    def _extend(self, piece: str) -> None:
        room = self.width - len(self.partial)
        if room > 0:
            self.partial += piece[:room]
        self._more += max(0, len(piece) - max(room, 0))

    def _end_line(self) -> None:
        note = f" … ({self._more:,} more characters not shown)" if self._more else ""
        self.lines.append(self.partial + note)
        self.total += 1
        self.fresh += 1
        self.partial, self._more = "", 0

    def add(self, text: str) -> None:
        limit = self.lines.maxlen or 0
        if text.count("\n") > limit:  # all but its last `limit` lines would scroll away at once
            cut = len(text)
            for _ in range(limit + 1):
                cut = text.rfind("\n", 0, cut)
            dropped = text.count("\n", 0, cut + 1)
            self.total += dropped
            self.fresh += dropped
            self.partial, self._more = "", 0
            text = text[cut + 1:]
        parts = text.split("\n")
        self._extend(parts[0])
        for part in parts[1:]:
            self._end_line()
            self._extend(part)

    def everything(self) -> str:
        """All that is kept: a note when earlier lines scrolled away, the lines, the line being printed."""
        limit = self.lines.maxlen or 0
        note = (f"[… {self.total - limit:,} earlier lines not shown: the console keeps the last {limit:,}]\n"
                if self.total > limit else "")
        return note + "".join(f"{line}\n" for line in self.lines) + self.partial

    def take(self) -> tuple[bool, str]:
        """(replace, text): replace the console's text with `text`, or append `text` to it."""
        if self.fresh > self.REPLACE_AFTER or self.fresh > len(self.lines):
            replace, text = True, self.everything()
        elif self.fresh:
            first = len(self.lines) - self.fresh
            done = [self.lines[first][self._shown:], *(self.lines[k] for k in range(first + 1, len(self.lines)))]
            replace, text = False, "".join(f"{line}\n" for line in done) + self.partial
        else:
            replace, text = False, self.partial[self._shown:]
        self.fresh = 0
        self._shown = len(self.partial)
        return replace, text


class Console(QPlainTextEdit):
    """The Console dock's text: read-only, the tail of the run's output (ConsoleTail)."""

    def __init__(self) -> None:
        super().__init__()
        self.setReadOnly(True)
        self.setFont(QFont("Monospace", 9))
        self.setMaximumBlockCount(CONSOLE_LINES + 2)  # and a note, the line being printed
        self.setPlaceholderText(f"Output of your code (its last {CONSOLE_LINES:,} lines) appears here.")
        self.tail = ConsoleTail()
        """Output not yet shown: show_pending() shows it at most CONSOLE_REFRESH s apart."""
        self._next = 0.0
        """perf_counter time before which the text is not updated again (see show_pending)."""

    def add(self, text: str) -> None:
        """Output to show with the next update (show_pending), and to the terminal at once."""
        self.tail.add(text)
        if sys.stdout is None or sys.stdout.closed:  # user code closed it
            reopen_std_streams()
        sys.stdout.write(text)  # also to the terminal (or the settings window's console)
        sys.stdout.flush()

    def note(self, text: str) -> None:
        """The window's own message: to the console at once, and to the terminal."""
        self.add(text)
        self.show_pending(now=True)

    def show_pending(self, *, now: bool = False) -> None:
        """Put the output gathered since the last time into the text (every CONSOLE_REFRESH s, or `now`)."""
        clock = time.perf_counter()
        if not self.tail.pending or (not now and clock < self._next):
            return
        replace, text = self.tail.take()
        if replace:
            self.setPlainText(text)
        else:
            self.moveCursor(QTextCursor.MoveOperation.End)
            self.insertPlainText(text)
        self.moveCursor(QTextCursor.MoveOperation.End)
        # A flood's updates (up to CONSOLE_LINES long lines each) take at most a fifth of the time.
        self._next = clock + max(CONSOLE_REFRESH, 5 * (time.perf_counter() - clock))
