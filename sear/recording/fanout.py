"""`Observers`: several run observers (a recording and a live server) as the one a Simulation takes."""

from __future__ import annotations

from typing import Any

from sear.runtime.robotrun import RunObserver


class Observers:
    """Tells each of `observers` of everything, in their order."""

    def __init__(self, *observers: RunObserver) -> None:
        self.observers = list(observers)

    def started(self, simulation: Any) -> None:
        for observer in self.observers:
            observer.started(simulation)

    def ticked(self, simulation: Any, result: Any) -> None:
        for observer in self.observers:
            observer.ticked(simulation, result)

    def call(self, robot: int, name: str, args: Any) -> None:
        for observer in self.observers:
            observer.call(robot, name, args)

    def input(self, robot: int, kind: str, args: list[Any]) -> None:
        for observer in self.observers:
            observer.input(robot, kind, args)

    def output(self, text: str, error: bool) -> None:
        for observer in self.observers:
            observer.output(text, error)

    def closed(self, simulation: Any) -> None:
        """Every observer closed, also when one fails (the first failure is raised afterwards)."""
        failure: BaseException | None = None
        for observer in self.observers:
            try:
                observer.closed(simulation)
            except BaseException as exc:
                failure = failure or exc
        if failure is not None:
            raise failure
