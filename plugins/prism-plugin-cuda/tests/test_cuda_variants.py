"""The plugin's variants: what its ``prism_variants`` hook contributes (a variant of every op of
the catalogue), how the dispatcher judges them (on simulated NVIDIA devices, and in automatic
mode on this host), and the implementations, run on this host (which has no GPU) with NumPy
standing in for CuPy: that runs the plugin's own code (argument handling, NumPy's semantics
where CuPy differs) but not CuPy's.  On a real GPU, ``test_cuda_gpu.py`` runs them on CuPy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from prism_plugin_cuda import ops
from prism_plugin_cuda.backend import MIN_ELEMENTS, NO_CAN_RUN, OVERRIDES, CudaBackend

import prism_core
from prism_core import ArraySpec

TOO_SMALL_16x16 = "can_run: too small to be worth a device transfer (256 elements, fewer than 4096)"
GPU_REQUIRES = {"vendor": "nvidia", "kind": "gpu"}
#: Ops of the catalogue the plugin has no variant of, each with the reason: none.
NOT_ON_THE_GPU: dict[str, str] = {}
#: Every op the plugin has a variant of.
OPS = sorted({v.op for v in CudaBackend().variants()})
RUN_GUARD_S = 120


def _verdict(decision: prism_core.Decision, variant: str) -> prism_core.Candidate:
    return next(c for c in decision.candidates if c.variant == variant)


def _specs(shapes: list[tuple[int, ...]], dtype: str = "float32") -> list[ArraySpec]:
    return [ArraySpec(s, dtype) for s in shapes]


# -- what the hook contributes ----------------------------------------------------------------


def _catalogue() -> dict[str, Any]:
    """Prism's catalogue: the ops of ``prism_core.all_ops()`` that the builtin NumPy plugin
    implements (ops that user code registered in the same process are not Prism's)."""
    return {
        name: op
        for name, op in prism_core.all_ops().items()
        if any(v.reference and v.source == "plugin:numpy" for v in op.variants)
    }


def test_every_op_of_the_catalogue_has_a_cuda_variant() -> None:
    record = prism_core.extending.plugins().records["cuda"]
    covered = {v.op for v in record.variants}
    catalogue = _catalogue()
    assert covered == set(catalogue) - set(NOT_ON_THE_GPU)
    assert set(OPS) == set(catalogue) - set(NOT_ON_THE_GPU)
    for name, op in catalogue.items():
        if name not in NOT_ON_THE_GPU:
            assert f"cuda.{name}" in {v.name for v in op.variants}, name


def test_the_variants(library: prism_core.hardware.DeviceLibrary) -> None:
    record = prism_core.extending.plugins().records["cuda"]
    assert record.status == "loaded", record.reason
    assert record.problems == []
    by_name = {v.name: v for v in record.variants}
    assert set(by_name) == {f"cuda.{op}" for op in OPS} | {"cuda.tensor_core_matmul"}
    for v in record.variants:
        assert v.backend == "cuda"
        assert v.source == "plugin:cuda"
        assert not v.reference
        # Every op with arrays to move keeps small calls on NumPy; creation ops and the
        # conversions run wherever the backend is chosen.
        assert (v.can_run is None) == (v.op in NO_CAN_RUN), v.name
        if v.name != "cuda.tensor_core_matmul":
            assert (v.priority, v.dtype_support) == (10, False)
            assert v.requirement == prism_core.hardware.Requirement(GPU_REQUIRES)
    tensor_cores = by_name["cuda.tensor_core_matmul"]
    assert (tensor_cores.priority, tensor_cores.dtype_support) == (20, True)
    assert tensor_cores.requirement == prism_core.hardware.Requirement(
        {"vendor": "nvidia", "tensor_cores": ">=3"}
    )


def test_the_variants_are_made_lazily() -> None:
    """The functions are made when dispatch first calls them (importing CuPy, or the module
    of the overrides, then): a fresh backend's variants have made none.  (Rewritten: the
    variants named ``"prism_plugin_cuda.ops:..."`` strings before the namespace backend.)"""
    backend = CudaBackend()
    fresh = {v.name: v for v in backend.variants()}
    assert all(callable(v.fn) for v in fresh.values())
    assert backend._functions == {} and backend._xp is None
    assert fresh["cuda.tensor_core_matmul"].fn == fresh["cuda.matmul"].fn
    assert OVERRIDES["linalg.svd"] == "prism_plugin_cuda.ops:linalg_svd"
    assert [v.name for v in backend.variants()] == [v.name for v in CudaBackend().variants()]
    assert backend.variants()[0] is not backend.variants()[0]


@pytest.mark.parametrize("op", OPS)
def test_each_op_has_a_function(numpy_as_cupy: CudaBackend, op: str) -> None:
    """Each op's function is found: CuPy's of the standard's name, which NumPy has too (CuPy
    mirrors NumPy's names; the real CuPy is checked in test_real_cupy_installed_without_a_gpu),
    or an override, a function ``ops.py`` defines or CuPy's own.  (Rewritten from the check of
    the table of ``ops`` functions that the namespace backend replaced.)"""
    assert callable(numpy_as_cupy.function(op))
    module, _, name = OVERRIDES.get(op, "cupy:").partition(":")
    if module == "prism_plugin_cuda.ops":
        fn = vars(ops).get(name)
        assert callable(fn), f"prism_plugin_cuda.ops defines no {name}"
        assert fn.__module__ == "prism_plugin_cuda.ops"


def test_an_unknown_attribute_of_ops_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'mutliply'"):
        ops.mutliply  # noqa: B018


LISTING_PROBE = textwrap.dedent(
    """
    import json, sys
    import prism_core
    from prism_core import ArraySpec
    from prism_core._cli import main

    status = main(["plugins"])
    ps = prism_core.extending.plugins()
    assert ps.records["cuda"].status == "loaded", ps.records["cuda"].reason
    big = ArraySpec((4096, 4096), "bfloat16")
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        chosen = prism_core.explain("matmul", big, big).chosen
        prism_core.explain("linalg.svd", ArraySpec((64, 64)))
    listed = [m for m in ("cupy", "cupyx", "prism_plugin_cuda.ops") if m in sys.modules]
    state = ps.backend("cupy").availability()
    print(json.dumps({"status": status, "chosen": chosen, "listed": listed,
                      "reason": state.reason, "after": "cupy" in sys.modules}))
    """
)


def test_listing_plugins_imports_no_cupy(tmp_path: Path) -> None:
    """``prism plugins``, the plugin set and ``explain`` on simulated GPUs import neither CuPy
    nor the module of the implementations.  An importable stand-in ``cupy`` is on the path,
    so that an import would have succeeded and shown; availability imports it."""
    fake = tmp_path / "site" / "cupy"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "0.0 (a stand-in)"\n', encoding="utf-8")
    # The stand-in first, then whatever path this environment needs (a --target install).
    path = [str(tmp_path / "site"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
        "PYTHONPATH": os.pathsep.join(path),
    }
    proc = subprocess.run(
        [sys.executable, "-c", LISTING_PROBE],
        capture_output=True,
        text=True,
        timeout=RUN_GUARD_S,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = json.loads(proc.stdout.splitlines()[-1])
    assert found["status"] == 0
    assert found["chosen"] == "cuda.tensor_core_matmul"
    assert found["listed"] == []
    assert found["after"] is True  # the stand-in was importable all along
    assert found["reason"].startswith("cupy 0.0 (a stand-in) is installed but CUDA is not"), found


# -- selection on simulated devices -----------------------------------------------------------
#
# The GPUs below are simulated from their descriptions (prism_core.device(..., simulate=True)):
# the dispatcher decides as it would on that GPU, and the NumPy reference computes.


def test_h100_chooses_the_tensor_core_variant_for_bf16(
    library: prism_core.hardware.DeviceLibrary,
) -> None:
    """On a simulated H100 (its description), a large bf16 matmul goes to the tensor cores."""
    a = ArraySpec((4096, 4096), "bfloat16")
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    assert decision.chosen == "cuda.tensor_core_matmul"
    assert (decision.chosen_backend, decision.chosen_device) == ("cuda", "nvidia.h100-sxm")
    assert decision.simulated is True
    assert decision.executed == "numpy.matmul"  # simulated: the reference computes
    assert _verdict(decision, "cuda.matmul").accepted  # eligible too, ranked after
    assert _verdict(decision, "numpy.matmul").reasons == (
        "'numpy' does not drive nvidia.h100-sxm (kind is 'gpu', required 'cpu')",
    )
    ranked = [c.variant for c in decision.candidates if c.accepted]
    assert ranked == ["cuda.tensor_core_matmul", "cuda.matmul"]


def test_l4_rejects_the_tensor_core_variant_in_fp64(
    library: prism_core.hardware.DeviceLibrary,
) -> None:
    """On a simulated L4 (its description), no feature accelerates fp64 matmul."""
    a = ArraySpec((4096, 4096), "float64")
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    assert _verdict(decision, "cuda.tensor_core_matmul").reasons == (
        "nvidia.l4: no feature accelerates matmul in fp64",
    )
    assert decision.chosen == "cuda.matmul"
    assert decision.chosen_device == "nvidia.l4"


def test_h100_fp32_is_not_a_tensor_core_type(library: prism_core.hardware.DeviceLibrary) -> None:
    """The tensor cores take fp32 only as TF32, which the (simulated H100's) description lists
    apart."""
    a = ArraySpec((4096, 4096), "float32")
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    assert decision.chosen == "cuda.matmul"
    assert _verdict(decision, "cuda.tensor_core_matmul").reasons == (
        "nvidia.h100-sxm: no feature accelerates matmul in fp32",
    )


def test_a_small_matmul_on_a_simulated_gpu_has_no_variant(
    library: prism_core.hardware.DeviceLibrary,
) -> None:
    """Too small for the (simulated) GPU, and NumPy does not drive a GPU: nothing is chosen,
    and the decision says why for each candidate."""
    a = ArraySpec((16, 16), "bfloat16")
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    assert decision.chosen is None
    assert decision.executed == "numpy.matmul"
    for name in ("cuda.tensor_core_matmul", "cuda.matmul"):
        verdict = _verdict(decision, name)
        assert not verdict.accepted
        assert verdict.device == "nvidia.h100-sxm"  # the device accepted it; the call did not
        assert verdict.reasons == (TOO_SMALL_16x16,)
    assert "chosen: none: no installed variant can run here" in str(decision)


def test_the_threshold_is_the_largest_array(library: prism_core.hardware.DeviceLibrary) -> None:
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        at = prism_core.explain("matmul", *_specs([(64, 64), (64, 1)]))
        below = prism_core.explain("matmul", *_specs([(63, 64), (64, 1)]))
    assert MIN_ELEMENTS == 4096
    assert at.chosen == "cuda.matmul"
    assert below.chosen is None
    assert _verdict(below, "cuda.matmul").reasons == (
        "can_run: too small to be worth a device transfer (4032 elements, fewer than 4096)",
    )


def test_integer_matmul_stays_off_the_gpu(library: prism_core.hardware.DeviceLibrary) -> None:
    a = ArraySpec((4096, 4096), "int32")
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    assert decision.chosen is None
    assert _verdict(decision, "cuda.matmul").reasons == (
        "can_run: matmul on the GPU takes floating-point or complex arrays, not int32",
    )
    assert _verdict(decision, "cuda.tensor_core_matmul").reasons == (
        "nvidia.l4: no feature accelerates matmul in int32",
    )


def test_other_gpus_are_not_driven(library: prism_core.hardware.DeviceLibrary) -> None:
    """A simulated MI300X (an AMD GPU, from its description) is no device of this backend."""
    a = ArraySpec((4096, 4096), "float16")
    with prism_core.device("amd.mi300x", simulate=True):
        decision = prism_core.explain("matmul", a, a)
    for name in ("cuda.matmul", "cuda.tensor_core_matmul"):
        (reason,) = _verdict(decision, name).reasons
        assert reason.startswith("'cuda' does not drive amd.mi300x ("), reason


@pytest.mark.parametrize("op", OPS)
def test_each_op_on_a_simulated_gpu(
    library: prism_core.hardware.DeviceLibrary, sample_call: Callable[[str], Any], op: str
) -> None:
    """Every op chooses its cuda variant on a simulated L4 (from its description) for a call
    large enough, and the NumPy reference computes it."""
    args, kwargs = sample_call(op)
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain(op, *args, **kwargs)
    assert decision.chosen == f"cuda.{op}", str(decision)
    assert (decision.chosen_backend, decision.chosen_device) == ("cuda", "nvidia.l4")
    assert decision.executed == f"numpy.{op}"


@pytest.mark.parametrize("op", sorted(set(OPS) - NO_CAN_RUN))
def test_small_calls_stay_off_a_simulated_gpu(
    library: prism_core.hardware.DeviceLibrary, sample_call: Callable[[str], Any], op: str
) -> None:
    args, kwargs = sample_call(op)
    small = tuple(_shrink(a) for a in args)
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain(op, *small, **kwargs)
    assert decision.chosen is None, str(decision)
    (reason,) = _verdict(decision, f"cuda.{op}").reasons
    assert reason.startswith("can_run: too small to be worth a device transfer ("), reason


def _shrink(value: Any) -> Any:
    """An array argument cut to a few elements (sequences item by item)."""
    if isinstance(value, list):
        return [_shrink(v) for v in value]
    if isinstance(value, np.ndarray):
        return value[tuple(slice(0, 4) for _ in range(value.ndim))]
    if isinstance(value, tuple):  # a shape
        return tuple(min(n, 4) for n in value)
    return value


@pytest.mark.parametrize("op", ["linalg.solve", "linalg.svd", "linalg.cholesky", "linalg.qr"])
@pytest.mark.parametrize("dtype", ["float16", "int64"])
def test_linalg_takes_what_cusolver_takes(
    library: prism_core.hardware.DeviceLibrary, op: str, dtype: str
) -> None:
    shapes = [(64, 64), (64,)] if op == "linalg.solve" else [(64, 64)]
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain(op, *_specs(shapes, dtype))
    assert decision.chosen is None
    assert _verdict(decision, f"cuda.{op}").reasons == (
        "can_run: linear algebra on the GPU takes float32, float64, complex64 or complex128 "
        f"arrays, not {dtype}",
    )


def test_a_simulated_call_computes_on_numpy(library: prism_core.hardware.DeviceLibrary) -> None:
    a = np.arange(64 * 64, dtype=np.float16).reshape(64, 64) % 7
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        result = prism_core.matmul(a, a)
        decision = prism_core.explain("matmul", a, a)
    assert decision.chosen == "cuda.tensor_core_matmul"
    # The simulation computes on NumPy with the arrays as they are; the decision shows what
    # the chosen variant would move to the GPU, and what that would cost over its host link.
    assert decision.data_movement == tuple(
        f"argument {i}: numpy.ndarray float16[64x64] (8.2 kB) from numpy -> cuda on "
        "nvidia.h100-sxm: copied over the host link (pcie5-x16, 64 GB/s each way): ~0.1 µs"
        for i in (0, 1)
    )
    assert isinstance(result, np.ndarray)
    np.testing.assert_array_equal(result, np.matmul(a, a))


# -- automatic mode on this host --------------------------------------------------------------


@pytest.mark.parametrize("op", ["matmul", "add", "linalg.svd", "fft.fft", "stack", "sort"])
def test_automatic_mode_on_this_host(
    cuda_backend: CudaBackend, sample_call: Callable[[str], Any], op: str
) -> None:
    args, kwargs = sample_call(op)
    decision = prism_core.explain(op, *args, **kwargs)
    state = cuda_backend.availability()
    verdict = _verdict(decision, f"cuda.{op}")
    if not state:  # no GPU here: the backend says why, and NumPy runs the call
        assert not verdict.accepted
        assert verdict.reasons == (f"backend 'cuda' is not available: {state.reason}",)
        assert decision.chosen == f"numpy.{op}"
        assert decision.simulated is False
    else:  # NumPy in: the NumPy variant first (data stays where it is)
        assert decision.chosen == f"numpy.{op}", str(decision)


def test_without_a_gpu_calls_run_on_numpy(cuda_backend: CudaBackend) -> None:
    if cuda_backend.availability():
        pytest.skip("a GPU is usable here: test_cuda_gpu.py covers calls on it")
    a = np.ones((64, 64))
    result = prism_core.matmul(a, a)
    assert isinstance(result, np.ndarray)
    np.testing.assert_array_equal(result, np.full((64, 64), 64.0))


# -- the implementations, with NumPy standing in for CuPy -------------------------------------


def test_every_op_has_a_sample_call(sample_call: Callable[[str], Any]) -> None:
    for op in _catalogue():
        sample_call(op)  # KeyError names an op the tests do not call


@pytest.mark.parametrize("op", OPS)
def test_each_implementation_agrees_with_numpy(
    numpy_as_cupy: CudaBackend,
    sample_call: Callable[[str], Any],
    run_cuda: Callable[..., Any],
    reference_of: Callable[..., Any],
    agrees: Callable[..., None],
    op: str,
) -> None:
    """The cuda variant of every op, on its sample call, gives the NumPy reference's values,
    dtypes, shapes and result types (CuPy's part of the work is NumPy's here)."""
    args, kwargs = sample_call(op)
    expected = reference_of(op, *args, **kwargs)
    actual = run_cuda(op, *args, **kwargs)
    agrees(op, args, expected, actual)


def test_random_normal_gives_the_numbers_of_numpy(numpy_as_cupy: CudaBackend) -> None:
    """One seed, the same numbers: drawn by NumPy's generator, then copied to the GPU."""
    fn = next(v for v in prism_core.get_op("random.normal").variants if v.backend == "cuda")
    ours = fn.resolve()((3, 5), 2.0, 0.5, seed=11, dtype=prism_core.float32)
    theirs = np.random.default_rng(11).normal(2.0, 0.5, size=(3, 5)).astype(np.float32)
    np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(TypeError, match=r"random\.normal draws real floating-point numbers"):
        fn.resolve()((3,), dtype="int32")


@pytest.mark.parametrize(
    ("op", "args", "kwargs", "error", "match"),
    [
        ("power", (np.arange(3), -1), {}, ValueError, "negative integer powers"),
        ("power", (np.arange(3), np.array([1, -1, 2])), {}, ValueError, "negative integer"),
        ("fft.rfft", (np.ones(8, complex),), {}, TypeError, "not supported for the input types"),
        ("convolve", (np.ones(8), np.ones(3)), {"mode": "middle"}, ValueError, "mode must be"),
        ("convolve", (np.ones((2, 8)), np.ones(3)), {}, ValueError, "too deep"),
        ("linalg.qr", (np.eye(3),), {"mode": "r"}, ValueError, "'reduced' or 'complete'"),
        ("linalg.vector_norm", (np.ones(3),), {"ord": "fro"}, ValueError, "for vectors"),
        ("cumulative_sum", (np.ones((2, 2)),), {}, ValueError, "``axis`` argument is required"),
        ("from_dlpack", ([1.0, 2.0],), {}, TypeError, "supports DLPack"),
        ("asarray", (np.ones(3),), {"copy": False, "dtype": "f4"}, ValueError, "avoid copy"),
        ("sum", (np.ones(3),), {"dtype": "bfloat16"}, TypeError, "no bfloat16"),
    ],
)
def test_callers_mistakes_are_numpys_errors(
    numpy_as_cupy: CudaBackend,
    reference_of: Callable[..., Any],
    op: str,
    args: Any,
    kwargs: Any,
    error: type,
    match: str,
) -> None:
    """The reference's exception, in its words (rewritten: ``fft.rfft``'s were the plugin's
    own, "real input, not complex128"; the namespace backend raises NumPy's)."""
    fn = next(v for v in prism_core.get_op(op).variants if v.backend == "cuda").resolve()
    with pytest.raises(error, match=match) as caught:
        fn(*args, **kwargs)
    with pytest.raises(type(caught.value)) as numpy_said:
        reference_of(op, *args, **kwargs)
    assert str(caught.value) == str(numpy_said.value)


def test_power_of_integers_to_non_negative_powers(numpy_as_cupy: CudaBackend) -> None:
    np.testing.assert_array_equal(ops.power(np.arange(4), 2), np.arange(4) ** 2)
    np.testing.assert_array_equal(ops.power(np.arange(4), np.array([0, 1, 2, 3])), [1, 1, 4, 27])
    np.testing.assert_array_equal(ops.power(2.0, np.array([-1, 1])), [0.5, 2.0])


def test_stable_descending_sort_and_the_rest(numpy_as_cupy: CudaBackend) -> None:
    """(``cumulative_sum`` is CuPy's own now: its lines call the variant's function.)"""
    cumulative_sum = CudaBackend().function("cumulative_sum")
    x = np.array([[3.0, np.nan, 1.0, 3.0], [0.0, -1.0, 2.0, 2.0]])
    np.testing.assert_array_equal(ops.sort(x, descending=True), [[np.nan, 3, 3, 1], [2, 2, 0, -1]])
    np.testing.assert_array_equal(ops.sort(x, axis=0), np.sort(x, axis=0))
    np.testing.assert_array_equal(ops.clip(np.arange(4), None, None), np.arange(4))
    np.testing.assert_array_equal(ops.clip(np.arange(4), np.array([1, 1, 1, 1]), 2), [1, 1, 2, 2])
    assert cumulative_sum(np.float64(2.0)).tolist() == [2.0]  # 0-d: a vector of one
    np.testing.assert_array_equal(
        cumulative_sum(np.ones((2, 3), np.int32), axis=-1, include_initial=True),
        [[0, 1, 2, 3], [0, 1, 2, 3]],
    )
    assert cumulative_sum(np.ones(3, np.int32)).dtype == np.int64
    cube = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(
        ops.linalg_vector_norm(cube, axis=(0, 2), keepdims=True),
        np.linalg.vector_norm(cube, axis=(0, 2), keepdims=True),
    )
    np.testing.assert_allclose(
        ops.linalg_vector_norm(cube, ord=np.inf), np.linalg.vector_norm(cube, ord=np.inf)
    )
    upper = ops.linalg_cholesky(np.array([[4.0, 2.0], [2.0, 3.0]]), upper=True)
    np.testing.assert_allclose(upper.T @ upper, [[4.0, 2.0], [2.0, 3.0]])
    assert ops.requires_grad(cube) is cube and ops.detach(cube) is cube
    np.testing.assert_array_equal(ops.where(True, np.ones(2), 0.0), [1.0, 1.0])  # a bool too


def test_solve_broadcasts_batches(numpy_as_cupy: CudaBackend) -> None:
    """NumPy 2 broadcasts the batch dimensions of ``linalg.solve``; CuPy wants them equal."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4, 4)) + 8 * np.eye(4)
    b = rng.standard_normal((2, 1, 4, 2))
    np.testing.assert_allclose(ops.linalg_solve(a, b), np.linalg.solve(a, b))
    v = rng.standard_normal(4)
    np.testing.assert_allclose(ops.linalg_solve(a, v), np.linalg.solve(a, v))


def test_a_cusolver_failure_is_numpys_linalg_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """CuPy reports a singular matrix only when asked to read cuSOLVER's status; the plugin
    asks, and raises NumPy's error in NumPy's words.  (Rewritten: through the variants'
    functions, whose namespace backend gives the reference's words, where ``ops`` gave them.)"""
    import types

    seen: list[dict[str, Any]] = []

    class ErrState:
        def __init__(self, **kwargs: Any) -> None:
            seen.append(kwargs)

        def __enter__(self) -> None:
            return None

        def __exit__(self, *exc: object) -> None:
            return None

    def inv(x: Any) -> Any:
        raise np.linalg.LinAlgError(
            "Error reported by getrf in cuSOLVER. devInfo = [2]. Please refer to the cuSOLVER "
            "documentation."
        )

    def cholesky(x: Any) -> Any:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")

    cupy = types.ModuleType("cupy")
    cupy.linalg = types.SimpleNamespace(inv=inv, cholesky=cholesky)  # type: ignore[attr-defined]
    cupyx = types.ModuleType("cupyx")
    cupyx.errstate = ErrState  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    backend = CudaBackend()
    with pytest.raises(np.linalg.LinAlgError, match=r"^Singular matrix$") as caught:
        backend.function("linalg.inv")(np.zeros((2, 2)))
    assert "cuSOLVER" in str(caught.value.__cause__)
    assert seen == [{"linalg": "raise"}]
    with pytest.raises(np.linalg.LinAlgError, match=r"^Last 2 dimensions"):  # not a status
        backend.function("linalg.cholesky")(np.zeros((2, 3)))
