# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Avoiding Python Operators", "Python Operators (Break Lazy Evaluation)" (bad pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import prism_core as ops

# --- seed snippet (verbatim) ---
# These operators force eager execution and break optimization opportunities
def compute_loss(predictions, targets):
    diff = predictions - targets  # Python subtraction operator
    squared_diff = diff ** 2      # Python power operator
    loss = squared_diff.mean()    # Method call is okay if it's a backend method
    return loss

# Mixing Python operators with ops functions
def mixed_operations(a, b, c):
    # This breaks the computation graph and forces intermediate results
    return ops.multiply(a + b, c)  # Python addition breaks lazy evaluation chain
# --- end of seed snippet ---
