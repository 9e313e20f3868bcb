"""``python -m prism_core`` is the ``prism`` command."""

from ._cli import main

raise SystemExit(main())
