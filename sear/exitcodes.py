"""The exit statuses of every `sear` command, in one place (README "Command line" documents them).

A shell reads 128 + N as "ended by signal N", so the signal statuses follow that rule: a run stopped by
Ctrl-C (SIGINT, 2), by a closed output pipe (SIGPIPE, 13) or by SIGTERM (15) ends with the status a
program killed by that signal would have, after closing its log whole.
"""

from __future__ import annotations

import signal

OK = 0
"""Success (a batch: every run succeeded)."""
USER_ERROR = 1
"""A problem with the user's files or code, one clear message on stderr (a batch: some run failed)."""
USAGE = 2
"""The command line itself is wrong (argparse's own status)."""
INTERRUPTED = 128 + signal.SIGINT
"""Ctrl-C: 130."""
BROKEN_PIPE = 128 + signal.SIGPIPE
"""The reader of standard output went away (`sear run ... | head`): 141."""
TERMINATED = 128 + signal.SIGTERM
"""SIGTERM: 143."""


def for_signal(signum: int) -> int:
    """The status of a run that a signal ended cleanly: 128 + the signal's number, as the shell reads it."""
    return 128 + signum
