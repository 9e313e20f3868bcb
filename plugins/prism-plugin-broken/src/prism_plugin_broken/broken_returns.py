"""``prism_hardware_dirs`` returns an int instead of a list of paths."""

from __future__ import annotations

from typing import Any

import prism_core


@prism_core.extending.hookimpl
def prism_hardware_dirs() -> Any:
    return 42
