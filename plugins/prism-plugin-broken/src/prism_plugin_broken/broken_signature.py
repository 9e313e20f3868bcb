"""``prism_backends`` takes an argument the hook specification does not have."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import prism_core


@prism_core.extending.hookimpl
def prism_backends(self_made_arg: Any) -> Sequence[prism_core.extending.Backend]:
    return []
