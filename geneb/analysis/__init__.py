"""Analysis of the results table: one small module per question, each a pure function.

``table`` (read, validate, choose cells), ``performance`` (mean/sd over seeds), ``aggregates``
(macro/micro MCC), ``rankings`` (ranks, leaders, instability), ``scaling``, ``fewshot``,
``difficulty``, ``stability`` (linear vs MLP), ``regularization`` (C sweep), ``uncertainty``
(bootstrap CIs, Wilcoxon/Holm), ``metadata`` (parameter counts, the user's own model
columns), ``figures`` and
``report`` (``build_report``: tables, figures and one offline HTML page). Beside them:
``capacity`` (parameter-count tiers), ``matched`` and ``properties`` (comparisons of models
alike but in one property), ``domain`` (in-domain tasks), ``regression``, ``protocols``,
``compare_published`` (against a published leaderboard) and ``user_csv`` (user tables read
with one error format).
"""
