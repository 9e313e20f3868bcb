"""``prism explain``: the decision dispatch makes for an operation, on a present or simulated
device."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, TextIO

from prism_core._cli.common import EXIT_OK, EXIT_PROBLEMS, UsageError, dump_json
from prism_core.kernel.errors import PrismError, UnknownDeviceError


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
        dump_json(decision.as_dict(), out)
    else:
        if simulated:
            out.write(f"# {args.device} is not present on this host: simulated\n")
        out.write(str(decision) + "\n")
    return EXIT_OK if decision.chosen else EXIT_PROBLEMS


def add_explain(sub: Any) -> None:
    """``prism explain``: its parser, added to ``prism``'s subcommands ``sub``."""
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
