# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Avoiding Python Operators", "Ops Functions (Preserve Lazy Evaluation)" (good pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import prism_core as ops

# --- seed snippet (verbatim) ---
# These preserve the computation graph and enable optimizations
def compute_loss(predictions, targets):
    diff = ops.subtract(predictions, targets)
    squared_diff = ops.square(diff)  # or ops.power(diff, 2)
    loss = ops.mean(squared_diff)
    return loss

# Consistent use of ops functions
def mixed_operations(a, b, c):
    # This preserves the computation graph
    return ops.multiply(ops.add(a, b), c)
# --- end of seed snippet ---
