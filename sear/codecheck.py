"""A user code file checked without running it: compiled (a syntax error names its line) and its hooks
found in its syntax tree, as sear.usercode would refuse them on load, so `sear validate` finds both with no
side effects. Problems name the file, the field and the tab (Code Setup).
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import CodeType
from typing import Any

from sear.errors import Problem
from sear.project import FileChoice


def read_user_code(choice: FileChoice, *, who: str = "", problems: list[Problem]) -> CodeType | None:
    """The user code file `choice` names (checked: sear.models.filecheck.check_choice), compiled, never run,
    and its hooks checked; each problem is added to `problems`, its message naming the robot by `who`
    (sear.project.Project.robot_who). None when there is no file or it does not compile."""
    if choice.path is None:
        return None
    code, found = compile_user_code(choice.path, field=choice.field)
    found = found or check_hooks(choice.path, field=choice.field)
    problems += [Problem(who + p.message, file=p.file, line=p.line, field=p.field, tab=p.tab, label=p.label)
                 for p in found]
    return code


def compile_user_code(path: Path, *, field: str = "code.user_code") -> tuple[CodeType | None, list[Problem]]:
    """Compile (never run) a Python file: its code object, or the problem (a syntax error names the line).
    `field`: the project field that chooses the file."""
    where: dict[str, Any] = {"field": field, "tab": "Code Setup"}
    try:
        source = path.read_bytes()
    except OSError as exc:
        return None, [Problem(f"{path} cannot be read ({exc.strerror}).", file=path, label="user code file",
                              **where)]
    try:
        return compile(source, str(path), "exec", dont_inherit=True), []
    except SyntaxError as exc:
        text = (exc.text or "").strip()
        shown = f" ({text})" if text else ""
        return None, [Problem(f"syntax error in the user code: {exc.msg}{shown}.", file=path, line=exc.lineno,
                              **where)]
    except ValueError as exc:  # e.g. null bytes
        return None, [Problem(f"the user code file is not valid Python source ({exc}).", file=path, **where)]


def check_user_code(path: Path) -> list[Problem]:
    """Compile (never run) a Python file; a syntax error names the file and line."""
    return compile_user_code(path)[1]


def check_hooks(path: Path, *, field: str = "code.user_code") -> list[Problem]:
    """The hook rules sear.usercode enforces on load (main_loop or run, not both), read from the syntax
    tree so nothing is executed. Names bound any other way than `def` count as present. Call it on a
    file check_user_code accepted."""
    where: dict[str, Any] = {"field": field, "tab": "Code Setup"}
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
        return [Problem(f"the user code defines both main_loop(sim) (line {defined['main_loop']}) and run(sim); "
                        "use one style: main_loop is called every control tick, run(sim) loops itself with "
                        "`while sim.step():`.", file=path, line=defined["run"], **where)]
    if "main_loop" not in defined and "run" not in defined:
        return [Problem("the user code defines neither main_loop(sim) nor run(sim), so it would do nothing; "
                        "start from the template (Code Setup > Create New).", file=path, **where)]
    return []
