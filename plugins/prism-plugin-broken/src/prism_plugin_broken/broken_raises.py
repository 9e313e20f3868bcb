"""``prism_backends`` raises."""

from __future__ import annotations

from collections.abc import Sequence

import prism_core


@prism_core.extending.hookimpl
def prism_plugin_info() -> dict[str, str]:
    return {"description": "TEST ONLY: prism_backends raises RuntimeError"}


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[prism_core.extending.Backend]:
    raise RuntimeError("the backend registry of broken-raises exploded (deliberately broken)")
