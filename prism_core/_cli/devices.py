"""``prism validate``, ``devices``, ``show`` and ``schema``: device files and the device library."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, TextIO

from prism_core._cli.common import EXIT_OK, EXIT_PROBLEMS, UsageError, dump_json, table
from prism_core.kernel.errors import UnknownDeviceError, display_path
from prism_core.kernel.quantities import bytes_text


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4g}"


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
        dump_json(
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
        dump_json([_device_summary(d) for d in found], out)
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
        table(rows, out, right=frozenset({3, 4, 5, 6, 7, 8}))
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
        dump_json(
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


def cmd_schema(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core.kernel.description.schema import device_schema_bytes

    out.write(device_schema_bytes().decode("utf-8"))
    return EXIT_OK


def add_validate(sub: Any) -> None:
    """``prism validate``: its parser, added to ``prism``'s subcommands ``sub``."""
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


def add_devices(sub: Any) -> None:
    """``prism devices``: its parser, added to ``prism``'s subcommands ``sub``."""
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


def add_show(sub: Any) -> None:
    """``prism show``: its parser, added to ``prism``'s subcommands ``sub``."""
    p = sub.add_parser(
        "show",
        help="show one resolved device description and where each value came from",
        description="Show the description of DEVICE with its `extends` resolved; each inherited "
        "value is marked with the device type it came from.",
    )
    p.add_argument("device", metavar="DEVICE", help="device type, e.g. nvidia.h100-sxm")
    p.add_argument("--json", action="store_true", help="print the description as JSON")
    p.set_defaults(func=cmd_show)


def add_schema(sub: Any) -> None:
    """``prism schema``: its parser, added to ``prism``'s subcommands ``sub``."""
    p = sub.add_parser(
        "schema",
        help="print the device-file JSON Schema",
        description="Print the JSON Schema of device files (draft 2020-12, readable as draft-07), "
        "e.g. for an editor: prism schema > device.schema.json",
    )
    p.set_defaults(func=cmd_schema)
