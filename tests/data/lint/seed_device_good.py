# ruff: noqa
# From the backend-purity coding guidelines, shared/seeds/003_1c05736814722149.txt:
# section "Handling Device Placement", "Backend-Agnostic Device Handling" (good pattern).
# The snippet between the markers is copied verbatim (tests/test_lint.py checks it
# against the seed where shared/ is present).  Above the markers: what the snippet
# uses without importing it; the seed's `ops` is its framework's ops layer, Prism's
# here.  The findings the lint must give are listed in tests/test_lint.py.
import prism_core as ops

# --- seed snippet (verbatim) ---
# Use ops device functions
def place_on_device(tensor, device='cuda'):
    return ops.to_device(tensor, device)
# --- end of seed snippet ---
