"""Analysis of the results table: one small module per question, each a pure function.

``table`` (read, validate, choose cells), ``performance`` (mean/sd over seeds), ``aggregates``
(macro/micro MCC), ``rankings`` (ranks, leaders, instability), ``scaling``, ``fewshot``,
``difficulty``, ``stability`` (linear vs MLP), ``regularization`` (C sweep), ``uncertainty``
(bootstrap CIs, Wilcoxon/Holm), ``metadata`` (parameter counts, model-info CSV), ``figures`` and
``report`` (``build_report``: tables, figures and one offline HTML page). ``example`` makes a
synthetic results table of known structure for demos and tests.
"""
