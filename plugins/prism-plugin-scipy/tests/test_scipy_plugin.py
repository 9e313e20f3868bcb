"""Discovery through the real entry point; listing imports no SciPy; a host without SciPy."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import prism_core

#: Each variant's op and priority: 5 where measured faster than NumPy, -1 (below NumPy's
#: reference) where only as fast.
VARIANTS = {
    "scipy.matmul": ("matmul", -1),
    "scipy.linalg.solve": ("linalg.solve", 5),
    "scipy.linalg.inv": ("linalg.inv", 5),
    "scipy.linalg.svd": ("linalg.svd", 5),
    "scipy.linalg.eigh": ("linalg.eigh", -1),
    "scipy.linalg.eig": ("linalg.eig", -1),
    "scipy.fft.fft": ("fft.fft", 5),
    "scipy.fft.ifft": ("fft.ifft", 5),
    "scipy.fft.rfft": ("fft.rfft", 5),
    "scipy.convolve": ("convolve", 5),
    # The Array API's: SciPy's, run where the scipy backend is named.
    "scipy.linalg.det": ("linalg.det", -1),
    "scipy.linalg.eigvalsh": ("linalg.eigvalsh", -1),
    "scipy.linalg.svdvals": ("linalg.svdvals", -1),
    "scipy.linalg.pinv": ("linalg.pinv", -1),
    "scipy.fft.fftn": ("fft.fftn", -1),
    "scipy.fft.ifftn": ("fft.ifftn", -1),
    "scipy.fft.rfftn": ("fft.rfftn", -1),
    "scipy.fft.irfftn": ("fft.irfftn", -1),
    "scipy.fft.irfft": ("fft.irfft", -1),
    "scipy.fft.hfft": ("fft.hfft", -1),
    "scipy.fft.ihfft": ("fft.ihfft", -1),
}


def _run(
    code: str, env: dict[str, str] | None = None, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_found_through_its_entry_point() -> None:
    record = prism_core.extending.plugins().records["scipy"]
    assert record.status == "loaded", record.reason
    assert record.origin == "entry point"
    assert record.distribution == "prism-plugin-scipy"
    assert record.target == "prism_plugin_scipy.plugin"
    assert record.backends == ["scipy"]
    assert record.problems == []
    assert record.info["requires"] == ["scipy>=1.10"]
    assert record.info["url"] == "https://scipy.org"


def test_contributes_its_variants_to_their_ops() -> None:
    record = prism_core.extending.plugins().records["scipy"]
    assert {v.name: (v.op, v.priority) for v in record.variants} == VARIANTS
    for name, (op, _) in VARIANTS.items():
        variant = next(v for v in prism_core.get_op(op).variants if v.name == name)
        assert variant.backend == "scipy"
        assert dict(variant.requirement.mapping) == {"kind": "cpu"}
        assert variant.source == "plugin:scipy"
        assert isinstance(variant.fn, str) and variant.fn.startswith("prism_plugin_scipy.")
        assert variant.can_run is not None


def test_the_backend_is_registered() -> None:
    backend = prism_core.extending.plugins().backend("scipy")
    assert type(backend).__name__ == "ScipyBackend"
    assert backend.priority == 5
    assert dict(backend.drives) == {"kind": "cpu"}


@pytest.mark.timeout(120)
def test_listing_plugins_imports_no_scipy() -> None:
    """Discovery (every hook of the plugin) imports neither SciPy nor the plugin's ops."""
    done = _run(
        "import sys, prism_core\n"
        "ps = prism_core.extending.plugins()\n"
        "assert ps.records['scipy'].status == 'loaded', ps.records['scipy']\n"
        "bad = sorted(m for m in ('scipy', 'prism_plugin_scipy.ops') if m in sys.modules)\n"
        "assert not bad, bad\n"
        "print('ok')\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


@pytest.mark.timeout(120)
def test_the_cli_lists_the_plugin_without_importing_scipy() -> None:
    """``prism plugins``, with ``-X importtime`` reporting every module it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "prism_core", "plugins"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("scipy "))
    assert "prism-plugin-scipy" in line and "loaded" in line, done.stdout
    imported = {
        ln.rpartition("|")[2].strip()
        for ln in done.stderr.splitlines()
        if ln.startswith("import time:") and "|" in ln
    }
    # The measurement sees the plugin's hooks run (they import these two modules) ...
    assert {"prism_plugin_scipy.backend", "prism_plugin_scipy.variants"} <= imported
    assert not {m for m in imported if m == "scipy" or m.startswith("scipy.")}  # ... not SciPy
    assert "prism_plugin_scipy.ops" not in imported


#: A ``sitecustomize`` that makes ``import scipy`` fail as it does where SciPy is not installed.
_NO_SCIPY = """
import sys

class _NoScipy:
    def find_spec(self, name, path=None, target=None):
        if name == "scipy" or name.startswith("scipy."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoScipy())
"""


@pytest.fixture
def without_scipy(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent(_NO_SCIPY), encoding="utf-8")
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path}


@pytest.mark.timeout(120)
def test_without_scipy_the_backend_says_why_and_numpy_computes(
    without_scipy: dict[str, str],
) -> None:
    done = _run(
        textwrap.dedent(
            """
            import warnings
            warnings.simplefilter("error")
            import numpy as np
            import prism_core

            try:
                import scipy
            except ModuleNotFoundError:
                pass
            else:
                raise SystemExit("the sitecustomize did not hide scipy")
            ps = prism_core.extending.plugins()
            assert ps.records["scipy"].status == "loaded", ps.records["scipy"]
            state = ps.backend("scipy").availability()
            print("available:", bool(state))
            print("reason:", state.reason)
            a = np.random.default_rng(0).normal(size=(8, 8))
            decision = prism_core.explain("linalg.svd", a)
            print("chosen:", decision.chosen)
            print(
                "scipy rejected:",
                [c.reasons for c in decision.candidates if c.backend == "scipy"],
            )
            result = prism_core.linalg.svd(a)
            assert type(result) is type(np.linalg.svd(a))
            assert np.allclose(result.S, np.linalg.svd(a).S)
            print("fallbacks:", prism_core.fallbacks())
            """
        ),
        without_scipy,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "available: False" in out
    assert "reason: scipy is not installed (pip install 'scipy>=1.10'" in out
    assert "chosen: numpy.linalg.svd" in out
    assert "backend 'scipy' is not available: scipy is not installed" in out
    assert "fallbacks: []" in out  # not a failure of a variant: the backend was never eligible


@pytest.mark.timeout(120)
def test_a_scipy_that_fails_to_load_is_reported(tmp_path: Path) -> None:
    """An installed SciPy that raises on import (a broken build) gives its error."""
    (tmp_path / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import sys

            class _Broken:
                def find_spec(self, name, path=None, target=None):
                    if name == "scipy":
                        raise ImportError("libopenblas.so.0: cannot open shared object file")
                    return None

            sys.meta_path.insert(0, _Broken())
            """
        ),
        encoding="utf-8",
    )
    done = _run(
        "import prism_core\n"
        "print(prism_core.extending.plugins().backend('scipy').availability().reason)\n",
        {"PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "scipy cannot be imported: ImportError: libopenblas.so.0: cannot open shared object file"
    )
