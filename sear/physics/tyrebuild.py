"""Compile the tyre kernels ahead of time: `python -m sear.physics.tyrebuild [--force]` (`make setup` runs it).

It builds sear.physics.tyre's kernels into the extension module sear.physics.tyreaot describes (where
it is kept, why, what it needs), unless it is built already; runs then load it at their first update.
A command of its own, apart from sear.physics.tyreaot, because it needs the kernels (sear.physics.tyre)
and tyre needs tyreaot to find the module: each module imports only the one below it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sear.physics import tyre, tyreaot


def main(argv: list[str] | None = None) -> int:
    """`python -m sear.physics.tyrebuild [--force]`: build the module for this install's
    sear/physics/tyre.py (unless it is built already; `--force`: again) and say where it is and what it
    cost (CPU s); exit status 1, with the reason, where it cannot be built."""
    import argparse
    import time

    parser = argparse.ArgumentParser(prog="python -m sear.physics.tyrebuild", description=__doc__.split("\n")[0])
    parser.add_argument("--force", action="store_true", help="build it again even where it is built")
    args = parser.parse_args(argv)
    source = Path(tyre.__file__)
    if not args.force and tyreaot.load(source) is not None:
        print(f"sear: the tyre kernels are compiled ahead of time already "
              f"({tyreaot.path(source, tyreaot.folder())}).")
        return 0
    started = time.process_time()
    try:
        kernels = tyreaot.build(source, tyre.solve, tyre.wheel_rays, batched=tyre.batched)
    except tyreaot.BuildError as error:
        print(f"sear: the tyre kernels were not compiled ahead of time ({error}); runs use numba's "
              "just-in-time kernels instead.", file=sys.stderr)
        return 1
    if kernels is None:
        print("sear: the compiled tyre kernels were built but cannot be loaded; runs use numba's "
              "just-in-time kernels instead.", file=sys.stderr)
        return 1
    print(f"sear: tyre kernels compiled ahead of time into {tyreaot.path(source, tyreaot.folder())} "
          f"({time.process_time() - started:.1f} s of CPU).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
