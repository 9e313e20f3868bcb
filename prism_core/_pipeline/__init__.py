"""Beyond one device: pipelines of stages, each on its own backend or device.

Layered, top to bottom (import-linter checks it): ``strategy`` (an ``ExecutionStrategy``
places stages and splits ops) > ``pipeline`` (``@prism.pipeline``: runs with a report, plans
without data) > ``stage`` (``prism.stage``: a named block under its own scope, and
``stage_overrides`` for whoever places stages from outside) > ``split`` (one op split across
devices) > ``report`` (the records runs and plans give back).

Nothing below imports this package: dispatch reads the few hooks it offers a pipeline
(``interception.PLANNING``, ``interception.LENIENT``, the move and fallback recordings) through
context variables, and the public names are exported lazily by ``prism_core``.
The user guide is docs/pipelines.md.
"""
