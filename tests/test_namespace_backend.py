"""A namespace backend (``prism_core.backend_kit.NamespaceBackend``) over a real Array API
library, array-api-strict (the standard's own strict namespace), installed as a plugin and found
through its entry point: the variants it makes, Prism's semantics around the library's (NumPy's
promotion, the reference's errors, NumPy in and out), declared dtypes, overrides and declines."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

import prism_core as prism
from prism_core.backend_kit import NamespaceBackend, Target

from .conftest import put_distribution_on_path

strict = pytest.importorskip("array_api_strict", reason="the namespace of these tests")
STRICT_ARRAY = type(strict.asarray(0))

PLUGIN = '''
import numpy as np
import prism_core
from prism_core.backend_kit import NamespaceBackend


def dot(a, b):
    """strict has no dot: the override computes it (and says so in its result's name)."""
    import array_api_strict as xp

    return xp.vecdot(a, b)


def small(*args, **kwargs):
    sizes = [a.size for a in args if hasattr(a, "size")]
    return True if max(sizes, default=0) >= 4 else "too small for strict (under 4 elements)"


class Strict(NamespaceBackend):
    name = "strict"
    description = "array-api-strict, the standard's strict namespace"
    drives = {"kind": "cpu"}
    namespace = "array_api_strict"
    library = "array_api_strict"
    minimum = "2.0"
    array_types = ("array_api_strict._array_object:Array",)
    overrides = {"dot": dot}
    declines = {"linalg.det": small}


class NoFloat64(Strict):
    name = "strict32"
    holds = frozenset({"float32", "int32", "int64", "bool_"})


@prism_core.extending.hookimpl
def prism_backends():
    return [Strict(), NoFloat64()]


@prism_core.extending.hookimpl
def prism_variants():
    ops = set(prism_core.all_ops())
    return Strict().variants(ops) + NoFloat64().variants(ops)
'''


@pytest.fixture
def strict_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    site = tmp_path / "site"
    put_distribution_on_path(
        monkeypatch, site, "prism-strict", "1.0", "[prism.plugins]\nstrict = strict_plugin\n"
    )
    (site / "strict_plugin.py").write_text(textwrap.dedent(PLUGIN))
    ps = prism.extending.reload_plugins(prism.extending.PluginSettings(allow=("strict",)))
    assert ps.records["strict"].status == "loaded", ps.records["strict"].reason
    yield
    prism.extending.reload_plugins()


def test_a_variant_for_every_op_of_the_standard_and_the_overrides() -> None:
    ops = {v.op for v in NamespaceBackend().variants()}
    from prism_core.kernel.records.standard import STANDARD_OPS

    assert ops == set(STANDARD_OPS.values()) | {"to_numpy"}
    assert "dot" not in ops  # not the standard's: only an override brings it


def test_making_the_variants_imports_nothing(strict_plugin: None) -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom prism_core.backend_kit import NamespaceBackend\n"
        "class B(NamespaceBackend):\n    name = 'b'\n    namespace = 'array_api_strict'\n"
        "B().variants()\nprint('array_api_strict' in sys.modules, 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr


def test_its_results_are_the_librarys_arrays_with_numpys_values(strict_plugin: None) -> None:
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(6.0).reshape(3, 2)
    with prism.use_backend("strict"):
        out = prism.matmul(a, b)
        total = prism.sum(a, axis=1)
        made = prism.zeros((2,), dtype=prism.float32)
    assert isinstance(out, STRICT_ARRAY)
    np.testing.assert_array_equal(np.asarray(out), a @ b)
    np.testing.assert_array_equal(np.asarray(total), a.sum(axis=1))
    assert made.dtype == strict.float32


def test_its_own_arrays_stay_its_own_and_numpy_comes_back(strict_plugin: None) -> None:
    x = strict.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert isinstance(prism.matmul(x, x), STRICT_ARRAY)  # data stays where it lives
    with prism.use_backend("strict"):
        back = prism.to_numpy(prism.add(x, x))
    assert isinstance(back, np.ndarray) and back.flags.writeable


def test_mixed_dtypes_and_scalars_promote_as_numpy(strict_plugin: None) -> None:
    """array-api-strict refuses mixed kinds (the standard leaves them undefined); Prism's
    semantics are NumPy's."""
    i = strict.asarray([1, 2, 3], dtype=strict.int32)
    f = strict.asarray([0.5, 0.5, 0.5], dtype=strict.float32)
    with pytest.raises(TypeError):
        i + f  # the library alone
    mixed = prism.add(i, f)
    assert mixed.dtype == strict.float64  # np.result_type(int32, float32)
    scalar = prism.multiply(i, 1.5)
    assert scalar.dtype == strict.float64
    np.testing.assert_array_equal(np.asarray(scalar), np.arange(1, 4, dtype=np.int32) * 1.5)
    assert prism.add(f, 1).dtype == strict.float32  # a weak scalar of a kind it holds


def test_a_callers_mistake_raises_the_references_exception_in_its_words(
    strict_plugin: None,
) -> None:
    a = np.ones((2, 3))
    with pytest.raises(ValueError, match="mismatch") as numpy_said:
        np.matmul(a, a)
    with prism.use_backend("strict"), pytest.raises(ValueError, match="mismatch") as prism_said:
        prism.matmul(a, a)
    assert str(prism_said.value) == str(numpy_said.value)
    with prism.use_backend("strict"), pytest.raises(np.linalg.LinAlgError, match="Singular"):
        prism.linalg.inv(np.zeros((2, 2)))


def test_what_the_reference_computes_is_the_backends_failure(strict_plugin: None) -> None:
    """strict inverts no integer matrix; NumPy does: not the caller's mistake, so automatic
    mode falls back (and says so), and a named backend reports its failure."""
    m = strict.asarray([[2, 0], [0, 4]])
    with pytest.warns(prism.PrismWarning, match=r"strict(32)?\.linalg\.inv failed"):
        out = prism.linalg.inv(m)
    np.testing.assert_allclose(np.asarray(out), [[0.5, 0.0], [0.0, 0.25]])
    with prism.use_backend("strict"), pytest.raises(prism.BackendError, match="reference computes"):
        prism.linalg.inv(np.array([[2, 0], [0, 4]]))


def test_an_undeclared_dtype_is_declined_before_any_conversion(strict_plugin: None) -> None:
    a64 = np.ones((4, 4))
    a32 = np.ones((4, 4), dtype=np.float32)
    decision = prism.explain("matmul", a64, a64)
    reasons = {c.variant: c.reasons for c in decision.candidates}
    assert any("strict32 holds no float64" in r for r in reasons["strict32.matmul"])
    with prism.use_backend("strict32"):
        assert prism.matmul(a32, a32).dtype == strict.float32
        with pytest.raises(prism.DispatchError, match="strict32 holds no float64"):
            prism.matmul(a64, a64)


def test_overrides_and_declines(strict_plugin: None) -> None:
    v = np.arange(4.0)
    with prism.use_backend("strict"):
        assert float(prism.dot(v, v)) == 14.0
        assert float(prism.linalg.det(np.eye(2) * 3)) == pytest.approx(9.0)  # det's can_run
    decision = prism.explain("linalg.det", np.eye(1))
    said = {c.variant: c.reasons for c in decision.candidates}
    assert said["strict.linalg.det"] == ("can_run: too small for strict (under 4 elements)",)


def test_targets_name_their_variants_and_keep_data_where_it_is() -> None:
    class TwoPlaces(NamespaceBackend):
        name = "two"
        namespace = "array_api_strict"
        targets = (Target("cpu", {"kind": "cpu"}), Target("gpu", {"kind": "gpu"}, 10))

    names = {v.name for v in TwoPlaces().variants({"matmul"})}
    assert names == {"two.matmul", "two.gpu.matmul"}
    gpu = next(v for v in TwoPlaces().variants({"matmul"}) if v.name == "two.gpu.matmul")
    assert gpu.priority == 10
    assert "no device is named" in gpu.placement(np.ones(2), np.ones(2))


def test_python_ints_out_of_an_integer_dtype_s_range_overflow_as_in_numpy() -> None:
    """NEP 50: ``uint8_array + 300`` is NumPy's OverflowError; a library that wraps (torch's
    ``add`` does; here an override standing in for one) must not compute it."""

    def wrapping_add(a: object, b: int) -> object:
        return strict.asarray(np.asarray(a) + np.uint8(b % 256))

    class Wraps(NamespaceBackend):
        name = "wraps"
        namespace = "array_api_strict"
        overrides = MappingProxyType({"add": wrapping_add})

    add = Wraps().function("add")
    u = strict.asarray([1, 2], dtype=strict.uint8)
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        np.add(np.ones(2, np.uint8), 300)
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        add(u, 300)
    assert add(u, 255).dtype == strict.uint8  # in range: the array's dtype


def test_frequencies_and_trace_take_prism_s_dtypes(strict_plugin: None) -> None:
    """``fft.fftfreq``/``rfftfreq`` are creation functions (``dtype=``, ``device=``) and
    ``linalg.trace`` takes ``dtype=``: a Prism or NumPy dtype becomes the library's."""
    with prism.use_backend("strict"):
        assert prism.fft.fftfreq(4, dtype=prism.float32).dtype == strict.float32
        assert prism.fft.rfftfreq(4, dtype=np.float32).dtype == strict.float32
        eye = strict.asarray(np.eye(2))
        assert prism.linalg.trace(eye, dtype=prism.float32).dtype == strict.float32


def test_meshgrid_gives_the_standard_s_list_as_the_reference_does(strict_plugin: None) -> None:
    v = strict.asarray([1.0, 2.0])
    with prism.use_backend("strict"):
        grid = prism.meshgrid(v, v)
    assert type(grid) is list and type(prism.meshgrid(np.ones(2), np.ones(3))) is list


def test_python_scalars_alone_compute_as_the_reference_does(strict_plugin: None) -> None:
    """The standard's functions take arrays; Prism's ops (NumPy's) take Python scalars too:
    alone, the first becomes an array of NumPy's dtype for it."""
    with prism.use_backend("strict"):
        logged, added = prism.log(0.5), prism.add(1, 2)
    assert logged.dtype == strict.float64 and float(logged) == pytest.approx(np.log(0.5))
    assert added.dtype == strict.int64 and int(added) == 3


def test_integers_widen_where_numpy_widens(strict_plugin: None) -> None:
    """Sums accumulate small integers in 64 bits, true division and means give float64, and the
    floating functions the smallest float that holds the integers (float32 for int16): NumPy's
    types, where array-api-strict refuses or keeps the narrow type."""
    i16 = np.array([1, 2, 3], dtype=np.int16)
    with prism.use_backend("strict"):
        got = {
            "sum": prism.sum(i16),
            "cumulative_prod": prism.cumulative_prod(i16),
            "divide": prism.divide(i16, i16),
            "mean": prism.mean(i16),
            "sqrt": prism.sqrt(i16),
            "atan2": prism.atan2(i16, i16),
        }
    want = {
        "sum": np.sum(i16),
        "cumulative_prod": np.cumprod(i16),
        "divide": np.divide(i16, i16),
        "mean": np.mean(i16),
        "sqrt": np.sqrt(i16),
        "atan2": np.arctan2(i16, i16),
    }
    for op, value in got.items():
        assert str(value.dtype).rpartition(".")[2] == want[op].dtype.name, op
        np.testing.assert_allclose(np.asarray(value), want[op], rtol=1e-3)


def test_copy_false_refuses_a_copy_the_library_needs_even_where_numpy_needs_none() -> None:
    """The standard's ``ValueError`` for ``copy=False`` where the library must copy (a NumPy
    array into a library that cannot share its memory), though NumPy itself shares it."""

    def copying_asarray(obj: object, /, **kwargs: object) -> object:
        if kwargs.get("copy") is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return strict.asarray(obj)

    class Copies(NamespaceBackend):
        name = "copies"
        namespace = "array_api_strict"
        overrides = MappingProxyType({"asarray": copying_asarray})

    asarray = Copies().function("asarray")
    np.asarray(np.ones(2), copy=False)  # NumPy shares it
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        asarray(np.ones(2), copy=False)


def test_a_library_without_device_keywords_creates_on_its_default_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``device=None`` is the library's default: not passed, so that a namespace whose creation
    functions take no ``device=`` (CuPy's: they create on the current GPU) creates there."""
    import sys
    import types

    lib = types.ModuleType("no_device_lib")
    lib.zeros = lambda shape, dtype=None: np.zeros(shape, dtype=dtype)  # type: ignore[attr-defined]
    lib.float32 = np.float32  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "no_device_lib", lib)

    class NoDevice(NamespaceBackend):
        name = "nodevice"
        namespace = "no_device_lib"

    zeros = NoDevice().function("zeros")
    assert zeros((2,), dtype=prism.float32).dtype == np.float32
    assert zeros((2,), dtype="float32", device=None).shape == (2,)


def test_numpy_s_own_dtype_names_as_the_reference_reads_them() -> None:
    """A ``dtype=`` in NumPy's own spelling (``"f4"``), which the reference takes, is the
    library's dtype; a name neither knows is a ``TypeError``."""

    class Strict(NamespaceBackend):
        name = "strictnames"
        namespace = "array_api_strict"

    backend = Strict()
    assert backend.native_dtype("f4") == strict.float32
    assert backend.native_dtype("<i8") == strict.int64
    with pytest.raises(TypeError):
        backend.native_dtype("float33")


def test_the_decompositions_are_the_reference_s_named_tuples(strict_plugin: None) -> None:
    """``prism_core``'s result tuples (NumPy's field names), not the library's own."""
    from prism_core.backend_kit import QRResult, SVDResult

    with prism.use_backend("strict"):
        svd = prism.linalg.svd(strict.asarray(np.eye(2)))
        qr = prism.linalg.qr(strict.asarray(np.eye(2)))
    assert type(svd) is SVDResult and svd._fields == ("U", "S", "Vh")
    assert type(qr) is QRResult


def test_a_device_the_library_cannot_read_is_its_own_error_in_its_words() -> None:
    """``device=`` names the library's devices, which the NumPy reference (host memory only)
    cannot judge: the library's reading of it is the error raised."""

    class Devices(NamespaceBackend):
        name = "devices"
        namespace = "array_api_strict"

        def creation_device(self, given: object, device: object) -> object:
            if given not in (None, "cpu"):
                raise ValueError(f"device={given!r} is not a device devices knows")
            return device

    zeros = Devices().function("zeros")
    with pytest.raises(ValueError, match="device='nowhere' is not a device devices knows"):
        zeros((2,), device="nowhere")


def test_one_librarys_dtypes_are_never_compared_with_anothers(strict_plugin: None) -> None:
    """array-api-strict warns when its dtypes meet NumPy's in a comparison (an error under
    this suite's warning filter): the namespace backends' caches keep them apart."""
    i = strict.asarray([1, 2], dtype=strict.int32)
    f = strict.asarray([0.5, 0.5], dtype=strict.float32)
    with prism.use_backend("strict"):
        prism.add(i, f)  # strict's dtypes enter the caches
    from prism_core.backend_kit._numpy_rules import dtype_kind as _kind

    assert _kind(np.dtype("int32")) == "i"  # NumPy's, hashed alike, asked after them
    assert _kind(strict.int32) == "i"


def test_availability_from_installed_metadata_imports_nothing() -> None:
    """With ``installed_as``, availability is the installed distributions' word until the
    library is imported (``prism doctor`` stays fast); a missing one says what to install."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom prism_core.backend_kit import NamespaceBackend\n"
        "class B(NamespaceBackend):\n    name = 'b'\n    namespace = 'array_api_strict'\n"
        "    installed_as = ('array-api-strict',)\n    minimum = '2.0'\n"
        "class Missing(B):\n    name = 'missing'\n    installed_as = ('no-such-dist-prism',)\n"
        "class Old(B):\n    name = 'old'\n    minimum = '999'\n"
        "print(bool(B().availability()), 'array_api_strict' in sys.modules)\n"
        "print(Missing().availability().reason)\nprint(Old().availability().reason)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    available, missing, old = out.stdout.splitlines()
    assert available == "True False", out.stderr
    assert missing == (
        "no-such-dist-prism is not installed (pip install no-such-dist-prism, or reinstall "
        "missing, which depends on it)"
    )
    assert old.startswith("array-api-strict ") and "needs array-api-strict>=999" in old
