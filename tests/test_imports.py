"""trimesh (and through it scipy and networkx, most of the start-up time) is imported only when a model
is read, not by importing the modules `sear validate`, `sear run` and the windows start from."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_CHECK = """
import sys
{imports}
print('trimesh' in sys.modules)
{after}
print('trimesh' in sys.modules)
"""


def _run(code: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def _imports_trimesh(modules: list[str], after: str) -> list[str]:
    return _run(_CHECK.format(imports="\n".join(f"import {m}" for m in modules), after=after))


@pytest.mark.parametrize("modules", [
    ["sear.cli", "sear.runtime.simulation", "sear.loading"],
    ["sear.physics.world", "sear.physics.vehicle", "sear.physics.meshes", "sear.models.meshfiles"],
    ["sear.gui.settings.window", "sear.gui.simwindow", "sear.gui.preview"],
])
def test_entry_points_do_not_import_trimesh_until_a_model_is_read(modules):
    # The positive control: reading a model in the same process does import it.
    before, after = _imports_trimesh(modules, after="import sear.models.meshfiles\nsear.models.meshfiles.make_tree()")
    assert (before, after) == ("False", "True")


def test_the_settings_window_imports_no_pybullet_side_module():
    # Positive control: the simulation window does import the physics.
    code = ("import sys, sear.gui.{0}; "
            "print(any(m == 'pybullet' or m.startswith('sear.physics') for m in sys.modules))")
    assert _run(code.format("settings.window")) == ["False"]
    assert _run(code.format("simwindow")) == ["True"]
