"""User code that fails in each way a controller process can, for the headless and the window tests.

Each case's main_loop prints `failing at <time>` (so the test knows the tick independently of the
code under test) and then fails on that same tick: what the report must say, and its line in the file."""

from __future__ import annotations

CASES = {
    "exception": ("import math\n\ndef main_loop(sim):\n    if sim.time > 0.2:\n"
                  "        print('failing at', repr(sim.time))\n        helper()\n\ndef helper():\n"
                  "    return math.sqrt(-1)\n",
                  ["ValueError: math domain error", 'line 6, in main_loop', 'line 9, in helper']),
    "stuck": ("def main_loop(sim):\n    if sim.time > 0.2:\n        print('failing at', repr(sim.time))\n"
              "        while True:\n            pass\n",
              ["did not return within 0.5 s", "stuck at line"]),
    "segfault": ("import ctypes\n\ndef main_loop(sim):\n    if sim.time > 0.2:\n"
                 "        print('failing at', repr(sim.time))\n        ctypes.string_at(0)\n",
                 ["killed by SIGSEGV", 'line 6, in main_loop']),
    "os_exit": ("import os\n\ndef main_loop(sim):\n    if sim.time > 0.2:\n"
                "        print('failing at', repr(sim.time))\n        os._exit(3)\n",
                ["exit status 3", "os._exit()"]),
    "sys_exit": ("import sys\n\ndef main_loop(sim):\n    if sim.time > 0.2:\n"
                 "        print('failing at', repr(sim.time))\n        sys.exit(4)\n",
                 ["called sys.exit(4)", 'line 6, in main_loop']),
    # The kernel's out-of-memory killer ends a process with SIGKILL: the same signal, sent here directly
    # (a real out-of-memory kill would take the test machine's memory with it).
    "oom_kill": ("import os, signal\n\ndef main_loop(sim):\n    if sim.time > 0.2:\n"
                 "        print('failing at', repr(sim.time))\n        os.kill(os.getpid(), signal.SIGKILL)\n",
                 ["killed by SIGKILL", "out-of-memory"]),
}
