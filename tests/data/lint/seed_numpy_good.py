# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Avoiding NumPy Dependencies", "Good Patterns" (good pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.

# --- seed snippet (verbatim) ---
# Use the ops abstraction layer
from emberharmony import ops

# Use ops functions instead of NumPy
def calculate_statistics(data):
    mean = ops.mean(data)
    # Calculate standard deviation using ops
    variance = ops.mean(ops.square(ops.subtract(data, mean)))
    std = ops.sqrt(variance)
    return mean, std

# Keep operations within the tensor framework
def process_tensor(tensor):
    return ops.multiply(tensor, 2)
# --- end of seed snippet ---
