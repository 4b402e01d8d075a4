"""One report page: HTML parts, CSV tables and PNG figures, all escaped for where they go.

Cells come from the user (model names, task names, categories), so every value is escaped for
its destination: HTML-escaped in the page, and in CSV files a cell that a spreadsheet would
read as a formula (starting with ``= + - @``, tab or carriage return: the OWASP rule) is
prefixed with a single quote.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

#: Rows of a table shown in the HTML page; the CSV always has all of them.
HTML_MAX_ROWS = 60

#: Longest text shown in a page cell; longer values are cut there (the CSV keeps them whole).
MAX_CELL_CHARS = 48

#: First characters that make a spreadsheet evaluate a cell (OWASP "CSV injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

#: The page's style. Tables fit the page on a desktop screen (the browser test checks every
#: table at 1280 px): column names may wrap after an underscore (``rank_ci_<wbr>high``) and
#: text cells (``td.text``: model and task names, see :func:`html_table`) anywhere when a
#: table would otherwise be wider than the page; numbers never wrap. On a phone a table
#: scrolls inside its ``.scroll`` box.
CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45;overflow-wrap:anywhere}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}
h3{font-size:1.05em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.82em;margin:.6em 0;max-width:100%}
table{overflow-wrap:normal}
th,td{border:1px solid #ddd;padding:2px 6px;text-align:right}
td.text{overflow-wrap:anywhere}
.warning{color:#9a3b00}
th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}
.note{color:#555;font-style:italic}.left-out{background:#fff7e0;padding:.4em .7em}
figure{margin:1em 0}
img{max-width:100%;height:auto;border:1px solid #eee}
"""


def _cell(value: object, float_format: Callable[[float], str]) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, float):
        return html.escape(float_format(value))
    return html.escape(str(value))


def html_table(df: pd.DataFrame, float_format: Callable[[float], str] = "{:.3f}".format) -> str:
    """``df`` as an HTML table, every cell escaped; text cells get ``class="text"``.

    Why not ``DataFrame.to_html``: a table fits the page only if its long names may wrap
    while its numbers may not, and ``to_html`` cannot mark which cells hold text.
    """
    # column names may wrap after an underscore (rank_ci_<wbr>high), never inside a word
    head = "".join(f"<th>{html.escape(str(c)).replace('_', '_<wbr>')}</th>" for c in df.columns)
    rows = []
    for rec in df.itertuples(index=False, name=None):
        cells = "".join(
            f'<td class="text">{_cell(v, float_format)}</td>' if isinstance(v, str)
            else f"<td>{_cell(v, float_format)}</td>" for v in rec
        )
        rows.append(f"<tr>{cells}</tr>")
    return (f'<table class="dataframe"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def csv_safe_value(value: object) -> object:
    """A string that a spreadsheet would run as a formula, quoted with ``'``; else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every text cell and column name passed through :func:`csv_safe_value`."""
    out = df.copy()
    out.columns = [csv_safe_value(str(c)) for c in out.columns]
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(csv_safe_value)
    return out


def _integer_column(name: str, values: pd.Series) -> bool:
    """Counts and ids (``seed``, ``k``, ``n_*``) holding whole numbers: shown as integers
    (results tables store seed and n_iter as floats; ``13.000`` reads as a measurement)."""
    if not (name in ("seed", "k") or name.startswith("n_")):
        return False
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return False
    v = values.dropna().to_numpy(dtype=float)
    return bool(np.all(np.isfinite(v)) and np.all(v == np.round(v)))


def for_display(df: pd.DataFrame, keep: Sequence[str] = ()) -> pd.DataFrame:
    """Page view of a table: counts and ids as integers, very long text cut, constant
    probe/C columns dropped (see Method) unless named in ``keep``."""
    out = df.copy()
    for col in out.columns:
        if _integer_column(str(col), out[col]):
            ints = out[col].round().astype("Int64").astype(object)
            out[col] = ints.where(out[col].notna(), "")  # no "<NA>" in the page
        elif out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(_cut)
    if len(out) > 1:
        const = [c for c in ("probe", "standardize", "C")
                 if c in out and c not in keep and out[c].nunique() <= 1]
        out = out.drop(columns=const)
    return out


def _cut(value: object) -> object:
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        return value[: MAX_CELL_CHARS - 1] + "\u2026"
    return value


def fmt_c(c: float | None) -> str:
    """A C value as written in the page ('-' for none)."""
    return "-" if c is None or (isinstance(c, float) and np.isnan(c)) else f"{c:g}"


def regime_label(r: str) -> str:
    """'full data' or 'k-shot'."""
    return "full data" if r == "full" else f"{r}-shot"


@dataclass
class Page:
    """Accumulates HTML sections, CSV tables and PNG figures of one report under ``out``."""

    out: Path
    parts: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)

    def figure_path(self, name: str) -> Path:
        """Where a section draws figure ``name`` (e.g. ``'scaling.png'``)."""
        return self.out / "figures" / name

    def h(self, level: int, text: str) -> None:
        self.parts.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def p(self, text: str, cls: str = "") -> None:
        c = f' class="{html.escape(cls)}"' if cls else ""
        self.parts.append(f"<p{c}>{html.escape(text)}</p>")

    def left_out(self, text: str) -> None:
        self.p(f"Left out: {text}", "left-out")

    def ul(self, items: Iterable[str]) -> None:
        lis = "".join(f"<li>{html.escape(i)}</li>" for i in items)
        self.parts.append(f"<ul>{lis}</ul>")

    def table(self, name: str, df: pd.DataFrame, caption: str, show: bool = True,
              keep: Sequence[str] = ()) -> None:
        """Write ``tables/<name>.csv``; show it (first rows) in the page when ``show``
        (``keep``: columns shown even when constant, see ``for_display``)."""
        path = self.out / "tables" / f"{name}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        csv_safe(df).to_csv(path, index=False)
        self.tables.append(name)
        if not show:
            self.p(f"{caption}: tables/{name}.csv ({len(df)} rows).", "note")
            return
        shown = for_display(df.head(HTML_MAX_ROWS), keep)
        more = (
            f" First {HTML_MAX_ROWS} of {len(df)} rows; all in tables/{name}.csv."
            if len(df) > HTML_MAX_ROWS
            else f" (tables/{name}.csv)"
        )
        self.parts.append(f"<h3>{html.escape(caption)}</h3>")
        shown.columns = [str(c) for c in shown.columns]
        self.parts.append(f'<div class="scroll">{html_table(shown)}</div>')
        self.p(more.strip(), "note")

    def figure(self, path: Path, alt: str) -> None:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        self.figures.append(path.name)
        self.parts.append(
            f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(alt)}</figcaption></figure>"
        )

    def html(self, title: str) -> str:
        body = "\n".join(self.parts)
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>"
            f"<body>\n{body}\n</body></html>\n"
        )
