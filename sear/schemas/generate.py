"""Writes SEAR's XSD files from the field metadata (sear.fields), so the schema cannot drift from the code.

    python -m sear.schemas.generate          # rewrite sear/schemas/*.xsd
    python -m sear.schemas.generate --check  # exit 1 if a shipped file differs from what would be written

The project schema comes from the dataclasses of sear.project (its drive types from the built-in drive
models), the sensors schema from the built-in sensor types, the shared simple types from
`sear.fields.KINDS`; the text is written by sear.xsd. Loading validates against the same texts generated
in memory (sear.xmlio), the sensors schema with every registered type and the project schema with every
registered drive model, so a sensor type or drive model registered at run time is accepted in a file.
This script stands above sear.sensors (it asks the registry for the built-in types); the writer stands
below it.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

from sear.drives.registry import builtin_names as builtin_drive_names
from sear.fields import field_info
from sear.project import ROOT_TAG as PROJECT_ROOT_TAG
from sear.project import Dynamics, Project
from sear.sensors.registry import builtin_definitions, definitions
from sear.xmlio import schema_text as xmlio_schema_text
from sear.xsd import NAMES, common_xsd, project_xsd, sensors_xsd

__all__ = ["NAMES", "builtin_texts", "common_xsd", "main", "project_xsd", "schema_text", "sensors_xsd"]


def builtin_texts() -> dict[str, str]:
    """What the shipped files must contain: the built-in sensor types and drive models only."""
    drive_types = {field_info(Dynamics, "drive_type").type_name: builtin_drive_names()}
    return {"common.xsd": common_xsd(),
            "project.xsd": project_xsd(Project, PROJECT_ROOT_TAG, enumerations=drive_types),
            "sensors.xsd": sensors_xsd(builtin_definitions())}


def schema_text(name: str) -> str:
    """A self-contained schema (shared types inlined), as loading validates against it now: the sensors
    schema with every registered type."""
    if name == "sensors.xsd":
        return sensors_xsd(definitions(), standalone=True)
    return xmlio_schema_text(name)


def _folder() -> Path:
    return Path(str(resources.files("sear.schemas")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sear.schemas.generate", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when a file differs")
    args = parser.parse_args(argv)
    folder = _folder()
    stale = []
    for name, text in builtin_texts().items():
        path = folder / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(name)
        if not args.check:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)}; run python -m sear.schemas.generate", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
