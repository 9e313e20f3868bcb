"""The plugin contract: the hooks a Prism plugin may implement.

With the markers of their specifications and implementations.  The specifications are part of
the kernel (``prism_core.kernel.contract.hookspecs``, where each hook is documented); this module
is their public home.  Plugins mark their hooks with ``@prism_core.extending.hookimpl``;
docs/writing-a-plugin.md has the hook reference.
"""

from __future__ import annotations

from typing import Any

from prism_core.kernel.contract import hookspecs as _specs
from prism_core.kernel.contract.hookspecs import PROJECT, hookimpl, hookspec

__all__ = ["PROJECT", "hookimpl", "hookspec"]


def __getattr__(name: str) -> Any:
    """Each hook's specification (``prism_core.hookspecs.prism_backends``)."""
    if name.startswith("prism_"):
        return getattr(_specs, name)
    raise AttributeError(f"module 'prism_core.hookspecs' has no attribute {name!r}")
