# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Random Operations", "Backend-Specific Random Operations" (bad pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import mlx.core as mx  # noqa
import numpy as np  # noqa
import torch  # noqa

# --- seed snippet (verbatim) ---
# Direct use of backend-specific random functions
def generate_samples(shape):
    if get_backend() == 'numpy':
        return np.random.normal(0, 1, shape)
    elif get_backend() == 'torch':
        return torch.randn(shape)
    elif get_backend() == 'mlx':
        return mx.random.normal(shape=shape)
# --- end of seed snippet ---
