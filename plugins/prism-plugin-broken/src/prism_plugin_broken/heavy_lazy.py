"""A well-behaved plugin whose backend imports its (stand-in) heavy framework lazily.

``prism_fake_heavy_framework`` is imported only inside :meth:`FakeHeavyBackend.availability`
and the array methods, never by this module or its hooks, so listing plugins leaves it out of
``sys.modules``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import prism_core


class FakeHeavyBackend(prism_core.extending.Backend):
    name = "fake-heavy"
    priority = -100  # never preferred over a real backend
    description = "TEST ONLY: a backend on a stand-in heavy framework, imported lazily"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def availability(self) -> prism_core.extending.Availability:
        import prism_fake_heavy_framework as framework

        return prism_core.extending.Availability(True, version=framework.__version__)

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        import prism_fake_heavy_framework as framework

        return framework.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        import numpy as np

        return np.asarray(array)


@prism_core.extending.hookimpl
def prism_plugin_info() -> Mapping[str, Any]:
    return {
        "description": "TEST ONLY: a backend whose framework is imported lazily",
        "requires": ["prism_fake_heavy_framework"],
    }


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[prism_core.extending.Backend]:
    return [FakeHeavyBackend()]
