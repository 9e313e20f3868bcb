# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Handling Device Placement", "Backend-Specific Device Handling" (bad pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import mlx.core as mx  # noqa

# --- seed snippet (verbatim) ---
# Direct use of backend-specific device placement
def place_on_device(tensor, device='cuda'):
    if get_backend() == 'numpy':
        # NumPy doesn't have device placement
        return tensor
    elif get_backend() == 'torch':
        return tensor.to(device)
    elif get_backend() == 'mlx':
        # MLX has different device handling
        return mx.array(tensor, device=device)
# --- end of seed snippet ---
