"""The codes of ``prism lint``, as data: what each one finds, why, and a bad and a good pattern.

The codes come from the backend-purity guidelines (``shared/seeds/003_*.txt``): code meant to run
on any backend stays inside Prism's ops, keeps its arrays in the backend, and names neither a
framework's data types, nor its devices, random generators or array types.  Each :class:`Code`
carries the text of its entry in ``docs/lint.md`` (``docs/gen_lint_codes.py`` writes the table
and the entries from here; a test fails when the page is out of date) and its ``bad`` and
``good`` snippets, which the tests lint: the bad one must give its code, the good one nothing.

This module imports nothing but :mod:`dataclasses`: ``prism lint --list-codes`` and the
documentation generator read it without loading the checker.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CODES", "FRAMEWORKS", "Code", "by_code"]

#: The array frameworks whose direct use backend-agnostic code avoids (top-level module names).
FRAMEWORKS: tuple[str, ...] = ("numpy", "torch", "cupy", "cupyx", "jax", "mlx")


@dataclass(frozen=True)
class Code:
    """One lint code: ``code`` (``PRISM004``), a short ``name`` (``array-operator``), a one-line
    ``summary`` for the table, ``why`` (a paragraph), ``fix`` (what ``--fix`` rewrites, ``""``
    when it rewrites nothing), and the ``bad`` and ``good`` patterns (Python source)."""

    code: str
    name: str
    summary: str
    why: str
    fix: str
    bad: str
    good: str

    __module__ = "prism_core.lint"

    @property
    def fixable(self) -> bool:
        """Whether ``prism lint --fix`` rewrites some findings of this code."""
        return bool(self.fix)


CODES: tuple[Code, ...] = (
    Code(
        code="PRISM001",
        name="framework-import",
        summary="import of an array framework (numpy, torch, cupy, cupyx, jax, mlx)",
        why=(
            "Code that imports NumPy or torch runs on that framework only: its arrays, its "
            "functions and its devices.  Backend-agnostic code imports Prism "
            "(`import prism_core as prism`), whose ops run on whatever backend is in scope.  "
            "Imports under `if TYPE_CHECKING:` are not reported (they never run).  Code whose "
            "job is to talk to a framework (reading files with NumPy, a plugin) allows it with "
            "`allowed-modules` or `per-file-ignores`."
        ),
        fix="",
        bad="""\
import numpy as np

import prism_core as prism


def center(x):
    return prism.subtract(x, np.mean(x))
""",
        good="""\
import prism_core as prism


def center(x):
    return prism.subtract(x, prism.mean(x))
""",
    ),
    Code(
        code="PRISM002",
        name="framework-call",
        summary="call of a framework function where a Prism op exists (the message names it)",
        why=(
            "`np.sum(x)` turns any array into a NumPy one and computes on the host; "
            "`prism.sum(x)` runs the best variant for the array's backend and the device in "
            "scope.  Reported only where Prism has the op (`np.concatenate` -> "
            "`prism.concat`, `torch.cat` -> `prism.concat`, `np.linalg.svd` -> "
            "`prism.linalg.svd`); a framework call Prism has no op for is left to the import's "
            "finding.  Prism follows the Array API, so check the arguments: `np.std(x, "
            "ddof=1)` is `prism.std(x, correction=1)`, and Prism's `cumulative_sum` wants an "
            "`axis` for arrays of more than one dimension."
        ),
        fix="",
        bad="""\
import numpy as np


def statistics(data):
    return np.mean(data), np.std(data)
""",
        good="""\
import prism_core as prism


def statistics(data):
    return prism.mean(data), prism.std(data)
""",
    ),
    Code(
        code="PRISM003",
        name="array-conversion",
        summary=(
            "`.numpy()`, `.cpu()`, `.item()` of any value; `.tolist()`, `float()`, `int()`, "
            "`complex()`, `bool()` of a Prism array"
        ),
        why=(
            "A conversion leaves the backend: it copies a device array to the host, waits for "
            "queued work, and a Python float rounds what a float16 or complex value held.  Keep "
            "values as arrays and leave Prism once, at the boundary, with `prism.to_numpy(x)`.  "
            "`.numpy()`, `.cpu()` and `.item()` (without arguments) are reported on any value: "
            "they are array methods by name.  `.tolist()` and the builtins are reported only on "
            "what the checker knows to be a Prism array (see *Which values are Prism arrays*)."
        ),
        fix="",
        bad="""\
import prism_core as prism


def normalize(x):
    low = float(prism.min(x))
    return prism.subtract(x, low)
""",
        good="""\
import prism_core as prism


def normalize(x):
    low = prism.min(x)
    return prism.subtract(x, low)
""",
    ),
    Code(
        code="PRISM004",
        name="array-operator",
        summary="Python operator `+ - * / ** @` on a Prism array (fixable)",
        why=(
            "`a - b` runs the array's own `__sub__`: the backend that made `a`, whatever the "
            "scope says, and out of sight of Prism's dispatch, its explanations and its "
            "measurements.  `prism.subtract(a, b)` is the same computation through Prism.  "
            "Reported where an operand is a Prism array by the checker's inference (results of "
            "Prism ops, names bound only to them, parameters annotated with an array type); "
            "`//`, `%`, the bitwise operators and comparisons are not reported, as Prism has no "
            "op for them.  An augmented assignment (`x += y`) is reported but not rewritten: it "
            "updates the array in place, and another reference may rely on that."
        ),
        fix="`a + b` -> `prism.add(a, b)`, and `-`, `*`, `/`, `**`, `@` -> `subtract`, "
        "`multiply`, `divide`, `power`, `matmul`, nested ones inside out",
        bad="""\
import prism_core as prism


def average(values):
    return prism.sum(values) / len(values)
""",
        good="""\
import prism_core as prism


def average(values):
    return prism.divide(prism.sum(values), len(values))
""",
    ),
    Code(
        code="PRISM005",
        name="framework-dtype",
        summary="a framework data type (`np.float32`, `torch.bfloat16`, `np.dtype(...)`)",
        why=(
            "A NumPy dtype means nothing to torch, and NumPy has no bfloat16.  Prism's data "
            "types (`prism.float32`, `prism.bfloat16`, `prism.dtype('float32')`) are "
            "understood by every backend, and a Prism dtype equals the NumPy one it stands for.  "
            "The fix rewrites the value of `dtype=` in a call of a Prism op, where the two are "
            "interchangeable; elsewhere (a torch function, a scalar constructor such as "
            "`np.float32(1.5)`) the finding says what to use."
        ),
        fix="`dtype=np.float32` in a call of a Prism op -> `dtype=prism.float32`",
        bad="""\
import numpy as np
import prism_core as prism


def make(shape):
    return prism.zeros(shape, dtype=np.float32)
""",
        good="""\
import prism_core as prism


def make(shape):
    return prism.zeros(shape, dtype=prism.float32)
""",
    ),
    Code(
        code="PRISM006",
        name="device-placement",
        summary="`.cuda()`, `.to('cuda')`, `device=` in a framework call, `torch.device`, "
        "`torch.cuda.*`",
        why=(
            "Where data lives is the scope's business: `with prism.device('nvidia.h100-sxm'):` "
            "runs the ops there, and `prism.to_device(x, 'nvidia.h100-sxm')` moves an array "
            "explicitly, for every backend that drives the device.  `.to(...)` is reported "
            "when its argument is a device: a device string (`'cuda'`, `'cuda:1'`, `'cpu'`, "
            "`'mps'`), a `device=` keyword, a `torch.device(...)` call or a name ending in "
            "`device`; other `.to` methods (units, for instance) are left alone."
        ),
        fix="",
        bad="""\
def place(tensor, device="cuda"):
    return tensor.to(device)
""",
        good="""\
import prism_core as prism


def place(tensor, device="nvidia.h100-sxm"):
    return prism.to_device(tensor, device)
""",
    ),
    Code(
        code="PRISM007",
        name="framework-random",
        summary="a framework's random numbers (`np.random.*`, `torch.randn`, `jax.random.*`)",
        why=(
            "Each framework has its own generators and seeds: the same seed gives other "
            "numbers on another backend.  `prism.random.normal(shape, mean, std, seed=...)` "
            "gives the same numbers for the same seed on every backend and in every "
            "floating-point dtype.  The message names the Prism op where there is one."
        ),
        fix="",
        bad="""\
import numpy as np


def samples(shape):
    return np.random.normal(0.0, 1.0, shape)
""",
        good="""\
import prism_core as prism


def samples(shape):
    return prism.random.normal(shape, mean=0.0, std=1.0, seed=0)
""",
    ),
    Code(
        code="PRISM008",
        name="framework-type-check",
        summary="`isinstance`/`issubclass`/`type(x) is` on framework types, `hasattr(x, 'numpy')`",
        why=(
            "A branch per framework is the dispatch Prism already does, and it misses every "
            "backend its author did not know.  Convert instead (`prism.asarray(x)` gives an "
            "array of the backend in scope), and ask Prism about the array "
            "(`prism.dtype(x)`)."
        ),
        fix="",
        bad="""\
import numpy as np


def prepare(x):
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x)
""",
        good="""\
import prism_core as prism


def prepare(x):
    return prism.asarray(x)
""",
    ),
)

_BY_CODE = {c.code: c for c in CODES}


def by_code(code: str) -> Code:
    """The :class:`Code` named ``code`` (``"PRISM004"``); ``KeyError`` for another string."""
    return _BY_CODE[code]
