"""``prism_core.pipelines``: beyond one device.

Pipelines whose stages run on different hardware (``pipeline``, ``stage``; docs/pipelines.md),
work split across devices (``split``, ``splitting``; docs/split.md), and the strategies that
assign them.  ``prism_core.pipeline`` and ``prism_core.stage`` are these, by the seed's names.
"""

from __future__ import annotations

from prism_core._lazy import attach

#: Public name -> the private module that defines it.
_LAZY = {
    "Assignment": "_pipeline.strategy",
    "ExecutionStrategy": "_pipeline.strategy",
    "Executor": "_pipeline.strategy",
    "MoveRecord": "kernel.dispatch.movement",
    "PartRecord": "_pipeline.split",
    "Pipeline": "_pipeline.pipeline",
    "PipelineError": "_pipeline.report",
    "PipelinePlan": "_pipeline.report",
    "PipelineReport": "_pipeline.report",
    "PipelineRun": "_pipeline.report",
    "PlannedCall": "_pipeline.report",
    "PlannedStage": "_pipeline.report",
    "SplitError": "_pipeline.split",
    "SplitRecord": "_pipeline.split",
    "SplitRule": "_pipeline.split",
    "SplitSpec": "_pipeline.split",
    "SplitTarget": "_pipeline.split",
    "Stage": "_pipeline.stage",
    "StageFallback": "_pipeline.report",
    "StageReport": "_pipeline.report",
    "StageRun": "_pipeline.stage",
    "declare_split_rule": "_pipeline.split",
    "pipeline": "_pipeline.pipeline",
    "split": "_pipeline.split",
    "split_recording": "_pipeline.split",
    "split_rules": "_pipeline.split",
    "splitting": "_pipeline.split",
    "stage": "_pipeline.stage",
}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
