# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Preserving Numerical Precision", "Precision-Preserving Patterns" (good pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import prism_core as ops

# --- seed snippet (verbatim) ---
# Keep values as tensors to preserve precision
def normalize(tensor):
    min_val = ops.min(tensor)
    max_val = ops.max(tensor)
    range_val = ops.subtract(max_val, min_val)
    return ops.divide(ops.subtract(tensor, min_val), range_val)

# Use ops.mean or ensure float division
def calculate_average(values):
    return ops.mean(values)  # Preferred approach
    # Or if you need to use division:
    # return ops.divide(ops.sum(values), ops.full((), len(values), dtype=ops.float32))
# --- end of seed snippet ---
