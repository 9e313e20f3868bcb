# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Type Handling", "Backend-Agnostic Type Handling" (good pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import prism_core as ops

# --- seed snippet (verbatim) ---
# Use ops dtypes
def create_tensor(shape, dtype=ops.float32):
    return ops.zeros(shape, dtype=dtype)

# Use ops conversion functions
def process_input(x):
    # Convert to tensor in the current backend
    tensor = ops.convert_to_tensor(x)
    # Process using ops functions
    result = ops.some_operation(tensor)
    return result
# --- end of seed snippet ---
