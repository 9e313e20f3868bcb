"""The backend kit (``prism_core.backend_kit.NamespaceBackend``) over a library that behaves
like Apple's MLX (tests/mlx_like.py: it downcasts float64, refuses ``dtype == None``, names its
boolean ``bool_``, lacks much of the standard, has NumPy's signatures and evaluates lazily),
installed as a plugin and found through its entry point: the kit's fixes for such a library,
and its options (``lazy``, ``default_dtypes``, ``declines`` with :class:`Decline`,
``excludes``, ``lacks``, ``adapts``)."""

from __future__ import annotations

import contextlib
import shutil
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core.backend_kit import Decline, NamespaceBackend, adapters

from .conftest import put_distribution_on_path

PLUGIN = '''
import os

import prism_core
from prism_core.backend_kit import Decline, NamespaceBackend, adapters


class Bare(NamespaceBackend):
    """The library as it is: none of the kit's options."""

    name = "mlxbare"
    description = "a library like MLX, no options"
    drives = {"kind": "cpu"}
    namespace = "mlx_like"
    library = "mlx_like"
    array_types = ("mlx_like:array",)
    transfer = "copy"


class Kit(Bare):
    """The library with the kit's options for what it does otherwise than the standard."""

    name = "mlxkit"
    lazy = True
    default_dtypes = {"float": "float32", "int": "int32", "index": "int32"}
    adapts = adapters.NUMPY_LIKE
    excludes = {"sin": {"float64"}}
    declines = {
        "max": Decline("mlx_like.max of an empty array is garbage", empty=True),
        "sqrt": Decline("mlx_like.sqrt has no complex loop", kinds="c"),
        "sum": Decline("mlx_like.sum takes no dtype=", keywords={"dtype"}),
    }

    def evaluate(self, out):
        import mlx_like

        mlx_like.eval(out)


class Declared(Bare):
    """Availability from the installed metadata (the library is not imported), and what the
    namespace lacks declared."""

    name = "mlxdeclared"
    installed_as = ("prism-mlx-like",)
    lacks = frozenset({"hypot"})


class Undeclared(Declared):
    name = "mlxundeclared"
    lacks = frozenset()


CLASSES = {c.name: c for c in (Bare, Kit, Declared, Undeclared)}
BACKENDS = [CLASSES[n]() for n in os.environ["MLX_LIKE_BACKENDS"].split(",")]


@prism_core.extending.hookimpl
def prism_backends():
    return BACKENDS


@prism_core.extending.hookimpl
def prism_variants():
    ops = set(prism_core.all_ops())
    return [v for b in BACKENDS for v in b.variants(ops)]
'''


def _install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backends: str) -> None:
    site = tmp_path / "site"
    put_distribution_on_path(
        monkeypatch, site, "prism-mlx-like", "1.0", "[prism.plugins]\nmlxlike = mlxlike_plugin\n"
    )
    (site / "mlxlike_plugin.py").write_text(textwrap.dedent(PLUGIN))
    shutil.copy(Path(__file__).with_name("mlx_like.py"), site / "mlx_like.py")
    for module in ("mlx_like", "mlxlike_plugin"):  # each test imports them afresh
        monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setenv("MLX_LIKE_BACKENDS", backends)
    ps = prism.extending.reload_plugins(prism.extending.PluginSettings(allow=("mlxlike",)))
    assert ps.records["mlxlike"].status == "loaded", ps.records["mlxlike"].reason


@pytest.fixture
def mx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The plugin with the bare and the configured backend; the library, imported."""
    _install(tmp_path, monkeypatch, "mlxbare,mlxkit")
    import mlx_like

    yield mlx_like
    prism.extending.reload_plugins()


def _backend(name: str) -> NamespaceBackend:
    found = prism.extending.plugins().backend(name)
    assert isinstance(found, NamespaceBackend)
    return found


def _reasons(decision: prism.Decision, variant: str) -> str:
    return " ".join(r for c in decision.candidates if c.variant == variant for r in c.reasons)


# -- the fixes: the library as it is ------------------------------------------------------------
def test_float64_data_stays_float64(mx: ModuleType) -> None:
    """The library makes float32 of float64 data unless told: the kit tells it."""
    assert mx.asarray(np.array([0.1])).dtype == mx.float32  # the library alone
    data = np.array([0.1, 1e-300])
    made = _backend("mlxbare").make_array(data)
    assert made.dtype == mx.float64
    with prism.use_backend("mlxbare"):
        out = prism.add(data, data)
        listed = prism.asarray([0.1, 0.2])
    assert out.dtype == mx.float64 and listed.dtype == mx.float64
    np.testing.assert_array_equal(np.asarray(out), data + data)  # 1e-300 is no float32


def test_binary_ops_with_python_scalars(mx: ModuleType) -> None:
    """The library raises for ``dtype == None``: the kit never compares a dtype with None."""
    f = mx.asarray(np.array([1.0, 2.0], dtype=np.float32))
    i = mx.asarray(np.array([1, 2], dtype=np.int32))
    with pytest.raises(ValueError, match="None"):
        f.dtype == None  # noqa: B015, E711 - the library alone
    with prism.use_backend("mlxbare"):
        assert prism.add(f, 1.5).dtype == mx.float32  # a weak scalar of its kind
        assert prism.multiply(i, 1.5).dtype == mx.float64  # NumPy's promotion
        assert prism.add(f, f).dtype == mx.float32
        np.testing.assert_array_equal(np.asarray(prism.subtract(i, 1)), [0, 1])


def test_the_boolean_dtype_is_found_as_bool_(mx: ModuleType) -> None:
    backend = _backend("mlxbare")
    assert not hasattr(mx, "bool")
    assert backend.native_dtype(prism.bool_) == mx.bool_
    assert backend.native_dtype("bool") == mx.bool_
    with prism.use_backend("mlxbare"):
        made = prism.asarray([True, False])
        zeros = prism.zeros((2,), dtype=prism.bool_)
    assert made.dtype == mx.bool_ and zeros.dtype == mx.bool_


def test_from_dlpack_copies_where_transfer_is_copy(mx: ModuleType) -> None:
    data = np.arange(3.0)
    with prism.use_backend("mlxbare"):
        out = prism.from_dlpack(data)
    assert not mx.from_dlpack_calls
    assert out.dtype == mx.float64
    np.testing.assert_array_equal(np.asarray(out), data)
    assert _backend("mlxbare").missing("from_dlpack") is None


def test_a_function_the_namespace_lacks_is_skipped_with_the_reason(mx: ModuleType) -> None:
    x = np.arange(4.0)
    decision = prism.explain("hypot", x, x)
    assert decision.chosen not in ("mlxbare.hypot", "mlxkit.hypot"), str(decision)
    assert "mlx_like has no hypot" in _reasons(decision, "mlxbare.hypot")
    with prism.use_backend("mlxbare"), pytest.raises(prism.DispatchError, match="has no hypot"):
        prism.hypot(x, x)


def test_lacks_answers_before_the_library_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Availability from the installed metadata imports nothing, so the namespace cannot be
    asked; ``lacks`` answers, and explain never names such a variant as chosen."""
    _install(tmp_path, monkeypatch, "mlxdeclared,mlxundeclared")
    try:
        x = np.arange(4.0)
        with prism.use_backend("mlxdeclared"):
            decision = prism.explain("hypot", x, x)
        assert "mlx_like" not in sys.modules
        assert decision.chosen != "mlxdeclared.hypot", str(decision)
        assert "mlx_like has no hypot" in _reasons(decision, "mlxdeclared.hypot")
        # Undeclared, the variant cannot be told from the metadata: its first call imports the
        # library and finds the function missing, and from then on it is skipped.
        assert _backend("mlxundeclared").missing("hypot") is None
        import mlx_like  # noqa: F401

        assert "has no hypot" in (_backend("mlxundeclared").missing("hypot") or "")
    finally:
        prism.extending.reload_plugins()


# -- lazy ---------------------------------------------------------------------------------------
def test_a_lazy_librarys_errors_are_the_references(mx: ModuleType) -> None:
    singular = np.zeros((2, 2))
    with prism.use_backend("mlxbare"):
        escaped = prism.linalg.inv(singular)  # no error yet: the library computes later
    with pytest.raises(RuntimeError, match="raised at eval"):
        np.asarray(escaped)
    with prism.use_backend("mlxkit"), pytest.raises(np.linalg.LinAlgError, match=r"[Ss]ingular"):
        prism.linalg.inv(singular)
    with prism.use_backend("mlxkit"):
        out = prism.linalg.solve(np.eye(2) * 2, np.ones((2, 1)))
    assert out._value is not None  # evaluated inside the variant
    np.testing.assert_array_equal(np.asarray(out), [[0.5], [0.5]])


def test_synchronize_evaluates_a_lazy_librarys_arrays(mx: ModuleType) -> None:
    pending = mx.linalg.inv(mx.asarray(np.eye(2), dtype=mx.float64))
    _backend("mlxbare").synchronize(pending)
    assert pending._value is None  # not lazy: nothing to do
    _backend("mlxkit").synchronize(pending, np.ones(2))
    assert pending._value is not None and mx.evaluated


# -- default dtypes -----------------------------------------------------------------------------
def test_creation_and_indices_in_numpys_default_dtypes(mx: ModuleType) -> None:
    x = mx.asarray(np.array([1.0, 3.0, 2.0], dtype=np.float32))
    with prism.use_backend("mlxbare"):
        assert prism.zeros((2,)).dtype == mx.float32  # the library's defaults
        assert prism.argmax(x).dtype == mx.int32
    with prism.use_backend("mlxkit"):
        assert prism.zeros((2,)).dtype == mx.float64
        assert prism.eye(2).dtype == mx.float64
        assert prism.arange(3).dtype == mx.int64
        assert prism.arange(0.0, 1.0, 0.5).dtype == mx.float64
        assert prism.full((2,), 7).dtype == mx.int64
        assert prism.full((2,), 7.0).dtype == mx.float64
        assert prism.zeros((2,), dtype=prism.float32).dtype == mx.float32  # given: kept
        assert prism.argmax(x).dtype == mx.int64
        assert int(prism.argmax(x)) == 1
        assert prism.argsort(x).dtype == mx.int64
        values, counts = prism.unique_counts(x)
        assert values.dtype == mx.float32 and counts.dtype == mx.int64  # the values kept
        back = prism.to_numpy(x)  # NumPy's result: nothing to evaluate
    assert isinstance(back, np.ndarray)


# -- declines and dtype exclusions --------------------------------------------------------------
def test_declines_by_empty_input_kind_and_keyword(mx: ModuleType) -> None:
    empty = np.ones((0,), dtype=np.float32)
    said = _reasons(prism.explain("max", empty), "mlxkit.max")
    assert said == "can_run: an empty array: mlx_like.max of an empty array is garbage"
    assert _reasons(prism.explain("max", np.ones(3)), "mlxkit.max") == ""
    said = _reasons(prism.explain("sqrt", np.ones(2, dtype=np.complex64)), "mlxkit.sqrt")
    assert "a complex64 array: mlx_like.sqrt has no complex loop" in said
    said = _reasons(prism.explain("sum", np.ones(2), dtype=prism.float64), "mlxkit.sum")
    assert "dtype= given: mlx_like.sum takes no dtype=" in said
    with prism.use_backend("mlxkit"):
        assert float(prism.sum(np.ones(3))) == 3.0


def test_excludes_declines_an_op_in_a_dtype_it_is_inaccurate_in(mx: ModuleType) -> None:
    said = _reasons(prism.explain("sin", np.ones(2)), "mlxkit.sin")
    assert said == "can_run: a float64 array: mlxkit.sin does not compute float64 accurately"
    assert _reasons(prism.explain("sin", np.ones(2, dtype=np.float32)), "mlxkit.sin") == ""
    with prism.use_backend("mlxkit"):
        assert prism.sin(np.zeros(2, dtype=np.float32)).dtype == mx.float32
        assert prism.cos(np.zeros(2)).dtype == mx.float64  # only sin is excluded


def test_decline_says_what_is_wrong_with_it() -> None:
    with pytest.raises(ValueError, match="kinds: 'z' is no NumPy kind letter"):
        Decline("why", kinds="fz")
    integers = Decline("no integers", kinds="iu")
    assert integers(np.ones(2, dtype=np.int8)) == "an int8 array: no integers"
    assert integers(np.ones(2, dtype=np.uint8)) == "a uint8 array: no integers"
    with pytest.raises(TypeError, match="dtypes, keywords"):
        Decline("why", dtypes="float64")
    assert Decline("why", dtypes={"float64"})(np.ones(2, dtype=np.float32)) is True


# -- NumPy-like signatures ----------------------------------------------------------------------
def test_numpy_like_signatures_are_adapted_to_the_standards(mx: ModuleType) -> None:
    x = np.array([3.0, 1.0, 3.0, 2.0])
    m = np.arange(12.0).reshape(3, 4)
    with prism.use_backend("mlxkit"):
        std = prism.std(x, correction=1)
        var = prism.var(m, axis=0, correction=1, keepdims=True)
        descending = prism.sort(x, descending=True)
        order = prism.argsort(x, descending=True)
        clipped = prism.clip(x, min=1.5, max=2.5)
        cumsum = prism.cumulative_sum(x, include_initial=True)
        cumprod = prism.cumulative_prod(m, axis=1)
        u, s, vt = prism.linalg.svd(m, full_matrices=False)
        trace = prism.linalg.trace(np.stack([m[:, :3], m[:, 1:]]), offset=1)
        diagonal = prism.linalg.diagonal(m)
        outer = prism.linalg.outer(x, x[:2])
        svdvals = prism.linalg.svdvals(m)
    np.testing.assert_allclose(np.asarray(std), np.std(x, ddof=1))
    np.testing.assert_allclose(np.asarray(var), np.var(m, axis=0, ddof=1, keepdims=True))
    np.testing.assert_array_equal(np.asarray(descending), [3.0, 3.0, 2.0, 1.0])
    np.testing.assert_array_equal(np.asarray(order), [0, 2, 3, 1])  # stable: 0 before 2
    np.testing.assert_array_equal(np.asarray(clipped), np.clip(x, 1.5, 2.5))
    np.testing.assert_array_equal(np.asarray(cumsum), [0.0, 3.0, 4.0, 7.0, 9.0])
    np.testing.assert_array_equal(np.asarray(cumprod), np.cumprod(m, axis=1))
    assert (u.shape, s.shape, vt.shape) == ((3, 3), (3,), (3, 4))
    np.testing.assert_allclose(np.asarray(u) * np.asarray(s) @ np.asarray(vt), m, atol=1e-9)
    np.testing.assert_array_equal(
        np.asarray(trace), np.trace(np.stack([m[:, :3], m[:, 1:]]), offset=1, axis1=-2, axis2=-1)
    )
    np.testing.assert_array_equal(np.asarray(diagonal), np.diagonal(m))
    np.testing.assert_array_equal(np.asarray(outer), np.outer(x, x[:2]))
    np.testing.assert_allclose(np.asarray(svdvals), np.linalg.svd(m, compute_uv=False))


def test_without_adapts_a_numpy_signature_is_the_backends_failure(mx: ModuleType) -> None:
    with prism.use_backend("mlxbare"), pytest.raises(prism.BackendError):
        prism.std(np.arange(4.0), correction=1)  # mlx_like.std takes ddof=


def test_adapts_names_are_checked() -> None:
    with pytest.raises(ValueError, match="adapts: no adaptation named 'sorting'"):
        adapters.needs(frozenset({"sorting"}), "sort")
    assert adapters.needs(adapters.NUMPY_LIKE, "cumulative_sum") == ("cumsum",)
    assert adapters.needs(adapters.NUMPY_LIKE, "add") is None


def test_a_correction_is_mlxs_integer_ddof_or_scales_the_variance(mx: ModuleType) -> None:
    """MLX's ``ddof=`` takes an int only: the standard's ``correction=1.0`` is passed as 1, and
    a fractional correction scales the variance without one."""
    m = np.arange(12.0).reshape(3, 4)
    with prism.use_backend("mlxkit"):
        whole = prism.std(m, correction=1.0)
        half = prism.var(m, axis=(0, 1), correction=0.5, keepdims=True)
        std_half = prism.std(m, axis=0, correction=0.5)
    np.testing.assert_allclose(np.asarray(whole), np.std(m, ddof=1))
    np.testing.assert_allclose(np.asarray(half), np.var(m, axis=(0, 1), ddof=0.5, keepdims=True))
    np.testing.assert_allclose(np.asarray(std_half), np.std(m, axis=0, ddof=0.5))


def test_fftfreq_is_numpys_in_the_dtype_asked() -> None:
    xp = ModuleType("numpy_like")
    xp.arange, xp.concatenate = np.arange, np.concatenate  # type: ignore[attr-defined]
    xp.astype = lambda x, dtype: x.astype(dtype)  # type: ignore[attr-defined]
    fftfreq = adapters.adapted(adapters.NUMPY_LIKE, "fft.fftfreq", xp)
    rfftfreq = adapters.adapted(adapters.NUMPY_LIKE, "fft.rfftfreq", xp)
    assert fftfreq is not None and rfftfreq is not None
    for n in (1, 5, 6, 4097):
        out = fftfreq(n, d=0.3, dtype=np.float64)
        assert out.dtype == np.float64
        np.testing.assert_array_equal(out, np.fft.fftfreq(n, d=0.3))
        np.testing.assert_array_equal(rfftfreq(n, d=0.3), np.fft.rfftfreq(n, d=0.3))
    assert fftfreq(5, dtype=np.float32).dtype == np.float32
    assert adapters.needs(adapters.NUMPY_LIKE, "fft.fftfreq") == ("arange", "astype")


def test_astype_device_none_is_not_passed(mx: ModuleType) -> None:
    """The standard's ``astype(x, dtype, device=None)``: the default, which MLX's astype (no
    ``device=``) is not given."""
    with prism.use_backend("mlxkit"):
        out = prism.astype(np.arange(3), "float32", device=None)
    assert np.asarray(out).dtype == np.float32


def test_lacks_declines_in_can_run_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What asks only ``can_run`` (the conformance suite) sees an op of ``lacks`` declined with
    the reason, rather than calling a function the namespace lacks."""
    _install(tmp_path, monkeypatch, "mlxdeclared")
    try:
        (variant,) = [v for v in prism.get_op("hypot").variants if v.backend == "mlxdeclared"]
        x = np.arange(4.0)
        assert variant.can_run is not None
        assert "mlx_like has no hypot" in str(variant.can_run(x, x))
        (other,) = [v for v in prism.get_op("add").variants if v.backend == "mlxdeclared"]
        assert other.can_run is None  # the others are not asked
    finally:
        prism.extending.reload_plugins()


def test_the_suite_skips_a_function_the_namespace_lacks_and_fails_an_undeclared_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conformance suite imports the library (it runs it anyway).  A backend that imports
    it to tell availability (no ``installed_as``) has the variant of a function it lacks
    skipped with dispatch's reason.  One that tells availability from the metadata, without
    ``lacks`` naming the op, fails the check and is told what to add: until the library is
    imported, dispatch cannot know, and explain would name that variant chosen."""
    from prism_core.testing import conformance_checks

    _install(tmp_path, monkeypatch, "mlxbare,mlxdeclared,mlxundeclared")
    try:
        results = {}
        for name in ("mlxbare", "mlxdeclared", "mlxundeclared"):
            checks = conformance_checks(name)
            (hypot,) = [c for c in checks if c.subject == f"{name}.hypot"]
            results[name] = hypot.run()
            assert [c for c in checks if c.subject == f"{name}.add" and c.check == "values"]
        for name in ("mlxbare", "mlxdeclared"):
            assert (results[name].status, results[name].check) == ("skipped", "values")
            assert "mlx_like has no hypot" in results[name].detail
        failed = results["mlxundeclared"]
        assert (failed.status, failed.check) == ("failed", "values")
        assert "mlx_like has no hypot" in failed.detail
        assert "add 'hypot' to Undeclared.lacks" in failed.detail
    finally:
        prism.extending.reload_plugins()


class _Streamed(NamespaceBackend):
    """Two targets, a library whose device is a stream: ``streams``."""

    name = "streamed"
    namespace = "numpy"
    array_types = ("numpy:ndarray",)
    streams = True
    targets = (
        NamespaceBackend.targets[0],
        type(NamespaceBackend.targets[0])("gpu", {"kind": "gpu"}, 10),
    )

    def device_for(self, target: Any) -> Any:
        return f"stream:{target.name}"


def test_with_streams_each_op_runs_inside_the_targets_stream_and_nothing_moves() -> None:
    entered: list[str] = []

    @contextlib.contextmanager
    def stream(device: str) -> Iterator[None]:
        entered.append(device)
        yield

    backend = _Streamed()
    xp = ModuleType("streamed_xp")
    xp.add = np.add  # type: ignore[attr-defined]
    xp.stream = stream  # type: ignore[attr-defined]
    backend._xp = xp
    cpu, gpu = backend.targets
    x = np.arange(3.0)
    np.testing.assert_array_equal(backend.function("add", gpu)(x, x), 2 * x)
    np.testing.assert_array_equal(backend.function("add", cpu)(x, x), 2 * x)
    assert entered == ["stream:gpu", "stream:cpu"]
    xp.gpu = "the library's gpu"  # type: ignore[attr-defined]
    assert NamespaceBackend.device_for(backend, gpu) == "the library's gpu"  # the default
    # The library's arrays are on every target: the GPU takes them without a device named.
    assert backend.placement("add", gpu)(x, x) is True
    assert backend.placement("add", cpu)(x, x) is True
    plain = type("Placed", (_Streamed,), {"streams": False, "name": "placed"})()
    assert "the data is on cpu" in str(plain.placement("add", gpu)(x, x))


class _DLPackOnly:
    """An array with DLPack and no ``__array__``, as ndonnx's is."""

    def __init__(self, data: Any) -> None:
        self._data = np.asarray(data)

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._data.__dlpack_device__()


class _Opaque:
    """An array NumPy reads neither way."""


def test_to_numpy_reads_an_array_without_array_protocol_through_dlpack() -> None:
    """``numpy.asarray`` makes a 0-d object array of an array without ``__array__``: a wrong
    answer with no error.  The kit reads it through DLPack, or says to override ``to_numpy``."""

    class Plain(NamespaceBackend):
        name = "plain"
        namespace = "numpy"

    out = Plain().to_numpy(_DLPackOnly([1.5, 2.5]))
    assert out.dtype == np.float64 and out.tolist() == [1.5, 2.5] and out.flags.writeable
    with pytest.raises(TypeError, match=r"override Plain.to_numpy to convert it"):
        Plain().to_numpy(_Opaque())
