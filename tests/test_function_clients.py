"""Libraries that speak the Array API run inside a placed function on the backend it runs on
(issue 34, item 9 b and c; docs/functions.md, "Libraries that speak the Array API").

- **scikit-learn** with ``array_api_dispatch=True``: ``PCA(svd_solver="full")`` in a
  ``prism.function`` pinned to torch is fitted on the torch tensors the placement moved there
  (its ``components_`` are torch's, the SVD is ``torch.linalg.svd``, and nothing is converted
  to NumPy on the way); pinned to numpy, or in automatic mode on NumPy input, it is fitted on
  NumPy's arrays.  Either way the caller gets NumPy back, equal to plain scikit-learn on NumPy
  (components up to their sign).
- **SciPy** with ``SCIPY_ARRAY_API=1``: ``scipy.special.logsumexp``, ``scipy.fft.rfft`` and
  ``scipy.signal.fftconvolve`` in a placed function pinned to torch take and return torch
  tensors, computing with torch's own functions (``exp``, ``log``, ``torch.fft``;
  ``scipy.signal`` from SciPy 1.16 on, before which it converts to NumPy); the caller gets NumPy
  equal to SciPy on NumPy.  Without the variable SciPy converts the tensors to NumPy (the
  control case): the variable is what makes the call native.

Both read ``SCIPY_ARRAY_API`` when SciPy is first imported (scikit-learn refuses array API
dispatch without it), so each case runs in a fresh interpreter with the variable set as the case
needs.  What ran on torch is shown by a ``torch.overrides.TorchFunctionMode`` active in the body,
which records the name of every torch function the library calls (``__array__`` is a tensor's
conversion to NumPy).  The references are computed here, by SciPy and scikit-learn on NumPy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from packaging.version import Version

import prism_core as prism

from .conftest import load_bundled_plugin

#: Importing torch, SciPy and scikit-learn takes seconds; a hung child fails the test.
CHILD_TIMEOUT_S = 120
pytestmark = pytest.mark.timeout(CHILD_TIMEOUT_S + 60)

#: What runs before a case's script in the child: the torch plugin loaded (the suite's
#: environment loads none by itself), and a torch function mode recording what torch ran.
PRELUDE = '''
import json, sys
from contextlib import nullcontext

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

import prism_core as prism

ps = prism.extending.reload_plugins(prism.extending.PluginSettings(allow=("torch",)))
assert ps.records["torch"].status == "loaded", ps.records["torch"]
data, results, placement = sys.argv[1:4]
SCOPES = {
    "torch": lambda: prism.use_backend("torch"),
    "numpy": lambda: prism.use_backend("numpy"),
    "automatic": nullcontext,
}


class TorchCalls(TorchFunctionMode):
    """The names of the torch functions called while it is active."""

    def __init__(self):
        super().__init__()
        self.names = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.add(getattr(func, "__name__", repr(func)))
        return func(*args, **(kwargs or {}))


def kind(value):
    return f"{type(value).__module__}.{type(value).__qualname__}"


seen = {}
'''

SKLEARN = """
import sklearn
from sklearn.decomposition import PCA


@prism.function
def project(X):
    with sklearn.config_context(array_api_dispatch=True), TorchCalls() as calls:
        pca = PCA(n_components=2, svd_solver="full").fit(X)
        Z = pca.transform(X)
    seen.update(X=kind(X), components=kind(pca.components_), Z=kind(Z))
    seen["torch_calls"] = sorted(calls.names)
    return Z, pca.components_, pca.explained_variance_, pca.mean_


X = np.load(data)
with SCOPES[placement]():
    out, report = project.run(X)
np.savez(results, *[np.asarray(o) for o in out])
print(json.dumps({"backend": report.backend, "inside": seen, "returned": [kind(o) for o in out]}))
"""

SCIPY = """
import scipy.fft
import scipy.signal
import scipy.special


@prism.function
def summarize(x, kernel):
    calls = {}
    with TorchCalls() as calls["logsumexp"]:
        lse = scipy.special.logsumexp(x, axis=1)
    with TorchCalls() as calls["rfft"]:
        spectrum = scipy.fft.rfft(x, axis=1)
    with TorchCalls() as calls["fftconvolve"]:
        smooth = scipy.signal.fftconvolve(x, kernel[None, :], mode="same", axes=1)
    seen.update(x=kind(x), kernel=kind(kernel))
    seen["outputs"] = [kind(lse), kind(spectrum), kind(smooth)]
    seen["torch_calls"] = {name: sorted(mode.names) for name, mode in calls.items()}
    return lse, spectrum, smooth


x = np.load(data)
kernel = np.array([0.25, 0.5, 0.25])
with SCOPES[placement]():
    out, report = summarize.run(x, kernel)
np.savez(results, *[np.asarray(o) for o in out])
print(json.dumps({"backend": report.backend, "inside": seen, "returned": [kind(o) for o in out]}))
"""


@pytest.fixture
def torch_plugin() -> Iterator[None]:
    """Skip unless torch and prism-plugin-torch are installed and load (the child loads it)."""
    pytest.importorskip("torch")
    load_bundled_plugin("torch")
    yield
    prism.extending.reload_plugins()


def _child(
    script: str, data: np.ndarray, tmp_path: Path, placement: str, *, array_api: bool
) -> tuple[dict[str, Any], list[np.ndarray]]:
    """Run ``script`` in a fresh interpreter on ``data``: what it printed, and its results."""
    given, results = tmp_path / "data.npy", tmp_path / "results.npz"
    np.save(given, data)
    env = {k: v for k, v in os.environ.items() if k != "SCIPY_ARRAY_API"}
    if array_api:
        env["SCIPY_ARRAY_API"] = "1"
    # -W error: a warning in the child (a fallback, a deprecation) fails the case.
    argv = [str(given), str(results), placement]
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", PRELUDE + script, *argv],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
    )
    assert done.returncode == 0, f"the child failed:\n{done.stdout}\n{done.stderr}"
    with np.load(results) as saved:
        arrays = [saved[f"arr_{i}"] for i in range(len(saved.files))]
    return json.loads(done.stdout.strip().splitlines()[-1]), arrays


def _samples() -> np.ndarray:
    """64 samples of 6 correlated features: a spectrum with well separated variances."""
    rng = np.random.default_rng(34)
    return rng.normal(size=(64, 6)) @ rng.normal(size=(6, 6)) + rng.normal(size=6)


# -- (b) scikit-learn ----------------------------------------------------------------------------
@pytest.mark.usefixtures("torch_plugin")
@pytest.mark.parametrize("placement", ["torch", "numpy", "automatic"])
def test_sklearn_pca_is_fitted_on_the_placements_arrays(tmp_path: Path, placement: str) -> None:
    pytest.importorskip("sklearn", minversion="1.6")
    pytest.importorskip("array_api_compat")
    from sklearn.decomposition import PCA

    X = _samples()
    shown, (Z, components, variance, mean) = _child(SKLEARN, X, tmp_path, placement, array_api=True)
    here = "torch" if placement == "torch" else "numpy"
    assert shown["backend"] == here
    calls = set(shown["inside"].pop("torch_calls"))
    if here == "torch":
        # The estimator got the moved tensor, fitted on it with torch's SVD, and kept tensors.
        assert shown["inside"] == dict.fromkeys(("X", "components", "Z"), "torch.Tensor")
        assert "linalg_svd" in calls, sorted(calls)
        assert "__array__" not in calls, "scikit-learn converted a tensor to NumPy"
    else:
        assert shown["inside"] == dict.fromkeys(("X", "components", "Z"), "numpy.ndarray")
        assert calls == set()
    # NumPy in, NumPy out, equal to plain scikit-learn on NumPy (components up to their sign).
    assert shown["returned"] == ["numpy.ndarray"] * 4
    want = PCA(n_components=2, svd_solver="full").fit(X)
    np.testing.assert_allclose(variance, want.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(mean, want.mean_, rtol=1e-12)
    np.testing.assert_allclose(np.abs(components), np.abs(want.components_), atol=1e-10)
    np.testing.assert_allclose(np.abs(Z), np.abs(want.transform(X)), atol=1e-10)
    np.testing.assert_allclose(Z @ components + mean, want.inverse_transform(want.transform(X)))


# -- (c) SciPy -----------------------------------------------------------------------------------
#: The torch functions each SciPy call must run (SciPy computing with torch, not around it),
#: and the SciPy that first does: ``scipy.signal`` converts tensors to NumPy before 1.16.
NATIVE = {
    "logsumexp": ({"exp", "log", "sum"}, "1.15"),
    "rfft": ({"fft_rfft"}, "1.15"),
    "fftconvolve": ({"fft_rfftn"}, "1.16"),
}


def _scipy_reference(x: np.ndarray) -> list[np.ndarray]:
    import scipy.fft
    import scipy.signal
    import scipy.special

    kernel = np.array([0.25, 0.5, 0.25])
    return [
        scipy.special.logsumexp(x, axis=1),
        scipy.fft.rfft(x, axis=1),
        scipy.signal.fftconvolve(x, kernel[None, :], mode="same", axes=1),
    ]


@pytest.mark.usefixtures("torch_plugin")
def test_scipy_computes_with_torch_tensors_under_scipy_array_api(tmp_path: Path) -> None:
    scipy = pytest.importorskip("scipy", minversion="1.15")
    x = _samples()
    shown, got = _child(SCIPY, x, tmp_path, "torch", array_api=True)
    assert shown["backend"] == "torch"
    inside = shown["inside"]
    assert (inside["x"], inside["kernel"]) == ("torch.Tensor", "torch.Tensor")
    native = [Version(scipy.__version__) >= Version(since) for _, since in NATIVE.values()]
    assert inside["outputs"] == ["torch.Tensor" if n else "numpy.ndarray" for n in native]
    for (name, (needed, _)), n in zip(NATIVE.items(), native, strict=True):
        calls = set(inside["torch_calls"][name])
        if n:
            assert needed <= calls, f"{name} ran {sorted(calls)}"
            assert "__array__" not in calls, f"{name} converted a tensor to NumPy"
        else:
            assert "__array__" in calls, f"{name} ran {sorted(calls)}"
    assert shown["returned"] == ["numpy.ndarray"] * 3
    for g, w in zip(got, _scipy_reference(x), strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.usefixtures("torch_plugin")
def test_without_scipy_array_api_scipy_computes_on_numpy(tmp_path: Path) -> None:
    """The control: the same body pinned to torch, SciPy imported without the variable, takes
    the tensors but converts them and hands NumPy's arrays back."""
    pytest.importorskip("scipy", minversion="1.15")
    x = _samples()
    shown, got = _child(SCIPY, x, tmp_path, "torch", array_api=False)
    assert shown["backend"] == "torch"
    assert shown["inside"]["x"] == "torch.Tensor"
    assert shown["inside"]["outputs"] == ["numpy.ndarray"] * 3
    for name, c in shown["inside"]["torch_calls"].items():
        calls = set(c)
        assert "__array__" in calls and not NATIVE[name][0] & calls, f"{name} ran {sorted(calls)}"
    assert shown["returned"] == ["numpy.ndarray"] * 3
    for g, w in zip(got, _scipy_reference(x), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
