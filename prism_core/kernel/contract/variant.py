"""Variants: implementations of an op on a backend, as plugins and users declare them (data that
plugin discovery collects and dispatch, a layer above, ranks)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from prism_core.kernel.description.requirements import Requirement
from prism_core.kernel.errors import PrismError, describe_exception
from prism_core.kernel.public import home

__all__ = ["CanRun", "Variant", "VariantImportError"]

#: Requirements parsed for variants, by their mappings' items: plugins give hundreds of
#: variants the same few mappings (``{"kind": "cpu"}``), and a parsed requirement never changes.
_PARSED: dict[tuple[object, ...], Requirement] = {}


def _parsed(requires: Mapping[str, object] | None) -> Requirement:
    """``Requirement(requires)``, one instance per distinct mapping of strings, integers and
    booleans (others are parsed each time)."""
    if requires is None:
        key: tuple[object, ...] = ()
    elif type(requires) is dict and all(type(v) in (str, int, bool) for v in requires.values()):
        key = tuple((k, type(v), v) for k, v in requires.items())
    else:
        return Requirement(requires)
    found = _PARSED.get(key)
    if found is None:
        found = _PARSED[key] = Requirement(requires)
    return found


#: What ``can_run`` may answer: ``True`` (yes), or a string saying why not.
CanRun = Callable[..., "bool | str"]


@home("prism_core.extending")
class Variant:
    """One implementation of an op: a backend, requirements on the device, a priority.

    :param op: the op's name (``"matmul"``).
    :param fn: the implementation, called with the call's arguments (converted to the backend's
        arrays).  Given as ``"module:attribute"`` (``"numpy:matmul"``), it is imported when
        dispatch first chooses it: registering variants imports no framework.
    :param backend: name of the backend it runs on (``"numpy"``, ``"cuda"``).
    :param requires: requirement mapping on the device (``{"vendor": "nvidia",
        "tensor_cores": ">=3"}``); see docs/device-files.md, "Requirements".
    :param priority: higher wins among eligible variants.
    :param can_run: optional per-call check ``can_run(*args, **kwargs) -> True | "reason"``;
        it sees the arguments' ``shape``/``dtype`` (for ``prism.explain`` they are
        :class:`ArraySpec`), and must not compute anything expensive.
    :param placement: optional check of where the call's data lives, ``placement(*args,
        **kwargs) -> True | "reason"`` (``torch.<op>`` takes host tensors, ``torch.cuda.<op>``
        GPU ones), asked once per plan, never per call: its verdict may depend only on what a
        plan is keyed by, the arrays' types, where they live (:meth:`Backend.where
        <prism_core.extending.Backend.where>`) and the scope.  A variant it declines is no
        candidate there (explain says why).  :meth:`accepts` asks it and ``can_run``.
    :param dtype_support: when true, the device must have a feature that accelerates this op in
        the data type of the call's arrays (``supports`` with the argument's dtype).
    :param reference: marks the op's reference implementation (run for simulated devices).
    :param name: a unique name; defaults to ``"<backend>.<function name>"``.
    """

    __slots__ = (
        "backend",
        "can_run",
        "dtype_support",
        "fn",
        "name",
        "op",
        "placement",
        "priority",
        "reference",
        "requirement",
        "source",
    )

    def __init__(
        self,
        op: str,
        fn: Callable[..., object] | str,
        *,
        backend: str = "numpy",
        requires: Mapping[str, object] | None = None,
        priority: int = 0,
        can_run: CanRun | None = None,
        dtype_support: bool = False,
        reference: bool = False,
        name: str | None = None,
        source: str = "user",
        placement: CanRun | None = None,
    ) -> None:
        if not callable(fn) and not (isinstance(fn, str) and ":" in fn):
            raise TypeError(
                f"variant of {op!r}: fn must be callable or 'module:attribute', got {fn!r}"
            )
        if can_run is not None and not callable(can_run):
            raise TypeError(f"variant of {op!r}: can_run must be callable, got {can_run!r}")
        if placement is not None and not callable(placement):
            raise TypeError(f"variant of {op!r}: placement must be callable, got {placement!r}")
        self.op = op
        self.fn = fn
        self.backend = backend
        self.requirement = requires if isinstance(requires, Requirement) else _parsed(requires)
        self.priority = int(priority)
        self.can_run = can_run
        self.placement = placement
        self.dtype_support = bool(dtype_support)
        self.reference = bool(reference)
        default = (
            fn.rpartition(":")[2] if isinstance(fn, str) else getattr(fn, "__name__", "variant")
        )
        self.name = name or f"{backend}.{default}"
        self.source = source

    def resolve(self) -> Callable[..., object]:
        """The implementation, imported first when it was given as ``"module:attribute"``.

        :raises VariantImportError: the import string names no importable object (the message
            names the variant, the plugin that contributed it and the import string)."""
        fn = self.fn
        if isinstance(fn, str):
            import importlib

            module, _, attribute = fn.partition(":")
            *path, name = attribute.split(".")
            try:
                owner: object = importlib.import_module(module)
                for part in path:
                    owner = getattr(owner, part)
                found: Callable[..., object] = getattr(owner, name)
            except Exception as exc:  # ImportError, AttributeError, or the module's own error
                raise VariantImportError(
                    f"variant {self.name} of {self.op!r} ({self.origin}) cannot be imported "
                    f"from {fn!r}: {describe_exception(exc)}",
                    self,
                ) from exc
            self.fn = fn = found
        return fn

    def accepts(self, *args: object, **kwargs: object) -> bool | str | None:
        """Whether this variant takes the call ``(*args, **kwargs)``: ``True``, or why not
        (its :attr:`placement`'s verdict, then its ``can_run``'s)."""
        for check in (self.placement, self.can_run):
            if check is not None:
                verdict = check(*args, **kwargs)
                if verdict is not True:
                    return verdict
        return True

    @property
    def origin(self) -> str:
        """Who registered it: ``"plugin 'x'"`` or ``"user code"``."""
        name = self.source.partition(":")[2]
        return f"plugin {name!r}" if self.source.startswith("plugin:") else "user code"

    def import_problem(self) -> str | None:
        """Why ``resolve()`` would fail, found without importing anything new; else ``None``:
        ``importlib.util.find_spec`` of the top-level package of a ``"module:attribute"``, of the
        module itself only when its parent is imported (finding a submodule imports its parents,
        and listing plugins must not import frameworks).  A missing attribute shows only when
        the variant first runs."""
        fn = self.fn
        if not isinstance(fn, str):
            return None
        import importlib.util
        import sys

        module = fn.partition(":")[0]
        parent = module.rpartition(".")[0]
        name = module if (not parent or parent in sys.modules) else module.partition(".")[0]
        try:
            found = name in sys.modules or importlib.util.find_spec(name) is not None
        except (ImportError, ValueError) as exc:
            return f"cannot import {fn!r}: {describe_exception(exc)}"
        return None if found else f"cannot import {fn!r}: no module named {name!r}"

    @property
    def specificity(self) -> int:
        return self.requirement.specificity + (1 if self.dtype_support else 0)

    def __repr__(self) -> str:
        return f"<Variant {self.name!r} of {self.op!r} on {self.backend!r}>"


@home("prism_core.extending")
class VariantImportError(PrismError, ImportError):
    """A variant given as ``"module:attribute"`` whose implementation cannot be imported."""

    def __init__(self, message: str, variant: Variant) -> None:
        super().__init__(message)
        self.variant = variant
