"""Hostile input on the controller protocol: 10,000 malformed, truncated, oversized and out-of-order
messages from a seeded fuzzer. Each is answered with an error or a closed connection; the simulation
never raises, hangs or crashes, and keeps advancing; NaN and infinite values are refused naming the call."""

from __future__ import annotations

import math
import random
import re
import socket
import struct

import msgpack
import pytest

from sear import protocol
from sear.runtime.simulation import Simulation
from sear.usercode import ControllerHost

from .physics.helpers import rover_project

MESSAGES = 10_000


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


@pytest.mark.slow
def test_ten_thousand_hostile_messages_are_answered_and_the_simulation_goes_on(tmp_path):
    rng = random.Random(14)
    project = rover_project(tmp_path / "p")
    project.code.hook_timeout = 2.0
    out: list[str] = []
    simulation = Simulation(project, output=out.append)
    sent = closed_sessions = nan_refusals = 0
    try:
        while sent < MESSAGES:
            mine, theirs = socket.socketpair()
            mine.sendall(_msg(t="hello", version=protocol.VERSION, token="k") + _msg(t="done", calls=[]) * 2)

            def controller(welcome, theirs=theirs):
                host = ControllerHost(protocol.Connection(theirs), timeout=2.0)
                host.handshake("k", welcome, 2.0)
                return host

            simulation.attach(controller)
            simulation.start_user_code()  # the init and start turns end with the two dones queued above
            replies, _ = _replies(mine)
            assert [r["t"] for r in replies] == ["welcome", "init", "start"]
            batch, expected = [], []
            for _ in range(rng.randrange(1, 12)):
                message, outcome = _bad_message(rng)
                batch.append(message)
                expected.append(outcome)
                if outcome in ("close", "eof"):
                    break
            if expected[-1] not in ("close", "eof"):  # the turn's end; its own calls may be refused too
                bad_done = rng.random() < 0.3
                batch.append(_msg(t="done", calls=[["steer", [math.nan]]] if bad_done else []))
                expected += ["nan:steer"] if bad_done else []
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
                    nan_refusals += 1
            if expected[-1] in ("close", "eof"):
                assert closed and simulation.user_error is not None and not simulation.stuck  # no time-out waited
                closed_sessions += 1
            else:
                assert not closed and simulation.user_error is None
                mine.sendall(_msg(t="bye"))
            sent += len(expected)  # hostile messages, each answered with an error or a closed connection
            mine.close()
    finally:
        simulation.close()
    assert sent >= MESSAGES
    assert closed_sessions > 100 and nan_refusals > 100  # every kind was exercised, many times
    assert all("Traceback" not in text for text in out)
