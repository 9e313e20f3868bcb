"""``python -m prism_core.lint PATH...``: the same as ``prism lint PATH...``."""

from prism_core.lint.cli import main

raise SystemExit(main())
