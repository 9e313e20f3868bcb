"""``benchmarks/bench_npbench.py``, the held-out-suite runner, on a checkout laid out as NPBench
lays itself out (``bench_info/<name>.json``, ``npbench/benchmarks/<path>/<module>.py`` with its
``initialize`` and ``<module>_numpy.py`` with the kernel), holding three kernels written here:
a stencil updated in place, a pure reduction, and one whose Prism-first run differs from
NumPy's (it asks which ``np`` it was given), which the runner must report as not matching.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import prism_core as prism

ROOT = Path(__file__).resolve().parents[1]

#: What these placements hold on jax is JAX's default, 32-bit mode (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("jax_without_x64")

KERNELS = {
    "stencil": (
        "def initialize(N):\n    import numpy as np\n"
        "    return np.linspace(0.0, 1.0, N, dtype=np.float32) ** 2\n",
        "import numpy as np\n\n\ndef kernel(TSTEPS, A):\n    for _ in range(TSTEPS):\n"
        "        A[1:-1] = 0.5 * (A[:-2] + A[2:])\n",
        {"S": {"TSTEPS": 3, "N": 64}},
        ["TSTEPS", "A"],
        ["A"],
    ),
    "energy": (
        "def initialize(N):\n    import numpy as np\n"
        "    return np.linspace(0.0, 1.0, N, dtype=np.float32)\n",
        "import numpy as np\n\n\ndef kernel(A):\n    return np.sum(A * A)\n",
        {"S": {"N": 256}},
        ["A"],
        [],
    ),
    "odd": (
        "def initialize(N):\n    import numpy as np\n    return np.ones(N)\n",
        "import numpy as np\n\n\ndef kernel(A):\n"
        "    return A * (1.0 if type(np).__name__ == 'module' else 2.0)\n",
        {"S": {"N": 8}},
        ["A"],
        [],
    ),
}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    for name, (init, numpy_src, params, inputs, outputs) in KERNELS.items():
        folder = tmp_path / "npbench" / "benchmarks" / name
        folder.mkdir(parents=True)
        (folder / f"{name}.py").write_text(init)
        (folder / f"{name}_numpy.py").write_text(numpy_src)
        info = {
            "benchmark": {
                "relative_path": name,
                "module_name": name,
                "func_name": "kernel",
                "parameters": params,
                "init": {"func_name": "initialize", "input_args": ["N"], "output_args": ["A"]},
                "input_args": inputs,
                "output_args": outputs,
            }
        }
        (tmp_path / "bench_info").mkdir(exist_ok=True)
        (tmp_path / "bench_info" / f"{name}.json").write_text(json.dumps(info))
    return tmp_path


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The runner, with a tuning cache of this test's own (``--keep-cache`` keeps it)."""
    from prism_core._tuning import tuning_records

    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path / "cache"))
    tuning_records.reload()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_npbench

        yield bench_npbench
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
        prism.extending.reload_plugins()
        monkeypatch.undo()
        tuning_records.reload()


@pytest.mark.timeout(300)
def test_the_runner_checks_times_and_summarises(checkout: Path, bench: Any, tmp_path: Path) -> None:
    out = tmp_path / "record"
    options = ["--rounds", "1", "--budget", "1", "--keep-cache", "--output", str(out)]
    rc = bench.main(["--npbench", str(checkout), *options])
    assert rc == 0
    rows = {r["kernel"]: r for r in json.loads(Path(f"{out}.json").read_text())}
    # The stencil updates its argument: numpy and torch match (the update is the caller's),
    # jax is declined with the reason.
    assert rows["stencil"]["checks"]["numpy"] == rows["stencil"]["checks"]["torch"] == "ok"
    assert "immutable" in rows["stencil"]["checks"]["jax"]
    assert rows["energy"]["backends_ok"] == ["jax", "numpy", "torch"]
    # A kernel whose result differs is reported, with NPBench's measure.
    assert rows["odd"]["checks"]["numpy"].startswith("result 0: relative error 1 >")
    assert rows["odd"]["backends_ok"] == []
    text = Path(f"{out}.md").read_text()
    assert "**2 of 3** (66.7 %; goal >= 85 %)" in text
    assert "odd on numpy: result 0: relative error" in text
    for name in ("stencil", "energy"):
        assert rows[name]["automatic_on"] in ("numpy", "torch", "jax")
        assert rows[name]["auto_over_best"] > 0


def test_a_folder_that_is_no_checkout_is_an_error(bench: Any, tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--npbench", str(tmp_path)])
