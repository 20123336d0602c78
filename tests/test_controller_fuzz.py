"""Hostile input on the controller protocol: 10,000 malformed, truncated, oversized and out-of-order
messages from a seeded fuzzer (under `make test-slow`; the default tier sends the covering subset of
its sessions). Each is answered with an error or a closed connection; the simulation
never raises, hangs or crashes, and keeps advancing; NaN and infinite values are refused naming the call."""

from __future__ import annotations

import math
import random
import re
import socket
import struct
from pathlib import Path

import msgpack
import pytest

from sear import protocol
from sear.runtime.simulation import Simulation
from sear.usercode import ControllerHost

from .physics.helpers import rover_project

MESSAGES = 10_000
"""Hostile messages `make test-slow` sends (marker `slow`)."""
COVERING: list[int] = [0, 1, 2, 4, 35, 38, 44, 61, 205, 665, 3103, 3761]
"""The sessions (of the 4,059 that MESSAGES make) the default tier sends: 0, 1, 205, 665, 3103 and 3761
together reach every branch of SEAR's code that all sessions reach (branch coverage of the `sear`
package, computed by `python -m tests.covering controller`; rerun it when the protocol or its dispatch
changes); 2, 4, 35, 38, 44 and 61 are the first sessions with a `close` outcome and with a NaN given to
each call, so each call's own check is exercised."""
HOOK_TIMEOUT = 30.0
"""s: the controller's turn time-out (wall time). Every turn here ends at once (its messages are queued
before the turn starts), so it is never waited for; it is long so that a loaded machine cannot trip it."""


def _frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def _msg(**fields) -> bytes:
    return _frame(msgpack.packb(fields, use_bin_type=True))


def _replies(sock: socket.socket) -> tuple[list[dict], bool]:
    """Every message waiting on the test's end, and whether the simulation closed the connection."""
    data = bytearray()
    sock.setblocking(False)
    closed = False
    while True:
        try:
            chunk = sock.recv(1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            closed = True
            break
        data += chunk
    sock.setblocking(True)
    out = []
    while len(data) >= 4:
        (n,) = struct.unpack_from(">I", data)
        out.append(msgpack.unpackb(bytes(data[4:4 + n]), raw=False))
        del data[:4 + n]
    assert not data  # the simulation only ever sends whole frames
    return out, closed


def _bad_message(rng: random.Random) -> tuple[bytes, str]:
    """One hostile message and what it must get: 'error' (an error reply, the connection stays open),
    'close' (an error reply, then the connection is closed) or 'eof' (a truncated frame: the test closes
    its end after it, the simulation must notice and go on)."""
    kind = rng.randrange(12)
    nan = rng.choice([math.nan, math.inf, -math.inf])
    if kind == 0:  # garbage bytes in a well-formed frame (never a valid map with a string 't')
        return _frame(b"\xc1" + rng.randbytes(rng.randrange(0, 40))), "close"
    if kind == 1:  # MessagePack, but not a map with a string 't'
        body = rng.choice([msgpack.packb([1, 2, 3]), msgpack.packb({"t": 5}), msgpack.packb({"x": "done"}),
                           msgpack.packb("done"), msgpack.packb({b"t": b"done"}, use_bin_type=True)])
        return _frame(body), "close"
    if kind == 2:  # oversized or empty
        return struct.pack(">I", rng.choice([0, protocol.MAX_FRAME + 1, 0xFFFFFFFF])) + b"\x80", "close"
    if kind == 3:  # truncated: the length promises more than comes
        body = msgpack.packb({"t": "print", "text": "x" * rng.randrange(1, 50)})
        return struct.pack(">I", len(body) + rng.randrange(1, 100)) + body[: rng.randrange(len(body))], "eof"
    if kind == 4:  # out of order: types the controller may not send during a turn
        return _msg(t=rng.choice(["hello", "welcome", "result", "error", "init", "tick", "stop", "", "DONE",
                                  "x" * 300])), "error"
    if kind == 5:  # NaN / infinite numbers
        name = rng.choice(["accelerate", "brake", "steer", "add_tree", "add_box", "add_wall"])
        nargs = {"accelerate": 1, "brake": 1, "steer": 1, "add_tree": 2, "add_box": 2, "add_wall": 4}[name]
        return _msg(t="call", calls=[[name, [nan] * nargs]]), f"nan:{name}"
    if kind == 6:  # unknown calls, wrong arity, wrong types
        call = rng.choice([["fly", [1.0]], ["accelerate", []], ["accelerate", [1.0, 2.0]], ["steer", ["left"]],
                           ["brake", [True]], ["read_sick", [3]], ["add_box", [0, 0, 0, 1, 1, 1, 1]],
                           ["pose", {"a": 1}], [1, [2]], ["steer"], "steer", None])
        return _msg(t="call", calls=[call]), "error"
    if kind == 7:  # calls not an array
        return _msg(t="call", calls=rng.choice([5, "accelerate", {"a": 1}, None])), "error"
    if kind == 8:  # print without text
        return _msg(t="print", text=rng.choice([None, 5, b"bytes", ["a"]])), "error"
    if kind == 9:  # deeply nested junk inside an otherwise fine message
        junk: object = 1.0
        for _ in range(rng.randrange(1, 200)):
            junk = [junk]
        return _msg(t="call", calls=[["steer", [junk]]]), "error"
    if kind == 10:  # numbers that are not: overflowing floats, digits as text, bytes
        return _msg(t="call", calls=[["accelerate", [rng.choice([1e308 * 10, "9" * 1000, b"\x00" * 9])]]]), "error"
    return _msg(t="fly", payload=rng.randbytes(rng.randrange(0, 64))), "error"


def sessions(messages: int) -> list[tuple[list[bytes], list[str]]]:
    """Seeded sessions of hostile messages, at least `messages` of them in all: each session's messages
    and what each must get (after the bad messages, a session that stays open ends its turn with a
    `done`, sometimes carrying a NaN call of its own)."""
    rng = random.Random(14)
    out: list[tuple[list[bytes], list[str]]] = []
    sent = 0
    while sent < messages:
        batch, expected = [], []
        for _ in range(rng.randrange(1, 12)):
            message, outcome = _bad_message(rng)
            batch.append(message)
            expected.append(outcome)
            if outcome in ("close", "eof"):
                break
        sent += len(expected)  # hostile messages, each answered with an error or a closed connection
        if expected[-1] not in ("close", "eof"):  # the turn's end; its own calls may be refused too
            bad_done = rng.random() < 0.3
            batch.append(_msg(t="done", calls=[["steer", [math.nan]]] if bad_done else []))
            expected += ["nan:steer"] if bad_done else []
        out.append((batch, expected))
    return out


class FuzzedSimulation:
    """A simulation of the rover that one controller session after another attaches to."""

    def __init__(self, folder: Path) -> None:
        project = rover_project(folder)
        project.code.hook_timeout = HOOK_TIMEOUT
        self.out: list[str] = []
        self.simulation = Simulation(project, output=self.out.append)

    def __enter__(self) -> FuzzedSimulation:
        return self

    def __exit__(self, *exc) -> None:
        self.simulation.close()

    def session(self, session: tuple[list[bytes], list[str]]) -> list[str]:
        """Attach a controller, send one session's messages in one turn and check every answer; the
        outcomes seen."""
        batch, expected = session
        simulation = self.simulation
        mine, theirs = socket.socketpair()
        mine.sendall(_msg(t="hello", version=protocol.VERSION, token="k") + _msg(t="done", calls=[]) * 2)

        def controller(welcome, theirs=theirs):
            host = ControllerHost(protocol.Connection(theirs), timeout=HOOK_TIMEOUT)
            host.handshake("k", welcome, HOOK_TIMEOUT)
            return host

        try:
            simulation.attach(controller)
            simulation.start_user_code()  # the init and start turns end with the two dones queued above
            replies, _ = _replies(mine)
            assert [r["t"] for r in replies] == ["welcome", "init", "start"]
            mine.sendall(b"".join(batch))
            if expected[-1] == "eof":
                mine.shutdown(socket.SHUT_WR)
            before = simulation.world.time
            simulation.advance(4)  # one control tick: the controller's turn
            assert simulation.world.time > before  # never stuck, never raised
            replies, closed = _replies(mine)
            assert replies[0]["t"] == "tick"  # the turn the messages came in
            errors = [r for r in replies if r["t"] == "error"]
            wanted = sum(1 for o in expected if o != "eof")
            assert len(errors) == wanted, (expected, replies)
            for outcome, error in zip(expected, errors, strict=False):
                assert isinstance(error["message"], str) and "Traceback" not in error["message"]
                assert len(error["message"]) < 400  # the offending value is quoted shortly, not echoed whole
                if outcome.startswith("nan:"):
                    name = outcome[4:]
                    first = {"accelerate": "force", "brake": "force", "steer": "angle", "add_tree": "x",
                             "add_box": "x", "add_wall": "x1"}[name]  # the first argument, checked first
                    assert re.match(rf"sim\.{name}\({first}=(nan|inf|-inf)\): {first} must be a finite number",
                                    error["message"]), error["message"]
                    assert error["call"] == name
            if expected[-1] in ("close", "eof"):
                assert closed and simulation.user_error is not None and not simulation.stuck  # no time-out waited
            else:
                assert not closed and simulation.user_error is None
                mine.sendall(_msg(t="bye"))
        finally:
            mine.close()
        return expected


def _check(folder: Path, chosen: list[tuple[list[bytes], list[str]]]) -> set[str]:
    with FuzzedSimulation(folder) as fuzzed:
        seen = {outcome for session in chosen for outcome in fuzzed.session(session)}
        assert all("Traceback" not in text for text in fuzzed.out)
    return seen


def test_the_covering_sessions_are_answered_and_the_simulation_goes_on(tmp_path):
    all_sessions = sessions(MESSAGES)
    seen = _check(tmp_path / "p", [all_sessions[i] for i in COVERING])
    # Every kind of outcome, and a NaN refusal of every call, was exercised.
    assert seen == {"error", "close", "eof", *(f"nan:{name}" for name in
                                              ("accelerate", "brake", "steer", "add_tree", "add_box", "add_wall"))}


@pytest.mark.slow
def test_ten_thousand_hostile_messages_are_answered_and_the_simulation_goes_on(tmp_path):
    all_sessions = sessions(MESSAGES)
    assert sum(len(expected) for _, expected in all_sessions) >= MESSAGES
    outcomes = [o for _, expected in all_sessions for o in expected]
    assert sum(o in ("close", "eof") for o in outcomes) > 100 and sum(o.startswith("nan:") for o in outcomes) > 100
    _check(tmp_path / "p", all_sessions)
