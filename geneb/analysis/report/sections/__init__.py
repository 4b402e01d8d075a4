"""The report's sections, in page order.

A section is a function ``(page, ctx) -> None`` that writes its heading, tables and figures
through :class:`~geneb.analysis.report.page.Page` from the shared
:class:`~geneb.analysis.report.context.ReportContext`; it says in a sentence why it is left out
when the table cannot support it. To add a section, write its module here and add ONE line to
:data:`SECTIONS`.
"""

from __future__ import annotations

from collections.abc import Callable

from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page
from geneb.analysis.report.sections.categories import categories
from geneb.analysis.report.sections.compare_published import compare_published
from geneb.analysis.report.sections.controlled import controlled
from geneb.analysis.report.sections.difficulty import difficulty
from geneb.analysis.report.sections.fewshot import fewshot
from geneb.analysis.report.sections.health import health
from geneb.analysis.report.sections.in_domain_set import in_domain_models
from geneb.analysis.report.sections.leaderboard import leaderboard
from geneb.analysis.report.sections.method import method
from geneb.analysis.report.sections.protocols import protocols
from geneb.analysis.report.sections.rankings import rankings
from geneb.analysis.report.sections.regression import regression
from geneb.analysis.report.sections.regularization import regularization
from geneb.analysis.report.sections.scaling import scaling
from geneb.analysis.report.sections.stability import stability
from geneb.analysis.report.sections.subsampling import subsampling
from geneb.analysis.report.sections.task_audit import task_audit
from geneb.analysis.report.sections.uncertainty import uncertainty

Section = Callable[[Page, ReportContext], None]

#: The report, top to bottom.
SECTIONS: list[Section] = [
    method,
    leaderboard,
    compare_published,
    task_audit,
    categories,
    rankings,
    scaling,
    controlled,
    in_domain_models,
    fewshot,
    difficulty,
    stability,
    subsampling,
    regularization,
    uncertainty,
    protocols,
    regression,
    health,
]
