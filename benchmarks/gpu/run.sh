#!/usr/bin/env bash
# The GPU check (docs/gpu.md): on the GPU machine, install the wheels that prepare.sh put in
# benchmarks/gpu/wheels/ into a folder of their own (never touching the image's torch, CuPy or
# JAX), put it on PYTHONPATH, and run every step of benchmarks/gpu/run.py, each under its own
# timeout, all within 8 minutes from here (run.py's --budget); everything lands in one archive,
# $OUT/gpu-check-N-DATE.tar.gz (logs/, results/, summary.json, summary.md), and the summary
# table in $OUT/summary.md.
#
#   OUT=DIR benchmarks/gpu/run.sh [--dry-run] [run.py's options: --budget S, --only STEP,...,
#                                  --device TYPE]
#
# --dry-run: on a machine without a GPU (CI), in the environment at hand (no wheels installed);
# each GPU step runs its dry form and says "skipped: no GPU" with the reason.
# --device TYPE (or PRISM_GPU_DEVICE=TYPE): check another accelerator than NVIDIA's, named by
# its Prism description (amd.mi300x, intel.max-1550, apple.m4-max-gpu, huawei.ascend-910b, or a
# family such as amd.gpu); where it is not present, run.py says what is and exits 1.
set -euo pipefail
# run.py's --budget counts from here: the installation of the wheels is part of it.
export PRISM_GPU_CHECK_STARTED="${PRISM_GPU_CHECK_STARTED:-$(date +%s.%N)}"
cd "$(dirname "$0")/../.."
python="${PYTHON:-python3}"
out="${OUT:?set OUT to the folder for the archive of the logs and results}"
mkdir -p "$out"

if [[ " $* " != *" --dry-run "* ]]; then
    wheels=benchmarks/gpu/wheels
    if ! compgen -G "$wheels/*.whl" > /dev/null; then
        echo "run.sh: no wheels in $wheels; run benchmarks/gpu/prepare.sh on a machine with" \
             "PyPI first, and carry that folder to this one" >&2
        exit 2
    fi
    site="${PRISM_GPU_SITE:-/tmp/prism-gpu-site}"
    rm -rf "$site"
    "$python" -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
        --no-compile --no-cache-dir --target "$site" "$wheels"/*.whl
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
    export PATH="$site/bin:$PATH"
    echo "run.sh: $(ls "$wheels"/*.whl | wc -l) wheels installed into $site"
fi
exec "$python" benchmarks/gpu/run.py --out "$out" "$@"
