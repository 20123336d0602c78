"""Checks a project before it is simulated: every problem at once, as sentences a user can act on.

Used by `sear validate` and by the settings window's Simulate button. Nothing here runs user code: the
user code file is only compiled, so a syntax error is found without side effects.
"""

from __future__ import annotations

import ast
from pathlib import Path

from sear.errors import SearError
from sear.project import HEIGHTMAP_SUFFIXES, MESH_SUFFIXES, WHEEL_IDS, Project, model_suffix


def check_file(path: Path | None, label: str, allowed: tuple[str, ...], required: bool = True) -> list[str]:
    """Problems with one referenced file: unset, missing, a folder, unreadable or of an unknown type."""
    if path is None:
        return [f"{label}: no file chosen; choose one in the settings window."] if required else []
    if not path.exists():
        return [f"{label}: {path} does not exist; choose the file again or restore it."]
    if path.is_dir():
        return [f"{label}: {path} is a folder, not a file."]
    try:
        with path.open("rb"):
            pass
    except OSError as exc:
        return [f"{label}: {path} cannot be read ({exc.strerror})."]
    if allowed and model_suffix(path) not in allowed:
        return [f"{label}: {path.name} is not a supported type; use one of {', '.join(allowed)}."]
    return []


def check_user_code(path: Path) -> list[str]:
    """Compile (never run) a Python file; a syntax error names the file and line."""
    try:
        source = path.read_bytes()
    except OSError as exc:
        return [f"Code Setup: user code file {path} cannot be read ({exc.strerror})."]
    try:
        compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        text = (exc.text or "").strip()
        shown = f" ({text})" if text else ""
        return [f"{path}, line {exc.lineno}: syntax error in the user code: {exc.msg}{shown}."]
    except ValueError as exc:  # e.g. null bytes
        return [f"{path}: the user code file is not valid Python source ({exc})."]
    return []


def check_hooks(path: Path) -> list[str]:
    """The hook rules sear.usercode enforces on load (main_loop or run, not both), read from the syntax
    tree so nothing is executed. Names bound any other way than `def` count as present. Call it on a
    file check_user_code accepted."""
    tree = ast.parse(path.read_bytes(), str(path))
    defined: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return []  # a star import may bring the hooks in: only running the code could tell
        names: list[str] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [(alias.asname or alias.name).split(".")[0] for alias in node.names]
        else:
            names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        for name in names:
            defined.setdefault(name, node.lineno)
    if "main_loop" in defined and "run" in defined:
        return [f"{path}, line {defined['run']}: the user code defines both main_loop(sim) (line "
                f"{defined['main_loop']}) and run(sim); use one style: main_loop is called every control tick, "
                "run(sim) loops itself with `while sim.step():`."]
    if "main_loop" not in defined and "run" not in defined:
        return [f"{path}: the user code defines neither main_loop(sim) nor run(sim), so it would do nothing; "
                "start from the template (Code Setup > Create New)."]
    return []


def check_project(project: Project) -> list[str]:
    """Every problem that would stop `project` from simulating; an empty list when it is ready."""
    problems: list[str] = []
    terrain_types = MESH_SUFFIXES + HEIGHTMAP_SUFFIXES
    problems += check_file(project.terrain.file, "Terrain Model: terrain file", terrain_types)
    problems += check_file(project.body.file, "Robot Body Model: body file", MESH_SUFFIXES)
    for wid in WHEEL_IDS:
        label = f"Wheel Models: {wid.replace('_', ' ')} wheel file"
        problems += check_file(project.wheels[wid].file, label, MESH_SUFFIXES)
    code_problems = check_file(project.code.user_code, "Code Setup: user code file", (".py",))
    problems += code_problems
    if not code_problems and project.code.user_code is not None:
        code_problems = check_user_code(project.code.user_code)
        problems += code_problems or check_hooks(project.code.user_code)
    sensor_problems = check_file(project.code.sensors, "Code Setup: sensors file", (".xml",), required=False)
    problems += sensor_problems
    if not sensor_problems and project.code.sensors is not None:
        from sear.sensors.config import load_sensors

        try:
            load_sensors(project.code.sensors)
        except SearError as exc:
            problems.append(str(exc))
    return problems
