#!/usr/bin/env bash
# Prepare, on a CPU machine with PyPI, everything the GPU machine needs that its image lacks:
# the pinned wheels of benchmarks/gpu/wheels.txt for CPython 3.12 on manylinux x86-64, and
# wheels of prism-core and its plugins, into benchmarks/gpu/wheels/ (git-ignored).  Then
# benchmarks/gpu/run.sh installs them there without a package index (docs/gpu.md).
#
#   benchmarks/gpu/prepare.sh [PYTHON]     # PYTHON: any Python with pip (default python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
python="${1:-python3}"
dest=benchmarks/gpu/wheels
# What travels to the GPU machine in all (the device tool's limit): the checkout's tracked
# files and these wheels together.
limit_mib=64

rm -rf "$dest"
mkdir -p "$dest"
# One version of each dependency: --no-deps, every name pinned in wheels.txt.
"$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 \
    --dest "$dest" -r benchmarks/gpu/wheels.txt
# The project and the plugins the GPU run uses (pure Python: one wheel fits every Python).
"$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$dest" \
    . plugins/prism-plugin-torch plugins/prism-plugin-cuda plugins/prism-plugin-scipy \
    plugins/prism-plugin-genomics plugins/prism-plugin-numba plugins/prism-plugin-parasail \
    plugins/prism-plugin-jax

size_kib=$(du -sk "$dest" | cut -f1)
tree_kib=$(git ls-files -z 2>/dev/null | du -ck --files0-from=- 2>/dev/null | tail -n 1 | cut -f1 ||
           true)
tree_kib=${tree_kib:-0}
count=$(find "$dest" -name '*.whl' | wc -l)
if (( size_kib + $tree_kib > limit_mib * 1024 )); then
    echo "prepare.sh: $dest holds $((size_kib / 1024)) MiB, and the checkout" \
         "$(($tree_kib / 1024)) MiB: over the ${limit_mib} MiB that travels to the GPU" \
         "machine; drop a wheel from benchmarks/gpu/wheels.txt" >&2
    exit 1
fi
echo "prepare.sh: $count wheels, $((size_kib / 1024)) MiB in $dest (with the checkout," \
     "$(((size_kib + $tree_kib) / 1024)) of the ${limit_mib} MiB that travels); next, on" \
     "the GPU machine: benchmarks/gpu/run.sh (docs/gpu.md)"
