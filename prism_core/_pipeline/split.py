"""The heterogeneous data-parallel split: one op's work divided along an axis among targets.

``split(op, *args, targets=..., ratio=...)`` cuts a call into parts, runs each on its target
(a backend, a present or a simulated device) at the same time, each in a thread of its own, and
joins them into what the unsplit call returns; ``splitting([...])`` puts a :class:`SplitSpec`
in the scope, whose ``runner_for`` dispatch asks when it builds a plan.  How each op is cut is
data (:class:`SplitRule`, five kinds); every split makes a :class:`SplitRecord`.  Whether
``ratio="auto"`` splits at all, and pinned host buffers: ``split_decision``.  The rules,
ratios, errors, and why threads: docs/split.md ("How each op splits", "Concurrency").
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import math
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prism_core._pipeline import split_decision
from prism_core.kernel.config import usable_cpus
from prism_core.kernel.dispatch.movement import is_masked
from prism_core.kernel.dispatch.ops import (  # (ops, not registry: it installs the op functions)
    Op,
    as_op,
)
from prism_core.kernel.dispatch.scope import SCOPE, DeviceNotPresentError, Scope, current_scope
from prism_core.kernel.errors import PrismError, describe_exception, did_you_mean
from prism_core.kernel.public import home
from prism_core.kernel.quantities import seconds_text

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.description.topology import TransferPath
    from prism_core.kernel.dispatch.scope import ScopeBlock

__all__ = [
    "KINDS",
    "PartRecord",
    "SplitError",
    "SplitRecord",
    "SplitRule",
    "SplitSet",
    "SplitSpec",
    "SplitTarget",
    "declare_split_rule",
    "make_spec",
    "parse_target",
    "recording",
    "split",
    "split_recording",
    "split_rules",
    "splitting",
]


@home("prism_core.pipelines")
class SplitError(PrismError, RuntimeError):
    """A part of a split failed or did not finish in time.

    ``part`` is the :class:`PartRecord` of the part at fault (the first one, by index, when
    several failed); the cause is chained (``__cause__``).  The other parts were cancelled if
    they had not started, and awaited if they had: nothing runs on behind the error except a
    part that outlived ``timeout``, whose result is discarded.
    """

    def __init__(self, message: str, part: PartRecord | None = None) -> None:
        super().__init__(message)
        self.part = part


# -- the rules ---------------------------------------------------------------------------------

#: The kinds of split rules (see the module docstring and docs/split.md).
KINDS = ("elementwise", "matmul", "batched", "along", "reduction")
#: How partial results of a reduction over the split axis combine.
COMBINES = ("add", "mean", "maximum", "minimum")


@home("prism_core.pipelines")
@dataclass(frozen=True)
class SplitRule:
    """How calls of one op are cut along an axis and their parts joined again.

    ``kind`` is one of :data:`KINDS`.  ``arrays`` (``elementwise``) are the positions of the
    arguments that broadcast together, ``keywords`` keyword arguments that do too (``clip``'s
    ``min`` and ``max``).  ``along`` and ``along_default`` (``along``, ``reduction``) name the
    op's own axis keyword and its default.  ``combine`` (``reduction``) is how partial results
    over the split axis join: one of :data:`COMBINES`, or ``None`` when they cannot (``std``):
    such an op splits only along the axes it keeps.  ``core`` (``batched``) is how many
    trailing axes of the first argument are one problem (2: a matrix).
    """

    op: str
    kind: str
    arrays: tuple[int, ...] = (0,)
    keywords: tuple[str, ...] = ()
    along: str = "axis"
    along_default: int | None = -1
    combine: str | None = None
    core: int = 2

    def __post_init__(self) -> None:
        if not isinstance(self.op, str) or not self.op:
            raise TypeError(f"SplitRule: op must be an op name such as 'matmul', got {self.op!r}")
        if self.kind not in KINDS:
            raise ValueError(
                f"SplitRule({self.op!r}): kind={self.kind!r} is not a kind of rule"
                f"{did_you_mean(str(self.kind), KINDS)}; use one of {', '.join(KINDS)}"
            )
        if self.combine is not None and self.combine not in COMBINES:
            raise ValueError(
                f"SplitRule({self.op!r}): combine={self.combine!r} is not a way to combine "
                f"parts; use one of {', '.join(COMBINES)}, or None when they cannot be combined"
            )
        if not self.arrays or any(not isinstance(i, int) or i < 0 for i in self.arrays):
            raise ValueError(
                f"SplitRule({self.op!r}): arrays must be positions of arguments (ints >= 0), "
                f"got {self.arrays!r}"
            )
        if not isinstance(self.core, int) or self.core < 0:
            raise ValueError(f"SplitRule({self.op!r}): core must be an int >= 0, got {self.core!r}")

    def describe(self) -> str:
        """One line on how the op splits, for errors and docs."""
        if self.kind == "elementwise":
            return "elementwise: arguments broadcast together; cut where full along the axis"
        if self.kind == "matmul":
            return "matmul: a batch axis cuts both operands, the rows x1, the columns x2"
        if self.kind == "batched":
            return f"batched: along a batch axis (the last {self.core} axes are one problem)"
        if self.kind == "along":
            return f"along {self.along}: split along any other axis"
        how = f"combined by {self.combine}" if self.combine else "not combinable"
        return f"reduction: concatenated along kept axes; over the split axis {how}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "kind": self.kind,
            "arrays": list(self.arrays),
            "keywords": list(self.keywords),
            "along": self.along,
            "along_default": self.along_default,
            "combine": self.combine,
            "core": self.core,
        }


def _builtin_rules() -> dict[str, SplitRule]:
    rules: list[SplitRule] = []
    for name in ("square", "sqrt", "exp", "log", "abs", "real", "conj"):
        rules.append(SplitRule(name, "elementwise", (0,)))
    for name in ("add", "subtract", "multiply", "divide", "power", "maximum", "minimum"):
        rules.append(SplitRule(name, "elementwise", (0, 1)))
    rules.append(SplitRule("clip", "elementwise", (0, 1, 2), keywords=("min", "max")))
    rules.append(SplitRule("where", "elementwise", (0, 1, 2)))
    rules.append(SplitRule("matmul", "matmul", (0, 1)))
    for name in (
        "linalg.inv",
        "linalg.svd",
        "linalg.eig",
        "linalg.eigh",
        "linalg.qr",
        "linalg.cholesky",
        "linalg.matrix_norm",
    ):
        rules.append(SplitRule(name, "batched", (0,)))
    rules.append(SplitRule("linalg.solve", "batched", (0, 1)))
    for name in ("fft.fft", "fft.ifft", "fft.rfft", "sort"):
        rules.append(SplitRule(name, "along", (0,)))
    for name, combine in (("sum", "add"), ("mean", "mean"), ("max", "maximum"), ("min", "minimum")):
        rules.append(SplitRule(name, "reduction", (0,), along_default=None, combine=combine))
    for name in ("std", "argmax", "argmin"):
        rules.append(SplitRule(name, "reduction", (0,), along_default=None))
    return {r.op: r for r in rules}


_RULES: dict[str, SplitRule] = _builtin_rules()
_RULES_LOCK = threading.Lock()


def split_rules() -> dict[str, SplitRule]:
    """Every op that splits, by name, with its rule (a copy)."""
    with _RULES_LOCK:
        return dict(sorted(_RULES.items()))


def declare_split_rule(rule: SplitRule, *, replace: bool = False) -> SplitRule:
    """Declare how an op splits (an op of your own, made with ``prism.operation``).

    An op with a rule already is an error unless ``replace=True``.  Specs made before keep
    the rules they were made with only until their plans are rebuilt: declare rules first.
    """
    if not isinstance(rule, SplitRule):
        raise TypeError(
            "declare_split_rule(): rule must be a prism_core.pipelines.SplitRule such as "
            f"SplitRule('myop', 'elementwise', (0, 1)); got {type(rule).__name__}"
        )
    name = as_op(rule.op).name  # the op must exist; aliases give its own name
    if name != rule.op:
        rule = dataclasses.replace(rule, op=name)
    with _RULES_LOCK:
        if name in _RULES and not replace:
            raise ValueError(
                f"declare_split_rule(): {name!r} has a split rule already ({_RULES[name].kind}); "
                "pass replace=True to replace it"
            )
        _RULES[name] = rule
    return rule


def _rule_for(op: Op) -> SplitRule | None:
    return _RULES.get(op.name)


def _no_rule(op: Op) -> ValueError:
    names = sorted(_RULES)
    return ValueError(
        f"{op.name!r} has no split rule{did_you_mean(op.name, names)}; the ops that split: "
        f"{', '.join(names)} (declare one for your own op with "
        "prism_core.pipelines.declare_split_rule)"
    )


# -- how one call is cut ------------------------------------------------------------------------


class _Unsplittable(Exception):
    """These arguments cannot be split along this axis (the message says why)."""


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def _shape(value: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in value.shape)


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s):
            j = ndim - len(s) + i
            if d != 1:
                if out[j] not in (1, d):
                    shown = " and ".join(str(tuple(x)) for x in shapes)
                    raise ValueError(f"shapes {shown} do not broadcast together")
                out[j] = d
    return tuple(out)


def _normalised(axis: int, ndim: int, what: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"the split axis must be an int, got {axis!r} ({type(axis).__name__})")
    if not -ndim <= axis < ndim:
        raise _Unsplittable(
            f"axis {axis} is out of range for {what} ({ndim} dimension{'s' * (ndim != 1)})"
        )
    return axis % ndim


Where = int | str  # a position among the positional arguments, or a keyword


@dataclass(frozen=True)
class _Layout:
    """How one call is cut: the length along the split axis, the arguments cut (and at which
    of their dimensions), how parts join, and a sentence saying so."""

    length: int
    axis: int
    cuts: tuple[tuple[Where, int], ...]
    #: "concat" (along ``out_axis`` of every output) or a combine of :data:`COMBINES`.
    gather: str
    out_axis: int
    what: str
    #: The shapes of the arguments the model predicts with, and for each which dimension is cut
    #: (``-1``: none).
    shapes: tuple[tuple[tuple[int, ...], int], ...]

    def part(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], lo: int, hi: int
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        out_args = list(args)
        out_kwargs = dict(kwargs)
        for where, dim in self.cuts:
            index = (slice(None),) * dim + (slice(lo, hi),)
            if isinstance(where, int):
                out_args[where] = out_args[where][index]
            else:
                out_kwargs[where] = out_kwargs[where][index]
        return tuple(out_args), out_kwargs

    def part_shapes(self, n: int) -> list[tuple[int, ...]]:
        return [s if dim < 0 else (*s[:dim], n, *s[dim + 1 :]) for s, dim in self.shapes]


def _elementwise(
    rule: SplitRule, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int
) -> _Layout:
    found: list[tuple[Where, Any]] = [
        (i, args[i]) for i in rule.arrays if i < len(args) and _is_array(args[i])
    ]
    found += [(k, kwargs[k]) for k in rule.keywords if _is_array(kwargs.get(k))]
    if not found:
        raise _Unsplittable("no argument is an array")
    shapes = [_shape(a) for _, a in found]
    result = _broadcast(shapes)
    if not result:
        raise _Unsplittable("the result is 0-d: there is no axis to split along")
    ax = _normalised(axis, len(result), f"the result, shape {result}")
    length = result[ax]
    cuts: list[tuple[Where, int]] = []
    model: list[tuple[tuple[int, ...], int]] = []
    for (where, _a), shape in zip(found, shapes, strict=True):
        dim = ax - (len(result) - len(shape))
        cut = dim >= 0 and shape[dim] == length and length != 1
        if cut:
            cuts.append((where, dim))
        model.append((shape, dim if cut else -1))
    return _Layout(
        length,
        ax,
        tuple(cuts),
        "concat",
        ax,
        f"axis {ax} of the broadcast result (shape {result})",
        tuple(model),
    )


def _matmul(rule: SplitRule, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int) -> _Layout:
    if len(args) < 2 or not (_is_array(args[0]) and _is_array(args[1])):
        raise _Unsplittable("matmul splits two array arguments, x1 and x2")
    s1, s2 = _shape(args[0]), _shape(args[1])
    if not s1 or not s2:
        raise ValueError(f"matmul: 0-d operands (shapes {s1} and {s2}) have no matrix product")
    inner1 = s1[-1]
    inner2 = s2[-2] if len(s2) >= 2 else s2[0]
    if inner1 != inner2:
        raise ValueError(
            f"matmul: the inner dimensions of x1 (shape {s1}) and x2 (shape {s2}) differ: "
            f"{inner1} != {inner2}"
        )
    b1, b2 = s1[:-2], s2[:-2]
    batch = _broadcast([b1, b2])
    result = batch + ((s1[-2],) if len(s1) >= 2 else ()) + ((s2[-1],) if len(s2) >= 2 else ())
    if not result:
        raise _Unsplittable("the product of two vectors is 0-d: there is no axis to split along")
    ax = _normalised(axis, len(result), f"the result, shape {result}")
    length = result[ax]
    cuts: list[tuple[Where, int]] = []
    dims = [-1, -1]
    if ax < len(batch):
        for i, b in enumerate((b1, b2)):
            dim = ax - (len(batch) - len(b))
            if dim >= 0 and b[dim] == length and length != 1:
                cuts.append((i, dim))
                dims[i] = dim
        what = f"batch axis {ax} of the result (shape {result})"
    elif len(s1) >= 2 and ax == len(batch):
        cuts.append((0, len(s1) - 2))
        dims[0] = len(s1) - 2
        what = f"the rows of x1 (axis {ax} of the result, shape {result})"
    else:
        cuts.append((1, len(s2) - 1))
        dims[1] = len(s2) - 1
        what = f"the columns of x2 (axis {ax} of the result, shape {result})"
    return _Layout(length, ax, tuple(cuts), "concat", ax, what, ((s1, dims[0]), (s2, dims[1])))


def _batched(rule: SplitRule, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int) -> _Layout:
    arrays = [(i, args[i]) for i in rule.arrays if i < len(args) and _is_array(args[i])]
    if not arrays or arrays[0][0] != 0:
        raise _Unsplittable(f"{rule.op} splits array arguments, the first one a stack")
    first = _shape(arrays[0][1])
    if len(first) < rule.core:
        raise _Unsplittable(f"x (shape {first}) has fewer than {rule.core} dimensions")
    batches: list[tuple[int, ...]] = []
    for i, a in arrays:
        s = _shape(a)
        # Only the first argument is surely a stack of problems; another one (``solve``'s x2)
        # is a stack of the same core rank, or a vector that passes whole.
        batches.append(s[: len(s) - rule.core] if (i == 0 or len(s) >= rule.core) else ())
    batch = _broadcast(batches)
    if not batch:
        raise _Unsplittable(
            f"x (shape {first}) is one problem, not a stack: {rule.op} splits along a batch axis"
        )
    ndim = len(batch) + rule.core
    try:
        ax = _normalised(axis, ndim, f"a stack of shape {batch + first[len(first) - rule.core :]}")
    except _Unsplittable:
        raise _Unsplittable(
            f"axis {axis} is not a batch axis of x (shape {first}): {rule.op} splits along one "
            f"of the first {len(batch)} axes"
        ) from None
    if ax >= len(batch):
        raise _Unsplittable(
            f"axis {axis} is one of the last {rule.core} axes of x (shape {first}), one "
            f"problem's: {rule.op} splits along a batch axis (0 to {len(batch) - 1})"
        )
    length = batch[ax]
    cuts: list[tuple[Where, int]] = []
    model: list[tuple[tuple[int, ...], int]] = []
    for (i, a), b in zip(arrays, batches, strict=True):
        dim = ax - (len(batch) - len(b))
        cut = dim >= 0 and b[dim] == length and length != 1
        if cut:
            cuts.append((i, dim))
        model.append((_shape(a), dim if cut else -1))
    what = f"batch axis {ax} (of {len(batch)}, batch shape {batch})"
    return _Layout(length, ax, tuple(cuts), "concat", ax, what, tuple(model))


def _along(rule: SplitRule, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int) -> _Layout:
    if not args or not _is_array(args[0]):
        raise _Unsplittable(f"{rule.op} splits its first argument, an array")
    shape = _shape(args[0])
    if not shape:
        raise _Unsplittable("x is 0-d: there is no axis to split along")
    ax = _normalised(axis, len(shape), f"x, shape {shape}")
    own = kwargs.get(rule.along, rule.along_default)
    ndim = len(shape)
    if (
        isinstance(own, int)
        and not isinstance(own, bool)
        and -ndim <= own < ndim
        and own % ndim == ax
    ):
        raise _Unsplittable(
            f"{rule.op} works along axis {own} ({rule.along}={own}), the split axis: split "
            "along another axis (a batch of signals splits along the batch)"
        )
    what = f"axis {ax} of x (shape {shape}), {rule.op} working along {rule.along}={own}"
    return _Layout(shape[ax], ax, ((0, ax),), "concat", ax, what, ((shape, ax),))


def _reduction(
    rule: SplitRule, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int
) -> _Layout:
    if not args or not _is_array(args[0]):
        raise _Unsplittable(f"{rule.op} splits its first argument, an array")
    shape = _shape(args[0])
    if not shape:
        raise _Unsplittable("x is 0-d: there is no axis to split along")
    ax = _normalised(axis, len(shape), f"x, shape {shape}")
    own = kwargs.get(rule.along, rule.along_default)
    if own is None:
        reduced = set(range(len(shape)))
    else:
        items = own if isinstance(own, tuple) else (own,)
        try:
            reduced = {int(a) % len(shape) for a in items}
        except (TypeError, ValueError):
            raise _Unsplittable(f"{rule.along}={own!r} is not an axis or a tuple of axes") from None
    keepdims = bool(kwargs.get("keepdims", False))
    if ax in reduced:
        if rule.combine is None:
            raise _Unsplittable(
                f"{rule.op} over the split axis {ax} cannot be combined from parts; split along "
                "an axis it keeps"
            )
        what = f"axis {ax} of x (shape {shape}), reduced: the parts' results {rule.combine}"
        return _Layout(shape[ax], ax, ((0, ax),), rule.combine, ax, what, ((shape, ax),))
    out = ax if keepdims else ax - sum(1 for r in reduced if r < ax)
    what = f"axis {ax} of x (shape {shape}), kept: axis {out} of the result"
    return _Layout(shape[ax], ax, ((0, ax),), "concat", out, what, ((shape, ax),))


_LAYOUTS: dict[str, Callable[[SplitRule, tuple[Any, ...], dict[str, Any], int], _Layout]] = {
    "elementwise": _elementwise,
    "matmul": _matmul,
    "batched": _batched,
    "along": _along,
    "reduction": _reduction,
}


# -- targets ------------------------------------------------------------------------------------


@home("prism_core.pipelines")
@dataclass(frozen=True)
class SplitTarget:
    """Where a part runs: a backend, a device (present or simulated), or both.

    ``label`` is what the target was given as (``"torch"``, ``"nvidia.h100-pcie"``), with
    ``(simulated)`` when it is.  ``backend`` is the backend named (``None``: the one dispatch
    chooses on the device), ``device`` the device type named (``None``: the backend's own
    choice), ``simulated`` whether the device is simulated (its parts run on the reference
    backend), ``on_host`` whether its parts compute on this host's CPU (they then share its
    cores with the other host parts).
    """

    label: str
    backend: str | None
    device: str | None
    simulated: bool
    on_host: bool
    description: DeviceDescription | None = field(default=None, compare=False, repr=False)

    def changes(self) -> dict[str, Any]:
        """The scope fields this target sets (on top of the caller's, without its split)."""
        return {
            "device": self.description,
            "simulated": self.simulated,
            "backend": self.backend,
            "split": None,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "backend": self.backend,
            "device": self.device,
            "simulated": self.simulated,
            "on_host": self.on_host,
        }


@dataclass(frozen=True)
class _Parsed:
    """A target as written, its names checked: ``backend`` and ``device`` (a device type, or
    ``"cpu"`` for the host), not yet bound to what is present."""

    label: str
    backend: str | None
    device: str | None


_HOST_NAMES = ("cpu", "host")


def _plugins() -> Any:
    from prism_core.kernel.plugins import plugins

    return plugins()


def _what_exists() -> str:
    from prism_core.kernel.host import present_devices

    ps = _plugins()
    backends = ", ".join(sorted(ps.backends)) or "none"
    present = ", ".join(d.description.device_type for d in present_devices().devices) or "none"
    return (
        f"backends: {backends}; 'cpu' (the host); present devices: {present}; any described "
        "device type with simulate=True"
    )


def parse_target(item: Any, where: str = "target") -> _Parsed:
    """Check the names of one target: a backend name, ``"cpu"``, a device type or family, or a
    ``(device, backend)`` pair.  Presence and availability are checked by :func:`bind`."""
    from prism_core.kernel.devices import default_library
    from prism_core.kernel.errors import UnknownDeviceError

    if isinstance(item, tuple):
        if len(item) != 2 or not all(isinstance(x, str) for x in item):
            raise TypeError(
                f"{where}: a tuple target is a (device, backend) pair of names such as "
                f"('nvidia.h100-sxm', 'torch'); got {item!r}"
            )
        dev = parse_target(item[0], f"{where}[0]")
        if dev.device is None:
            raise ValueError(
                f"{where}[0]: {item[0]!r} is a backend; a tuple is one (device, backend) pair "
                f"(several targets are a list: targets=[{item[0]!r}, {item[1]!r}])"
            )
        back = parse_target(item[1], f"{where}[1]")
        if back.backend is None:
            raise ValueError(
                f"{where}[1]: {item[1]!r} is not a backend here; the pair is (device, backend); "
                f"backends: {', '.join(sorted(_plugins().backends))}"
            )
        return _Parsed(f"{dev.device}/{back.backend}", back.backend, dev.device)
    if not isinstance(item, str):
        raise TypeError(
            f"{where}: a target is a backend name ('numpy', 'torch'), 'cpu', a device type "
            f"('nvidia.h100-sxm') or a (device, backend) pair; got {item!r} "
            f"({type(item).__name__})"
        )
    ps = _plugins()
    backend = ps.backend_name(item)
    if backend is not None:
        return _Parsed(item, backend, None)
    if item in _HOST_NAMES:
        return _Parsed(item, None, "cpu")
    try:
        desc = default_library().get(item)
    except UnknownDeviceError as exc:
        names = [*ps.backends, *_HOST_NAMES]
        hint = did_you_mean(item, names)
        raise ValueError(
            f"{where}: {item!r} is neither a backend nor a device type{hint}. {exc}. "
            f"What exists: {_what_exists()}"
        ) from None
    return _Parsed(item, None, desc.device_type)


def _present_devices() -> list[DeviceDescription]:
    """The descriptions of the devices present here, asked once per reload (``_events``):
    matching the host CPU costs about 0.15 ms, more than a small split."""
    from prism_core.kernel import events as _events
    from prism_core.kernel.host import present_devices

    now = _events.generation()
    cached = _PRESENT[0] if _PRESENT else None
    if cached is not None and cached[0] == now:
        return cached[1]
    found = [inst.description for inst in present_devices().devices]
    _PRESENT[:] = [(now, found)]
    return found


_PRESENT: list[tuple[int, list[DeviceDescription]]] = []


def _host_description() -> DeviceDescription:
    for desc in _present_devices():
        if desc.kind == "cpu":
            return desc
    raise PrismError("no host CPU description matches this host: 'cpu' cannot be a target")


def _present(device_type: str) -> DeviceDescription | None:
    for desc in _present_devices():
        if desc.is_a(device_type):
            return desc
    return None


def bind(parsed: _Parsed, simulate: bool, where: str = "target") -> SplitTarget:
    """The target ``parsed`` on this host: its backend available, its device present, or
    simulated where ``simulate`` allows (``True``: those not present are; ``False``: none is, an
    absent one is an error)."""
    from prism_core.kernel.devices import default_library
    from prism_core.kernel.dispatch.scope import use_backend

    ps = _plugins()
    backend_obj = None
    if parsed.backend is not None:
        use_backend(parsed.backend)  # raises, saying why, when it is not available here
        backend_obj = ps.backends[parsed.backend]
    if parsed.device is None:
        assert backend_obj is not None
        on_host = bool(ps.drives(backend_obj, _host_description()))
        return SplitTarget(parsed.label, parsed.backend, None, False, on_host)
    if parsed.device == "cpu":
        desc: DeviceDescription | None = _host_description()
        simulated = False
    else:
        desc = _present(parsed.device)
        simulated = False
        if desc is None:
            if not simulate:
                raise DeviceNotPresentError(
                    f"{where}: device {parsed.device!r} is not present on this host; "
                    f"{_what_exists()}; pass simulate=True to plan with it (its parts then run "
                    "on the reference backend, labelled simulated)"
                )
            desc = default_library().get(parsed.device)
            simulated = True
    assert desc is not None
    if backend_obj is not None and not simulated:
        drive = ps.drives(backend_obj, desc)
        if not drive:
            raise ValueError(
                f"{where}: backend {parsed.backend!r} cannot run on {desc.device_type} "
                f"({drive.explain()})"
            )
    label = parsed.label + (" (simulated)" if simulated else "")
    on_host = simulated or desc.kind == "cpu"
    return SplitTarget(label, parsed.backend, desc.device_type, simulated, on_host, desc)


def _targets(targets: Any, simulate: bool) -> tuple[SplitTarget, ...]:
    if isinstance(targets, (str, tuple)):
        targets = [targets]
    if not isinstance(targets, (list, Sequence)) or isinstance(targets, (str, bytes)):
        raise TypeError(
            "targets must be a list of targets (backend names, 'cpu', device types, "
            f"(device, backend) pairs); got {targets!r}"
        )
    if not targets:
        raise ValueError(f"targets is empty; name at least one target ({_what_exists()})")
    parsed = [parse_target(t, f"targets[{i}]") for i, t in enumerate(targets)]
    return tuple(bind(p, simulate, f"targets[{i}]") for i, p in enumerate(parsed))


# -- ratios -----------------------------------------------------------------------------------


def _ratio(ratio: Any, n: int, name: str = "ratio") -> tuple[float, ...] | str | None:
    """``ratio`` (the argument ``name``) checked: ``None`` (even), ``"auto"``, or ``n``
    non-negative numbers with a positive sum, normalised to sum 1."""
    if ratio is None or (isinstance(ratio, str) and ratio == "auto"):
        return ratio
    if isinstance(ratio, str):
        raise ValueError(
            f"{name}={ratio!r} is not a ratio{did_you_mean(ratio, ['auto'])}; use a list of "
            "numbers, one per target, 'auto' or None (even)"
        )
    if not isinstance(ratio, (list, tuple)):
        raise TypeError(
            f"{name} must be a list of numbers (one per target), 'auto' or None; got {ratio!r} "
            f"({type(ratio).__name__})"
        )
    if len(ratio) != n:
        raise ValueError(
            f"{name} {list(ratio)} has {len(ratio)} entr{'y' if len(ratio) == 1 else 'ies'} for "
            f"{n} target{'s' * (n != 1)}; give one number per target"
        )
    values: list[float] = []
    for i, r in enumerate(ratio):
        try:  # an int beyond float's range is not a finite number either
            value = float(r) if isinstance(r, (int, float)) and not isinstance(r, bool) else None
        except OverflowError:
            value = None
        if value is None or not math.isfinite(value) or value < 0:
            raise ValueError(
                f"{name}[{i}] = {r!r}: each entry must be a finite number >= 0 (a share of the "
                "work; they need not sum to 1)"
            )
        values.append(value)
    top = max(values)
    if top <= 0:
        raise ValueError(f"{name} {list(ratio)} sums to 0: at least one target needs a share")
    # Scaled by the largest first: the sum of entries near float's maximum would overflow to
    # inf and every share come out 0.
    scaled = [v / top for v in values]
    total = sum(scaled)
    return tuple(v / total for v in scaled)


#: Cutting and balancing live beside the decision that uses them (``split_decision``).
_sizes = split_decision.sizes_of
_balance = split_decision.balance


# -- records ------------------------------------------------------------------------------------


@home("prism_core.pipelines")
@dataclass(frozen=True)
class PartRecord:
    """One part of a split: where it ran and how long it took.

    ``start``/``stop`` index the split axis; a part of size 0 did not run (``seconds`` is
    ``None``).  ``backend`` is the backend that executed it (the reference's for a simulated
    device), ``variant`` the variant, ``device`` the device type it ran for and ``kind`` that
    device's kind; ``thread`` the name of the thread that ran it and ``threads`` the thread
    count its backend was limited to (``None``: not limited).  ``transfer_s`` is the modelled
    time of moving the part's arrays to its target and its result back, at the peak one-way
    bandwidth of the links the description gives (``links``, docs/device-files.md), along
    ``transfer`` (the path in words; for a part that did not run, the path its data would have
    taken); ``None`` when nothing moves or it is not known.
    ``pinned``: the part's host arrays were staged through its backend's page-locked memory
    (docs/split.md, "Pinned host buffers").
    """

    index: int
    target: str
    backend: str | None
    device: str | None
    kind: str | None
    simulated: bool
    start: int
    stop: int
    ratio: float
    seconds: float | None
    thread: str | None = None
    threads: int | None = None
    variant: str | None = None
    transfer_s: float | None = None
    transfer: str | None = None
    pinned: bool = False

    @property
    def size(self) -> int:
        return self.stop - self.start

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "target": self.target,
            "backend": self.backend,
            "device": self.device,
            "kind": self.kind,
            "simulated": self.simulated,
            "start": self.start,
            "stop": self.stop,
            "size": self.size,
            "ratio": self.ratio,
            "seconds": self.seconds,
            "thread": self.thread,
            "threads": self.threads,
            "variant": self.variant,
            "transfer_s": self.transfer_s,
            "transfer": self.transfer,
            "pinned": self.pinned,
        }

    def describe(self) -> str:
        where = self.backend or "?"
        if self.device:
            where += f" on {self.device}"
        if self.simulated:
            where += ", simulated: ran on the reference"
        if self.seconds is None:
            timing = "skipped (size 0)" if self.size == 0 else "did not finish"
        else:
            timing = seconds_text(self.seconds)
            if self.thread:
                timing += f" in {self.thread}"
            if self.threads:
                timing += f" ({self.threads} thread{'s' * (self.threads != 1)})"
            if self.pinned:
                timing += ", staged through pinned memory"
        if self.transfer_s is not None:
            timing += f"; transfer ~{seconds_text(self.transfer_s)} modelled ({self.transfer})"
        return (
            f"part {self.index}: [{self.start}:{self.stop}] ({self.size}, "
            f"{self.ratio:.0%}) on {self.target} [{where}]: {timing}"
        )


@home("prism_core.pipelines")
@dataclass(frozen=True)
class SplitRecord:
    """One split call: the op, how it was cut, each part, and the times.

    ``axis`` and ``length`` are the split axis (as the op's rule counts it) and its length;
    ``how`` says what that axis is and how the parts joined; ``ratio_source`` what gave the
    ratio (``"given"``, ``"even"``, ``"measured"``, ``"modelled"``, or ``"even: <why>"`` when
    ``"auto"`` had nothing to go on); ``gather_s`` the time to join the parts, ``total_s`` the
    whole call's; ``note`` anything else (a call run whole, and why).  ``decision`` is what
    ``ratio="auto"`` decided, with the predicted times: ``"split: predicted 1.2 ms vs torch
    alone 2.5 ms (...)"``, ``"declined: predicted split 3.1 ms vs torch 2.5 ms (...)"`` (the
    whole call then ran on that target, the others' parts of size 0), or why nothing could be
    predicted; ``""`` for any other ratio.
    """

    op: str
    axis: int | None
    length: int | None
    how: str
    ratio_source: str
    parts: tuple[PartRecord, ...]
    gather_s: float
    total_s: float
    note: str = ""
    decision: str = ""

    @property
    def split(self) -> bool:
        """Whether more than one part ran."""
        return sum(p.seconds is not None for p in self.parts) > 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "axis": self.axis,
            "length": self.length,
            "how": self.how,
            "ratio_source": self.ratio_source,
            "parts": [p.as_dict() for p in self.parts],
            "gather_s": self.gather_s,
            "total_s": self.total_s,
            "note": self.note,
            "decision": self.decision,
        }

    def describe(self) -> str:
        head = f"{self.op}: "
        if self.axis is None:
            head += "ran whole"
        else:
            head += f"split along {self.how} (length {self.length}), ratio {self.ratio_source}"
        head += f"; {seconds_text(self.total_s)} in all, gather {seconds_text(self.gather_s)}"
        lines = [head]
        if self.decision:
            lines.append(f"  auto: {self.decision}")
        if self.note:
            lines.append(f"  note: {self.note}")
        lines.extend(f"  {p.describe()}" for p in self.parts)
        return "\n".join(lines)


#: The record lists of the :func:`recording` blocks in force in this context, outermost first.
_RECORDING: contextvars.ContextVar[tuple[list[SplitRecord], ...]] = contextvars.ContextVar(
    "prism_split_recording", default=()
)


@contextlib.contextmanager
def recording() -> Iterator[list[SplitRecord]]:
    """Collect the :class:`SplitRecord` of every split that runs in this block (in this thread
    or task, and the pipelines it runs), in the order they finish.  Blocks nest: a record goes
    to every block in force."""
    records: list[SplitRecord] = []
    token = _RECORDING.set((*_RECORDING.get(), records))
    try:
        yield records
    finally:
        _RECORDING.reset(token)


#: The public name of :func:`recording` (``prism_core.pipelines.split_recording``).
split_recording = recording


def _publish(record: SplitRecord) -> None:
    for records in _RECORDING.get():
        records.append(record)


# -- threads ------------------------------------------------------------------------------------

#: Modules with a thread count of their own that is set per calling thread, as
#: ``(getter, setter)`` (torch's applies to the calling thread's OpenMP and MKL settings, and
#: to threads that start torch work later).
_OWN_COUNT = {"torch": ("get_num_threads", "set_num_threads")}


class _Libraries:
    """The native thread pools of each backend's modules, found with threadpoolctl, and the
    process-wide limits splits put on them.

    A scan costs about 0.6 ms, more than a small part: it is cached per set of modules, and
    made again only when a module of the set still has no library and modules were imported
    since (``scipy.linalg`` loads SciPy's OpenBLAS after ``scipy``), at most once a second, as
    the thread-pool coordinator does."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: modules -> (len(sys.modules) at the scan, when, [(controller, module)])
        self._seen: dict[tuple[str, ...], tuple[int, float, list[tuple[Any, str]]]] = {}
        #: filepath -> (count of splits limiting it, the count before the first)
        self._limited: dict[str, tuple[int, int]] = {}

    def controllers(self, modules: Sequence[str]) -> list[tuple[Any, str]]:
        """``(threadpoolctl controller, module)`` of the libraries of ``modules``."""
        from prism_core.kernel.threads import module_roots, owner_of

        present = tuple(sorted(m for m in modules if m in sys.modules))
        if not present:
            return []
        size, now = len(sys.modules), time.monotonic()
        with self._lock:
            seen = self._seen.get(present)
        if seen is not None:
            complete = {m for _, m in seen[2]} >= set(present)
            if complete or size == seen[0] or now - seen[1] < 1.0:
                return list(seen[2])
        try:
            import threadpoolctl  # type: ignore[import-untyped, unused-ignore]

            found = list(threadpoolctl.ThreadpoolController().lib_controllers)
        except Exception:  # threadpoolctl missing or failing: nothing is limited
            found = []
        roots = module_roots(present)
        owned = [(c, owner_of(str(c.filepath), roots)) for c in found]
        libraries = [(c, m) for c, m in owned if m is not None]
        with self._lock:
            self._seen[present] = (size, now, libraries)
        return list(libraries)

    def enter(self, controller: Any, count: int) -> None:
        """Limit a library with one count per process (OpenBLAS) while a split needs it."""
        key = str(controller.filepath)
        with self._lock:
            users, before = self._limited.get(key, (0, int(controller.num_threads)))
            if users == 0 and count < before:
                controller.set_num_threads(count)
            self._limited[key] = (users + 1, before)

    def leave(self, controller: Any) -> None:
        key = str(controller.filepath)
        with self._lock:
            users, before = self._limited[key]
            if users == 1:
                del self._limited[key]
                controller.set_num_threads(before)
            else:
                self._limited[key] = (users - 1, before)


_LIBRARIES = _Libraries()


def _modules_of(backend: str) -> tuple[str, ...]:
    from prism_core.kernel.threads import POOLS

    return POOLS.modules(backend)


@contextlib.contextmanager
def _thread_share(backend: str | None, count: int | None) -> Iterator[None]:
    """In the part's thread: its backend limited to ``count`` threads (``None``: untouched)
    while the part runs, and its counts put back afterwards."""
    modules = _modules_of(backend) if backend else ()
    undo: list[Callable[[], None]] = []
    try:
        if count is not None and modules:
            for module in modules:
                spec = _OWN_COUNT.get(module)
                framework = sys.modules.get(module)
                if spec is not None and framework is not None:
                    get, put = (getattr(framework, n) for n in spec)
                    before = int(get())
                    if count < before:
                        put(count)
                        undo.append(functools.partial(put, before))
            for controller, module in _LIBRARIES.controllers(modules):
                if module in _OWN_COUNT:
                    continue  # its own setter did it, for this thread
                if controller.user_api == "openmp":
                    before = int(controller.num_threads)  # this thread's setting
                    if count < before:
                        controller.set_num_threads(count)
                        undo.append(functools.partial(controller.set_num_threads, before))
                else:
                    _LIBRARIES.enter(controller, count)
                    undo.append(functools.partial(_LIBRARIES.leave, controller))
        yield
    finally:
        for action in reversed(undo):
            with contextlib.suppress(Exception):  # restoring must never fail the result
                action()


def _shares(sizes: Sequence[int], on_host: Sequence[bool]) -> list[int | None]:
    """Threads for each part that runs on the host at the same time as another such part: at
    least one each, the rest of the cores in proportion to their sizes; ``None`` for the rest."""
    host = [i for i, (n, h) in enumerate(zip(sizes, on_host, strict=True)) if n > 0 and h]
    out: list[int | None] = [None] * len(sizes)
    if len(host) < 2:
        return out
    spare = max(usable_cpus() - len(host), 0)
    extra = _sizes(spare, [sizes[i] for i in host]) if spare else [0] * len(host)
    for i, more in zip(host, extra, strict=True):
        out[i] = 1 + more
    return out


# -- running a split ----------------------------------------------------------------------------


class _Worker:
    """A thread that runs one part at a time, kept for the next split while idle."""

    def __init__(self, workers: _Workers, number: int) -> None:
        self._tasks: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._workers = workers
        self.thread = threading.Thread(target=self._loop, name=f"prism-split-{number}", daemon=True)
        self.thread.start()

    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        self._tasks.put((future, fn))
        return future

    def stop(self) -> None:
        self._tasks.put(None)

    def _loop(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            future, fn = task
            if future.set_running_or_notify_cancel():
                try:
                    result = fn()
                except BaseException as exc:  # the caller gets it, with the part named
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del task, future, fn  # no reference to the part's arrays while idle
            if not self._workers.release(self):
                return


class _Workers:
    """Threads for the parts of splits: each part gets a thread of its own (an idle one, or a
    new one), so that the parts of one split always run at the same time, and splits started
    from many threads at once never wait for each other's parts (no pool to exhaust).  Idle
    threads are kept, up to :attr:`keep`, for the next split; daemon threads, so that a part
    that never ends cannot keep the interpreter from exiting."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._made = 0

    def take(self, n: int) -> list[_Worker]:
        with self._lock:
            taken = self._idle[-n:] if n else []
            del self._idle[len(self._idle) - len(taken) :]
            missing = n - len(taken)
            numbers = range(self._made, self._made + missing)
            self._made += missing
        return taken + [_Worker(self, k) for k in numbers]

    def release(self, worker: _Worker) -> bool:
        """Keep ``worker`` for the next split; ``False``: enough are idle, let it end."""
        with self._lock:
            if len(self._idle) >= self.keep:
                return False
            self._idle.append(worker)
            return True

    @property
    def idle(self) -> int:
        with self._lock:
            return len(self._idle)


_WORKERS = _Workers(keep=max(8, 4 * usable_cpus()))


@dataclass
class _Job:
    """One part of a split call: what it runs, where, and (filled in by the run) what ran it."""

    index: int
    target: SplitTarget
    scope: Scope
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    start: int
    stop: int
    threads: int | None
    explain: bool
    #: Filled in by the run.
    seconds: float | None = None
    thread: str | None = None
    backend: str | None = None
    device: str | None = None
    kind: str | None = None
    variant: str | None = None
    #: Where the part's data goes (``_execute``) and how many bytes go and come back (the run).
    path: TransferPath | None = None
    moved_bytes: int | None = None
    #: The backend whose pinned memory the part's host arrays go through (``None``: not
    #: staged), and whether they went (the backend may give no buffer).
    pinned: Backend | None = None
    staged: bool = False


def _reference_backend(op: Op) -> str | None:
    ref = next((v for v in op.variants if v.reference), None)
    return ref.backend if ref is not None else None


def _decide(op: Op, job: _Job) -> None:
    """Which backend, variant and device run the job (explain, in the job's scope)."""
    from prism_core.kernel.dispatch.explain import explain

    decision = explain(op, *job.args, **job.kwargs)
    job.variant = decision.executed
    job.device = decision.chosen_device or job.target.device
    if decision.simulated:
        job.backend = _reference_backend(op)
    else:
        job.backend = decision.chosen_backend
    if job.device is not None and job.target.description is not None:
        job.kind = job.target.description.kind
    elif job.device is not None:
        from prism_core.kernel.devices import default_library

        with contextlib.suppress(Exception):
            job.kind = default_library().get(job.device).kind


def _to_home(value: Any, home: Backend, reference: Backend | None) -> Any:
    """``value`` (a part's result) as ``home``'s arrays: through the backend that owns it,
    to NumPy by ``to_numpy``, else by DLPack (``from_dlpack``)."""
    if isinstance(value, tuple):
        items = [_to_home(v, home, reference) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    owner = _plugins().owner(value)
    if owner is None:
        return value
    owner.synchronize(value)  # the part's time is its work's, also on a device that runs async
    if owner is home:
        return value
    if home is reference:
        out = owner.to_numpy(value)
        return out[()] if getattr(out, "ndim", 1) == 0 else out  # NumPy gives 0-d as scalars
    return home.from_dlpack(value)


def _run_job(op: Op, job: _Job, home: Backend, reference: Backend | None) -> Any:
    """Run one part in its scope (this is the part's thread, in a copy of the caller's
    context), its result brought to the caller's array type."""
    SCOPE.set(job.scope)
    job.thread = threading.current_thread().name
    if job.explain or (
        job.threads is not None and job.target.backend is None and not job.target.simulated
    ):
        _decide(op, job)  # for the record, or to know which backend's threads to limit
    else:
        job.backend = _reference_backend(op) if job.target.simulated else job.target.backend
    with _thread_share(job.backend, job.threads):
        started = time.perf_counter()
        args, kwargs = job.args, job.kwargs
        buffers: list[Any] = []
        if job.pinned is not None:  # the copy into pinned memory is part of the part's time
            args, kwargs, buffers = split_decision.stage(job.pinned, args, kwargs)
            job.staged = bool(buffers)
        out = op.function(*args, **kwargs)
        out = _to_home(out, home, reference)
        job.seconds = time.perf_counter() - started
    if job.pinned is not None and buffers:  # the result is home and synchronised: they are free
        split_decision.unstage(job.pinned, buffers, out)
    if job.path is not None:
        job.moved_bytes = _moved_bytes(job.args, job.kwargs, out)
    return out


def _part_text(op: Op, job: _Job, layout: _Layout | None) -> str:
    where = "whole" if layout is None else f"[{job.start}:{job.stop}] of axis {layout.axis}"
    return f"{op.name}: part {job.index} ({where}) on {job.target.label}"


def _run_parts(
    op: Op,
    jobs: list[_Job],
    home: Backend,
    reference: Backend | None,
    timeout: float | None,
    layout: _Layout,
    ratios: Sequence[float],
) -> list[Any]:
    """Run the parts at once, each in a worker thread of its own and a copy of the caller's
    context.  Without a timeout the first runs in the calling thread instead (which would
    otherwise only wait: one hand-over fewer); with one, the caller only waits, so that it can
    stop waiting at the deadline (a thread cannot be interrupted)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    own = jobs[:1] if timeout is None else []
    futures = [
        worker.submit(
            functools.partial(contextvars.copy_context().run, _run_job, op, job, home, reference)
        )
        for worker, job in zip(_WORKERS.take(len(jobs) - len(own)), jobs[len(own) :], strict=True)
    ]
    if own:
        mine: Future[Any] = Future()  # the caller's part, failed or not, waited for as the others
        try:
            mine.set_result(contextvars.copy_context().run(_run_job, op, own[0], home, reference))
        except Exception as exc:
            mine.set_exception(exc)
        futures.insert(0, mine)
    return _wait(op, jobs, futures, deadline, timeout, layout, ratios)


def _whole_within(op: Op, job: _Job, run: Callable[[], Any], timeout: float) -> Any:
    """``run()`` (a call run whole) in a worker thread, waited for ``timeout`` seconds at most:
    its result or its own error, else :class:`SplitError`."""
    (worker,) = _WORKERS.take(1)
    future = worker.submit(functools.partial(contextvars.copy_context().run, run))
    if not wait([future], timeout=timeout).done:
        future.cancel()
        raise SplitError(
            f"{op.name}: part 0 on {job.target.label} did not finish within timeout={timeout:g} "
            "s; the result is discarded (the call runs on to its end in its thread: native code "
            "cannot be interrupted)",
            _part_record(job, None, 1.0),
        )
    return future.result()


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)


def _wait(
    op: Op,
    jobs: list[_Job],
    futures: list[Future[Any]],
    deadline: float | None,
    timeout: float | None,
    layout: _Layout,
    ratios: Sequence[float],
) -> list[Any]:
    """The parts' results in order, or :class:`SplitError`: for the first part that failed (by
    index), or for the parts not finished by ``deadline`` (``timeout`` seconds after the
    start).  Parts not started are cancelled; parts running are waited for (within the
    deadline), so that nothing of the call runs on behind a failure."""
    done, pending = wait(futures, timeout=_left(deadline), return_when=FIRST_EXCEPTION)
    failed = [
        (job, fut.exception())
        for job, fut in zip(jobs, futures, strict=True)
        if fut in done and fut.exception() is not None
    ]
    if not failed and not pending:
        return [f.result() for f in futures]
    for fut in pending:
        fut.cancel()
    if not failed:  # the deadline passed
        late = [j for j, f in zip(jobs, futures, strict=True) if f in pending]
        running = [j for j, f in zip(jobs, futures, strict=True) if f in pending and f.running()]
        first = late[0]
        names = ", ".join(f"part {j.index} on {j.target.label}" for j in late)
        how = (
            "the result is discarded (the parts running run on to their end in their threads: "
            "native code cannot be interrupted)"
            if running
            else "the parts not started were cancelled"
        )
        raise SplitError(
            f"{op.name}: {names} did not finish within timeout={timeout:g} s; {how}",
            _part_record(first, layout, ratios[first.index]),
        )
    still = [f for f in pending if not f.cancelled()]
    if still:
        wait(still, timeout=_left(deadline))
    failed = [
        (job, fut.exception())
        for job, fut in zip(jobs, futures, strict=True)
        if fut.done() and not fut.cancelled() and fut.exception() is not None
    ]
    job, exc = failed[0]
    assert exc is not None
    others = "".join(
        f"; part {j.index} on {j.target.label} failed too ({type(e).__name__}: {e})"
        for j, e in failed[1:]
    )
    cancelled = sum(f.cancelled() for f in futures)
    raise SplitError(
        f"{_part_text(op, job, layout)} failed: {describe_exception(exc)}{others}"
        + (f" ({cancelled} part(s) not started were cancelled)" if cancelled else ""),
        _part_record(job, layout, ratios[job.index]),
    ) from exc


def _part_record(job: _Job, layout: _Layout | None, ratio: float) -> PartRecord:
    transfer_s = transfer = None
    if job.path is not None and job.path.hops:
        # The path also of a part that did not run (a declined split's): where its data
        # would have gone, which is often why it was declined.
        transfer = job.path.describe()
        if job.moved_bytes is not None:
            transfer_s = job.path.seconds(job.moved_bytes)
    return PartRecord(
        index=job.index,
        target=job.target.label,
        backend=job.backend or job.target.backend,
        device=job.device or job.target.device,
        kind=job.kind or (job.target.description.kind if job.target.description else None),
        simulated=job.target.simulated,
        start=job.start,
        stop=job.stop,
        ratio=ratio,
        seconds=job.seconds,
        thread=job.thread,
        threads=job.threads,
        variant=job.variant,
        transfer_s=transfer_s,
        transfer=transfer,
        pinned=job.staged,
    )


# -- where the data goes ------------------------------------------------------------------------


def _moved_bytes(args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> int:
    """The bytes a part's arrays (its arguments, its result) amount to: what moves to its
    target and back when the target computes elsewhere than the data is."""
    from prism_core.kernel.dispatch.movement import nbytes

    total = 0
    for value in (*args, *kwargs.values(), *(out if isinstance(out, tuple) else (out,))):
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if _is_array(item):
                total += nbytes(item) or 0
    return total


def _data_source(
    args: tuple[Any, ...], kwargs: dict[str, Any], caller: Scope
) -> DeviceDescription | None:
    """Where the call's arrays are: ``None`` for host memory, or the accelerator of the
    caller's scope when an array argument is in device memory (then it is that device's)."""
    from prism_core.kernel.dispatch.movement import _in_host_memory

    device = caller.device
    if device is None or device.kind in (None, "cpu"):
        return None
    for value in (*args, *kwargs.values()):
        if _is_array(value) and not _in_host_memory(value):
            return device
    return None


def _path_to(source: DeviceDescription | None, target: SplitTarget) -> TransferPath | None:
    """The path of a part's data from ``source`` to ``target``'s device; ``None`` when the
    target names no device (a backend, on the device it chooses) or a link on the path is not
    described."""
    from prism_core.kernel.description.topology import transfer_path

    if target.description is None:
        return None
    return transfer_path(source, target.description)


def _gather(op: Op, layout: _Layout, results: list[Any], sizes: list[int], base: Scope) -> Any:
    """The parts' results joined, in order, in an automatic scope (the data stays in the
    caller's array type)."""
    from prism_core.kernel.dispatch.ops import get_op

    token = SCOPE.set(base.replace(device=None, simulated=False, backend=None))
    try:
        if len(results) == 1:
            return results[0]
        if layout.gather == "concat":
            concat = get_op("concat").function

            def join(items: list[Any]) -> Any:
                first = items[0]
                if isinstance(first, tuple):
                    joined = [join([r[k] for r in items]) for k in range(len(first))]
                    return type(first)(*joined) if hasattr(first, "_fields") else tuple(joined)
                return concat(list(items), axis=layout.out_axis)

            return join(results)
        if layout.gather == "add":
            out = results[0]
            for r in results[1:]:
                out = out + r
            return out
        if layout.gather == "mean":
            total = sum(sizes)
            out = results[0] * (sizes[0] / total)
            for r, n in zip(results[1:], sizes[1:], strict=True):
                out = out + r * (n / total)
            return out
        pick = get_op(layout.gather).function  # maximum, minimum
        out = results[0]
        for r in results[1:]:
            out = pick(out, r)
        return out
    finally:
        SCOPE.reset(token)


def _home(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Backend, Backend | None]:
    ps = _plugins()
    reference = ps.backends.get("numpy")
    for value in (*args, *kwargs.values()):
        if _is_array(value):
            owner = ps.owner(value)
            if owner is not None:
                return owner, reference
    if reference is None:
        raise PrismError(
            "the reference backend (numpy) is not loaded: a split has nowhere to gather"
        )
    return reference, reference


def _execute(
    op: Op,
    spec: SplitSpec,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    strict: bool,
    want_record: bool = False,
) -> tuple[Any, SplitRecord | None]:
    """Run ``op(*args, **kwargs)`` as ``spec`` says; the result and, when asked for or a
    :func:`recording` is in force, its record."""
    for i, a in enumerate(args):
        for item in a if isinstance(a, (list, tuple)) else (a,):
            if is_masked(item):
                raise TypeError(
                    f"{op.name}: argument {i} is a numpy.ma.MaskedArray, and a split would drop "
                    "its mask (the masked values would count); compute it unsplit (automatic "
                    "mode keeps masked arrays on NumPy), or pass x.filled(value) or "
                    "x.compressed()"
                )
    started = time.perf_counter()
    recording_on = want_record or bool(_RECORDING.get())
    caller = current_scope()
    base = caller.replace(split=None, device=None, simulated=False, backend=None)
    targets = spec.targets
    rule = _rule_for(op)
    layout: _Layout | None = None
    note = ""
    if len(targets) > 1:
        if rule is None:
            if strict:
                raise _no_rule(op)
            note = f"not split: {op.name} has no split rule"
        else:
            try:
                layout = _LAYOUTS[rule.kind](rule, args, kwargs, spec.axis)
            except _Unsplittable as exc:
                if strict:
                    raise ValueError(
                        f"{op.name} cannot be split along axis {spec.axis}: {exc}"
                    ) from None
                note = f"not split: {exc}"
    home, reference = _home(args, kwargs)
    # Where the data starts, for the modelled ratio and the records' transfers (only then).
    source = _data_source(args, kwargs, caller) if recording_on or spec.ratio == "auto" else None

    if layout is None:
        # One target, or a call the lenient scope could not split: it runs whole, in this
        # thread (in a worker thread, awaited, with a timeout), on the first target (or, not
        # split, in the caller's scope without the split).
        target = targets[0] if not note else None
        scope = base.replace(**target.changes()) if target is not None else base
        job = _Job(0, target or _CALLER, scope, args, kwargs, 0, 0, None, recording_on)
        if target is not None and recording_on:
            job.path = _path_to(source, target)

        def run_whole() -> Any:
            token = SCOPE.set(scope)
            try:
                if recording_on:
                    _decide(op, job)
                t0 = time.perf_counter()
                out = op.function(*args, **kwargs)
                job.seconds = time.perf_counter() - t0
            finally:
                SCOPE.reset(token)
            if job.path is not None:
                job.moved_bytes = _moved_bytes(args, kwargs, out)
            job.thread = threading.current_thread().name
            return out

        if spec.timeout is None:
            out = run_whole()
        else:
            out = _whole_within(op, job, run_whole, spec.timeout)
        if target is not None:
            out = _to_home(out, home, reference)
        if not recording_on:
            return out, None
        record = SplitRecord(
            op.name,
            None,
            None,
            "whole",
            "one target" if target else "not split",
            (_part_record(job, None, 1.0),),
            0.0,
            time.perf_counter() - started,
            note,
        )
        _publish(record)
        return out, record

    length = layout.length
    plan: split_decision.AutoPlan | None = None
    if spec.ratio == "auto" and length > 0:
        plan = split_decision.plan_auto(
            op, targets, layout, args, kwargs, base, source, _host_or_none(), _plugins().backends
        )
        weights, ratio_source = list(plan.weights), plan.ratio_source
    elif spec.ratio == "auto":
        weights, ratio_source = [1.0] * len(targets), "even: the split axis has length 0"
    elif spec.ratio is None:
        weights, ratio_source = [1.0] * len(targets), "even"
    else:
        assert isinstance(spec.ratio, tuple)  # checked by make_spec
        weights, ratio_source = list(spec.ratio), "given"
    if sum(weights) <= 0:
        weights, ratio_source = [1.0] * len(targets), "even: every share came out 0"
    total_weight = sum(weights)
    ratios = [w / total_weight for w in weights]
    sizes = _sizes(length, weights)
    if length == 0:
        # Nothing to cut: the empty call runs whole on the first target with a share, so that
        # the result has the shape and type the op gives.
        first = next(i for i, w in enumerate(weights) if w > 0)
        sizes[first] = 0
        run = [first]
    else:
        run = [i for i, n in enumerate(sizes) if n > 0]
    shares = (
        _shares(sizes, [t.on_host for t in targets])
        if spec.share_threads
        else [None] * len(targets)
    )
    bounds = [0]
    for n in sizes:
        bounds.append(bounds[-1] + n)
    jobs: list[_Job] = []
    for i, target in enumerate(targets):
        lo, hi = bounds[i], bounds[i + 1]
        whole = hi - lo == length  # (a declined split's target: the arguments as they are)
        part_args, part_kwargs = (
            layout.part(args, kwargs, lo, hi) if length and not whole else (args, kwargs)
        )
        jobs.append(
            _Job(
                i,
                target,
                base.replace(**target.changes()),
                part_args,
                part_kwargs,
                lo,
                hi,
                shares[i],
                recording_on,
                path=_path_to(source, target) if recording_on else None,
            )
        )
    running = [jobs[i] for i in run]
    for job in running:
        known = plan.backends[job.index] if plan is not None and plan.backends else None
        job.pinned = _pinned_for(op, job, source, known)
    results = _run_parts(op, running, home, reference, spec.timeout, layout, ratios)
    gather_started = time.perf_counter()
    out = _gather(op, layout, results, [j.stop - j.start for j in running], base)
    gather_s = time.perf_counter() - gather_started
    if length == 0:
        note = "the split axis has length 0: the empty call ran whole on the first target"
    record = SplitRecord(
        op=op.name,
        axis=layout.axis,
        length=length,
        how=layout.what,
        ratio_source=ratio_source,
        parts=tuple(_part_record(j, layout, ratios[j.index]) for j in jobs),
        gather_s=gather_s,
        total_s=time.perf_counter() - started,
        note=note,
        decision=plan.decision if plan is not None else "",
    )
    _publish(record)
    return out, record


def _host_or_none() -> DeviceDescription | None:
    try:
        return _host_description()
    except PrismError:
        return None


def _pinned_for(
    op: Op, job: _Job, source: DeviceDescription | None, known: str | None
) -> Backend | None:
    """The backend whose pinned memory ``job``'s host arrays should go through, or ``None``:
    only for a part bound for a GPU (a device present here, not simulated) from host memory,
    whose backend offers pinned memory, where the model predicts that staging pays for the
    part's size (``split_decision.staging_pays``).  ``known``: the backend ``"auto"`` found."""
    target, desc = job.target, job.target.description
    if source is not None or target.simulated or desc is None or desc.kind == "cpu":
        return None
    in_bytes = split_decision.host_bytes(job.args, job.kwargs)
    if not in_bytes:
        return None
    name = target.backend or known
    if name is None:
        from prism_core.kernel.dispatch.explain import explain

        def ask() -> str | None:
            SCOPE.set(job.scope)
            return explain(op, *job.args, **job.kwargs).chosen_backend

        name = contextvars.copy_context().run(ask)
    backend = _plugins().backends.get(name) if name is not None else None
    if backend is None or not split_decision.offers_pinned(backend):
        return None
    from prism_core._tuning.tuning_records import records

    model = split_decision.model_of(records())
    host = split_decision.figures_of(model, _host_or_none())
    pays = split_decision.staging_pays(
        backend, split_decision.figures_of(model, desc), host, in_bytes
    )
    return backend if pays else None


#: The stand-in target of a call a lenient scope ran whole in the caller's scope.
_CALLER = SplitTarget("the caller's scope", None, None, False, True)


# -- specs: what a scope splits -----------------------------------------------------------------


@home("prism_core.pipelines")
@dataclass(frozen=True)
class SplitSpec:
    """What a scope splits (``Scope.split``): the ops (``None``: every op with a split rule),
    across which targets, by which ratio, along which axis.

    Dispatch asks :meth:`runner_for` when it builds the plan of an op in such a scope; the
    runner it gets runs every call of that op as a split.  Specs compare and hash by content,
    so that the same spec in force again reuses the plans made for it.  Made by
    :func:`make_spec` (``splitting``, ``ExecutionStrategy``), which checks everything.
    """

    targets: tuple[SplitTarget, ...]
    ratio: tuple[float, ...] | str | None = None
    axis: int = 0
    ops: frozenset[str] | None = None
    share_threads: bool = True
    timeout: float | None = None
    #: The ops were named (a call that cannot be split is an error), or not (it runs whole).
    strict: bool = False

    def covers(self, op: Op) -> bool:
        """Whether this spec applies to ``op``: named, or (no ops named) splittable."""
        if self.ops is not None:
            return op.name in self.ops
        return len(self.targets) == 1 or op.name in _RULES

    def runner_for(self, op: Op) -> Callable[..., Any] | None:
        """The function dispatch calls instead of the op's variants (``None``: not this op)."""
        if not self.covers(op):
            return None
        spec = self

        def run_split(*args: Any, **kwargs: Any) -> Any:
            return _execute(op, spec, args, kwargs, strict=spec.strict)[0]

        run_split.__name__ = run_split.__qualname__ = f"split[{op.name}]"
        return run_split

    def describe(self) -> str:
        what = "every splittable op" if self.ops is None else ", ".join(sorted(self.ops))
        if len(self.targets) == 1:
            return f"{what} on {self.targets[0].label}"
        ratio = (
            "even"
            if self.ratio is None
            else self.ratio
            if isinstance(self.ratio, str)
            else "/".join(f"{r:.2g}" for r in self.ratio)
        )
        names = ", ".join(t.label for t in self.targets)
        return f"{what} split along axis {self.axis} across {names} ({ratio})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "targets": [t.as_dict() for t in self.targets],
            "ratio": list(self.ratio) if isinstance(self.ratio, tuple) else self.ratio,
            "axis": self.axis,
            "ops": None if self.ops is None else sorted(self.ops),
            "share_threads": self.share_threads,
            "timeout": self.timeout,
        }


@dataclass(frozen=True)
class SplitSet:
    """Several specs in force together (an ``ExecutionStrategy``'s ops and a stage's split):
    the first that covers an op decides for it."""

    specs: tuple[SplitSpec, ...]

    def runner_for(self, op: Op) -> Callable[..., Any] | None:
        for spec in self.specs:
            runner = spec.runner_for(op)
            if runner is not None:
                return runner
        return None

    def describe(self) -> str:
        return "; ".join(s.describe() for s in self.specs)

    def as_dict(self) -> dict[str, Any]:
        return {"specs": [s.as_dict() for s in self.specs]}


def _check_axis(axis: Any, name: str = "axis") -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{name} must be an int (the axis to split along), got {axis!r}")
    return axis


def _check_timeout(timeout: Any) -> float | None:
    if timeout is None:
        return None
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ValueError(f"timeout must be a number of seconds > 0, or None; got {timeout!r}")
    return float(timeout)


def make_spec(
    targets: Any,
    *,
    ratio: Any = None,
    axis: int = 0,
    ops: Iterable[Any] | None = None,
    simulate: bool = False,
    share_threads: bool = True,
    timeout: float | None = None,
    bound: Sequence[SplitTarget] | None = None,
) -> SplitSpec:
    """A checked :class:`SplitSpec` (see :func:`splitting` for the arguments); ``bound``:
    targets bound already (``ExecutionStrategy``)."""
    found = tuple(bound) if bound is not None else _targets(targets, simulate)
    names: frozenset[str] | None = None
    if ops is not None:
        if isinstance(ops, (str, Op)) or callable(ops):
            ops = [ops]
        resolved = [as_op(o) for o in ops]  # OperationError naming close matches
        if len(found) > 1:
            for o in resolved:
                if o.name not in _RULES:
                    raise _no_rule(o)
        names = frozenset(o.name for o in resolved)
    if not isinstance(share_threads, bool):
        raise TypeError(f"share_threads must be True or False, got {share_threads!r}")
    return SplitSpec(
        found,
        _ratio(ratio, len(found)),
        _check_axis(axis),
        names,
        share_threads,
        _check_timeout(timeout),
        strict=names is not None,
    )


def splitting(
    targets: Any,
    *,
    ratio: Any = None,
    axis: int = 0,
    ops: Iterable[Any] | None = None,
    simulate: bool = False,
    share_threads: bool = True,
    timeout: float | None = None,
) -> ScopeBlock:
    """Split the ops in the block across ``targets``: ``with prism.splitting(["numpy",
    "torch"], ratio=[0.3, 0.7]):``.

    ``ops`` (names or op functions) limits it to those ops, and a call of one of them that
    cannot be split (an axis it has not) is an error; without ``ops`` every op with a split
    rule splits, and a call that cannot runs whole in the scope around the block.  With one
    target, the ops run there (no split, no rule needed).  The other arguments are
    :func:`split`'s; everything is checked when ``splitting()`` is called.  An inner block
    replaces an outer one.
    """
    from prism_core.kernel.dispatch.scope import ScopeBlock

    spec = make_spec(
        targets,
        ratio=ratio,
        axis=axis,
        ops=ops,
        simulate=simulate,
        share_threads=share_threads,
        timeout=timeout,
    )
    return ScopeBlock({"split": spec})


def split(
    op: Any,
    *args: Any,
    targets: Any,
    ratio: Any = None,
    split_axis: int = 0,
    simulate: bool = False,
    share_threads: bool = True,
    timeout: float | None = None,
    return_record: bool = False,
    **kwargs: Any,
) -> Any:
    """Run ``op(*args, **kwargs)`` cut along ``split_axis`` across ``targets``, concurrently,
    and gather the parts into what the unsplit call gives.

    :param op: an op name (``"matmul"``), an op function (``prism.matmul``) or an ``Op``; it
        must have a split rule (:func:`split_rules`).
    :param targets: a list of targets: backend names (``"numpy"``, ``"torch"``), ``"cpu"``
        (the host), device types or families (``"nvidia.h100-pcie"``), or ``(device,
        backend)`` pairs.  Each is checked before anything runs.
    :param ratio: the shares of the work, one non-negative number per target (normalised);
        ``None``: even; ``"auto"``: in proportion to each target's tuned throughput for this
        op, else the performance model's predicted time, and no split at all (the whole call
        on the better single target, the record's ``decision`` saying why) unless the split
        is predicted 20 % faster than that target (see docs/split.md).  A given ratio is never
        declined.
    :param split_axis: the axis to cut (as the op's rule counts it: the result's axes for
        elementwise ops and ``matmul``).  Not ``axis``, which stays the op's own keyword
        (``prism.split("fft.fft", x, targets=..., split_axis=0, axis=-1)``).
    :param simulate: devices not present here are simulated: their parts run on the reference
        backend and are labelled so.
    :param share_threads: parts running on the host at once share its cores (see the module).
    :param timeout: seconds to wait for the parts (every part then runs in a split thread, the
        caller only waits); beyond it, :class:`SplitError`, and a part still running is
        abandoned: it runs on to its end in its thread, its result discarded.
    :param return_record: return ``(result, SplitRecord)`` instead of the result.
    :raises SplitError: a part failed (naming it and its index range) or timed out.
    """
    the_op = as_op(op)
    if _rule_for(the_op) is None:
        raise _no_rule(the_op)
    if not isinstance(simulate, bool):
        raise TypeError(f"simulate must be True or False, got {simulate!r}")
    spec = make_spec(
        targets,
        ratio=ratio,
        axis=_check_axis(split_axis, "split_axis"),
        ops=[the_op],
        simulate=simulate,
        share_threads=share_threads,
        timeout=timeout,
    )
    out, record = _execute(the_op, spec, args, kwargs, strict=True, want_record=return_record)
    return (out, record) if return_record else out
