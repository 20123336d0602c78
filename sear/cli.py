"""The `sear` command line.

    sear [PROJECT.prj]                      open the Project Settings window
    sear run PROJECT.prj [--headless] ...   simulate (window, or headless)
    sear validate PROJECT.prj               check a project and everything it refers to
    sear new DIR [--blank]                  copy the demo project into DIR (or a new project that
                                            simulates at once, as File > New makes)
    sear replay FILE.mcap                   open a recording in the replay window (docs/simulation-window.md)
    sear render FILE.mcap OUT.mp4 [--camera follow|top|fixed|free]
                                            film a recording's 3-D view without a screen
    sear batch SWEEP.toml [-j N] [--ray]    run a parameter sweep (docs/batch.md); --rerun RESULTS RUN_ID
                                            reproduces one run's log

Exit codes: 0 success, 1 a problem with the user's files or code (a sentence on stderr, no traceback),
2 a usage error.
"""

from __future__ import annotations

import argparse
import difflib
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from sear import __version__, exitcodes, resources
from sear.errors import SearError


def _error(message: str) -> int:
    print(f"sear: {message}", file=sys.stderr)
    return exitcodes.USER_ERROR


# --- subcommands ---------------------------------------------------------------------------------

def cmd_validate(args: argparse.Namespace) -> int:
    from sear.loading import load_project

    loaded = load_project(args.project)
    if loaded.project is None:  # the project file itself: one paragraph, as for any SearError
        return _error(str(loaded.problems[0]))
    if loaded.report:  # a URDF body's collision report: warnings, printed whether or not it runs
        print(f"{args.project}: collision report of the URDF ({len(loaded.report)} finding(s)):")
        for line in loaded.report:
            print(f"  - {line}")
    if loaded.drive_warnings:  # a URDF robot that cannot steer as its drive is set: warnings, it still runs
        print(f"{args.project}: warning: the robot may not steer ({len(loaded.drive_warnings)} finding(s)):")
        for line in loaded.drive_warnings:
            print(f"  - {line}")
    if loaded.problems:
        print(f"{args.project}: {len(loaded.problems)} problem(s) found:", file=sys.stderr)
        for problem in loaded.problems:
            print(f"  - {problem}", file=sys.stderr)
        return exitcodes.USER_ERROR
    robots = []
    for index, robot in enumerate(loaded.robots):
        urdf = robot.models.description if robot.models is not None else None
        body = f"URDF robot {urdf.name!r} ({len(urdf.links)} links)" if urdf is not None else "body, 4 wheels"
        robots.append(f"{loaded.project.robot_who(index)}{body}, user code, {len(robot.sensors)} sensors")
    print(f"{args.project}: OK ({loaded.project.name!r}: terrain, {'; '.join(robots)}).")
    return exitcodes.OK


def cmd_new(args: argparse.Namespace) -> int:
    target = Path(args.dir)
    if target.exists() and not target.is_dir():
        return _error(f"{target} is a file; give the name of a new folder for the project.")
    if target.is_dir() and any(target.iterdir()):
        return _error(f"{target} exists and is not empty; choose a new or empty folder.")
    if args.blank:
        from sear.starter import create_new_project

        project = create_new_project(target / f"{target.absolute().name}.prj")
        print(f"Created {project.path} with flat ground, a box robot on four wheels, user code and a sensors "
              f"file: open it with `sear {project.path}` or run it with `sear run {project.path} --headless`.")
        return exitcodes.OK
    demo = resources.demo_folder()
    if not demo.joinpath(resources.DEMO_PROJECT_FILE).is_file():
        return _error(f"the demo project is not installed ({demo} has no {resources.DEMO_PROJECT_FILE}); "
                      "reinstall SEAR.")
    try:
        resources.copy_demo(target)
    except OSError as exc:
        return _error(f"cannot create the project in {target} ({exc.strerror or exc}); "
                      "choose a folder you can write to.")
    print(f"Created {target}: open it with `sear {target / 'demo.prj'}` "
          f"or run it with `sear run {target / 'demo.prj'} --headless`.")
    return exitcodes.OK


def cmd_run(args: argparse.Namespace) -> int:
    from sear.launcher import resume_from_cli, run_from_cli

    usage: Callable[[str], NoReturn] = args.parser.error
    if args.resume is not None:
        if args.project is not None:
            usage("--resume FILE.mcap takes no project file (the recording holds its project)")
        if args.at is None:
            usage("--resume FILE.mcap needs --at SECONDS (the moment to take over at)")
        if args.external or args.foxglove is not None:
            usage("--external and --foxglove go with a project's run, not with --resume")
        return resume_from_cli(Path(args.resume), at=args.at, headless=args.headless, duration=args.duration,
                               log=args.log, code=args.code, record=args.record, realtime=args.realtime,
                               force=args.force, record_format=args.record_format)
    if args.project is None:
        usage("give a project file (sear run PROJECT.prj), or --resume FILE.mcap --at SECONDS")
    if args.at is not None or args.code is not None:
        usage("--at and --code go with --resume FILE.mcap")
    return run_from_cli(
        Path(args.project), headless=args.headless, duration=args.duration, log=args.log,
        seed=args.seed, realtime=args.realtime, force=args.force, external=args.external, record=args.record,
        record_format=args.record_format, foxglove=args.foxglove,
    )


def cmd_replay(args: argparse.Namespace) -> int:
    from sear.launcher import replay_from_cli

    return replay_from_cli(Path(args.recording))


def cmd_render(args: argparse.Namespace) -> int:
    from sear.launcher import render_from_cli

    return render_from_cli(Path(args.recording), Path(args.output), camera=args.camera, start=args.start,
                           end=args.end, size=args.size, force=args.force)


def _size(text: str) -> tuple[int, int]:
    """WIDTHxHEIGHT in pixels, each 16 to 4096."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT (e.g. 1280x720)") from None
    if not (16 <= width <= 4096 and 16 <= height <= 4096):
        raise argparse.ArgumentTypeError(f"{text!r}: width and height must be 16 to 4096 pixels")
    return width, height


def cmd_batch(args: argparse.Namespace) -> int:
    from sear.batch import command

    if args.rerun is not None:
        if args.sweep is not None:
            print("sear batch: --rerun RESULTS RUN_ID takes no sweep file.", file=sys.stderr)
            return exitcodes.USAGE
        return command.rerun(args.rerun[0], args.rerun[1], log=args.log)
    if args.sweep is None:
        print("sear batch: give a sweep file (sear batch SWEEP.toml), or --rerun RESULTS RUN_ID; see "
              "docs/batch.md.", file=sys.stderr)
        return exitcodes.USAGE
    if args.ray is not None:
        from sear.batch.rayrun import ray_missing

        missing = ray_missing()
        if missing:
            return _error(missing)
    return command.run_batch(args.sweep, workers=args.jobs, output=args.output, resume=args.resume,
                             ray=args.ray or None, use_ray=args.ray is not None, report=not args.no_report,
                             yes=args.yes)


def cmd_gui(args: argparse.Namespace) -> int:
    from sear.launcher import has_display, run_from_cli

    project = Path(args.project) if args.project else None
    target = project or resources.demo_project()
    if not has_display():
        reason = ("no display is available (DISPLAY and WAYLAND_DISPLAY are not set), so the settings window "
                  "cannot open")
    else:
        from sear.gui.app import run_settings_app

        return run_settings_app(project)
    print(f"sear: {reason}; running {target} headless for 20 simulated seconds instead.", file=sys.stderr,
          flush=True)
    return run_from_cli(target, headless=True, duration=20.0, log=None, seed=0, realtime=False)


# --- parsing -------------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # exit status 2 for usage errors, as documented
        self.print_usage(sys.stderr)
        self.exit(exitcodes.USAGE, f"{self.prog}: error: {message}\n")


def _positive(text: str) -> float:
    """A finite number greater than 0 (inf, nan and negative numbers are usage errors)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of seconds")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
    return value


def _non_negative(text: str) -> float:
    """A finite number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number of seconds, 0 or more")
    return value


def _port(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0 to 65535)")
    return value


def _workers(text: str) -> int:
    """A whole number of worker processes, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sear", description="SEAR: Simulation Environment for Autonomous Robots.")
    parser.add_argument("--version", action="version", version=f"sear {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    run = sub.add_parser("run", help="simulate a project (in a window, or --headless)")
    run.add_argument("project", nargs="?", default=None, help="the project file (.prj)")
    run.add_argument("--headless", action="store_true", help="no window: run the simulation loop only")
    run.add_argument("--duration", type=_positive, default=None, metavar="SECONDS",
                     help="stop after this many simulated seconds (headless default: 60)")
    run.add_argument("--log", default=None, metavar="FILE.csv",
                     help="write a CSV log of ground truth and sensors (array outputs such as LIDAR scans go "
                          "into the folder FILE.arrays beside it); never the project or a file it uses")
    run.add_argument("--force", action="store_true", help="let --log or --record overwrite an existing file")
    run.add_argument("--record", default=None, metavar="FILE.mcap",
                     help="record the run into an MCAP file (Foxglove's schemas; the project embedded; see "
                          "docs/recording.md)")
    run.add_argument("--record-format", choices=("foxglove", "ros2"), default="foxglove",
                     help="with --record: Foxglove's JSON schemas (the default; replay and --resume read it) or ROS 2 "
                          "messages (CDR) for ros2 bag and ROS tools")
    run.add_argument("--foxglove", nargs="?", type=_port, const=8765, default=None, metavar="PORT",
                     help="serve the run live over Foxglove's WebSocket protocol on 127.0.0.1 (port 8765 unless "
                          "given; keeps pace with the wall clock unless --fast)")
    run.add_argument("--resume", default=None, metavar="FILE.mcap",
                     help="re-simulate a recording up to --at SECONDS, then let user code take over (headless)")
    run.add_argument("--at", type=_non_negative, default=None, metavar="SECONDS",
                     help="with --resume: the simulated time to take over at")
    run.add_argument("--code", default=None, metavar="FILE.py",
                     help="with --resume: the user code that takes over (default: the recorded project's)")
    run.add_argument("--external", action="store_true",
                     help="wait for an external controller (any language) to connect on 127.0.0.1 instead of "
                          "running the project's user code; prints the port and a one-time token")
    run.add_argument("--seed", type=int, default=0, help="seed of the run's random numbers (noise); default 0")
    pace = run.add_mutually_exclusive_group()
    pace.add_argument("--fast", dest="realtime", action="store_false",
                      help="as fast as possible (the headless default)")
    pace.add_argument("--realtime", dest="realtime", action="store_true", help="keep pace with the wall clock")
    run.set_defaults(func=cmd_run, realtime=None, parser=run)

    validate = sub.add_parser("validate", help="check a project, its sensors file, models and user code")
    validate.add_argument("project", help="the project file (.prj)")
    validate.set_defaults(func=cmd_validate)

    new = sub.add_parser("new", help="copy the demo project into a new folder (or start a blank project)")
    new.add_argument("dir", help="the folder to create")
    new.add_argument("--blank", action="store_true",
                     help="instead of the demo: flat ground, a box robot on four wheels, the template user code "
                          "and a sensors file (what File > New makes)")
    new.set_defaults(func=cmd_new)

    replay = sub.add_parser("replay", help="open a recording (sear run --record) in the replay window")
    replay.add_argument("recording", help="the recording (.mcap)")
    replay.set_defaults(func=cmd_replay)

    render = sub.add_parser("render", help="film a recording's 3-D view into an MP4, without a screen")
    render.add_argument("recording", help="the recording (.mcap)")
    render.add_argument("output", help="the film to write (.mp4)")
    render.add_argument("--camera", default="follow", choices=("follow", "top", "fixed", "free"),
                        help="follow: behind the robot (default); top: from above it; fixed: over the terrain's "
                             "centre; free: the first view of the robot, kept")
    render.add_argument("--start", type=float, default=0.0, metavar="SECONDS", help="from this moment (default 0)")
    render.add_argument("--end", type=float, default=None, metavar="SECONDS",
                        help="to this moment (default: the recording's end)")
    render.add_argument("--size", type=_size, default=(1280, 720), metavar="WxH",
                        help="the film's size in pixels (default 1280x720)")
    render.add_argument("--force", action="store_true", help="overwrite an existing film")
    render.set_defaults(func=cmd_render)

    batch = sub.add_parser("batch", help="run a parameter sweep or Monte-Carlo batch of a project (docs/batch.md)")
    batch.add_argument("sweep", nargs="?", help="the sweep file (.toml)")
    batch.add_argument("-j", "--jobs", type=_workers, default=None, metavar="N",
                       help="runs at a time, each in its own process (default: the number of cores)")
    batch.add_argument("-o", "--output", default=None, metavar="DIR",
                       help="the results folder (default: the sweep file's `output`, else NAME-results beside it)")
    batch.add_argument("--resume", action="store_true", help="run only the runs not yet in the results folder")
    batch.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="run each run as a Ray task: on a local Ray instance, or on the cluster at ADDRESS "
                            "(needs `pip install sear[ray]`)")
    batch.add_argument("--no-report", action="store_true", help="write no report.html")
    batch.add_argument("--yes", action="store_true",
                       help="run a sweep of more than 100,000 runs (refused without it, as most likely a mistake)")
    batch.add_argument("--rerun", nargs=2, default=None, metavar=("RESULTS", "RUN_ID"),
                       help="run one run of a batch again and compare its log with the one the batch kept")
    batch.add_argument("--log", default=None, metavar="FILE.csv",
                       help="with --rerun: where to write the log (default RESULTS/rerun/RUN_ID/log.csv)")
    batch.set_defaults(func=cmd_batch)
    return parser


def build_gui_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sear", description="Open the SEAR Project Settings window.",
                     epilog=f"Commands: sear {' | '.join(command_names(build_parser()))} (see sear COMMAND --help).")
    parser.add_argument("--version", action="version", version=f"sear {__version__}")
    parser.add_argument("project", nargs="?", help="a project file (.prj) to open")
    parser.set_defaults(func=cmd_gui)
    return parser


def command_names(parser: argparse.ArgumentParser) -> tuple[str, ...]:
    """The subcommands `parser` knows, so adding one to build_parser() is all a new command needs."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return tuple(action.choices)
    return ()



def _looks_like_a_mistyped_command(word: str) -> bool:
    """A first argument that is no option, no existing path and no .prj name was meant as a command."""
    return not word.startswith("-") and not word.lower().endswith(".prj") and not Path(word).exists()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sear` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    commands = command_names(parser)
    if argv and (argv[0] in commands or argv[0] in ("-h", "--help")):
        args = parser.parse_args(argv)
    elif argv and _looks_like_a_mistyped_command(argv[0]):
        hint = difflib.get_close_matches(argv[0], commands, n=1)
        suggestion = f" Did you mean `sear {hint[0]}`?" if hint else ""
        print(f"sear: {argv[0]!r} is neither a command ({', '.join(commands)}) nor a project file (.prj)."
              f"{suggestion} See `sear --help`.", file=sys.stderr)
        return exitcodes.USAGE
    else:
        args = build_gui_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except SearError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        print("sear: interrupted", file=sys.stderr)
        return exitcodes.INTERRUPTED
    except BrokenPipeError:  # SEAR's own output piped into a reader that went away (`| head`, `| true`)
        from sear.runtime.stdstreams import silence_closed_pipe

        silence_closed_pipe("stdout")
        return exitcodes.BROKEN_PIPE
