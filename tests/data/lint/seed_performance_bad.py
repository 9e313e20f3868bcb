# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Performance Considerations", "Inefficient Patterns" (bad pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import numpy as np  # noqa
import prism_core as ops

# --- seed snippet (verbatim) ---
# Unnecessary conversions between backends
def process_data(tensor):
    # Convert to NumPy, process, then convert back
    numpy_data = tensor.numpy()
    result = np.log(1 + np.abs(numpy_data))
    return ops.convert_to_tensor(result)

# Repeated small operations instead of vectorized operations
def calculate_distances(points):
    distances = []
    for i in range(len(points)):
        for j in range(i+1, len(points)):
            dist = ops.sqrt(ops.sum(ops.square(ops.subtract(points[i], points[j]))))
            distances.append(dist)
    return distances

# Using Python operators for arithmetic
def normalize_data(tensor, mean, std):
    # Python operators force eager execution and break lazy evaluation
    return (tensor - mean) / std  # Uses Python's - and / operators
# --- end of seed snippet ---
