"""``prism tune`` and ``prism bench``: measuring the variants of ops, storing the fastest (the
tuning cache), and the calibration of the performance model."""

from __future__ import annotations

import argparse
import math
import os
import time
from typing import Any, TextIO

from prism_core._cli.common import EXIT_OK, EXIT_PROBLEMS, UsageError, dump_json, table
from prism_core.kernel.errors import describe_exception
from prism_core.kernel.quantities import seconds_text


def _csv(text: str | None, what: str, convert: Any = str) -> list[Any] | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError(f"{what}: empty; give a comma-separated list")
    try:
        return [convert(t) for t in items]
    except ValueError:
        raise UsageError(f"{what}: {text!r} is not a comma-separated list of integers") from None


def _show_tuning(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core._tuning.tune_report import choice_text
    from prism_core._tuning.tuning_records import TuningStore

    store = TuningStore()
    if args.clear:
        removed = store.clear()
        for p in store.problems:
            err.write(f"prism tune: {p}\n")
        # The file still there could not be removed (the problems say why).
        failed = store.enabled and os.path.lexists(store.path)
        if args.json:
            dump_json({"path": str(store.path), "removed": removed, "cleared": not failed}, out)
        elif not failed:
            out.write(f"removed {removed} tuned choice(s) from {store.path}\n")
        if failed:
            err.write(
                f"prism tune: error: {store.path} was not cleared (see the problem above); fix "
                "what it names and run prism tune --clear again, or remove the file by hand\n"
            )
            return EXIT_PROBLEMS
        return EXIT_OK
    recs = store.load()
    entries = sorted(recs.entries, key=lambda e: (e.op, e.device, e.dtype, e.bucket))
    if args.op:
        entries = [e for e in entries if e.op in set(args.op)]
    calibration = recs.as_dict()["calibration"]
    if args.json:
        dump_json(
            {
                "path": str(store.path),
                "fingerprint": dict(store.fingerprint.components),
                "entries": [e.as_dict() for e in entries],
                "calibration": calibration,
                "problems": list(store.problems),
            },
            out,
        )
        return EXIT_OK
    out.write(f"tuning cache: {store.path}\n")
    for p in store.problems:
        out.write(f"  problem: {p}\n")
    _show_calibration(calibration, out)
    if not entries:
        out.write("no tuned choices (run `prism tune OP --sizes ...` or `prism bench`)\n")
        return EXIT_OK
    rows = [["op", "device", "dtype", "elements", "winner", "decided", "times"]]
    for e in entries:
        times = ", ".join(
            f"{v} {seconds_text(t)}" for v, t in sorted(e.times.items(), key=lambda kv: kv[1])
        )
        rows.append(
            [
                e.op,
                e.device,
                e.dtype,
                f"<2^{e.bucket}",
                e.winner,
                choice_text(e.winner, e.decided, e.times),
                times,
            ]
        )
    table(rows, out)
    return EXIT_OK


def _show_calibration(calibration: dict[str, Any], out: TextIO) -> None:
    """The performance model's calibration stored for this host, per device type: its figures
    and when they were measured."""
    from prism_core._tuning.calibration import figures_text

    if not calibration:
        out.write("no calibration of the performance model (run `prism bench --calibrate`)\n")
        return
    out.write("calibration of the performance model (measured on this host):\n")
    for device_type, entry in sorted(calibration.items()):
        when = entry.get("measured_at")
        stamp = (
            time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
            if isinstance(when, (int, float))
            else "by the tuning of prism bench"
        )
        by = f", {entry['backend']}" if isinstance(entry.get("backend"), str) else ""
        out.write(f"  {device_type} ({stamp}{by}): {figures_text(entry)}\n")


def _unstored(command: str, store: Any, err: TextIO) -> bool:
    """Say on ``err`` what ``store`` could not write to its file (kept in this process's memory,
    lost when it ends); whether there was any.  ``PRISM_NO_CACHE=1`` is no failure."""
    kept = store.unwritten if store else None
    if kept is None or not store.enabled or not (len(kept) or kept.calibration):
        return False
    what = f"{len(kept)} tuned choice(s)" + (
        " and the model's calibration" if kept.calibration else ""
    )
    err.write(
        f"prism {command}: error: {what} could not be stored in {store.path} (see the "
        "problems): what was measured is shown, but not kept\n"
    )
    return True


def _interrupted(command: str, store: Any, err: TextIO) -> int:
    """Ctrl-C while tuning: say where the choices measured before it are (each case is stored
    as it finishes); exit status 130, the shells' for SIGINT."""
    if not _unstored(command, store, err) and store and store.enabled:
        err.write(
            f"prism {command}: interrupted; the tuned choices measured before it are stored in "
            f"{store.path}\n"
        )
    else:
        err.write(f"prism {command}: interrupted\n")
    return 130


def _check_budget(budget: float | None) -> None:
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise UsageError(f"--budget: expected a positive number of seconds; got {budget:g}")


def _took(started: float, start_up: float, budget: float | None) -> str:
    """The time since the command started, and of it the start-up (to the first
    measurement), against ``--budget``: what the budget caps, accounted for."""
    took = time.perf_counter() - started
    text = f"({seconds_text(took)} since the command started, {seconds_text(start_up)} of it "
    if budget is None:
        return text + "start-up)"
    text += f"start-up; --budget {budget:g} s"
    if took > budget:
        why = (
            "the start-up alone took longer" if start_up > budget
            else "a call under way when it ran out runs to its end, and the results are written"
        )  # fmt: skip
        text += f", exceeded by {seconds_text(took - budget)}: {why}"
    return text + ")"


def _progress(args: argparse.Namespace, err: TextIO) -> Any:
    """The progress lines of ``prism tune`` or ``prism bench`` on ``err``, ending at
    ``--budget``'s deadline, if any: the budget counts from the command's start, so that its
    start-up is spent of it."""
    from prism_core._tuning.progress import Progress

    deadline = None if args.budget is None else args.started + args.budget
    return Progress.auto(err, lines=True, prefix=f"prism {args.command}: ", deadline=deadline)


def cmd_tune(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core._tuning.tuner import check_size, tune
    from prism_core._tuning.tuning_records import TuningStore

    if args.show or args.clear:
        return _show_tuning(args, out, err)
    if not args.op:
        raise UsageError("name at least one op (prism tune matmul --sizes 64,256), or --show")
    sizes = _csv(args.sizes, "--sizes", int)
    if sizes is None:
        raise UsageError("--sizes: give the sizes to tune, e.g. --sizes 64,256,1024")
    dtypes = _csv(args.dtypes, "--dtypes") or ["float64"]
    for op in args.op:  # a size that cannot be tuned is refused before any op is measured
        for dtype in dtypes:
            for n in sizes:
                check_size(op, n, dtype)
    _check_budget(args.budget)
    progress = _progress(args, err)
    deadline = progress.deadline
    reports = []
    store = TuningStore()
    start_up = time.perf_counter() - args.started
    try:
        try:
            for i, op in enumerate(args.op):
                # Each op its even share of what is left; what one leaves goes to the others.
                now = time.perf_counter()
                left = None if deadline is None else max(deadline - now, 0.0)
                until = None if left is None else now + left / (len(args.op) - i)
                reports.append(
                    tune(
                        op, sizes=sizes, dtypes=dtypes, store=store, progress=progress,
                        deadline=until,
                    )
                )  # fmt: skip
        finally:
            progress.close()
    except KeyboardInterrupt:
        return _interrupted("tune", store, err)
    if args.json:
        dump_json([r.as_dict() for r in reports], out)
    else:
        for r in reports:
            out.write(str(r) + "\n")
    if args.budget is not None:
        (err if args.json else out).write(_took(args.started, start_up, args.budget) + "\n")
    return EXIT_PROBLEMS if _unstored("tune", store, err) else EXIT_OK


def _figure(report: Any, path: str, err: TextIO) -> bool:
    """Write the figure of ``--plot`` once the table is out, so that a figure that cannot
    be written (a full disk) loses nothing measured; whether it was written."""
    from prism_core._bench_plot import plot

    try:
        plot(report, path)
    except (OSError, ValueError, RuntimeError) as exc:
        err.write(f"prism bench: error: --plot: {path} was not written: ")
        err.write(describe_exception(exc) + "\n")
        return False
    return True


def cmd_bench(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core._bench import bench_host, header, render, run_bench
    from prism_core._bench_plot import target
    from prism_core._tuning.load import MachineLoad
    from prism_core._tuning.tuning_records import TuningStore

    figure = None
    if args.plot:  # checked before anything is measured
        try:
            figure = target(args.plot)
        except ImportError:
            raise UsageError(
                "--plot needs matplotlib: pip install 'prism-core[plot]' (or matplotlib)"
            ) from None
        except ValueError as exc:
            raise UsageError(f"--plot: {exc}") from None
    # Ops (or a plugin's group of ops) by position or with --ops, or both.
    ops = [*args.op, *(_csv(args.ops, "--ops") or [])] or None
    dtypes = _csv(args.dtypes, "--dtypes") or ["float32", "float64"]
    _check_budget(args.budget)
    if args.calibrate:
        if figure is not None:
            raise UsageError("--plot draws the bench's table: not with --calibrate")
        return _calibrate_only(args, ops, dtypes, out, err)
    host = bench_host()
    load = MachineLoad()
    # The header at once, before the first case is measured (on stderr beside --json).
    shown = err if args.json else out
    shown.write(header(host, load, args.budget) + ("" if args.json else "\n"))
    shown.flush()
    progress = _progress(args, err)
    store = False if args.no_store else TuningStore()
    try:
        try:
            report = run_bench(
                quick=not args.full, ops=ops, dtypes=dtypes, budget_s=args.budget, store=store,
                force=args.force, progress=progress, host=host, load=load, started=args.started,
                calibrate=False if args.no_calibrate else None,
            )  # fmt: skip
        finally:
            progress.close()
    except KeyboardInterrupt:
        return _interrupted("bench", store, err)
    if args.json:
        dump_json(report.as_dict(), out)
        out.flush()
        drawn = figure is None or _figure(report, figure, err)
        return EXIT_PROBLEMS if _unstored("bench", store, err) or not drawn else EXIT_OK
    table(render(report), out, right=frozenset({2, 4, 7, 8, 9}))
    summary = report.summary()

    def ratio(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}x"

    out.write(
        f"\ngeometric mean: Prism {ratio(summary['prism_vs_oracle'])} the fastest variant per "
        f"size, {ratio(summary['prism_vs_numpy'])} NumPy alone "
        f"(NumPy alone: {ratio(summary['numpy_vs_oracle'])} the fastest)\n"
    )
    out.write(
        f"{summary['ties']} of {len(report.rows)} row(s) tie with the fastest variant (the gap is "
        "within the 95 % interval of this run's rounds)\n"
    )
    if report.load is not None and report.load.samples:
        out.write(report.load.describe() + "\n")
    if report.reused:
        out.write(
            f"reused {report.reused} stored choice(s), measured on this host with the same "
            "software and backend settings (--force measures them again)\n"
        )
    where = f" in {report.store_path}" if report.store_path else ""
    if report.unstored:
        out.write(
            f"stored {report.stored} of {report.stored + report.unstored} tuned choice(s)"
            f"{where}; {report.unstored} not stored (see the problems)\n"
        )
    elif report.stored:
        out.write(f"stored {report.stored} tuned choice(s){where}\n")
    for r in report.rows:
        if r.note and None in (r.oracle_s, r.prism_s, r.numpy_s):  # why a cell is empty
            out.write(f"empty cells of {r.op} {r.dtype} {r.label}: {r.note}\n")
    for note in report.notes:
        out.write(f"note: {note}\n")
    if report.calibration_step is not None:
        out.write(
            f"calibrated the performance model in {seconds_text(report.calibration_step.seconds)}"
            " (prism tune --show lists its figures):\n"
        )
        for line in report.calibration_step.lines():
            out.write(f"  {line}\n")
    for p in report.problems:
        out.write(f"problem: {p}\n")
    out.flush()
    drawn = figure is None or _figure(report, figure, err)
    if figure is not None and drawn:
        out.write(f"plot: {figure}\n")
    out.write(_took(args.started, report.start_up_s, args.budget) + "\n")
    return EXIT_PROBLEMS if _unstored("bench", store, err) or not drawn else EXIT_OK


def _calibrate_only(
    args: argparse.Namespace, ops: list[str] | None, dtypes: list[str], out: TextIO, err: TextIO
) -> int:
    """``prism bench --calibrate``: the calibration step alone, its figures and where they
    were stored."""
    from prism_core._bench import BenchError, run_calibration
    from prism_core._tuning.tuning_records import TuningStore

    progress = _progress(args, err)
    store = False if args.no_store else TuningStore()
    try:
        try:
            report, keeper = run_calibration(
                ops=ops, dtypes=dtypes, budget_s=args.budget, store=store, progress=progress,
                started=args.started,
            )  # fmt: skip
        finally:
            progress.close()
    except BenchError as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        err.write("prism bench: interrupted; nothing of the calibration was stored\n")
        return 130
    _, _, path, problems = keeper.outcome()
    if args.json:
        dump_json(
            {**report.as_dict(), "store_path": path, "problems": [*report.problems, *problems]}, out
        )
    else:
        for line in report.lines():
            out.write(line + "\n")
        for p in [*report.problems, *problems]:
            out.write(f"problem: {p}\n")
        where = f"stored in {path}" if path else "not stored (--no-store)"
        if store is not False and not path:
            where = "not stored (see the problems)"
        out.write(f"calibration {where}; measured in {seconds_text(report.seconds)}\n")
    return EXIT_PROBLEMS if _unstored("bench", store, err) else EXIT_OK


def add_tune(sub: Any) -> None:
    """``prism tune``: its parser, added to ``prism``'s subcommands ``sub``."""
    p = sub.add_parser(
        "tune",
        help="measure the variants of ops over sizes and store the fastest (the tuning cache)",
        description="Measure every variant dispatch chooses among for OP at each size and "
        "dtype, on this host, and store the winner where the gap is significant; dispatch uses "
        "it from then on.  --show lists the tuning cache, --clear empties it.",
    )
    p.add_argument(
        "op",
        nargs="*",
        metavar="OP",
        help="operation: matmul, fft.fft, linalg.svd, linalg.solve, add",
    )
    p.add_argument(
        "--sizes",
        help="comma-separated sizes n, e.g. 64,256,1024: the side of n x n matrices for matmul, "
        "linalg.svd and linalg.solve; the length of the vectors for add and fft.fft; for an op "
        "a plugin declares, what its examples say.  A size whose arrays need more memory than "
        "is available is refused",
    )
    p.add_argument("--dtypes", help="comma-separated dtypes (default float64)")
    p.add_argument(
        "--budget", type=float, metavar="SECONDS",
        help="the most the command may take, in seconds, counted from its start: start-up "
        "(imports, plugins, the hardware) included (default: no cap; about 1 s of measuring "
        "per case).  The cases share what is left; none is measured past it, and a case it "
        "leaves no time for says so.  A call under way when it runs out finishes, and the "
        "report is written after it: the last line says how long the command took",
    )  # fmt: skip
    p.add_argument("--show", action="store_true", help="list the tuned choices of this host")
    p.add_argument("--clear", action="store_true", help="remove this host's tuned choices")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_tune)


def add_bench(sub: Any) -> None:
    """``prism bench``: its parser, added to ``prism``'s subcommands ``sub``."""
    p = sub.add_parser(
        "bench",
        help="measure the core ops on every backend, tune, and compare Prism with the fastest",
        description="Prism's main job: detect the hardware, measure matmul, fft, svd, solve and "
        "add over sizes on every installed backend and device, store the tuned choices, and "
        "show per op and size the fastest variant, what Prism now picks, and Prism's time "
        "against the fastest and against NumPy alone.  Quick by default (under a minute on 2 "
        "cores).",
    )
    p.add_argument(
        "op",
        nargs="*",
        metavar="OP",
        help="ops to benchmark, as --ops; also the ops plugins declare with example arguments, "
        "by name or by the name of their group",
    )
    p.add_argument("--full", action="store_true", help="more sizes, longer measurements")
    p.add_argument(
        "--ops",
        help="comma-separated ops (default: matmul,fft.fft,linalg.svd,linalg.solve,add; also "
        "the ops plugins declare with example arguments, and their groups)",
    )
    p.add_argument("--dtypes", help="comma-separated dtypes (default float32,float64)")
    p.add_argument(
        "--budget", type=float, metavar="SECONDS",
        help="the most the command may take, in seconds, counted from its start: start-up "
        "(imports, plugins, the hardware) included (default: no cap; about 0.5 s per case "
        "quick, 2 s with --full).  The cases share what is left; none is measured past it.  A "
        "call under way when it runs out finishes, and the table, the tuning cache and the "
        "figure are written after it: the last line says how long the command took",
    )  # fmt: skip
    p.add_argument("--no-store", action="store_true", help="measure only: keep the cache as is")
    p.add_argument(
        "--calibrate", action="store_true",
        help="the calibration step alone: measure each device's launch latency, host link (each "
        "way, pageable and pinned) and the rate of matmul, fft.fft, linalg.solve and add at "
        "three sizes, with the data on the device, and store the performance model's figures "
        "for this host (some seconds).  Without it, prism bench runs the step first where a "
        "device other than the CPU has none stored yet (or with --force)",
    )  # fmt: skip
    p.add_argument(
        "--no-calibrate",
        action="store_true",
        help="skip the calibration step even where a device has no calibration stored",
    )
    p.add_argument(
        "--force", action="store_true",
        help="measure every case again, also those whose choice is stored for this host with "
        "the same software and backend settings (reused otherwise), and run the calibration "
        "step where a device other than the CPU is present",
    )  # fmt: skip
    p.add_argument(
        "--plot", metavar="FILE",
        help="write a figure, in the format of FILE's extension (.png, .svg, .pdf or any other "
        "matplotlib writes; none: .png); a directory gets prism-bench.png in it.  Checked "
        "before anything is measured.  Needs matplotlib",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_bench)
