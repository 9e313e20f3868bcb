"""``prism lint``: check Python code against Prism's backend-purity guidelines.

Code meant to run on any backend stays inside Prism's ops.  The lint reads code with :mod:`ast`
(it never imports or runs it) and reports each breach as ``FILE:LINE:COL: CODE message``;
:func:`lint_source` and :func:`lint_paths` do it from Python, :func:`fix_source` makes the
mechanical rewrites.  The modules: ``codes`` (the codes as data), ``scopes`` and ``names`` (the
first pass: what names are bound to and mean), ``checker``, ``config`` (``[tool.prism.lint]``),
``runner`` (files, ``# noqa``), ``fix`` and ``cli``; names load on first use.  The codes, each
with a bad and a good pattern, and the rest: docs/lint.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prism_core.lint.cli import main
    from prism_core.lint.codes import CODES, FRAMEWORKS, Code
    from prism_core.lint.config import LintConfig, LintConfigError, find_config, load_config
    from prism_core.lint.fix import FixResult, FixSummary, fix_paths, fix_source
    from prism_core.lint.runner import Finding, LintReport, lint_paths, lint_source

#: Public name -> the module of this package that defines it.
_LAZY = {
    "CODES": "codes",
    "Code": "codes",
    "FRAMEWORKS": "codes",
    "Finding": "runner",
    "FixResult": "fix",
    "FixSummary": "fix",
    "LintConfig": "config",
    "LintConfigError": "config",
    "LintReport": "runner",
    "find_config": "config",
    "fix_paths": "fix",
    "fix_source": "fix",
    "lint_paths": "runner",
    "lint_source": "runner",
    "load_config": "config",
    "main": "cli",
}

__all__ = [
    "CODES",
    "FRAMEWORKS",
    "Code",
    "Finding",
    "FixResult",
    "FixSummary",
    "LintConfig",
    "LintConfigError",
    "LintReport",
    "find_config",
    "fix_paths",
    "fix_source",
    "lint_paths",
    "lint_source",
    "load_config",
    "main",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'prism_core.lint' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
