"""Zero-shot variant-effect prediction (VEP): variant tasks, windows, scorers, evaluation.

A variant task pairs a table of variants (``variants.csv`` or ``variants.vcf[.gz]``) with the
reference sequence they refer to (``reference.fa``). Each variant becomes a reference window
and an alternate window (``windows``); a scorer compares them (``scorers``: embedding
distances through any embedder, log-likelihood ratios through a language-model head) and
``evaluate`` turns scores into AUROC / AUPRC / Spearman with bootstrap intervals.
See docs/vep.md.

Variant folders are read by ``geneb.tasks.variants`` and cut into windows by
``geneb.tasks.windows`` (task data, below vep in the import order). Nothing is imported here
(import ``geneb.vep.scorers`` etc.): the plan checks read the scorer
names from ``geneb.vep.capabilities`` on every command start, and pandas must not come with
them.
"""
