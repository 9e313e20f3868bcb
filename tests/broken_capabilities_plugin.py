"""A test-only plugin whose backends' capability methods raise, as a hostile plugin's may.

Each backend is NumPy's Array API namespace (``array_api_compat.numpy``) made a backend with
``prism_core.backend_kit.NamespaceBackend``: a variant of every op of the standard, at a
priority above NumPy's reference and taking NumPy arrays as they are, so that in automatic mode
they would run every call on NumPy arrays.  One capability method of each raises:

- ``baddtypes``: ``Backend.dtypes(device)``;
- ``baddrive``: ``Backend.can_drive(device)``;
- ``badsettings``: ``Backend.settings()``.

``nosqrt`` is the same namespace without ``sqrt`` (``tests/nosqrt_namespace.py``) and
``holdsnothing`` one that declares no dtype held; their capability methods are sound (their
own plugin, ``Lacking``).  The plugins are discovered through
real ``prism.plugins`` entry points (``hostile = tests.broken_capabilities_plugin``,
``lacking = tests.broken_capabilities_plugin:Lacking``) that the tests put on the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import prism_core
from prism_core.backend_kit import NamespaceBackend, Target


class _OverNumpy(NamespaceBackend):
    description = "array_api_compat.numpy (tests only)"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})
    namespace = "array_api_compat.numpy"
    library = "array_api_compat"
    array_types = ("numpy:ndarray",)
    targets = (Target("cpu", MappingProxyType({"kind": "cpu"}), priority=10),)


class BadDtypes(_OverNumpy):
    name = "baddtypes"

    def dtypes(self, device: Any = None) -> frozenset[str] | None:
        raise RuntimeError("the dtype table is not loaded")


class BadDrive(_OverNumpy):
    name = "baddrive"

    def can_drive(self, device: Any) -> Any:
        raise KeyError(device.device_type)


class BadSettings(_OverNumpy):
    name = "badsettings"

    def settings(self) -> Mapping[str, str]:
        raise OSError("cannot read the settings file")


class NoSqrt(_OverNumpy):
    name = "nosqrt"
    namespace = "tests.nosqrt_namespace"


class HoldsNothing(_OverNumpy):
    name = "holdsnothing"
    holds = frozenset()


BROKEN = (BadDtypes, BadDrive, BadSettings)


@prism_core.extending.hookimpl
def prism_backends() -> list[NamespaceBackend]:
    return [cls() for cls in BROKEN]


@prism_core.extending.hookimpl
def prism_variants() -> list[prism_core.extending.Variant]:
    ops = set(prism_core.all_ops())
    return [v for cls in BROKEN for v in cls().variants(ops)]


class Lacking:
    """The plugin of ``nosqrt`` and ``holdsnothing`` (entry point
    ``tests.broken_capabilities_plugin:Lacking``), whose capability methods are sound."""

    @staticmethod
    @prism_core.extending.hookimpl
    def prism_backends() -> list[NamespaceBackend]:
        return [NoSqrt(), HoldsNothing()]

    @staticmethod
    @prism_core.extending.hookimpl
    def prism_variants() -> list[prism_core.extending.Variant]:
        ops = set(prism_core.all_ops())
        return NoSqrt().variants(ops) + HoldsNothing().variants(ops)
