"""The results table: its schema and cell identity (``schema``), its on-disk parts
(``parts``), and ``ResultsTable``, the one object that appends, reads, compacts and migrates it.

Written by the probe engine (``geneb.probe``), read by analysis, the report and the commands.
Depends on nothing above it in the data flow (never imports ``geneb.probe``).
"""

from __future__ import annotations

from geneb.results.table import ResultsTable, read_results

__all__ = ["ResultsTable", "read_results"]
