"""The report in a real browser: headless Chromium loads ``index.html``; every figure is drawn
(decoded, non-zero size, inside the viewport) and nothing overflows horizontally.

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

from geneb.analysis.example import EXAMPLE_MODELS, example_results
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
  var out = {n_images: imgs.length, not_drawn: bad, viewport: vw,
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
    return build_report(example_results(), out, model_info=info, n_boot=100)


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
