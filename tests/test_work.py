"""The work ops declare: flops and bytes from shapes (prism_core._tuning.work)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from prism_core._tuning import work as work_module
from prism_core._tuning.op_work import Work
from prism_core._tuning.work import declare_work, declared_ops, has_work, work_of
from prism_core.kernel.dispatch.catalogue import ALIASES as CATALOGUE_ALIASES
from prism_core.kernel.dispatch.catalogue import CATALOGUE


@pytest.fixture(autouse=True)
def _forget_user_declarations() -> Iterator[None]:
    saved = dict(work_module._USER)
    yield
    work_module._USER.clear()
    work_module._USER.update(saved)


# -- Work ----------------------------------------------------------------------------------------


def test_work_is_a_frozen_value_with_validated_numbers() -> None:
    w = Work(10, 4)
    assert (w.flops, w.bytes) == (10.0, 4.0)
    assert w.intensity == 2.5
    assert w.moved_bytes == 4.0
    assert Work(0, 0).intensity == 0.0
    assert Work(1, 0).intensity == math.inf
    assert Work(0, 0, io_bytes=16).moved_bytes == 16.0
    with pytest.raises(AttributeError):
        w.flops = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"flops must be finite and >= 0, got -1"):
        Work(-1, 0)
    with pytest.raises(TypeError, match=r"bytes must be a number, got True"):
        Work(0, True)
    with pytest.raises(ValueError, match="io_bytes"):
        Work(0, 0, io_bytes=math.nan)
    assert Work.__module__ == "prism_core.extending"


# -- matmul and dot ------------------------------------------------------------------------------


def test_matmul_is_2mnk_with_batch_dimensions() -> None:
    w = work_of("matmul", ((5, 64, 32), (32, 16)), 4)
    assert w == Work(2.0 * 5 * 64 * 16 * 32, 4 * (5 * 64 * 32 + 32 * 16 + 5 * 64 * 16))
    # Batch dimensions broadcast: (3, 1, m, k) @ (4, k, n) makes 12 products.
    w = work_of("matmul", ((3, 1, 8, 6), (4, 6, 2)), 8)
    assert w is not None and w.flops == 2.0 * 12 * 8 * 2 * 6
    assert w.bytes == 8 * (3 * 8 * 6 + 4 * 6 * 2 + 12 * 8 * 2)


def test_matmul_with_one_dimensional_operands() -> None:
    assert work_of("matmul", ((32,), (32, 16)), 8) == Work(2.0 * 16 * 32, 8 * (32 + 512 + 16))
    assert work_of("matmul", ((64, 32), (32,)), 8) == Work(2.0 * 64 * 32, 8 * (2048 + 32 + 64))
    assert work_of("matmul", ((32,), (32,)), 8) == Work(2.0 * 32, 8 * (32 + 32 + 1))


def test_matmul_8192_cubed() -> None:
    w = work_of("matmul", ((8192, 8192), (8192, 8192)), 4)
    assert w == Work(2 * 8192**3, 3 * 8192 * 8192 * 4)


def test_complex_matmul_counts_four_real_operations_per_term() -> None:
    real = work_of("matmul", ((16, 16), (16, 16)), 8)
    cplx = work_of("matmul", ((16, 16), (16, 16)), 8, complex_input=True)
    assert real is not None and cplx is not None
    assert cplx.flops == 4 * real.flops
    assert cplx.bytes == real.bytes


def test_matmul_shape_errors_name_the_op_and_shapes() -> None:
    with pytest.raises(ValueError, match=r"matmul: inner dimensions differ: shapes \(4, 5\) and"):
        work_of("matmul", ((4, 5), (6, 7)), 8)
    with pytest.raises(ValueError, match="0-d operands"):
        work_of("matmul", ((), (3, 3)), 8)
    with pytest.raises(ValueError, match="matmul takes 2 array arguments; got 1 shape"):
        work_of("matmul", ((3, 3),), 8)


def test_dot() -> None:
    assert work_of("dot", ((10,), (10,)), 8) == Work(20.0, 8 * 21)
    assert work_of("dot", ((4, 10), (10, 3)), 8) == Work(2.0 * 12 * 10, 8 * (40 + 30 + 12))
    assert work_of("dot", ((), (5,)), 8) == Work(5.0, 8 * (1 + 5 + 5))


# -- Fourier transforms ------------------------------------------------------------------------


def test_fft_is_5_n_log2_n_and_writes_complex_output() -> None:
    # A float32 input (4 bytes) gives complex64 output (8 bytes).
    assert work_of("fft.fft", ((1024,),), 4) == Work(5 * 1024 * 10, 1024 * 4 + 1024 * 8)
    # A complex input keeps its itemsize.
    w = work_of("fft.fft", ((1024,),), 8, complex_input=True)
    assert w == Work(5 * 1024 * 10, 2 * 1024 * 8)
    # One transform per line along the last axis.
    assert work_of("fft.ifft", ((8, 1024),), 16, complex_input=True) == Work(
        8 * 5 * 1024 * 10, 2 * 8 * 1024 * 16
    )


def test_rfft_counts_half_and_writes_the_half_spectrum() -> None:
    assert work_of("fft.rfft", ((1024,),), 8) == Work(2.5 * 1024 * 10, 1024 * 8 + 513 * 16)


def test_multidimensional_transforms_cover_their_axes() -> None:
    # 5 size log2 size over the transformed axes, once per remaining line.
    assert work_of("fft.fft2", ((3, 64, 32),), 16, complex_input=True) == Work(
        3 * 5 * 2048 * 11, 2 * 3 * 2048 * 16
    )
    assert work_of("fft.fftn", ((4, 8, 16),), 16, complex_input=True) == Work(
        5 * 512 * 9, 2 * 512 * 16
    )


def test_fft_of_one_point_does_no_arithmetic() -> None:
    w = work_of("fft.fft", ((1,),), 16, complex_input=True)
    assert w is not None and w.flops == 0.0


# -- linear algebra ------------------------------------------------------------------------------


def test_svd_uses_the_golub_reinsch_count() -> None:
    n = 100
    assert work_of("linalg.svd", ((n, n),), 8) == Work(21.0 * n**3, 8 * (n * n + n * n + n + n * n))
    m, n = 300, 50
    w = work_of("linalg.svd", ((m, n),), 8)
    assert w is not None
    assert w.flops == 4.0 * m * m * n + 8.0 * m * n * n + 9.0 * n**3
    # A wide matrix costs what its transpose does.
    wide = work_of("linalg.svd", ((n, m),), 8)
    assert wide is not None and wide.flops == w.flops


def test_solve_is_lu_plus_two_triangular_solves_per_column() -> None:
    n = 64
    w = work_of("linalg.solve", ((n, n), (n,)), 8)
    assert w == Work(2 / 3 * n**3 + 2 * n * n, 8 * (n * n + n + n))
    w = work_of("linalg.solve", ((2, n, n), (2, n, 5)), 8)
    assert w is not None and w.flops == pytest.approx(2 * (2 / 3 * n**3 + 2 * n * n * 5))
    with pytest.raises(ValueError, match=r"linalg.solve: shapes \(64, 64\) and \(63,\)"):
        work_of("linalg.solve", ((n, n), (n - 1,)), 8)
    with pytest.raises(ValueError, match="square"):
        work_of("linalg.solve", ((n, n + 1), (n,)), 8)


def test_factorisations() -> None:
    n = 30
    cholesky = work_of("linalg.cholesky", ((n, n),), 8)
    assert cholesky is not None and cholesky.flops == pytest.approx(n**3 / 3)
    inv = work_of("linalg.inv", ((n, n),), 8)
    assert inv is not None and inv.flops == 2.0 * n**3
    eigh = work_of("linalg.eigh", ((n, n),), 8)
    assert eigh is not None and eigh.flops == 9.0 * n**3
    det = work_of("linalg.det", ((4, n, n),), 8)
    assert det is not None and det.flops == pytest.approx(4 * 2 / 3 * n**3)
    m = 80
    qr = work_of("linalg.qr", ((m, n),), 8)
    assert qr is not None and qr.flops == pytest.approx(4 * m * n * n - 4 / 3 * n**3)
    with pytest.raises(ValueError, match=r"linalg.inv needs a matrix"):
        work_of("linalg.inv", ((n,),), 8)


# -- elementwise, reductions, the rest ------------------------------------------------------------


def test_elementwise_is_one_flop_per_output_element() -> None:
    assert work_of("add", ((1000,), (1000,)), 4) == Work(1000.0, 4 * 3000)
    # Broadcasting: (3, 1) + (4,) -> (3, 4).
    assert work_of("multiply", ((3, 1), (4,)), 8) == Work(12.0, 8 * (3 + 4 + 12))
    assert work_of("sqrt", ((10, 10),), 8) == Work(100.0, 8 * 200)
    # A Python scalar operand is a 0-d shape.
    assert work_of("add", ((10,), ()), 8) == Work(10.0, 8 * 21)
    with pytest.raises(ValueError, match=r"do not broadcast together \(axis -1: \[3, 4\]\)"):
        work_of("add", ((3,), (4,)), 8)


def test_reductions_read_every_element() -> None:
    assert work_of("sum", ((1000,),), 8) == Work(1000.0, 8 * 1001)
    assert work_of("max", ((10, 100),), 4) == Work(1000.0, 4 * 1001)
    assert work_of("cumulative_sum", ((10, 100),), 8) == Work(1000.0, 8 * 2000)
    std = work_of("std", ((100,),), 8)
    assert std is not None and std.flops == 400.0


def test_creation_and_manipulation_ops_compute_nothing() -> None:
    # A creation op's one shape is the shape it creates.
    assert work_of("zeros", ((10, 10),), 8) == Work(0.0, 800.0)
    # A view moves no memory, but its argument crosses a host link.
    view = work_of("reshape", ((10, 10),), 8)
    assert view == Work(0.0, 0.0, io_bytes=1600.0)
    assert work_of("concat", ((10,), (20,)), 4) == Work(0.0, 2 * 4 * 30)


def test_every_catalogue_op_declares_work_but_einsum() -> None:
    # einsum's work depends on its subscripts, which are not an array argument.
    assert sorted(op for op in CATALOGUE if not has_work(op)) == ["einsum"]
    assert work_of("einsum", ((3, 3), (3, 3)), 8) is None


def test_the_aliases_agree_with_the_catalogue() -> None:
    assert dict(CATALOGUE_ALIASES) == work_module.ALIASES
    assert work_of("matrix_multiply", ((4, 4), (4, 4)), 8) == work_of("matmul", ((4, 4), (4, 4)), 8)
    assert has_work("vector_add")


def test_unknown_ops_have_no_work() -> None:
    assert work_of("mylib.nothing", ((3,),), 8) is None
    assert not has_work("mylib.nothing")
    assert "matmul" in declared_ops()


def test_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match=r"shapes must be a sequence of shapes"):
        work_of("add", "3,3", 8)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"shapes\[1\] = \(3, 1.5\): dimensions must be ints"):
        work_of("add", ((3,), (3, 1.5)), 8)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"itemsize must be a positive int"):
        work_of("add", ((3,), (3,)), 0)
    with pytest.raises(TypeError, match=r"op_name must be an op name"):
        work_of(None, ((3,),), 8)  # type: ignore[arg-type]
    # An int is a 1-d shape.
    assert work_of("sum", (5,), 8) == Work(5.0, 48.0)


# -- user declarations ---------------------------------------------------------------------------


def test_declare_work_for_a_user_op() -> None:
    def smooth(shapes: tuple[tuple[int, ...], ...], itemsize: int) -> Work:
        (n,) = shapes[0]
        return Work(9.0 * n, 2.0 * n * itemsize)

    assert declare_work("mylib.smooth", smooth) is smooth
    assert has_work("mylib.smooth")
    assert work_of("mylib.smooth", ((100,),), 4) == Work(900.0, 800.0)
    # The same function again: nothing happens.
    declare_work("mylib.smooth", smooth)
    with pytest.raises(ValueError, match=r"the work of 'mylib.smooth' is declared already"):
        declare_work("mylib.smooth", lambda shapes, itemsize: Work(0, 0))
    declare_work("mylib.smooth", lambda shapes, itemsize: Work(1, 1), replace=True)
    assert work_of("mylib.smooth", ((100,),), 4) == Work(1.0, 1.0)


def test_declare_work_as_a_decorator() -> None:
    @declare_work("mylib.blur")
    def blur(shapes: tuple[tuple[int, ...], ...], itemsize: int) -> Work:
        return Work(1.0, float(itemsize))

    assert work_of("mylib.blur", ((1,),), 8) == Work(1.0, 8.0)
    assert blur(((1,),), 2) == Work(1.0, 2.0)


def test_a_builtin_is_replaced_only_on_request() -> None:
    with pytest.raises(ValueError, match=r"declared already \(Prism's builtin declaration\)"):
        declare_work("matmul", lambda shapes, itemsize: Work(0, 0))
    declare_work("matmul", lambda shapes, itemsize: Work(7, 7), replace=True)
    assert work_of("matmul", ((2, 2), (2, 2)), 8) == Work(7.0, 7.0)


def test_declare_work_errors_name_the_argument() -> None:
    with pytest.raises(TypeError, match=r"op_name must be an op name.*got 'My Op'"):
        declare_work("My Op", lambda shapes, itemsize: Work(0, 0))
    with pytest.raises(TypeError, match=r"declare_work\('mylib.x', fn\): fn must be a function"):
        declare_work("mylib.x", 42)  # type: ignore[call-overload]
    declare_work("mylib.bad", lambda shapes, itemsize: (1, 2))  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match=r"declared for 'mylib.bad' .* returned \(1, 2\); it must"):
        work_of("mylib.bad", ((1,),), 8)


def test_cov_is_2_v_squared_n() -> None:
    # V variables of N observations: centring (2 V N) and the product with the transpose.
    assert work_of("cov", ((3, 5),), 8) == Work(2 * 9 * 5 + 2 * 15, 8 * (15 + 9))
    assert work_of("cov", ((3, 5), (2, 5)), 8) == Work(2 * 25 * 5 + 2 * 25, 8 * (25 + 25))
    assert work_of("cov", ((5,),), 8) == Work(2 * 5 + 2 * 5, 8 * (5 + 1))
