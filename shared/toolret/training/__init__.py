"""Training toolret's own models from the dev sets or a knowledge base's logs (extra ``train``).

:mod:`~toolret.training.pairs` makes (request, tool document) pairs, :mod:`~toolret.training.batches`
plans conflict-free same-registry batches, :mod:`~toolret.training.trainer` fine-tunes the packaged
MiniLM (resumable), :mod:`~toolret.training.export` writes the int8 ONNX model directory the engine
loads, :mod:`~toolret.training.benchmarks` and :mod:`~toolret.training.lodo_table` give the
leave-one-registry-out table, :mod:`~toolret.training.shipped` rebuilds the shipped model, and
:mod:`~toolret.training.command` is ``toolret train``. None of it is on a search's path.
"""

from __future__ import annotations

from toolret._exports import lazy_exports

_EXPORTS = {
    "TrainConfig": "trainer",
    "TrainResult": "trainer",
    "TrainingPair": "pairs",
    "export_onnx_int8": "export",
    "pairs_from_bundles": "pairs",
    "plan_batches": "batches",
    "train": "trainer",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
