"""Keeping a simulation to the wall clock: `Pacer`, for a blocking real-time run and a window's timer.

Everything else about a simulation is in simulated time; only the pacer looks at the wall clock.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from typing import Protocol


class _Clocked(Protocol):
    @property
    def time(self) -> float: ...


class Paced(Protocol):
    """What a Pacer keeps to the clock: a sear.runtime.simulation.Simulation (its world's simulated time,
    s, and its physics rate, Hz)."""

    @property
    def world(self) -> _Clocked: ...

    @property
    def physics_hz(self) -> float: ...

    def steps_until(self, time: float) -> int: ...


class Pacer:
    """Keeps a simulation to the wall clock: simulated time since `restart()` against wall time since.

    A blocking run sleeps when it is ahead (`wait()`); a window's timer asks how many ticks are due for
    its frame (`due()`), simulates those, draws, and comes back. A simulation that cannot keep up slips
    behind the clock rather than trying to catch up without end.
    """

    SLEEP_AHEAD = 0.002
    """s: ahead of the clock by more than this, wait() sleeps (sleeps shorter than that are not kept)."""
    CATCH_UP = 0.25
    """s of simulated time due() asks for at most; further behind than that, the clock restarts."""

    def __init__(self, simulation: Paced, *, realtime: bool = True, until: float | None = None,
                 clock: Callable[[], float] = _time.perf_counter) -> None:
        """`realtime` False: due() asks for one simulated second a call (as fast as possible). `until`:
        a simulated time (s) that due() never passes. `clock`: wall seconds (a test's own clock)."""
        self.simulation = simulation
        self.realtime = realtime
        self.until = until
        self.clock = clock
        self.wall_start = self.sim_start = 0.0
        self.restart()

    def restart(self) -> None:
        """Count from now: after a pause, a change of mode, or a jump the clock should not see."""
        self.wall_start = self.clock()
        self.sim_start = self.simulation.world.time

    def elapsed(self) -> tuple[float, float]:
        """Simulated and wall seconds since `restart()`."""
        return self.simulation.world.time - self.sim_start, self.clock() - self.wall_start

    def ahead(self) -> float:
        """Seconds the simulation is ahead of the wall clock (negative: behind)."""
        simulated, wall = self.elapsed()
        return simulated - wall

    def wait(self) -> None:
        """Sleep while the simulation is ahead of the wall clock."""
        ahead = self.ahead()
        if ahead > self.SLEEP_AHEAD:
            _time.sleep(ahead)

    def due(self) -> int:
        """Ticks to simulate now: as many as the simulation is behind the clock, at most CATCH_UP s of
        them (restarting the clock: it slips); not realtime, one simulated second's; never past `until`."""
        hz = self.simulation.physics_hz
        if self.realtime:
            steps = int(-self.ahead() * hz)
            if steps > hz * self.CATCH_UP:  # too slow to keep up: do not spiral, slip instead
                steps = int(hz * self.CATCH_UP)
                self.restart()
        else:
            steps = int(hz)
        if self.until is not None:  # stop exactly at `until`, as a headless run does
            steps = min(steps, self.simulation.steps_until(self.until))
        return max(0, steps)

    @property
    def finished(self) -> bool:
        """Whether `until` has been reached (to within half a tick)."""
        return self.until is not None and self.simulation.world.time >= self.until - 0.5 / self.simulation.physics_hz
