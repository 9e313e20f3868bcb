"""``prism lint``: check Python code against Prism's backend-purity guidelines.

Code meant to run on any backend stays inside Prism's ops: no direct NumPy or torch calls, no
conversions out of the backend, no Python operators on Prism arrays, no framework dtypes,
devices, random generators or type checks.  The lint reads code with :mod:`ast` (it never
imports or runs it) and reports each breach as ``FILE:LINE:COL: CODE message``; the codes, with
a bad and a good pattern each, are in :mod:`prism_core.lint.codes` and ``docs/lint.md``::

    from prism_core.lint import lint_paths, lint_source

    for finding in lint_source("import numpy as np\\n"):
        print(finding)          # <string>:1:8: PRISM001 `import numpy` ties this code to ...
    report = lint_paths(["src/"])   # [tool.prism.lint] of the nearest pyproject.toml

The modules: :mod:`~prism_core.lint.codes` (the codes as data), :mod:`~prism_core.lint.checker`
(scopes, bindings, the inference of which values are Prism arrays, the rules),
:mod:`~prism_core.lint.config` (``[tool.prism.lint]``), :mod:`~prism_core.lint.runner` (files,
``# noqa``, reports), :mod:`~prism_core.lint.fix` (``--fix``) and :mod:`~prism_core.lint.cli`.
Names are loaded on first use: ``prism`` builds its parser from the command line module
without loading the checker.
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
