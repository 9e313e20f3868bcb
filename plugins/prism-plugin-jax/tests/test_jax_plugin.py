"""The JAX plugin as users get it: found through its entry point, conformant (with x64, where
JAX can compute what NumPy computes), honest about the dtypes it holds without x64, NumPy's
errors for JAX's quirks, its compilations reported apart, and clean exits in fresh processes.

These tests run with ``JAX_ENABLE_X64=1`` (``conftest.py``); those of JAX's default, without
x64, run in fresh processes with it unset."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import prism_core as prism
from prism_core import reference

jax = pytest.importorskip("jax", reason="the jax backend's variants need jax")
jnp = pytest.importorskip("jax.numpy")

GUIDE = Path(__file__).parents[3] / "docs" / "writing-a-plugin.md"
SOURCE = Path(__file__).parents[1] / "src" / "prism_plugin_jax" / "plugin.py"


def _fresh(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter with only this plugin, JAX's own x64 default unless
    ``env`` says otherwise."""
    environ = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    environ.update(PRISM_PLUGINS="jax", PRISM_DISABLE_PLUGIN_AUTOLOAD="1", **env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=240,
        env=environ,
        check=False,
    )


def test_found_through_its_entry_point_with_a_variant_of_every_standard_op() -> None:
    record = prism.extending.plugins().records["jax"]
    assert record.status == "loaded", record.reason
    assert record.origin == "entry point"
    assert record.backends == ["jax"]
    names = {v.name for v in record.variants}
    assert {"jax.matmul", "jax.gpu.matmul", "jax.linalg.eig", "jax.dot"} <= names
    from prism_core.kernel.records.standard import STANDARD_OPS

    assert {f"jax.{op}" for op in STANDARD_OPS.values()} <= names


@pytest.mark.timeout(1800)  # 14,000 checks, each shape compiled once: minutes on 2 busy cores
def test_the_conformance_suite_passes() -> None:
    from prism_core.testing import check_backend

    report = check_backend("jax")
    assert report.failed == [], str(report)
    assert len(report.passed) > 5000


def test_results_are_jax_arrays_that_numpy_code_gets_back_as_numpy() -> None:
    a = np.arange(6.0).reshape(2, 3)
    with prism.use_backend("jax"):
        out = prism.matmul(a, a.T)
        host = prism.to_numpy(out)
    assert isinstance(out, jax.Array) and out.dtype == jnp.float64
    assert isinstance(host, np.ndarray) and host.flags.writeable
    np.testing.assert_allclose(host, a @ a.T)
    x = jnp.asarray(a)
    assert isinstance(prism.std(x, axis=1), jax.Array)  # JAX data stays JAX's


@pytest.mark.parametrize(
    ("call", "reference"),
    [
        (lambda: prism.linalg.inv(np.zeros((2, 2))), lambda: np.linalg.inv(np.zeros((2, 2)))),
        (
            lambda: prism.take(np.arange(3.0), np.array([5])),
            lambda: prism.reference.implementation("take")(np.arange(3.0), np.array([5])),
        ),
        (
            lambda: prism.matmul(np.ones((2, 3)), np.ones((2, 3))),
            lambda: np.ones((2, 3)) @ np.ones((2, 3)),
        ),
        (
            lambda: prism.linalg.cholesky(-np.eye(2)),
            lambda: np.linalg.cholesky(-np.eye(2)),
        ),
    ],
    ids=["singular-inv", "take-out-of-range", "matmul-shapes", "cholesky-not-positive"],
)
def test_a_callers_mistake_raises_numpys_exception_in_numpys_words(call, reference) -> None:
    with pytest.raises(Exception) as numpy_said:  # noqa: PT011 - whatever NumPy raises
        reference()
    with prism.use_backend("jax"), pytest.raises(type(numpy_said.value)) as prism_said:
        call()
    assert str(prism_said.value) == str(numpy_said.value)


_I32 = np.array([7, -7, 0, 5, -1, 3], dtype=np.int32)
_ZEROS = np.array([0, 0, 0, 2, 0, -2], dtype=np.int32)
_I8 = np.array([1, -2, 3, 0, -5, 6], dtype=np.int8)
_U8 = np.array([1, 2, 3, 200, 0, 9], dtype=np.uint8)
_B = np.array([True, False, True, True, False, False])
_C64 = np.array([1 + 1j, 2, -1j, 0, 3, 1], dtype=np.complex64)


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("floor_divide", (_I32, _ZEROS)),  # jax.numpy: -1 where NumPy gives 0
        ("floor_divide", (_U8, _U8 * 0)),  # jax.numpy: 255
        ("floor_divide", (_I32, 0)),
        ("floor_divide", (_B, _B)),  # NumPy: int8
        ("remainder", (_I32, _ZEROS)),
        ("power", (_I32, np.array([-1, 2, -1, 1, 0, 2], dtype=np.int32))),  # NumPy: ValueError
        ("power", (np.array([2, 3], dtype=np.uint8), np.array([-1, 2], dtype=np.int8))),
        ("power", (_B, _B)),
        ("square", (_B,)),
        ("atan2", (_C64, _C64.real)),  # NumPy: TypeError
        ("atan2", (_C64.real, _C64)),
        ("logaddexp", (_C64, _C64)),
        *[(op, (_I8, _U8)) for op in ("atan2", "hypot", "copysign", "nextafter", "logaddexp")],
        ("atan2", (_I8, 2.5)),  # NEP 50: float64
        ("atan2", (_I8.astype(np.int16), _U8.astype(np.uint16))),  # NumPy: float32
        ("remainder", (_B, _B)),  # NumPy: int8
        ("bitwise_left_shift", (_B, _B)),
        ("bitwise_right_shift", (_B, _B)),
        ("conj", (_B,)),  # NumPy: int8
        ("sign", (_B,)),  # NumPy: TypeError
        ("positive", (_B,)),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_numpy_s_values_dtypes_and_exceptions_on_jax_arrays(op: str, args: tuple) -> None:
    """JAX's own answers where NumPy's differ: integer division by zero, negative integer
    powers, complex operands of real functions, the loop NumPy picks for booleans and mixed
    small integers."""
    with np.errstate(all="ignore"):
        try:
            expected = reference.implementation(op)(*args)
        except Exception as exc:  # whatever NumPy raises, JAX's must be the same
            expected = exc
    given = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    with prism.use_backend("jax"):
        if isinstance(expected, Exception):
            with pytest.raises(type(expected)) as info:
                prism.get_op(op).function(*given)
            assert type(info.value) is type(expected)
            return
        actual = prism.get_op(op).function(*given)
    assert isinstance(actual, jax.Array)
    assert actual.dtype == expected.dtype
    exact = expected.dtype.kind in "biu"
    rtol = 0 if exact else 4 * np.finfo(expected.dtype).eps  # libm's last bit is JAX's own
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol)


def test_atan2_of_numpy_complex_arrays_under_use_backend_jax_raises_numpy_s_error() -> None:
    with pytest.raises(TypeError) as numpy_said:
        np.atan2(_C64, _C64.real)
    with prism.use_backend("jax"), pytest.raises(TypeError) as prism_said:
        prism.atan2(_C64, _C64.real)
    assert type(prism_said.value) is type(numpy_said.value)


def test_without_x64_float64_is_declined_with_the_reason_not_computed_in_float32() -> None:
    run = _fresh(
        """
        import numpy as np, prism_core as prism
        a64, a32 = np.ones((3, 3)), np.ones((3, 3), dtype=np.float32)
        reasons = {c.variant: c.reasons for c in prism.explain("matmul", a64, a64).candidates}
        print("|".join(reasons["jax.matmul"]))
        with prism.use_backend("jax"):
            print(prism.matmul(a32, a32).dtype)
            try:
                prism.matmul(a64, a64)
            except prism.DispatchError as e:
                print("declined:", "jax holds no float64" in str(e))
        """
    )
    assert run.returncode == 0, run.stderr
    declined, dtype, named = run.stdout.splitlines()
    assert "jax holds no float64 on" in declined
    assert dtype == "float32"
    assert named == "declined: True"
    x64 = _fresh(
        """
        import numpy as np, prism_core as prism
        with prism.use_backend("jax"):
            print(prism.matmul(np.ones((2, 2)), np.ones((2, 2))).dtype)
        """,
        JAX_ENABLE_X64="1",
    )
    assert x64.stdout.strip() == "float64", x64.stderr


def test_explain_says_numpy_arrays_are_copied_into_jax() -> None:
    a = prism.ArraySpec((64, 64), "float64")
    with prism.use_backend("jax"):
        decision = prism.explain("matmul", a, a)
    assert decision.chosen == "jax.matmul"
    assert all("copied (jax takes arrays by copy)" in m for m in decision.data_movement)


def test_tuning_reports_the_compilation_at_a_new_shape_apart() -> None:
    x = jnp.ones((33, 17))  # a shape no other test compiles
    # A budget no compilation on a busy machine exhausts: it bounds the run, never lengthens it.
    report = prism.tuning.tune("std", x, budget_s=20)
    (case,) = report.cases
    (jitted,) = [m for m in case.measurements if m.variant == "jax.std"]
    assert jitted.first_call is not None and jitted.first_call > jitted.seconds
    assert "jax compiles per shape" in str(report)


def test_exits_cleanly_after_taking_numpy_arrays() -> None:
    """A DLPack import of a NumPy array made JAX abort at interpreter exit, now and then: the
    plugin copies instead.  Ten fresh processes each take NumPy arrays in every way and exit."""
    code = """
        import numpy as np, prism_core as prism
        data = [np.random.default_rng(i).normal(size=(64, 64)).astype(np.float32) for i in range(8)]
        with prism.use_backend("jax"):
            out = [prism.matmul(d, d) for d in data]
            out += [prism.asarray(d) for d in data] + [prism.from_dlpack(d) for d in data]
        del data
        print(sum(float(prism.to_numpy(o).sum()) for o in out) != 0)
    """
    for _ in range(10):
        run = _fresh(code)
        assert (run.returncode, run.stdout.strip()) == (0, "True"), run.stderr[-2000:]


def test_the_plugin_guide_shows_this_plugin_as_it_is() -> None:
    """docs/writing-a-plugin.md, "Your library already speaks the Array API", holds the whole
    plugin: the example is the code these tests test."""
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(
        "<!-- the jax plugin: plugins/prism-plugin-jax/src/prism_plugin_jax/plugin.py -->"
    )
    block = text[start:].split("```python\n", 1)[1].split("\n```", 1)[0] + "\n"
    assert block == SOURCE.read_text(encoding="utf-8")


def test_the_doctor_and_listing_import_no_jax() -> None:
    run = _fresh(
        """
        import sys, prism_core as prism
        backend = prism.extending.plugins().backend("jax")
        print(bool(backend.availability()), sorted(backend.capabilities()), backend.dtypes())
        a = prism.ArraySpec((4, 4), "float32")
        prism.explain("matmul", a, a)
        print("jax" in sys.modules)
        """
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "False"
