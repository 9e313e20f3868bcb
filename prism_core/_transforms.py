"""The numerics protocol's transforms and moves, on every backend: ``value_and_grad``,
``vmap``, ``to_device`` and ``to_dlpack``.

Each runs on one backend: the one named in scope (``use_backend``), else the one that owns the
arguments' arrays (a torch tensor: torch), else the reference backend (NumPy).  A backend with
its own transform (torch's autograd, ``torch.func.vmap``) provides it through
:meth:`Backend.value_and_grad` / :meth:`Backend.vmap`; for the others Prism uses central finite
differences and a loop.  The result of ``value_and_grad`` says which was used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from prism_core.kernel.dispatch.ops import get_op
from prism_core.kernel.dispatch.scope import current_scope

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend

__all__ = ["ValueAndGrad", "to_device", "to_dlpack", "value_and_grad", "vmap"]


class ValueAndGrad(tuple):  # type: ignore[type-arg]
    """``(value, grad)`` as the function ``value_and_grad`` makes returns it, with ``method``:
    how the gradient was computed (``"autograd (torch)"`` or ``"central finite differences"``).
    ``grad`` is one array for an integer ``argnums``, a tuple of arrays for a tuple."""

    __module__ = "prism_core"

    method: str

    def __new__(cls, value: Any, grad: Any, method: str) -> ValueAndGrad:
        self = super().__new__(cls, (value, grad))
        self.method = method
        return self

    def __getnewargs__(self) -> tuple[Any, Any, str]:
        return (self[0], self[1], self.method)

    @property
    def value(self) -> Any:
        return self[0]

    @property
    def grad(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return f"ValueAndGrad(value={self[0]!r}, grad={self[1]!r}, method={self.method!r})"


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _backend_for(values: Sequence[Any]) -> Backend:
    """The backend a transform runs on: named in scope, else the arrays' owner, else the
    reference (NumPy)."""
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    scope = current_scope()
    if scope.backend is not None:
        return ps.backend(scope.backend)
    reference = ps.backends["numpy"]
    for v in values:
        owner = ps.owner(v)
        if owner is not None and owner is not reference:
            return owner
    return reference


def _argnums(argnums: Any, nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) and not isinstance(argnums, bool) else argnums
    if (
        not isinstance(nums, tuple)
        or not nums
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in nums)
    ):
        raise TypeError(
            f"value_and_grad(): argnums must be an int or a non-empty tuple of ints; got "
            f"{_describe(argnums)}"
        )
    bad = [i for i in nums if not -nargs <= i < nargs]
    if bad:
        raise ValueError(
            f"value_and_grad(): argnums {bad[0]} is out of range for a call with {nargs} "
            f"positional argument(s)"
        )
    return tuple(i % nargs for i in nums)


def _finite_differences(
    backend: Backend,
    fn: Callable[..., Any],
    nums: tuple[int, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[Any, list[Any]]:
    """``fn``'s value and its gradients by central differences, each component's step
    ``cbrt(eps) * max(1, |x|)`` for the argument's floating-point type (integers are
    differentiated in float64): the step that balances truncation against rounding error."""
    import numpy as np

    def scalar(out: Any) -> float:
        host = np.asarray(backend.to_numpy(out))
        if host.size != 1:
            raise ValueError(
                f"value_and_grad(): fn must return a scalar; it returned an array of shape "
                f"{host.shape}"
            )
        if np.iscomplexobj(host):
            raise TypeError("value_and_grad(): fn must return a real scalar, not a complex one")
        return float(host.reshape(()))

    value = fn(*args, **kwargs)
    scalar(value)
    grads = []
    for i in nums:
        x = np.array(backend.to_numpy(args[i]) if backend.owns(args[i]) else args[i])
        if x.dtype.kind not in "fc":
            x = x.astype(np.float64)
        if x.dtype.kind == "c":
            raise TypeError(
                f"value_and_grad(): argument {i} is complex; finite differences take real arguments"
            )
        step = np.cbrt(np.finfo(x.dtype).eps) * np.maximum(1.0, np.abs(x))
        grad = np.empty_like(x)
        flat, steps, out = x.reshape(-1), step.reshape(-1), grad.reshape(-1)
        for k in range(flat.size):
            saved = flat[k]
            call = list(args)
            flat[k] = saved + steps[k]
            call[i] = _as(backend, x.copy(), args[i])
            up = scalar(fn(*call, **kwargs))
            flat[k] = saved - steps[k]
            call[i] = _as(backend, x.copy(), args[i])
            down = scalar(fn(*call, **kwargs))
            flat[k] = saved
            out[k] = (up - down) / (2 * steps[k])
        grads.append(_as(backend, grad, args[i], keep_scalar=False))
    return value, grads


def _as(backend: Backend, host: Any, like: Any, keep_scalar: bool = True) -> Any:
    """``host`` (a NumPy array) as the kind of argument ``like`` is: a Python scalar stays a
    scalar, a backend array becomes one of the backend's."""
    if keep_scalar and isinstance(like, (int, float)) and not isinstance(like, bool):
        return float(host.reshape(()))
    if backend.owns(like) or not hasattr(like, "dtype"):
        return backend.asarray(host) if backend.owns(like) else host
    return host


def value_and_grad(
    fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0
) -> Callable[..., Any]:
    """A function that returns ``(fn(*args), gradient)``: the gradient of the scalar ``fn``
    with respect to its positional argument(s) ``argnums``.

    Computed with the backend's autograd where it has one (torch: arguments become tensors
    that require grad, and ``fn``'s Prism ops run on torch), otherwise by central finite
    differences with a step chosen from the argument's dtype.  The result's ``method`` says
    which.  ``fn`` should compute with Prism ops (``prism_core.sum``, ...) so that it runs on
    the backend that differentiates it.
    """
    if not callable(fn):
        raise TypeError(f"value_and_grad(): fn must be callable; got {_describe(fn)}")
    if not (isinstance(argnums, int) and not isinstance(argnums, bool)) and not isinstance(
        argnums, tuple
    ):
        raise TypeError(
            f"value_and_grad(): argnums must be an int or a tuple of ints; got {_describe(argnums)}"
        )

    def value_and_grad_fn(*args: Any, **kwargs: Any) -> ValueAndGrad:
        nums = _argnums(argnums, len(args))
        backend = _backend_for([args[i] for i in nums] + list(args))
        auto = backend.value_and_grad(fn, argnums)
        if auto is not None:
            value, grad = auto(*args, **kwargs)
            return ValueAndGrad(value, grad, f"autograd ({backend.name})")
        value, grads = _finite_differences(backend, fn, nums, args, kwargs)
        grad = grads[0] if isinstance(argnums, int) else tuple(grads)
        return ValueAndGrad(value, grad, "central finite differences")

    value_and_grad_fn.__name__ = f"value_and_grad({getattr(fn, '__name__', 'fn')})"
    value_and_grad_fn.__doc__ = fn.__doc__
    return value_and_grad_fn


def _axes(in_axes: Any, nargs: int) -> list[int | None]:
    def one(a: Any) -> bool:
        return a is None or (isinstance(a, int) and not isinstance(a, bool))

    if one(in_axes):
        return [in_axes] * nargs
    if isinstance(in_axes, (tuple, list)) and len(in_axes) == nargs and all(map(one, in_axes)):
        return list(in_axes)
    raise ValueError(
        f"vmap(): in_axes must be an int, None, or a tuple with one int or None per positional "
        f"argument ({nargs}); got {_describe(in_axes)}"
    )


def vmap(fn: Callable[..., Any], in_axes: Any = 0, out_axes: int = 0) -> Callable[..., Any]:
    """``fn`` mapped over axis ``in_axes`` of its positional arguments (``None``: an argument
    not mapped), its results stacked along ``out_axes``; as JAX's and torch's ``vmap``.

    Uses the backend's own transform where it has one (``torch.func.vmap``), else calls
    ``fn`` once per slice and stacks the results with Prism's ``stack``.
    """
    if not callable(fn):
        raise TypeError(f"vmap(): fn must be callable; got {_describe(fn)}")
    if not isinstance(out_axes, int) or isinstance(out_axes, bool):
        raise TypeError(f"vmap(): out_axes must be an int; got {_describe(out_axes)}")

    def mapped(*args: Any, **kwargs: Any) -> Any:
        axes = _axes(in_axes, len(args))
        backend = _backend_for(list(args))
        native = backend.vmap(fn, in_axes, out_axes)
        if native is not None:
            return native(*args, **kwargs)
        sizes = {int(a.shape[ax]) for a, ax in zip(args, axes, strict=True) if ax is not None}
        if not sizes:
            raise ValueError("vmap(): no argument is mapped (every in_axes is None)")
        if len(sizes) > 1:
            raise ValueError(
                f"vmap(): the mapped axes have different sizes {sorted(sizes)}; they must agree"
            )
        (n,) = sizes
        take = get_op("moveaxis").function
        moved = [a if ax is None else take(a, ax, 0) for a, ax in zip(args, axes, strict=True)]
        outs = [
            fn(*[a if ax is None else a[k] for a, ax in zip(moved, axes, strict=True)], **kwargs)
            for k in range(n)
        ]
        stack = get_op("stack").function
        if outs and isinstance(outs[0], tuple):
            return type(outs[0])(
                stack([o[j] for o in outs], axis=out_axes) for j in range(len(outs[0]))
            )
        return stack(outs, axis=out_axes)

    mapped.__name__ = f"vmap({getattr(fn, '__name__', 'fn')})"
    mapped.__doc__ = fn.__doc__
    return mapped


def to_device(x: Any, device: Any) -> Any:
    """``x`` on ``device`` (a device type such as ``"nvidia.h100-sxm"``, a family, or a
    description), as an array of the backend named in scope, else of ``x``'s own backend.

    ``device`` may also be a present device (a ``DeviceInstance``) or a spelling users type,
    which means the present device of that kind (``prism_core.device`` takes the same):
    ``"cpu"`` and ``x.device`` of a NumPy array, ``"cuda"``, ``"cuda:N"``, ``"gpu"``, and the
    libraries' own device objects (``torch.device``, a jax device, ...).  Where none such is
    present, :class:`prism_core.DeviceNotPresentError` names the spelling, what is present and
    what is accepted.

    The backend must drive the device: a NumPy array cannot live on a GPU, so
    ``to_device(numpy_array, "nvidia.h100-sxm")`` is an error naming the backends that can
    (``with prism_core.use_backend("torch"): to_device(...)``).
    """
    from prism_core.kernel.dispatch.scope import resolved_device
    from prism_core.kernel.plugins import plugins

    desc, _ = resolved_device(device, "to_device(): device")
    backend = _backend_for([x])
    ps = plugins()
    drive = ps.drives(backend, desc)
    if not drive:
        able = sorted(
            b.name for b in ps.backends.values() if ps.drives(b, desc) and b.availability()
        )
        raise ValueError(
            f"to_device(): backend {backend.name!r} cannot put arrays on {desc.device_type} "
            f"({drive.explain()}); "
            + (
                f"backends that can: {', '.join(able)} (use_backend({able[0]!r}))"
                if able
                else "no installed and available backend drives it"
            )
        )
    return backend.to_device(x, desc)


def to_dlpack(x: Any) -> Any:
    """A DLPack capsule of ``x`` (``x.__dlpack__()``), for libraries that take capsules;
    ``from_dlpack`` takes ``x`` itself."""
    export = getattr(x, "__dlpack__", None)
    if export is None:
        raise TypeError(f"to_dlpack(): {type(x).__name__} does not support DLPack (no __dlpack__)")
    return export()
