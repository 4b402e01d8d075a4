"""The report in a real browser: headless Chromium loads ``index.html``; every figure is drawn
(decoded, non-zero size, inside the viewport) and nothing overflows horizontally. On a
1280 px page every table fits (issue 19 #20): not wider than the page, and not scrolling
inside its box either; the VEP tables (report section and ``vep_report.html``) too.

A small script is added to a *copy* of the page (the report itself has no script); it runs on
``load`` and writes what it measured into the DOM, which ``--dump-dom`` prints. Under CI
(``CI=true``) a missing Chromium is a failure, not a skip: ``.ci/run`` installs it.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from example_results import EXAMPLE_MODELS, example_results

from geneb.analysis.report import build_report

CHECK = """<script>
window.addEventListener("load", function () {
  var vw = window.innerWidth;
  var imgs = Array.prototype.slice.call(document.images);
  var bad = imgs.filter(function (i) {
    var r = i.getBoundingClientRect();
    return !(i.complete && i.naturalWidth > 0 && i.naturalHeight > 0 && r.width > 50
             && r.left >= 0 && r.right <= vw + 0.5);
  }).map(function (i) { return i.alt; });
  var tables = Array.prototype.slice.call(document.querySelectorAll("table")).map(
    function (t) {
      var r = t.getBoundingClientRect(), box = t.parentElement;
      return {before: ((box.previousElementSibling || {}).textContent || "").slice(0, 60),
              width: r.width, right: r.right, inner_scroll: box.scrollWidth - box.clientWidth};
    });
  var out = {n_images: imgs.length, not_drawn: bad, viewport: vw, tables: tables,
             scroll_width: document.documentElement.scrollWidth,
             n_scripts: document.scripts.length};
  var pre = document.createElement("pre");
  pre.id = "geneb-browser-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def find_chromium() -> str | None:
    for c in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(c)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def chromium() -> str:
    exe = find_chromium()
    if exe is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("Chromium is required under CI (.ci/run installs it: apt-get install "
                        "chromium)")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return exe


def measure(chromium: str, index: Path, width: int, tmp: Path) -> dict:
    """Load a copy of ``index`` with the check script at ``width`` px; return its findings."""
    page = tmp / f"check_{width}.html"
    page.write_text(index.read_text(encoding="utf-8").replace("</body>", CHECK + "</body>"),
                    encoding="utf-8")
    r = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions",
         "--no-first-run", "--hide-scrollbars", f"--window-size={width},900",
         "--virtual-time-budget=10000", f"--user-data-dir={tmp / f'profile_{width}'}",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=180,
    )
    m = re.search(r'<pre id="geneb-browser-check">(.*?)</pre>', r.stdout, flags=re.S)
    assert m, f"the check did not run (exit {r.returncode}): {r.stderr[-2000:]}"
    return json.loads(html.unescape(m.group(1)))


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory) -> Path:
    """The example table with model names that are formulas, HTML, markup, mathtext and one
    very long word: the worst a user can put into a page."""
    names = {
        "kmer-4": '=HYPERLINK("http://evil.example","x")',
        "tiny-1m": "<script>alert(1)</script>",
        "small-4m": "AC[bold]GT $x$",
        "mid-20m": "m" * 120,
    }
    df = example_results()
    df["model"] = df["model"].replace(names)
    out = tmp_path_factory.mktemp("hostile") / "report"
    return build_report(df, out, n_boot=100)


@pytest.fixture(scope="module")
def plain_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plain") / "report"
    info = out.parent / "info.csv"
    pd.DataFrame({"model": list(EXAMPLE_MODELS), "architecture": ["kmer", "bert", "bert",
                                                                   "hyena", "hyena"]}).to_csv(
        info, index=False)
    return build_report(example_results(), out, model_properties=info, n_boot=100)


@pytest.mark.parametrize("width", [1280, 480])
@pytest.mark.parametrize("which", ["plain_report", "hostile_report"])
def test_report_renders_in_chromium(chromium, request, tmp_path, which, width):
    index: Path = request.getfixturevalue(which)
    n_figures = len(list((index.parent / "figures").glob("*.png")))
    got = measure(chromium, index, width, tmp_path)
    assert got["n_images"] == n_figures >= 5, got
    assert got["not_drawn"] == [], got
    assert got["scroll_width"] <= got["viewport"], got  # no horizontal overflow
    assert got["n_scripts"] == 1, got  # only the check script: no model name became a script
    if width >= 1280:
        assert_tables_fit(got)


def test_published_report_fits_the_page(chromium, published_report, tmp_path):
    """GENEB's own matrix (41 models, 100 long task ids, 3 regimes): every table and figure of
    the report fits a 1280 px page (the report built once per session, conftest.py)."""
    index, _seconds = published_report
    got = measure(chromium, index, 1280, tmp_path)
    assert got["not_drawn"] == [] and got["n_images"] >= 5, got
    assert got["scroll_width"] <= got["viewport"], got
    assert_tables_fit(got)


def assert_tables_fit(got: dict) -> None:
    """Every table inside the viewport, and none scrolling inside its box."""
    assert got["tables"], got
    wide = [t for t in got["tables"]
            if t["right"] > got["viewport"] + 0.5 or t["inner_scroll"] > 1]
    assert wide == [], wide


def _vep_scores() -> pd.DataFrame:
    """Score tables of three models (one a long hub id, one a 60-letter word), three
    scorers, two windows and a task score column: the widest VEP table."""
    import numpy as np

    rng = np.random.default_rng(0)
    parts = []
    for m in ("InstaDeepAI/nucleotide-transformer-v2-500m-multi-species", "m" * 60, "kmer-3"):
        for scorer in ("cosine", "l2", "llr"):
            for w in (128, 1024):
                parts.append(pd.DataFrame({
                    "task": "brca1_saturation_genome_editing", "variant": [f"v{i}" for i in
                                                                           range(40)],
                    "label": rng.integers(0, 2, 40), "model": m, "scorer": scorer,
                    "window": w, "score": rng.random(40), "status": "ok",
                    "orientation": "higher = label 1", "task_score": rng.random(40)}))
    return pd.concat(parts, ignore_index=True)


def test_vep_tables_fit_the_page(chromium, hostile_report, tmp_path):
    from geneb.analysis.report.vep_section import add_to_report, vep_page
    from geneb.vep.summary import summarise

    # one summary for both pages (100 bootstrap draws, the fewest the bootstrap rule allows:
    # the intervals' digits, not their precision, set the tables' widths)
    summary = summarise(_vep_scores(), n_boot=100)
    report = tmp_path / "report"
    shutil.copytree(hostile_report.parent, report)
    add_to_report(report / "index.html", summary)  # the section `geneb run` appends
    # `geneb vep evaluate --out`
    _, files = vep_page(summary, tmp_path / "vep")
    for index in (report / "index.html", tmp_path / "vep" / "vep_report.html"):
        got = measure(chromium, index, 1280, tmp_path)
        assert got["scroll_width"] <= got["viewport"], got
        assert_tables_fit(got)


@pytest.fixture(scope="module")
def compare_report(tmp_path_factory) -> Path:
    """``--compare geneb`` on two user models, one named with markup and one a long word."""
    from published_fixtures import compare_rows

    df = compare_rows({"alpha": "<b>alpha</b> =1+1", "beta": "b" * 90})
    out = tmp_path_factory.mktemp("compare") / "report"
    return build_report(df, out, n_boot=100, compare="geneb")


@pytest.mark.parametrize("width", [1280, 480])
def test_compare_section_renders_and_fits(chromium, compare_report, tmp_path, width):
    page = compare_report.read_text(encoding="utf-8")
    assert "Compared with GENEB&#x27;s published leaderboard" in page
    assert "&lt;b&gt;alpha&lt;/b&gt;" in page  # escaped, never markup
    got = measure(chromium, compare_report, width, tmp_path)
    assert got["scroll_width"] <= got["viewport"], got
    assert got["n_scripts"] == 1, got
    captions = [t["before"] for t in got["tables"]]
    for caption in ("Overall macro-MCC on the common set, full data",
                    "Overall macro-MCC on the common set, 10-shot",
                    "Your models per category, full data", "Comparability: how your"):
        assert any(c.startswith(caption) for c in captions), (caption, captions)
    if width >= 1280:
        assert_tables_fit(got)
