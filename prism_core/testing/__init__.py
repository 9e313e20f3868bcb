"""The conformance suite backend authors run: is a backend, and are its variants, right?

In a plugin's tests::

    from prism_core.testing import check_backend

    def test_conformance():
        report = check_backend("acme")
        report.raise_for_failures()          # lists every failed check, with the values

or, one test per check, with the pytest plugin Prism installs::

    pytest --prism-backend acme

which runs the checks in a worker process, so that a native crash or a hang in the backend's
library fails the check that caused it (``crashed: SIGFPE in acme.linalg.inv-...``) and the
run goes on to a summary (:mod:`prism_core.testing.pytest_plugin`).

``check_backend`` checks the :class:`prism_core.extending.Backend` contract (identity, availability
with a reason, array round trips through ``asarray``/``to_numpy``/``from_dlpack``, a writable
``to_numpy``, ``asarray`` and ``empty`` with a dtype, ``is_native``, ``dtypes``) and then every
variant the backend contributes: called in every dtype the op is defined in that the backend
holds, on inputs of several shapes and layouts, and with each keyword argument the op
documents, and compared with the op's NumPy reference for values, output dtypes and result
types; and for what the plugin guide promises beyond that: a caller's mistakes raise the
reference's exception in its words, singular matrices, Python scalars, mixed dtypes, and a
``can_run`` that answers from shapes and dtypes before anything is converted.  Each check has a
name (``acme.fft.fft-dtype-complex64``).  An unavailable backend is not a failure: its array
checks are *skipped* with the backend's own reason, so the suite runs in CI without the
hardware and for real on a machine that has it.

A plugin's own test suite runs on the plugin as users get it, installed and alone, with the
conftest :func:`isolated_plugin` makes.

Names are loaded on first use, so that the pytest plugin costs nothing when it is not asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prism_core.testing._conformance import (
        SHAPES,
        Check,
        CheckResult,
        ConformanceReport,
        check_backend,
        conformance_checks,
        input_cases,
        keyword_cases,
        standard_inputs,
    )
    from prism_core.testing._isolation import isolated_plugin

__all__ = [
    "SHAPES",
    "Check",
    "CheckResult",
    "ConformanceReport",
    "check_backend",
    "conformance_checks",
    "input_cases",
    "isolated_plugin",
    "keyword_cases",
    "standard_inputs",
]


def __getattr__(name: str) -> Any:
    if name == "isolated_plugin":  # a plugin's own tests (not the conformance suite)
        from prism_core.testing._isolation import isolated_plugin

        globals()[name] = isolated_plugin
        return isolated_plugin
    if name in __all__:
        from prism_core.testing import _conformance

        value = getattr(_conformance, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'prism_core.testing' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
