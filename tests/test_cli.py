"""The sear command: validate reports every problem, new copies a runnable demo, exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sear.project import Project

REPO = Path(__file__).resolve().parent.parent


def _sear(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "sear", *args], capture_output=True, text=True, timeout=timeout)


def test_validate_accepts_the_demo(demo_copy):
    result = _sear("validate", str(demo_copy / "demo.prj"))
    assert result.returncode == 0, result.stderr
    assert "OK" in result.stdout and "8 sensors" in result.stdout


def test_validate_lists_every_problem(demo_copy):
    (demo_copy / "wheel_rr.ply").unlink()
    (demo_copy / "demo_code.py").write_text("def main_loop(sim):\n    if True\n        pass\n")
    (demo_copy / "sensors.xml").write_text(
        (demo_copy / "sensors.xml").read_text().replace('name="gyro"', 'name="accel"'))
    result = _sear("validate", str(demo_copy / "demo.prj"))
    assert result.returncode == 1
    err = result.stderr
    assert "3 problem(s)" in err
    assert "right rear wheel file" in err and "wheel_rr.ply does not exist" in err
    assert "demo_code.py, line 2: syntax error" in err
    assert "two sensors are named 'accel'" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("broken", [
    ("<mass>20.0</mass>", "<mass>-20</mass>", "dynamics.mass"),
    ("<mass>20.0</mass>", "<mass>heavy</mass>", "dynamics.mass"),
    ("<mass>20.0</mass>", "", "dynamics.mass"),
    ("</sear-project>", "", "line"),
    ("<sear-project version=\"1\">", "<other version=\"1\">", "<sear-project>"),
    ("<latitude>35.3</latitude>", "<latitude>135</latitude>", "from -90 to 90"),
    ("<name>SEAR demo</name>", '<name>&b;</name>', "DOCTYPE"),
])
def test_validate_on_bad_project_files_exits_1_with_one_paragraph(demo_copy, broken):
    old, new, expected = broken
    prj = demo_copy / "demo.prj"
    text = prj.read_text()
    assert old in text
    if old.startswith("<sear-project"):
        text = text.replace("</sear-project>", "</other>")
    if "&b;" in new:  # an entity expansion bomb: 10,000 copies of "bomb" if it were ever expanded
        entities = '<!ENTITY a "bomb">' + "".join(
            f'<!ENTITY {c} "{("&" + p + ";") * 100}">' for p, c in (("a", "a2"), ("a2", "b")))
        text = text.replace("<sear-project", f"<!DOCTYPE sear-project [{entities}]>\n<sear-project", 1)
    prj.write_text(text.replace(old, new))
    result = _sear("validate", str(prj))
    assert result.returncode == 1
    assert expected in result.stderr and str(prj) in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_new_copies_a_project_that_runs(tmp_path):
    target = tmp_path / "mine"
    result = _sear("new", str(target))
    assert result.returncode == 0, result.stderr
    assert _sear("validate", str(target / "demo.prj")).returncode == 0
    assert Project.load(target / "demo.prj").terrain.file == target / "terrain.obj"
    again = _sear("new", str(target))
    assert again.returncode == 1 and "not empty" in again.stderr


def test_usage_errors_exit_2():
    assert _sear("validate").returncode == 2
    assert _sear("run", "x.prj", "--bogus").returncode == 2
    assert _sear("--version").returncode == 0


def test_sear_without_a_window_runs_the_project_headless_and_says_so(demo_copy):
    hidden = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    result = subprocess.run([sys.executable, "-m", "sear", str(demo_copy / "demo.prj")], capture_output=True,
                            text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "no display is available" in result.stderr and "no display" not in result.stdout
    assert "simulated 20.00 s" in result.stdout


def test_new_refuses_a_file_or_an_unwritable_place_without_a_traceback(tmp_path, capsys):
    from sear.cli import main

    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert main(["new", str(a_file)]) == 1
    assert "is a file" in capsys.readouterr().err
    assert main(["new", str(a_file / "below")]) == 1
    err = capsys.readouterr().err
    assert "cannot create the project" in err and "Traceback" not in err


def test_new_copies_every_file_of_the_bundled_demo_and_the_copy_validates(tmp_path, capsys):
    from sear import cli
    from sear.demo import DEMO_MODEL_FILES

    shipped = REPO / "sear" / "data" / "demo"     # read here without importlib.resources, which cli uses
    expected = set(DEMO_MODEL_FILES) | {"demo.prj", "sensors.xml", "demo_code.py"}
    assert cli.main(["new", str(tmp_path / "mine")]) == 0, capsys.readouterr().err
    assert {p.name for p in (tmp_path / "mine").iterdir()} == expected
    for name in expected:
        assert (tmp_path / "mine" / name).read_bytes() == (shipped / name).read_bytes(), name
    assert cli.main(["validate", str(tmp_path / "mine" / "demo.prj")]) == 0


def test_new_blank_makes_the_project_file_new_makes_and_it_validates(tmp_path, capsys):
    from sear import cli
    from sear.starter import STARTER_FILES

    assert cli.main(["new", str(tmp_path / "bot"), "--blank"]) == 0, capsys.readouterr().err
    assert {p.name for p in (tmp_path / "bot").iterdir()} == {*STARTER_FILES.names(), "bot.prj"}
    assert "Created" in capsys.readouterr().out
    assert cli.main(["validate", str(tmp_path / "bot" / "bot.prj")]) == 0, capsys.readouterr().err
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    assert cli.main(["new", str(tmp_path / "other"), "--blank"]) == 1
    assert "not empty" in capsys.readouterr().err


def test_new_refuses_a_folder_that_is_not_empty(tmp_path, capsys):
    from sear.cli import main

    (tmp_path / "keep.txt").write_text("mine")
    assert main(["new", str(tmp_path)]) == 1
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_a_mistyped_command_is_a_usage_error_with_a_suggestion():
    result = _sear("valdate", "x.prj")
    assert result.returncode == 2
    assert "Did you mean `sear validate`?" in result.stderr and "Traceback" not in result.stderr
