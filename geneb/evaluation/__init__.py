"""The evaluation behind ``task.evaluate(model)`` (the task API, GFMBench's interface).

Why here and not in geneb/tasks: evaluating a task fits probes (geneb.probe) and scores
variants (geneb.vep), and the task layer sits below both in the data flow (tasks -> extract
-> store -> probe -> results; tests/test_import_graph.py). So the task objects in geneb/tasks
keep their data (splits, variants, windows, ``attributes()``, ``train_data()``) and
``geneb.tasks.Task.evaluate`` dispatches on ``task.spec.kind`` to a registry
(``geneb.tasks.spec.register_evaluator``) that this package fills when it is imported.

Every user-facing name stays in geneb/tasks: ``geneb.tasks.Task`` and its subclasses
(``ClassificationTask``, ``RegressionTask``, ``ZeroShotVariantTask``,
``SupervisedVariantTask``) are the classes ``geneb.load_task`` returns, ``isinstance`` works,
and ``from geneb.tasks import ...`` is unchanged. ``geneb.load_task`` (``geneb.api``, the
interface layer) imports this package, so every task it returns can be evaluated; a task made
another way (``geneb.tasks.resolve_task``) can be once this package is imported, and until
then ``evaluate`` says so. This package belongs to the interface layer: like ``geneb.api`` it
is the public API's implementation and may use every layer below.

- ``geneb.evaluation.sequence``: classification and regression tasks;
- ``geneb.evaluation.variants``: zero-shot and supervised variant tasks;
- ``geneb.evaluation.outputs``: what a model's methods may return (checked before any metric);
- ``geneb.evaluation.gfmbench`` / ``gfmbench_eval``: a model with GFMBench-API's methods
  (``infer_sequence_to_sequence``, ...), recognised by name and evaluated on every kind;
- ``geneb.evaluation.gfmbench_model``: the other direction, ``geneb.as_gfmbench_model``.
"""

from geneb.evaluation.gfmbench_eval import gfmbench_dispatch
from geneb.evaluation.sequence import METHODS, evaluate_sequence_task
from geneb.evaluation.variants import evaluate_supervised_variant, evaluate_zero_shot_variant
from geneb.tasks.spec import register_evaluator
from geneb.vocabulary import CLASSIFICATION, REGRESSION, SUPERVISED_VARIANT, ZERO_SHOT_VARIANT

register_evaluator(CLASSIFICATION, gfmbench_dispatch(evaluate_sequence_task))
register_evaluator(REGRESSION, gfmbench_dispatch(evaluate_sequence_task))
register_evaluator(ZERO_SHOT_VARIANT, gfmbench_dispatch(evaluate_zero_shot_variant))
register_evaluator(SUPERVISED_VARIANT, gfmbench_dispatch(evaluate_supervised_variant))

__all__ = [
    "METHODS",
    "evaluate_sequence_task",
    "evaluate_supervised_variant",
    "evaluate_zero_shot_variant",
]
