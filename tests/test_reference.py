"""``prism_core.reference``: the NumPy reference's implementations and argument rules, public
for backends (the bundled plugins use it rather than prism-core's private modules)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import numpy as np
import pytest

import prism_core
import prism_core.reference as reference

from .conftest import REPO


def test_importing_it_imports_no_array_library() -> None:
    code = (
        "import sys, json; import prism_core.reference; "
        "print(json.dumps([m for m in ('numpy', 'torch', 'scipy', 'cupy') if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


@pytest.mark.parametrize("op", ["linalg.pinv", "flip", "fft.fftn", "sin", "unique_all", "add"])
def test_implementation_is_the_numpy_variants_function(op: str) -> None:
    variant = next(v for v in prism_core.get_op(op).variants if v.backend == "numpy")
    assert reference.implementation(op) is variant.resolve()


def test_an_unknown_op_is_named() -> None:
    with pytest.raises(KeyError, match=r"linalg\.pinf.* is not a builtin op .*all_ops\(\)"):
        reference.implementation("linalg.pinf")


def test_eig_real_when_real_says_what_the_reference_returns() -> None:
    """NumPy releases differ (2.4 gives real arrays for a real spectrum; the standard, and the
    NumPy on the GPU image, complex ones): the answer is the reference's own result's."""
    upper = np.triu(np.arange(1.0, 10.0).reshape(3, 3))
    values = reference.implementation("linalg.eig")(upper).eigenvalues
    assert reference.eig_real_when_real() is (values.dtype.kind == "f")


def test_the_rules_raise_the_references_errors() -> None:
    with pytest.raises(ValueError, match="axes"):
        reference.transform_sizes("fft.fftn", (4, 4), (4,), None, "complex")
    assert reference.negative_axis("linalg.cross", -1, ((2, 3), (3,)), 3) == -1
    with pytest.raises(ValueError, match=r"linalg\.cross"):
        reference.negative_axis("linalg.cross", -1, ((2, 4), (4,)), 3)  # cross needs size 3
    x = np.arange(6.0).reshape(2, 3)
    assert reference.take_in(np, x, np.array([2, 0]), axis=1).tolist() == [[2.0, 0.0], [5.0, 3.0]]


def test_the_bundled_plugins_import_nothing_private_of_prism_core() -> None:
    """A plugin is a separately installed package: it uses prism-core's public modules only
    (``prism_core.kernel.config`` aside, whose cache directory the Numba plugin shares)."""
    found = []
    for path in sorted((REPO / "plugins").glob("*/src/**/*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                private = parts[0] == "prism_core" and any(p.startswith("_") for p in parts[1:])
                if private and not name.startswith("prism_core.kernel.config"):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {name}")
    assert found == []
