# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Avoiding NumPy Dependencies", "Bad Patterns" (bad pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import torch  # noqa

# --- seed snippet (verbatim) ---
# Direct NumPy import
import numpy as np

# Using NumPy functions directly
def calculate_statistics(data):
    mean = np.mean(data)
    std = np.std(data)
    return mean, std

# Converting tensors to NumPy
def process_tensor(tensor):
    numpy_array = tensor.numpy()  # Conversion to NumPy
    result = numpy_array * 2
    return torch.from_numpy(result)  # Conversion back to tensor
# --- end of seed snippet ---
