"""The JAX backend (plugins/prism-plugin-jax): where ``jax.jit`` pays, what Prism adds to a JAX
call, and what a compilation at a new shape costs.

Three comparisons, each side by side in one process, interleaved rounds, the minimum of many
short repeats (the machine is shared):

* **jit**: each op the plugin compiles whole (``std``, ``var``, ``linalg.vector_norm``) and,
  for contrast, ``linalg.matrix_norm`` and ``add`` (where jit gains nothing): ``jax.numpy``'s
  function op by op against ``jax.jit`` of it, on 1,000 and 1,000,000 float32 elements;
  ratio = op by op / jitted (> 1: jit pays);
* **through Prism**: ``prism.std`` / ``prism.add`` on JAX arrays (automatic mode: the data is
  JAX's) against the plugin's own function called directly: the cost of dispatch;
* **first call at a new shape**: a fresh shape's first call and its steady time.

Run (writes ``benchmarks/results/jax-DATE.{md,json}``)::

    PRISM_PLUGINS=jax PRISM_DISABLE_PLUGIN_AUTOLOAD=1 python benchmarks/bench_jax.py
"""

from __future__ import annotations

import datetime
import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROUNDS = 15


def best(fn: Callable[[], Any], number: int) -> float:
    """The least seconds per call over :data:`ROUNDS` runs of ``number`` calls."""
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(number):
            fn().block_until_ready()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main() -> int:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from prism_plugin_jax import plugin

    import prism_core as prism

    rows: list[dict[str, Any]] = []
    for n in (1_000, 1_000_000):
        x = jnp.asarray(np.random.default_rng(0).normal(size=n).astype(np.float32))
        m = x.reshape(n // 100, 100) if n >= 1_000 else x
        number = 200 if n == 1_000 else 5
        cases: dict[str, tuple[Any, tuple[Any, ...], dict[str, Any]]] = {
            "std": (jnp.std, (x,), {"axis": None}),
            "var": (jnp.var, (x,), {"axis": None}),
            "linalg.vector_norm": (jnp.linalg.vector_norm, (x,), {}),
            "linalg.matrix_norm": (jnp.linalg.matrix_norm, (m,), {}),
            "add": (jnp.add, (x, x), {}),
        }
        for op, (fn, args, kwargs) in cases.items():
            jitted = jax.jit(fn, static_argnames=tuple(kwargs))
            jitted(*args, **kwargs).block_until_ready()
            eager = best(functools.partial(fn, *args, **kwargs), number)
            compiled = best(functools.partial(jitted, *args, **kwargs), number)
            rows.append(
                {
                    "kind": "jit",
                    "op": op,
                    "elements": n,
                    "op_by_op_s": eager,
                    "jitted_s": compiled,
                    "ratio": eager / compiled,
                }
            )
    x = jnp.ones(1_000, dtype=jnp.float32)
    pairs: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        ("std", functools.partial(prism.std, x), functools.partial(plugin.std, x)),
        ("add", functools.partial(prism.add, x, x), functools.partial(jnp.add, x, x)),
    ]
    for op, prism_fn, direct in pairs:
        prism_fn().block_until_ready()
        via, own = best(prism_fn, 500), best(direct, 500)
        rows.append(
            {
                "kind": "dispatch",
                "op": op,
                "elements": 1_000,
                "prism_s": via,
                "direct_s": own,
                "added_s": via - own,
            }
        )
    fresh = jnp.ones((37, 53), dtype=jnp.float32)
    start = time.perf_counter()
    prism.std(fresh).block_until_ready()
    first = time.perf_counter() - start
    steady = best(lambda: prism.std(fresh), 200)
    rows.append(
        {"kind": "first call", "op": "std", "shape": [37, 53], "first_s": first, "steady_s": steady}
    )

    stamp = datetime.date.today().isoformat()
    out = Path(__file__).parent / "results" / f"jax-{stamp}"
    meta = {"jax": jax.__version__, "python": sys.version.split()[0], "rounds": ROUNDS}
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    lines = [
        "# The JAX backend: jit, dispatch, compilation",
        "",
        f"jax {meta['jax']}, Python {meta['python']}, CPU; least time over {ROUNDS} rounds of "
        "short repeats, side by side. Command: `PRISM_PLUGINS=jax "
        "PRISM_DISABLE_PLUGIN_AUTOLOAD=1 python benchmarks/bench_jax.py`.",
        "",
        "| op | elements | op by op | jitted | op by op / jitted |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        if r["kind"] == "jit":
            lines.append(
                f"| {r['op']} | {r['elements']:,} | {r['op_by_op_s'] * 1e6:.1f} µs | "
                f"{r['jitted_s'] * 1e6:.1f} µs | {r['ratio']:.2f} |"
            )
    lines += ["", "| through Prism | Prism | direct | added |", "|---|---|---|---|"]
    for r in rows:
        if r["kind"] == "dispatch":
            lines.append(
                f"| {r['op']} (1,000 float32) | {r['prism_s'] * 1e6:.1f} µs | "
                f"{r['direct_s'] * 1e6:.1f} µs | {r['added_s'] * 1e6:+.1f} µs |"
            )
    first_row = rows[-1]
    lines += [
        "",
        f"First `prism.std` at a new shape (37 x 53): {first_row['first_s'] * 1e3:.1f} ms "
        f"(a compilation); then {first_row['steady_s'] * 1e6:.1f} µs a call.",
    ]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
