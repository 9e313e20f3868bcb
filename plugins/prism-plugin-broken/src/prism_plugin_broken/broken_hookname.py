"""Implements ``prism_backend``: a misspelling of the hook ``prism_backends``."""

from __future__ import annotations

from collections.abc import Sequence

import prism_core


@prism_core.extending.hookimpl
def prism_backend() -> Sequence[prism_core.extending.Backend]:
    return []
