"""``python -m prism_core`` is the ``prism`` command."""

from prism_core._cli import main

raise SystemExit(main())
