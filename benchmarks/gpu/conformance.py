"""Prism's conformance suite on the GPU, at most ``--seconds`` per backend: the ``torch``
backend with its arrays on CUDA (inside a scope naming the GPU, as the torch plugin's
``test_conformance_on_the_gpu`` runs it) and the ``cuda`` backend (CuPy).  Writes the counts
and every failure to OUTPUT (JSON); a backend that cannot use a GPU here is recorded with its
reason.  Without any GPU it prints ``skipped: ...``
and exits 0 (``benchmarks/gpu/run.py --dry-run``).

``--device TYPE`` (or the environment variable ``PRISM_GPU_DEVICE``) names the accelerator
instead, by its Prism description (``amd.mi300x``, ``intel.max-1550``, ``apple.m4-max-gpu``,
``huawei.ascend-910b``; a family such as ``amd.gpu`` takes any of its members): the suite then
runs on every installed backend that drives that device and is available, inside a scope
naming it.  A device that is not present here, or that no backend can use, is an error: the
script says which and exits 1 (2 for a name no description has).  ``--present`` only checks
that the device is there (``run.py`` asks it first); ``--dry-run`` checks the name only.

Usage::

    python benchmarks/gpu/conformance.py --output FILE.json [--seconds S] [--ops linspace,sum]
        [--device TYPE] [--dry-run | --present]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import prism_core
from prism_core.testing import ConformanceReport, conformance_checks


def check(name: str, seconds: float, ops: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The suite's checks on backend ``name`` one by one, for at most ``seconds``, of the ops
    named in ``ops`` (every op when empty); the slowest subjects are listed (CuPy compiles a
    kernel per op, dtype and axis on first use)."""
    report = ConformanceReport(name)
    # Round-robin over the subjects (an op's checks in turn): a run cut short by the time
    # limit has checked every op at least once rather than the first ops in full.
    by_subject: dict[str, list[Any]] = {}
    for c in conformance_checks(prism_core.extending.plugins().backend(name)):
        if ops and c.subject.removeprefix(f"{name}.") not in ops:
            continue
        by_subject.setdefault(c.subject, []).append(c)
    checks = [c for row in itertools.zip_longest(*by_subject.values()) for c in row if c]
    began = time.perf_counter()
    spent: dict[str, float] = {}
    for done, c in enumerate(checks):
        if time.perf_counter() - began > seconds:
            print(f"{name}: stopped after {seconds:.0f} s, {done} of {len(checks)} checks run")
            break
        start = time.perf_counter()
        report.results.append(c.run())
        subject = report.results[-1].subject
        spent[subject] = spent.get(subject, 0.0) + time.perf_counter() - start
    return {
        "checks": len(checks),
        "run": len(report.results),
        "passed": len(report.passed),
        "failed": len(report.failed),
        "skipped": len(report.skipped),
        "seconds": round(time.perf_counter() - began, 1),
        "failures": [f"{r.name}: {r.detail}" for r in report.failed],
        "slowest": {k: round(v, 2) for k, v in sorted(spent.items(), key=lambda kv: -kv[1])[:15]},
        # The variants whose values were compared with the reference at least once.
        "subjects_with_values": len({r.subject for r in report.passed if r.check == "values"}),
        # The variants (one per op), and those checked at least once (the round-robin's aim).
        "subjects": len(by_subject),
        "subjects_run": len({r.subject for r in report.results}),
    }


#: The environment variable naming the device, where ``--device`` does not.
DEVICE_VARIABLE = "PRISM_GPU_DEVICE"


class DeviceProblem(Exception):
    """The device asked for cannot be checked here; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def described(name: str) -> Any:
    """The description named ``name``; :class:`DeviceProblem` (exit 2), listing the
    accelerators Prism describes, for a name it does not know."""
    try:
        return prism_core.hardware.get_device(name)
    except prism_core.hardware.UnknownDeviceError:
        known = sorted(
            d.device_type
            for d in prism_core.hardware.DeviceLibrary().list()
            if d.kind != "cpu" and "-mig-" not in d.device_type
        )
        raise DeviceProblem(
            f"--device {name}: no device description has that name; accelerators Prism "
            f"describes: {', '.join(known)} (or a family: amd.gpu, intel.gpu, apple.gpu, "
            "huawei.ascend, nvidia.gpu)",
            code=2,
        ) from None


def present(name: str) -> str:
    """The device type of the first device present here that is ``name`` or one of its kind
    (``amd.gpu``: any AMD GPU); :class:`DeviceProblem` saying what is present, and why each
    plugin found nothing, where none is."""
    described(name)
    found = prism_core.hardware.present_devices()
    for instance in found.devices:
        if instance.description.is_a(name):
            return str(instance.description.device_type)
    seen = ", ".join(f"{d.name} -> {d.description.device_type}" for d in found.devices)
    why = "; ".join(f"{k}: {v}" for k, v in found.notes.items())
    raise DeviceProblem(
        f"--device {name}: no such device is present on this host (present: {seen or 'none'}"
        + (f"; {why}" if why else "")
        + ")"
    )


def on_device(name: str, seconds: float, ops: frozenset[str]) -> dict[str, Any]:
    """The suite on every backend that drives the present device ``name`` and is available,
    inside a scope naming that device (the variants run on it)."""
    device_type = present(name)
    description = prism_core.hardware.get_device(device_type)
    ps = prism_core.extending.plugins()
    found: dict[str, Any] = {"device": device_type, "backends": {}, "unavailable": {}}
    for backend in ps.backends.values():
        if backend.name == "numpy":
            continue
        try:
            drives = backend.can_drive(description)
        except Exception as exc:  # plugin code: its failure is this backend's reason
            found["unavailable"][backend.name] = f"can_drive raised {type(exc).__name__}: {exc}"
            continue
        if not drives:
            found["unavailable"][backend.name] = (
                f"does not drive {device_type} ({drives.explain()})"
            )
            continue
        state = backend.availability()
        if not state:
            found["unavailable"][backend.name] = state.reason
            continue
        with prism_core.device(device_type, simulate=True):  # the variants run on the device
            found["backends"][f"{backend.name} ({device_type})"] = check(backend.name, seconds, ops)
    if not found["backends"]:
        reasons = "; ".join(f"{k}: {v}" for k, v in found["unavailable"].items())
        raise DeviceProblem(f"--device {name}: {device_type} is present, but no backend can use "
                            f"it ({reasons or 'no backend installed'})")  # fmt: skip
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path)
    parser.add_argument("--seconds", type=float, default=120, help="at most, per backend")
    parser.add_argument("--ops", default="", help="only these ops, comma-separated")
    parser.add_argument(
        "--device", default=os.environ.get(DEVICE_VARIABLE) or None,
        help="the accelerator, by its Prism description (amd.mi300x, intel.max-1550, "
        f"apple.m4-max-gpu, huawei.ascend-910b; default: ${DEVICE_VARIABLE}, else NVIDIA's "
        "GPU through torch-CUDA and CuPy)",
    )  # fmt: skip
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--present", action="store_true", help="only check the device is here")
    mode.add_argument("--dry-run", action="store_true", help="only check the device's name")
    args = parser.parse_args()
    ops = frozenset(filter(None, args.ops.split(",")))
    if args.device is not None:
        try:
            if args.dry_run:
                described(args.device)
                print(f"skipped: --dry-run; the suite on {args.device} runs where it is present")
                return 0
            if args.present:
                print(json.dumps({"device": present(args.device)}))
                return 0
            if args.output is None:
                parser.error("--output is required")
            checked = on_device(args.device, args.seconds, ops)
        except DeviceProblem as exc:
            print(f"conformance.py: {exc}", file=sys.stderr)
            return exc.code
        return report(args.output, checked)
    if args.output is None:
        parser.error("--output is required")

    found: dict[str, Any] = {"backends": {}, "unavailable": {}}
    try:
        from prism_plugin_torch.runtime import cuda_unavailable
    except ImportError as exc:
        why: str | None = f"prism-plugin-torch is not installed ({exc})"
    else:
        why = cuda_unavailable()
    if why is None:
        import torch

        name = torch.cuda.get_device_name(0)
        gpu = prism_core.hardware.match_detected_device(product_name=name)
        if gpu is None:
            found["unavailable"]["torch"] = f"no device description matches the GPU {name!r}"
        else:
            with prism_core.device(gpu, simulate=True):  # the variants run on the real GPU
                found["backends"]["torch (CUDA)"] = check("torch", args.seconds, ops)
    else:
        found["unavailable"]["torch"] = why
    try:
        state = prism_core.extending.plugins().backend("cuda").availability()
    except (
        prism_core.extending.PluginError
    ) as exc:  # prism-plugin-cuda not installed (or not loaded)
        found["unavailable"]["cuda"] = str(exc)
    else:
        if state:
            found["backends"]["cuda (CuPy)"] = check("cuda", args.seconds, ops)
        else:
            found["unavailable"]["cuda"] = state.reason
    if not found["backends"]:
        reasons = "; ".join(f"{k}: {v}" for k, v in found["unavailable"].items())
        print(f"skipped: no GPU that a backend can use ({reasons})")
        return 0
    return report(args.output, found)


def report(output: Path, found: dict[str, Any]) -> int:
    """``found`` into ``output`` (JSON), and each backend's counts and failures printed."""
    output.write_text(json.dumps(found, indent=1) + "\n")
    for backend, c in found["backends"].items():
        print(
            f"{backend}: {c['run']} of {c['checks']} checks run in {c['seconds']} s: "
            f"{c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped; slowest: "
            f"{c['slowest']}"
        )
        for line in c["failures"][:40]:
            print("  FAILED", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
