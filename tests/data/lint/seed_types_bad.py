# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Type Handling", "Problematic Type Handling" (bad pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import numpy as np  # noqa
import torch  # noqa
import prism_core as ops

# --- seed snippet (verbatim) ---
# Using NumPy dtypes
from numpy import dtype as np_dtype

def create_tensor(shape, dtype=np_dtype('float32')):
    return ops.zeros(shape, dtype=dtype)

# Manual type checking with isinstance
def process_input(x):
    if isinstance(x, np.ndarray):
        # NumPy-specific code
        pass
    elif isinstance(x, torch.Tensor):
        # PyTorch-specific code
        pass
    elif hasattr(x, 'numpy'):  # Check for MLX array
        # MLX-specific code
        pass
# --- end of seed snippet ---
