"""The ``prism`` command line.

Exit status: 0 success; 1 something was found wrong (an invalid device file, a library
problem, tuned choices that could not be stored, a tuning cache that could not be cleared, a
figure of ``prism bench --plot`` that could not be written once measured); 2 the command line
was wrong (unknown option, missing path, unknown device); 3 an internal error
(a bug in Prism: set ``PRISM_DEBUG=1`` for its traceback and report it); 130 interrupted
(Ctrl-C).  No traceback reaches the user otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

from prism_core.kernel.config import debug_enabled
from prism_core.kernel.errors import (
    PrismError,
    UnknownDeviceError,
    describe_exception,
    display_path,
)
from prism_core.kernel.quantities import bytes_text, seconds_text
from prism_core.kernel.version import __version__

__all__ = ["main"]

#: When this module was imported, on ``time.perf_counter()``'s clock: the start of the command
#: when ``prism`` runs as a program (Python's own start-up comes before), from which
#: ``--budget`` counts.  A call of ``main(argv)`` from Python counts from that call instead.
_IMPORTED = time.perf_counter()

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """The command line asked for something that cannot be (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _dump_json(data: Any, out: TextIO) -> None:
    json.dump(data, out, indent=2, sort_keys=False)
    out.write("\n")


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}"


def _table(rows: Sequence[Sequence[str]], out: TextIO, right: frozenset[int] = frozenset()) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [
            c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)
        ]
        out.write("  ".join(cells).rstrip() + "\n")


def _print_problems(problems: Sequence[Any], err: TextIO, *, prefix: str = "") -> None:
    for p in sorted(problems):
        err.write(f"{prefix}{p}\n")


def _library() -> Any:
    from prism_core.kernel.devices import DeviceLibrary

    return DeviceLibrary()


def _report_library_problems(lib: Any, err: TextIO) -> int:
    if not lib.problems:
        return EXIT_OK
    n = len(lib.problems)
    err.write(
        f"prism: warning: {n} problem{'s' if n != 1 else ''} in the device library; "
        "the affected files were skipped:\n"
    )
    _print_problems(lib.problems, err, prefix="  ")
    return EXIT_PROBLEMS


# -- commands ---------------------------------------------------------------------------------


def cmd_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core.kernel.devices import validate_paths

    try:
        reports = validate_paths(args.paths, use_cache=False if args.no_cache else None)
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from None
    if not reports:
        raise UsageError(
            "no device files (*.yaml, *.yml) found in " + ", ".join(repr(p) for p in args.paths)
        )
    invalid = [r for r in reports if not r.valid]
    if args.json:
        _dump_json(
            {
                "valid": not invalid,
                "files": len(reports),
                "invalid": len(invalid),
                "reports": [r.as_dict() for r in reports],
            },
            out,
        )
    else:
        for r in reports:
            if r.valid:
                if not args.quiet:
                    out.write(f"ok       {display_path(r.path)} ({r.device_type})\n")
            else:
                n = len(r.problems)
                out.write(f"INVALID  {display_path(r.path)}: {n} problem{'s' if n != 1 else ''}\n")
                _print_problems(r.problems, out, prefix="  ")
        ok = len(reports) - len(invalid)
        out.write(
            f"{len(reports)} file{'s' if len(reports) != 1 else ''} checked: {ok} valid, "
            f"{len(invalid)} invalid\n"
        )
    return EXIT_PROBLEMS if invalid else EXIT_OK


def _device_summary(d: Any) -> dict[str, Any]:
    glob = d.memory_level("global")
    return {
        "device_type": d.device_type,
        "name": d.name,
        "kind": d.kind,
        "vendor": d.vendor,
        "abstract": d.abstract,
        "compute_units": d.compute_units,
        "memory_bytes": glob.size_bytes if glob else None,
        "memory_bandwidth_gbps": glob.bandwidth_gbps if glob else None,
        "peak_tflops": dict(d.peak_tflops),
        "tdp_watts": d.tdp_watts,
        "extends": list(d.parents),
        "file": display_path(d.path) if d.path else None,
        "origin": d.origin,
    }


def cmd_devices(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    lib = _library()
    found = lib.list(include_abstract=args.all, kind=args.kind, vendor=args.vendor)
    if args.json:
        _dump_json([_device_summary(d) for d in found], out)
    elif not found:
        out.write("no devices match\n")
    else:
        rows = [
            [
                "DEVICE TYPE",
                "KIND",
                "VENDOR",
                "UNITS",
                "MEMORY",
                "GB/s",
                "FP64",
                "FP32",
                "BF16",
                "ORIGIN",
                "NAME",
            ]
        ]
        for d in found:
            s = _device_summary(d)
            peaks = s["peak_tflops"]
            rows.append(
                [
                    d.device_type + (" *" if d.abstract else ""),
                    s["kind"] or "-",
                    s["vendor"] or "-",
                    str(s["compute_units"] or "-"),
                    "-" if s["memory_bytes"] is None else bytes_text(s["memory_bytes"]),
                    _num(s["memory_bandwidth_gbps"]),
                    _num(peaks.get("fp64")),
                    _num(peaks.get("fp32")),
                    _num(peaks.get("bf16")),
                    d.origin,
                    d.name,
                ]
            )
        _table(rows, out, right=frozenset({3, 4, 5, 6, 7, 8}))
        note = "; * = family (abstract)" if args.all else ""
        out.write(
            f"{len(found)} devices; peak figures in TFLOP/s (dense){note}; origin: builtin = "
            "shipped with Prism, plugin:NAME = a plugin's directory, user = PRISM_HARDWARE_PATH\n"
        )
    return _report_library_problems(lib, err)


def _render_show(d: Any, out: TextIO) -> None:
    import yaml

    def dump(value: Any) -> str:
        text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000)
        return text.strip().removesuffix("...").strip()

    def note(key: str) -> str:
        src = d.provenance.get(key)
        return f"  # from {src}" if src and src != d.device_type else ""

    out.write(f"# {d.device_type}: {d.name}\n")
    if d.path is not None:
        out.write(f"# file: {display_path(d.path)} ({d.origin})\n")
    for path in d.overrides:
        out.write(f"# overrides: {display_path(path)}\n")
    out.write(f"# lineage: {' -> '.join(d.lineage)}\n")
    for key, value in d.data.items():
        if key in ("features", "memory_hierarchy") and isinstance(value, list):
            name_key = "name" if key == "features" else "level"
            out.write(f"{key}:\n")
            for item in value:
                name = item[name_key]
                out.write(f"  - {name_key}: {name}{note(f'{key}[{name}]')}\n")
                for k, v in item.items():
                    if k == name_key:
                        continue
                    if k == "operations":
                        out.write("    operations:\n")
                        for op in v:
                            out.write(f"      - {op['name']}: {dump(op['data_types'])}\n")
                    else:
                        out.write(f"    {k}: {dump(v)}\n")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            # The other lists of entries (partitions, throughput, links, sparsity, numeric
            # formats): one entry a line.
            out.write(f"{key}:{note(key)}\n")
            for item in value:
                out.write(f"  - {dump(item)}\n")
        elif isinstance(value, dict) and key not in ("cloud_price", "host_link", "device_link"):
            out.write(f"{key}:\n")
            for k, v in value.items():
                out.write(f"  {k}: {dump(v)}{note(f'{key}.{k}')}\n")
        else:
            out.write(f"{key}: {dump(value)}{note(key)}\n")


def cmd_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    lib = _library()
    try:
        d = lib.get(args.device)
    except UnknownDeviceError as exc:
        _report_library_problems(lib, err)
        raise UsageError(str(exc)) from None
    if args.json:
        _dump_json(
            {
                "device_type": d.device_type,
                "file": display_path(d.path) if d.path else None,
                "origin": d.origin,
                "lineage": list(d.lineage),
                "overrides": [display_path(p) for p in d.overrides],
                "description": d.to_dict(),
                "provenance": dict(d.provenance),
            },
            out,
        )
    else:
        _render_show(d, out)
    return _report_library_problems(lib, err)


def cmd_plugins(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core.kernel.backend_registry import check_capabilities
    from prism_core.kernel.devices import default_library
    from prism_core.kernel.dispatch.ops import all_ops
    from prism_core.kernel.host import host_cpu_instance
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    with contextlib.suppress(PrismError):  # a failure is on its plugin's record: shown below
        all_ops()  # the plugins' variants join their ops (a plugin can fail here)
    with contextlib.suppress(PrismError):
        ps.check_device_files(default_library())
    host = []
    with contextlib.suppress(PrismError):  # no description of this CPU: asked without one
        host = [host_cpu_instance().description]
    with contextlib.suppress(PrismError):  # a capability method that raised is on its record
        check_capabilities(host)
    records = sorted(ps.records.values(), key=lambda r: (r.origin != "builtin", r.name))
    if args.json:
        _dump_json(
            {
                "plugins": [r.as_dict() for r in records],
                "backends": {
                    name: {
                        "plugin": next(r.name for r in records if name in r.backends),
                        "priority": b.priority,
                        "description": b.description,
                        "drives": dict(b.drives),
                    }
                    for name, b in sorted(ps.backends.items())
                },
            },
            out,
        )
    else:
        rows = [["PLUGIN", "ORIGIN", "DISTRIBUTION", "STATUS", "CONTRIBUTES"]]
        for r in records:
            parts = []
            if r.backends:
                parts.append("backends: " + ", ".join(r.backends))
            if r.hardware_dirs:
                parts.append(f"device dirs: {len(r.hardware_dirs)}")
            if r.variants:
                parts.append(f"variants: {len(r.variants)}")
            dist = f"{r.distribution} {r.version}" if r.distribution else "-"
            rows.append([r.name, r.origin, dist, r.status, "; ".join(parts) or "-"])
        _table(rows, out)
        notes = [r for r in records if r.reason or r.problems]
        if notes:
            out.write("\n")
            for r in notes:
                if r.reason:
                    out.write(f"{r.status}: {r.label}: {r.reason}\n")
                for problem in r.problems:
                    out.write(f"problem: {r.label}: {problem}\n")
    troubled = ps.failed or any(r.problems for r in records)
    return EXIT_PROBLEMS if troubled else EXIT_OK


def cmd_doctor(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core._doctor import collect, render

    report = collect()
    if args.json:
        _dump_json(report, out)
    else:
        out.write(render(report))
    return EXIT_OK


def _parse_shapes(text: str) -> list[tuple[int, ...]]:
    shapes: list[tuple[int, ...]] = []
    for part in text.split(","):
        part = part.strip().lower()
        if part in ("", "scalar", "()"):
            shapes.append(())
            continue
        try:
            dims = tuple(int(d) for d in part.split("x"))
        except ValueError:
            raise UsageError(
                f"--shape: {part!r} is not a shape; write dimensions joined by 'x', one shape "
                "per array argument, separated by commas: --shape 4096x4096,4096x4096"
            ) from None
        if any(d < 0 for d in dims):
            raise UsageError(f"--shape: {part!r} has a negative dimension")
        shapes.append(dims)
    return shapes


def cmd_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import contextlib

    from prism_core.kernel.description.dtypes import dtype as to_dtype
    from prism_core.kernel.dispatch.arguments import ArraySpec
    from prism_core.kernel.dispatch.explain import array_parameters, arrays_taken
    from prism_core.kernel.dispatch.ops import OperationError, explain, get_op
    from prism_core.kernel.dispatch.scope import (
        DeviceNotPresentError,
        choosing,
        device,
        use_backend,
    )
    from prism_core.kernel.errors import UnknownDeviceError

    try:
        op = get_op(args.op)
    except OperationError as exc:
        raise UsageError(str(exc)) from None
    try:
        dt = to_dtype(args.dtype)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--dtype: {exc}") from None
    for option, value, what, example in (
        ("--device", args.device, "device type", "nvidia.h100-sxm"),
        ("--backend", args.backend, "backend name", "numpy"),
    ):
        if value is not None and not value.strip():
            raise UsageError(
                f"{option}: an empty {what}; give one such as {example}, or leave {option} out "
                "for automatic selection"
            )
    # By default a 2x2 array per array argument (two when the op does not say), and one shape,
    # its own, for an op without array arguments (zeros, arange).
    default = 2 if op.array_args is None else max(1, len(op.array_args))
    shapes = _parse_shapes(args.shape) if args.shape else [(2, 2)] * default
    if op.array_args is not None:
        # An op without array arguments (zeros, random.normal) takes one shape: its own.
        takes = max(1, len(op.array_args))
        if len(shapes) > takes:
            what = "array argument" if op.array_args else "shape (the one it makes)"
            raise UsageError(
                f"--shape: {len(shapes)} shapes given, but {op.name} takes {takes} {what}"
                f"{'s' if takes != 1 else ''}; give at most {takes}, one per array argument, "
                "separated by commas"
            )
    arrays = array_parameters(op)
    fewest = sum(required for _, required in arrays) if arrays else 0
    if arrays and len(shapes) < fewest:
        texts = ["x".join(map(str, s)) or "scalar" for s in shapes]
        example = ",".join(texts + texts[-1:] * (fewest - len(texts)))
        raise UsageError(
            f"--shape: {arrays_taken(op, arrays)}; --shape gave {len(shapes)}: pass --shape "
            f"{example} (one shape per array, separated by commas)"
        )
    specs = [ArraySpec(s, dt) for s in shapes]
    simulated = False
    with contextlib.ExitStack() as stack:
        if args.device is not None:
            try:
                stack.enter_context(device(args.device, simulate=args.simulate))
            except DeviceNotPresentError:
                # Not here: plan for it as if it were (the decision says it is simulated).
                stack.enter_context(device(args.device, simulate=True))
                simulated = True
            except UnknownDeviceError as exc:
                raise UsageError(str(exc)) from None
        if args.backend is not None:
            try:
                stack.enter_context(use_backend(args.backend))
            except PrismError as exc:  # unknown or unavailable backend
                raise UsageError(str(exc)) from None
        if args.prefer:
            stack.enter_context(choosing(prefer=args.prefer))
        if op.array_args == ():
            decision = explain(op, shapes[0] if shapes else ())
        else:
            decision = explain(op, *specs)
    if args.json:
        _dump_json(decision.as_dict(), out)
    else:
        if simulated:
            out.write(f"# {args.device} is not present on this host: simulated\n")
        out.write(str(decision) + "\n")
    return EXIT_OK if decision.chosen else EXIT_PROBLEMS


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
    from prism_core._tuning.tuner import choice_text
    from prism_core._tuning.tuning_records import TuningStore

    store = TuningStore()
    if args.clear:
        removed = store.clear()
        for p in store.problems:
            err.write(f"prism tune: {p}\n")
        # The file still there could not be removed (the problems say why).
        failed = store.enabled and os.path.lexists(store.path)
        if args.json:
            _dump_json({"path": str(store.path), "removed": removed, "cleared": not failed}, out)
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
        _dump_json(
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
    _table(rows, out)
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


def cmd_tune(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core._tuning.progress import Progress
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
    # The budget counts from the command's start: its start-up is spent of it.
    deadline = None if args.budget is None else args.started + args.budget
    progress = Progress.auto(err, lines=True, prefix="prism tune: ", deadline=deadline)
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
        _dump_json([r.as_dict() for r in reports], out)
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
    from prism_core._tuning.progress import Progress
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
    # The budget counts from the command's start: its start-up is spent of it.
    deadline = None if args.budget is None else args.started + args.budget
    progress = Progress.auto(err, lines=True, prefix="prism bench: ", deadline=deadline)
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
        _dump_json(report.as_dict(), out)
        out.flush()
        drawn = figure is None or _figure(report, figure, err)
        return EXIT_PROBLEMS if _unstored("bench", store, err) or not drawn else EXIT_OK
    _table(render(report), out, right=frozenset({2, 4, 7, 8, 9}))
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
    from prism_core._tuning.progress import Progress
    from prism_core._tuning.tuning_records import TuningStore

    deadline = None if args.budget is None else args.started + args.budget
    progress = Progress.auto(err, lines=True, prefix="prism bench: ", deadline=deadline)
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
        _dump_json(
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


def cmd_schema(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core.kernel.description.schema import device_schema_bytes

    out.write(device_schema_bytes().decode("utf-8"))
    return EXIT_OK


def cmd_lint(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core.lint.cli import run
    from prism_core.lint.config import LintConfigError

    try:
        return run(args, out, err)
    except (LintConfigError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from None


# -- commands of plugins ----------------------------------------------------------------------

#: The entry-point group of the commands plugins add to ``prism``: name -> "module:function",
#: the function called with ``prism``'s subcommands (docs/writing-a-plugin.md, "Adding a
#: `prism` command").
COMMAND_GROUP = "prism.commands"
#: The namespace attribute naming the plugin a command came from (for its internal errors).
_SOURCE = "prism_command_source"
#: The namespace attribute of a command that takes any arguments (a broken one's stand-in).
_ANY_ARGUMENTS = "prism_any_arguments"


def _command_word(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word that is not an option), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def _add_plugin_commands(sub: Any) -> None:
    """Add the commands of the ``prism.commands`` entry points to ``sub`` (``prism``'s
    subcommands), in name order.

    Each entry point names a function ``add(subparsers) -> None`` that adds the subcommand of
    the entry point's name, with its handler as the default ``func`` (``func(args, out, err) ->
    int``, the exit status).  An entry point that fails to load, raises, or adds no such command
    is replaced by a command of its name that says why in one line (exit 1), naming the
    distribution and the entry point: the other commands never see it.  One named like a
    builtin command, or like a command added before it, is not added.
    """
    from prism_core.kernel.plugins import entry_points

    for ep in sorted(entry_points(COMMAND_GROUP), key=lambda ep: (ep.name, ep.value)):
        name = ep.name
        if name in sub.choices:
            continue
        dist = getattr(ep, "dist", None)
        label = (
            f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
        ) + f" (entry point '{name} = {ep.value}' in '{COMMAND_GROUP}')"
        try:
            add = ep.load()
            if not callable(add):
                raise TypeError(f"{ep.value} is a {type(add).__name__}, not a function")
            add(sub)
            parser = sub.choices.get(name)
            if parser is None:
                raise LookupError(f"it added no command named {name!r}")
            if not callable(parser.get_default("func")):
                raise LookupError(
                    f"its command {name!r} has no handler: set_defaults(func=...) on its parser"
                )
        except Exception as exc:  # a broken plugin never breaks the other commands
            _broken_command(sub, name, f"{label} failed: {describe_exception(exc)}")
            continue
        parser.set_defaults(**{_SOURCE: label})


def _broken_command(sub: Any, name: str, why: str) -> None:
    """Make ``prism NAME`` say ``why`` (exit 1), whatever its arguments."""
    message = " ".join(why.split())  # one line

    def fail(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        err.write(f"prism {name}: error: {message}\n")
        return EXIT_PROBLEMS

    parser = _Parser(prog=f"prism {name}", add_help=False)
    if name in sub.choices:  # added before it failed: replaced
        sub.choices[name] = parser
    else:
        parser = sub.add_parser(name, help=f"(broken) {message}", add_help=False)
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(func=fail, **{_ANY_ARGUMENTS: True})


# -- parser -----------------------------------------------------------------------------------


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """``prism``'s parser.  The commands of plugins are added unless ``argv`` (the command
    line, without the program) names a builtin command: reading their entry points costs a
    builtin command nothing then."""
    parser = _Parser(
        prog="prism",
        description="Prism: hardware descriptions, backends and dispatch for scientific Python.",
        epilog="Exit status: 0 ok, 1 problems found, 2 usage error, 3 internal error. "
        "Environment: PRISM_HARDWARE_PATH (extra device-file directories), PRISM_CACHE_DIR, "
        "PRISM_NO_CACHE=1, PRISM_DEBUG=1. Docs: docs/device-files.md.",
    )
    parser.add_argument("--version", action="version", version=f"prism {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "validate",
        help="check device files against the schema and their inheritance",
        description="Check device files (or every *.yaml/*.yml under directories) against the "
        "device schema, and resolve their `extends` on top of the device library. Every problem "
        "is printed as FILE:LINE:COLUMN: JSON-PATH: message. Exit 0 when all files are valid, "
        "1 when any is invalid, 2 on usage errors.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="device file or directory")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="print only invalid files")
    p.add_argument("--no-cache", action="store_true", help="re-validate even cached files")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "devices",
        help="list the device descriptions on the search path",
        description="List device descriptions: the shipped library, plugin directories and "
        "PRISM_HARDWARE_PATH. Memory is the device's main (global) memory; peak figures are "
        "dense TFLOP/s (TOPS for integer types).",
    )
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.add_argument("--all", action="store_true", help="include families (abstract descriptions)")
    p.add_argument(
        "--kind", help="only devices of this kind (cpu, gpu, npu, tpu, accelerator, ...)"
    )
    p.add_argument("--vendor", help="only devices of this vendor (nvidia, amd, aws, ...)")
    p.set_defaults(func=cmd_devices)

    p = sub.add_parser(
        "show",
        help="show one resolved device description and where each value came from",
        description="Show the description of DEVICE with its `extends` resolved; each inherited "
        "value is marked with the device type it came from.",
    )
    p.add_argument("device", metavar="DEVICE", help="device type, e.g. nvidia.h100-sxm")
    p.add_argument("--json", action="store_true", help="print the description as JSON")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "plugins",
        help="list plugins, what they contribute, and the failed ones with their reasons",
        description="List the builtin plugins and the third-party ones found through the "
        "'prism.plugins' entry points: distribution and version, status, contributed backends, "
        "device directories and variants, and for each failed, blocked or skipped plugin the "
        "reason. Exit 1 when a plugin failed. Switches: PRISM_DISABLE_PLUGIN_AUTOLOAD=1, "
        "PRISM_PLUGINS=a,b, PRISM_BLOCK_PLUGINS=c, PRISM_STRICT_PLUGINS=1.",
    )
    p.add_argument("--json", action="store_true", help="print the plugins as JSON")
    p.set_defaults(func=cmd_plugins)

    p = sub.add_parser(
        "doctor",
        help="report Prism, Python, host CPU, BLAS, devices, plugins, environment and caches",
        description="Print everything a bug report needs: Prism and package versions, Python, "
        "the host CPU (archspec name, vendor, features) and the description it maps to, BLAS "
        "(threadpoolctl), the devices present and their descriptions, plugins and their "
        "failures, the PRISM_* variables in effect, and cache locations. Works with optional "
        "dependencies missing and broken plugins installed.",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser(
        "explain",
        help="explain which variant of an operation runs, and why every other does not",
        description="Show the decision Prism makes for an operation on arrays of the given "
        "dtype and shapes, on a present or simulated device: every candidate variant, accepted "
        "or rejected with the requirement clause that failed, the one chosen, and any data "
        "movement. A named device that is not present is simulated. Exit 1 when no variant "
        "can run.",
    )
    p.add_argument("op", metavar="OP", help="operation, e.g. matmul, linalg.svd, fft.fft")
    p.add_argument("--device", help="device type, e.g. nvidia.h100-sxm (default: automatic)")
    p.add_argument("--simulate", action="store_true", help="simulate the device even if present")
    p.add_argument("--backend", help="only this backend (e.g. numpy)")
    p.add_argument(
        "--dtype", default="float64", help="data type of the arrays (float32, bf16, ...)"
    )
    p.add_argument(
        "--shape", help="shapes of the array arguments: 4096x4096,4096x4096 (default 2x2 each)"
    )
    p.add_argument("--prefer", choices=["performance", "reference"], help="selection policy")
    p.add_argument("--json", action="store_true", help="print the decision as JSON")
    p.set_defaults(func=cmd_explain)

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

    p = sub.add_parser(
        "schema",
        help="print the device-file JSON Schema",
        description="Print the JSON Schema of device files (draft 2020-12, readable as draft-07), "
        "e.g. for an editor: prism schema > device.schema.json",
    )
    p.set_defaults(func=cmd_schema)

    from prism_core.lint.cli import add_arguments as add_lint_arguments

    p = sub.add_parser(
        "lint",
        help="check Python code against the backend-purity guidelines (docs/lint.md)",
        description="Read Python files (never run them) and report, as FILE:LINE:COL: CODE "
        "message, what backend-agnostic code should not do: framework imports and calls, "
        "conversions out of the backend, Python operators on Prism arrays, framework dtypes, "
        "devices, random numbers and type checks. Configured by [tool.prism.lint] in the "
        "nearest pyproject.toml; `# noqa: PRISM004` silences a line. Exit 0 when nothing is "
        "found, 1 on findings, 2 on usage errors or files that do not parse.",
    )
    add_lint_arguments(p)
    p.set_defaults(func=cmd_lint)
    if argv is None or _command_word(argv) not in sub.choices:
        _add_plugin_commands(sub)
    return parser


def _show_warning(err: TextIO) -> Any:
    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        err.write(f"prism: warning: {message}\n")

    return show


def main(argv: Sequence[str] | None = None) -> int:
    from prism_core.kernel.plugins import PluginWarning

    # Run as the program (no argv): the command started when Python imported this module.
    started = _IMPORTED if argv is None else time.perf_counter()
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(words)
    args, unknown = parser.parse_known_args(words)
    if unknown and not getattr(args, _ANY_ARGUMENTS, False):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.started = started
    out, err = sys.stdout, sys.stderr
    try:
        with warnings.catch_warnings():
            # Prism's warnings (a plugin skipped, a fallback) are for the user, not a traceback
            # location inside Prism: one line each, in the CLI's own format.
            warnings.showwarning = _show_warning(err)
            # A plugin that failed is reported by `prism plugins` and `prism doctor`; the other
            # commands keep their output clean of it (a warning is for Python callers).
            warnings.filterwarnings("ignore", category=PluginWarning)
            return int(args.func(args, out, err))
    except UsageError as exc:
        err.write(f"prism {args.command}: error: {exc}\n")
        return EXIT_USAGE
    except PrismError as exc:
        err.write(f"prism {args.command}: error: {exc}\n")
        return EXIT_PROBLEMS
    except BrokenPipeError:
        # The reader went away (`prism devices | head`): stop quietly, as other tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PROBLEMS
    except KeyboardInterrupt:
        err.write("prism: interrupted\n")
        return 130
    except Exception as exc:
        if debug_enabled():
            raise
        source = getattr(args, _SOURCE, None)
        err.write(
            f"prism {args.command}: internal error: {describe_exception(exc)}\n"
            f"This is a bug in {source or 'Prism'}. Run again with PRISM_DEBUG=1 for the "
            "traceback, and please report it.\n"
        )
        return EXIT_INTERNAL
