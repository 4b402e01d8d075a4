"""The GENEB report: every analysis as CSV tables, PNG figures and one offline HTML page.

``build_report`` (in :mod:`.build`) runs the sections listed in
:data:`geneb.analysis.report.sections.SECTIONS` on a shared
:class:`~geneb.analysis.report.context.ReportContext`; :mod:`.page` escapes what is written,
:mod:`.output` keeps the report to the files it owns.
"""

from __future__ import annotations

from geneb.analysis.report.build import build_report
from geneb.analysis.report.output import MANIFEST
from geneb.analysis.report.page import HTML_MAX_ROWS
from geneb.analysis.report.sections import SECTIONS

__all__ = ["HTML_MAX_ROWS", "MANIFEST", "SECTIONS", "build_report"]
