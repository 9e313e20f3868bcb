"""Prism's conformance suite on the CUDA backend: for real on a GPU host; without a GPU, the
suite reports the backend unavailable with its reason and skips the array checks."""

from __future__ import annotations

import prism_core
from prism_core.testing import check_backend


def test_conformance() -> None:
    report = check_backend("cuda")
    report.raise_for_failures()
    availability = prism_core.plugins().backend("cuda").availability()
    if availability:
        # On a GPU: every variant of the plugin was run on the standard inputs and compared.
        ran = {r.name.split(" ")[0] for r in report.passed}
        assert {"cuda.matmul", "cuda.linalg.svd", "cuda.fft.fft"} <= ran, str(report)
    else:
        assert report.skipped[-1].detail == f"backend unavailable: {availability.reason}"
