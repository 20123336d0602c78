"""The drive models: the built-in ones, in the settings window's drop-down order, and `register`.

A model is its `sear.drives.base.DriveModel` subclass, which names its XML word (NAME), drop-down entry
(LABEL) and help (HELP). The project schema (which words <drive_type> accepts), the settings window's
drop-down and the robots the simulation builds all ask this registry, so a model registered at run time
(by a plug-in or a test) is handled everywhere:

    from sear.drives import registry
    registry.register(TankDrive)
    ...
    registry.unregister("tank")
"""

from __future__ import annotations

import re

from sear.drives.base import DriveModel
from sear.drives.car import CarDrive
from sear.drives.differential import DifferentialDrive
from sear.drives.skid import SkidDrive

BUILT_IN: tuple[type[DriveModel], ...] = (CarDrive, SkidDrive, DifferentialDrive)
"""The models SEAR ships, in drop-down order; the first is a new project's."""

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")
_models: dict[str, type[DriveModel]] = {cls.NAME: cls for cls in BUILT_IN}
_generation = 0


def register(model: type[DriveModel]) -> None:
    """Add a drive model (its drop-down entry comes after the existing ones). Its NAME must be a new word
    of letters, digits, _ and - starting with a letter, and it needs a LABEL."""
    if not isinstance(model, type) or not issubclass(model, DriveModel):
        raise ValueError(f"{model!r} is not a DriveModel subclass")
    if not _NAME.fullmatch(model.NAME or "") or not model.LABEL:
        raise ValueError(f"{model.__name__}: NAME ({model.NAME!r}) must be a word of letters, digits, _ and - "
                         f"starting with a letter, and LABEL ({model.LABEL!r}) must not be empty")
    if model.NAME in _models and _models[model.NAME] is not model:
        raise ValueError(f"a drive model named {model.NAME!r} is registered already")
    global _generation
    _models[model.NAME] = model
    _generation += 1


def unregister(name: str) -> None:
    """Remove a model added with `register` (the built-in ones stay)."""
    global _generation
    if name in _models and _models[name] not in BUILT_IN:
        del _models[name]
        _generation += 1


def generation() -> int:
    """A number that changes whenever the registry does (for caches of what is made from it: the schema)."""
    return _generation


def models() -> dict[str, type[DriveModel]]:
    """NAME -> model class, in drop-down order."""
    return dict(_models)


def names() -> tuple[str, ...]:
    """The words <drive_type> accepts now, in drop-down order."""
    return tuple(_models)


def builtin_names() -> tuple[str, ...]:
    """The built-in models' words (what the shipped project.xsd lists)."""
    return tuple(cls.NAME for cls in BUILT_IN)


def model(name: str) -> type[DriveModel]:
    """The model class of a <drive_type> word. ValueError naming the known words for one not registered
    (a project read from a file was checked against the schema, which lists them)."""
    try:
        return _models[name]
    except KeyError:
        raise ValueError(f"unknown drive type {name!r}; use one of: {', '.join(_models)}") from None
