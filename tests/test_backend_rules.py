"""Where a call runs and what it returns (docs/backends.md), the backend registry, and the
numerics protocol's transforms, through the real dispatcher.

The ``wrapped`` backend of the test-only loopback plugin (tests/loopback_plugin.py, discovered
through a real entry point) stands in for a framework whose arrays are not NumPy's, as torch's
and CuPy's are; the torch plugin's suite checks the same rules with real tensors.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import prism_core as prism

from .conftest import put_distribution_on_path
from .loopback_plugin import Wrapped


@pytest.fixture
def wrapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    put_distribution_on_path(
        monkeypatch,
        tmp_path / "site",
        "prism-test-loopback",
        "1.0",
        "[prism.plugins]\nloopback = tests.loopback_plugin\n",
    )
    monkeypatch.setenv("PRISM_PLUGINS", "loopback")
    ps = prism.extending.reload_plugins()
    assert ps.records["loopback"].status == "loaded"
    yield
    monkeypatch.delenv("PRISM_PLUGINS")
    prism.extending.reload_plugins()


# -- the registry -----------------------------------------------------------------------------


def test_backends_lists_each_with_availability_devices_and_capabilities(wrapped: None) -> None:
    infos = {b.name: b for b in prism.extending.backends()}
    assert set(infos) == {"numpy", "loopback", "wrapped"}
    numpy = infos["numpy"]
    assert numpy.available and numpy.reason == "" and numpy.plugin == "numpy"
    assert numpy.version == np.__version__
    assert numpy.capabilities["numpy"] == np.__version__
    host = prism.hardware.present_devices().devices[0].description.device_type
    assert host in numpy.drives
    assert infos["wrapped"].aliases == ("wrapper",)
    # The preferred first: priority 5 (loopback, wrapped) before 0 (numpy).
    assert [b.name for b in prism.extending.backends()][-1] == "numpy"
    assert infos["wrapped"].as_dict()["aliases"] == ["wrapper"]


def test_get_backend_takes_names_and_aliases_and_says_what_exists(wrapped: None) -> None:
    assert prism.extending.get_backend("wrapper") is prism.extending.get_backend("wrapped")
    with pytest.raises(
        prism.extending.PluginError, match=r"no backend named 'wraped' \(did you mean"
    ):
        prism.extending.get_backend("wraped")
    with pytest.raises(TypeError, match="get_backend\\(\\): name must be a backend name"):
        prism.extending.get_backend(3)  # type: ignore[arg-type]


def test_an_alias_names_the_backend_in_scopes(wrapped: None) -> None:
    with prism.use_backend("wrapper") as scope:
        assert scope.backend == "wrapped"
        out = prism.add(np.ones(200), np.ones(200))
    assert isinstance(out, Wrapped)
    prism.set_backend("wrapper")
    try:
        assert prism.current_scope().backend == "wrapped"
    finally:
        prism.set_backend(None)


# -- where a call runs ------------------------------------------------------------------------


def test_data_stays_where_it_is_and_results_keep_their_type(wrapped: None) -> None:
    a, b = np.arange(200.0), np.ones(200)
    # NumPy in: wrapped.add (priority 50) would move the arrays; NumPy runs, NumPy out.
    out = prism.add(a, b)
    assert type(out) is np.ndarray
    decision = prism.explain("add", a, b)
    assert decision.chosen == "numpy.add" and decision.data_movement == ()
    # Wrapped in: its own backend runs, Wrapped out.
    wa, wb = Wrapped(a), Wrapped(b)
    out = prism.add(wa, wb)
    assert isinstance(out, Wrapped)
    np.testing.assert_array_equal(out.data, a + b)
    assert prism.explain("add", wa, wb).chosen == "wrapped.add"


def test_mixed_inputs_go_to_the_non_numpy_backend(wrapped: None) -> None:
    a = np.arange(200.0)
    out = prism.add(Wrapped(a), a)
    assert isinstance(out, Wrapped)
    decision = prism.explain("add", Wrapped(a), a)
    assert decision.chosen == "wrapped.add"
    (move,) = decision.data_movement
    assert move.startswith("argument 1: numpy.ndarray float64[200] (1.6 kB) from numpy -> wrapped")


def test_to_numpy_gives_numpy_whatever_the_backend_and_scope(wrapped: None) -> None:
    """``wrapped`` has no ``to_numpy`` variant: the reference runs it, in automatic mode (its
    result is not brought back to the argument's backend) and under a scope naming another
    backend or the device."""
    w = Wrapped(np.arange(3.0))
    host = prism.hardware.present_devices().devices[0].description
    scopes = [prism.use_backend("wrapped"), prism.use_backend("numpy"), prism.device(host)]
    out = prism.to_numpy(w)
    assert type(out) is np.ndarray and out.tolist() == [0.0, 1.0, 2.0]
    assert "result:" not in str(prism.explain("to_numpy", w))  # nothing is brought back
    for scope in scopes:
        with scope:
            assert type(prism.to_numpy(w)) is np.ndarray, scope
            assert prism.explain("to_numpy", w).chosen == "numpy.to_numpy"


def test_explain_from_cache_describes_the_arguments_it_was_given(wrapped: None) -> None:
    # The plan is cached by argument types; its moves were worked out for the first call's
    # arrays.  Explaining other sizes must describe those sizes, not the first call's.
    prism.add(Wrapped(np.arange(200.0)), np.arange(200.0))
    decision = prism.explain("add", Wrapped(np.arange(5000.0)), np.arange(5000.0))
    assert decision.from_cache
    (move,) = decision.data_movement
    assert move.startswith("argument 1: numpy.ndarray float64[5000] (40.0 kB) from numpy ->")


def test_a_result_made_elsewhere_comes_back_to_the_arguments_backend(wrapped: None) -> None:
    # Too small for wrapped.add: NumPy runs it on the moved data, and the result goes back.
    wa = Wrapped(np.arange(3.0))
    decision = prism.explain("add", wa, wa)
    assert decision.chosen == "numpy.add"
    assert decision.data_movement[-1] == "result: numpy -> wrapped (the arguments' backend)"
    out = prism.add(wa, wa)
    assert isinstance(out, Wrapped)
    np.testing.assert_array_equal(out.data, [0.0, 2.0, 4.0])
    # Named: the backend's own arrays, not brought back.
    with prism.use_backend("numpy"):
        assert type(prism.add(wa, wa)) is np.ndarray


def test_creation_makes_numpy_arrays_unless_a_backend_is_named(wrapped: None) -> None:
    assert type(prism.zeros(3)) is np.ndarray


def test_sequences_of_arrays_move_item_by_item(wrapped: None) -> None:
    a = np.arange(3.0)
    with prism.use_backend("numpy"):
        out = prism.stack([Wrapped(a), a])
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, [a, a])
    out = prism.stack([Wrapped(a), Wrapped(a)])  # no stack on wrapped: NumPy, then back
    assert isinstance(out, Wrapped)
    np.testing.assert_array_equal(out.data, [a, a])


def test_explain_estimates_the_cost_of_a_copy_over_the_host_link() -> None:
    from prism_core.kernel.dispatch.movement import describe

    h100 = prism.hardware.get_device("nvidia.h100-sxm")
    numpy = prism.extending.get_backend("numpy")
    text = describe(0, np.zeros((1024, 1024)), numpy, numpy, h100)
    # 8.4 MB over PCIe 5 x16 (128 GB/s both directions, 64 GB/s each way): 131 µs.
    assert text == (
        "argument 0: numpy.ndarray float64[1024x1024] (8.4 MB) from numpy -> numpy on "
        "nvidia.h100-sxm: copied over the host link (pcie5-x16, 64 GB/s each way): ~131.1 µs"
    )


# -- the numerics protocol --------------------------------------------------------------------


def _f(x: object, y: object) -> object:
    return prism.sum(prism.multiply(prism.exp(x), y))


def test_value_and_grad_by_finite_differences_on_numpy() -> None:
    x = np.array([0.1, -0.4, 1.3])
    y = np.array([2.0, 0.5, -1.0])
    result = prism.value_and_grad(_f, argnums=(0, 1))(x, y)
    value, (gx, gy) = result
    assert result.method == "central finite differences"
    assert value == pytest.approx(float(np.sum(np.exp(x) * y)))
    np.testing.assert_allclose(gx, np.exp(x) * y, rtol=1e-8)
    np.testing.assert_allclose(gy, np.exp(x), rtol=1e-8)
    single = prism.value_and_grad(_f)(x, y)
    np.testing.assert_allclose(single.grad, np.exp(x) * y, rtol=1e-8)


def test_value_and_grad_rejects_what_it_cannot_differentiate() -> None:
    with pytest.raises(TypeError, match="argnums must be an int or a tuple of ints"):
        prism.value_and_grad(_f, argnums="0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="argnums 2 is out of range for a call with 2"):
        prism.value_and_grad(_f, argnums=2)(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="fn must return a scalar"):
        prism.value_and_grad(lambda x: prism.exp(x))(np.ones(2))


def test_vmap_loops_and_stacks_on_numpy() -> None:
    xs = np.arange(12.0).reshape(3, 4)
    out = prism.vmap(lambda row: prism.sum(row))(xs)
    np.testing.assert_array_equal(out, xs.sum(axis=1))
    out = prism.vmap(lambda col, w: prism.multiply(col, w), in_axes=(1, None))(xs, 2.0)
    np.testing.assert_array_equal(out, (xs * 2.0).T)
    with pytest.raises(ValueError, match="in_axes must be an int, None, or a tuple"):
        prism.vmap(lambda a: a, in_axes=(0, 0))(xs)


def test_to_device_moves_within_what_a_backend_drives() -> None:
    x = np.arange(3.0)
    host = prism.hardware.present_devices().devices[0].description
    np.testing.assert_array_equal(prism.to_device(x, host), x)
    with pytest.raises(ValueError, match=r"backend 'numpy' cannot put arrays on nvidia\.h100-sxm"):
        prism.to_device(x, "nvidia.h100-sxm")


def test_to_dlpack_exports_a_capsule() -> None:
    capsule = prism.to_dlpack(np.arange(3.0))
    assert type(capsule).__name__ == "PyCapsule"
    with pytest.raises(TypeError, match="does not support DLPack"):
        prism.to_dlpack([1, 2])


def test_a_numpy_matrix_is_refused_saying_what_to_pass() -> None:
    """np.matrix's reductions take no keepdims (``sum(m, axis=1)`` was a raw TypeError from
    inside NumPy) and its ``*`` is a product: Prism refuses it before anything runs."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)  # NumPy's, on np.matrix
        m = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    for call in (lambda: prism.sum(m, axis=1), lambda: prism.add(np.ones(2), m)):
        with pytest.raises(TypeError, match=r"is a numpy.matrix, which Prism does not take .*"
                           r"pass numpy.asarray\(m\)"):  # fmt: skip
            call()
    assert prism.sum(np.asarray(m), axis=1).tolist() == [3.0, 7.0]
