"""The conformance suite backend authors run: is a backend, and are its variants, right?

In a plugin's tests::

    from prism_core.testing import check_backend

    def test_conformance():
        report = check_backend("acme")
        report.raise_for_failures()          # lists every failed check, with the values

``check_backend`` checks the :class:`prism_core.Backend` contract (identity, availability with a
reason, array round trips through ``asarray``/``to_numpy``/``from_dlpack``, ``is_native``,
``empty``) and then every variant the backend contributes, called on standard inputs and
compared with the op's NumPy reference.  An unavailable backend is not a failure: its array
checks are *skipped* with the backend's own reason, so the suite runs in CI without the
hardware and for real on a machine that has it.
"""

from __future__ import annotations

from prism_core.testing._conformance import (
    CheckResult,
    ConformanceReport,
    check_backend,
    standard_inputs,
)

__all__ = ["CheckResult", "ConformanceReport", "check_backend", "standard_inputs"]
