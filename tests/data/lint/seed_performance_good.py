# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Performance Considerations", "Efficient Patterns" (good pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import prism_core as ops

# --- seed snippet (verbatim) ---
# Stay within the same backend
def process_data(tensor):
    # All operations use ops
    return ops.log(ops.add(1, ops.abs(tensor)))

# Use vectorized operations
def calculate_distances(points):
    # Expand dimensions to create pairs
    points_i = ops.expand_dims(points, axis=1)  # Shape: [N, 1, D]
    points_j = ops.expand_dims(points, axis=0)  # Shape: [1, N, D]
    
    # Calculate pairwise differences and distances in one vectorized operation
    diff = ops.subtract(points_i, points_j)  # Shape: [N, N, D]
    sq_diff = ops.square(diff)  # Shape: [N, N, D]
    sq_dist = ops.sum(sq_diff, axis=2)  # Shape: [N, N]
    
    # Extract upper triangular part (excluding diagonal)
    indices = ops.triu_indices(len(points), k=1)
    distances = ops.sqrt(sq_dist[indices])
    
    return distances

# Use ops functions for arithmetic
def normalize_data(tensor, mean, std):
    # Using ops functions preserves lazy evaluation in supported backends
    return ops.divide(ops.subtract(tensor, mean), std)
# --- end of seed snippet ---
