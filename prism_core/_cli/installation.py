"""``prism plugins`` and ``prism doctor``: what is installed, and what a bug report needs."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, TextIO

from prism_core._cli.common import EXIT_OK, EXIT_PROBLEMS, dump_json, table
from prism_core.kernel.errors import PrismError


def cmd_plugins(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from prism_core._backend_registry import check_capabilities
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
        dump_json(
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
        table(rows, out)
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
        dump_json(report, out)
    else:
        out.write(render(report))
    return EXIT_OK


def add_plugins(sub: Any) -> None:
    """``prism plugins``: its parser, added to ``prism``'s subcommands ``sub``."""
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


def add_doctor(sub: Any) -> None:
    """``prism doctor``: its parser, added to ``prism``'s subcommands ``sub``."""
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
