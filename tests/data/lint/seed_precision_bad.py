# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Preserving Numerical Precision", "Precision-Reducing Patterns" (bad pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import prism_core as ops

# --- seed snippet (verbatim) ---
# Converting to Python scalar types loses precision
def normalize(tensor):
    min_val = float(ops.min(tensor))  # Precision loss
    max_val = float(ops.max(tensor))  # Precision loss
    range_val = max_val - min_val
    return ops.divide(ops.subtract(tensor, min_val), range_val)

# Integer division can lose precision
def calculate_average(values):
    return ops.sum(values) / len(values)  # Integer division if len(values) is an integer
# --- end of seed snippet ---
