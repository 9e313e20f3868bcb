"""Planning without hardware: which device an op should run on, under an execution policy.

``choose_device(op, *specs, devices=[...], policy=...)`` predicts the op on each described device
(present or not) with the performance model (calibrated with this host's stored calibration,
which ``prism bench`` measures), the arguments starting on the host, replaces a prediction by
a measured time where the tuner has one (this host's tuning records, or a ``tuned`` function),
and lets the policy choose.
The result carries the table behind the choice, so that a choice can be read, printed and stored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prism_core._tuning.execution_policy import ExecutionPolicy, PolicyError, choose
from prism_core._tuning.model import ModelError, PerformanceModel, hardware_entries
from prism_core._tuning.predictions import PerformanceRow, format_seconds, render_rows
from prism_core._tuning.work import has_work
from prism_core.kernel.description.dtypes import DType
from prism_core.kernel.description.dtypes import dtype as to_dtype
from prism_core.kernel.public import home

__all__ = ["DeviceChoice", "TunedLookup", "choose_device"]

#: ``tuned(op_name, device_type, dtype_vocab, shapes) -> seconds | None``: a measured time.
TunedLookup = Callable[[str, str, str, tuple[tuple[int, ...], ...]], "float | None"]


@home("prism_core.tuning")
@dataclass(frozen=True)
class DeviceChoice:
    """The device a policy chose for an op, and the table behind the choice.

    ``rows`` are every candidate, ranked by the policy (those meeting its constraints first);
    ``chosen`` is the first.  ``excluded`` lists the devices the model could not predict, each
    with the reason.  ``str()`` prints the table with the choice marked ``*``.
    """

    op: str
    shapes: tuple[tuple[int, ...], ...]
    dtype: str
    policy: ExecutionPolicy
    chosen: PerformanceRow
    rows: tuple[PerformanceRow, ...]
    excluded: tuple[tuple[str, str], ...] = ()

    @property
    def device_type(self) -> str:
        return self.chosen.device_type

    @property
    def count(self) -> int:
        return self.chosen.count

    def __str__(self) -> str:
        args = ", ".join(str(s) for s in self.shapes)
        chosen = self.chosen
        lines = [
            f"device for {self.op}({args}) in {self.dtype}, policy {self.policy.describe()}: "
            f"{chosen.label} ({chosen.source}, {format_seconds(chosen.seconds)})",
            render_rows(self.rows, mark=chosen),
        ]
        for row in self.rows:
            lines += [f"  {why}" for why in self.policy.misses(row)]
        if self.policy.priority == "cost_efficiency":
            unpriced = [r.label for r in self.rows if r.cost_per_run is None]
            if unpriced:
                lines.append(
                    "  no cloud_price, ranked last for cost_efficiency: " + ", ".join(unpriced)
                )
        if self.policy.priority == "energy":
            no_tdp = [r.label for r in self.rows if r.energy_j is None]
            if no_tdp:
                lines.append("  no tdp_watts, ranked last for energy: " + ", ".join(no_tdp))
        lines += [f"not predicted: {label}: {why}" for label, why in self.excluded]
        lines.append(
            "throughput in GB/s (10^9 bytes of arguments and results per second), cost in USD at "
            "cloud_price, energy at TDP; arguments start on the host"
        )
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "shapes": [list(s) for s in self.shapes],
            "dtype": self.dtype,
            "policy": self.policy.as_dict(),
            "chosen": self.chosen.as_dict(),
            "rows": [{**r.as_dict(), "misses": list(self.policy.misses(r))} for r in self.rows],
            "excluded": [{"device": label, "reason": why} for label, why in self.excluded],
        }


def _op_name(op: Any) -> str:
    """The canonical name of ``op`` (a name, an alias, an Op or an op's function); a name that
    only declares work (a user op known to the model alone) is taken as it is."""
    from prism_core.kernel.dispatch.ops import OperationError
    from prism_core.kernel.dispatch.registry import as_op

    if isinstance(op, str) and has_work(op):
        try:
            return as_op(op).name
        except OperationError:
            return op
    try:
        return as_op(op).name
    except OperationError as exc:
        raise ModelError(
            f"choose_device(): {exc}; an op of your own needs its work declared "
            "(prism_core.extending.declare_work) to be predicted"
        ) from None


def _spec(arg: Any, i: int) -> tuple[tuple[tuple[int, ...], ...], DType | None]:
    """(shapes, dtype) of one argument: an array or ArraySpec, a sequence of them (``stack``'s
    first argument), or a Python number (a 0-d operand whose type does not count)."""
    if isinstance(arg, (int, float, complex)):  # bool is an int
        return ((),), None
    shape = getattr(arg, "shape", None)
    if shape is not None and getattr(arg, "dtype", None) is not None:
        try:
            dims = tuple(int(d) for d in shape)
        except TypeError:
            raise TypeError(
                f"choose_device(): argument {i} has a shape that is not integers: {shape!r}"
            ) from None
        return (dims,), to_dtype(arg.dtype)
    if isinstance(arg, (list, tuple)) and arg and all(hasattr(a, "shape") for a in arg):
        shapes: list[tuple[int, ...]] = []
        found: DType | None = None
        for a in arg:
            (s,), d = _spec(a, i)
            shapes.append(s)
            found = _wider(found, d)
        return tuple(shapes), found
    raise TypeError(
        f"choose_device(): argument {i} must be an array or a prism_core.ArraySpec(shape, dtype) "
        f"(or a list of them), got {arg!r} ({type(arg).__name__})"
    )


def _wider(a: DType | None, b: DType | None) -> DType | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b, key=lambda d: (d.kind == "c", d.itemsize))


def _recorded(
    op: str, device_type: str, dtype: str, shapes: tuple[tuple[int, ...], ...]
) -> float | None:
    """The fastest time this host's tuning records hold for ``op`` on ``device_type`` alone, in
    ``dtype``, at the size bucket of ``shapes`` (``None`` when nothing was measured there)."""
    from prism_core._tuning import tuning_records as tuning

    bucket = tuning.bucket_of(*(math.prod(shape) for shape in shapes))
    times = [
        seconds
        for entry in tuning.records().for_op(op)
        if entry.device == device_type and entry.dtype == dtype and entry.bucket == bucket
        for seconds in entry.times.values()
    ]
    return min(times) if times else None


def _host_model() -> PerformanceModel:
    """The model with this host's stored calibration (none stored, or one the model rejects:
    the descriptions' figures alone)."""
    from prism_core._tuning import tuning_records as tuning

    try:
        return PerformanceModel(tuning.records().calibration or None)
    except (TypeError, ValueError):
        return PerformanceModel()


def choose_device(
    op: Any,
    *specs: Any,
    devices: Sequence[Any],
    policy: ExecutionPolicy | None = None,
    tuned: TunedLookup | bool = True,
    model: PerformanceModel | None = None,
) -> DeviceChoice:
    """Choose a device for ``op`` on arguments like ``specs``, under ``policy``.

    :param op: an op, its function (``prism_core.matmul``), its name or an alias; or the name
        of a user op whose work is declared (:func:`prism_core.extending.declare_work`).
    :param specs: the array arguments: :class:`prism_core.ArraySpec` or real arrays (their
        shape and dtype are read), a list of them for a sequence argument, Python numbers for
        scalar operands.  The op computes in the widest of their types.
    :param devices: device types, descriptions or ``(device, count)`` pairs, present or not;
        ``count`` devices split the work evenly.
    :param policy: an :class:`prism_core.ExecutionPolicy` (default: speed).
    :param tuned: where measured times come from; a measured time replaces the prediction for
        that device (its row says ``source="measured"``), for single devices only.  ``True``
        (default): this host's tuning records (``prism tune``, ``prism bench``): the fastest
        variant measured on that device alone, in that dtype, at that size bucket; ``False``:
        predictions only; or a function ``tuned(op_name, device_type, dtype_vocab, shapes) ->
        seconds | None``.
    :param model: the performance model (default: calibrated with this host's stored
        calibration where ``prism bench`` measured one, else the descriptions' figures).

    The arguments start on the host: a device that is not a CPU pays their transfer over its
    host link.  Raises :class:`prism_core.PolicyError` when no device meets the policy's
    constraints, :class:`prism_core.tuning.ModelError` when no device can be predicted.
    """
    name = _op_name(op)
    shapes: list[tuple[int, ...]] = []
    dt: DType | None = None
    for i, spec in enumerate(specs):
        s, d = _spec(spec, i)
        shapes.extend(s)
        dt = _wider(dt, d)
    if dt is None:
        raise TypeError(
            f"choose_device({name!r}, ...): give the array arguments (ArraySpec(shape, dtype) or "
            "arrays) so that their shapes and dtype are known"
        )
    if policy is not None and not isinstance(policy, ExecutionPolicy):
        raise TypeError(
            "choose_device(): policy must be a prism_core.ExecutionPolicy (or None for speed), "
            f"got {policy!r}"
        )
    lookup: TunedLookup | None
    if tuned is True:
        lookup = _recorded
    elif tuned is False or tuned is None:
        lookup = None
    elif callable(tuned):
        lookup = tuned
    else:
        raise TypeError(
            "choose_device(): tuned must be True (this host's tuning records), False (predictions "
            "only) or a function (op_name, device_type, dtype_vocab, shapes) -> seconds or None; "
            f"got {tuned!r}"
        )
    if model is None:
        model = _host_model()
    elif not isinstance(model, PerformanceModel):
        raise TypeError(
            f"choose_device(): model must be a prism_core.tuning.PerformanceModel, got {model!r}"
        )
    policy = policy or ExecutionPolicy()
    key_shapes = tuple(shapes)
    rows: list[PerformanceRow] = []
    excluded: list[tuple[str, str]] = []
    for device, count in hardware_entries(devices, "choose_device(): devices"):
        try:
            prediction = model.predict(name, key_shapes, dt, device, on_device=False, count=count)
        except ModelError as exc:
            excluded.append((f"{model.description(device).device_type} x{count}", str(exc)))
            continue
        description = model.description(device)
        measured = None
        if lookup is not None and count == 1:
            measured = lookup(name, description.device_type, dt.vocab, key_shapes)
            if measured is not None and (
                isinstance(measured, bool)
                or not isinstance(measured, (int, float))
                or not math.isfinite(measured)
                or measured <= 0
            ):
                raise TypeError(
                    f"choose_device(): tuned({name!r}, {description.device_type!r}, "
                    f"{dt.vocab!r}, ...) returned {measured!r}; it must return seconds (a positive "
                    "number) or None"
                )
        if measured is None:
            rows.append(model.row(prediction, name=description.name))
        else:
            rows.append(
                model.row(prediction, seconds=measured, source="measured", name=description.name)
            )
    if not rows:
        raise ModelError(
            f"choose_device(): no device could be predicted for {name}: "
            + "; ".join(f"{label}: {why}" for label, why in excluded)
        )
    try:
        chosen, ranked = choose(rows, policy)
    except PolicyError as exc:
        args = ", ".join(str(s) for s in key_shapes)
        raise PolicyError(
            f"device for {name}({args}) in {dt.vocab}: {exc}",
            policy=exc.policy,
            best=exc.best,
            misses=exc.misses,
            rows=exc.rows,
        ) from None
    return DeviceChoice(
        op=name,
        shapes=key_shapes,
        dtype=dt.vocab,
        policy=policy,
        chosen=chosen,
        rows=tuple(ranked),
        excluded=tuple(excluded),
    )
