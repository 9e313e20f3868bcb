# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Random Operations", "Backend-Agnostic Random Operations" (good pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import prism_core as ops

# --- seed snippet (verbatim) ---
# Use ops random functions
def generate_samples(shape):
    return ops.random_normal(shape, mean=0.0, stddev=1.0)
# --- end of seed snippet ---
