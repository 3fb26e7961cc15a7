"""The generated repo's docs site: it builds with warnings as errors and no network in every
layout and JAX combination, and a real browser (Debian's chromium, driven by playwright) finds
the math rendered, every internal link resolving, each algorithm through the search page, and
the harness's page: its manual, and each public name of `parity` with its docstring.
An algorithm's page shows its reference and every port, and the parity grid of the last test
run (or how to make one), at a laptop's width without a horizontal scrollbar. The scaffold adds a
new algorithm's page, built from the same text as the examples' pages."""

from __future__ import annotations

import functools
import inspect
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

import parity
import pytest

from tests.render import COMBINATIONS, TOOLS, Combination, Render, fresh_git_repo, git, quick_share, run
from tests.test_pre_commit import offline_prefix

PACKAGE = "my_research_project"  # from the default answers
# Every port of softmax where JAX and Triton are on: the tabs' titles, and their functions' names.
PORTS = {"NumPy (the reference)": "numpy", "PyTorch": "pytorch", "JAX": "jax", "Triton": "triton"}
# Neither the page nor its code or tables scroll sideways (hidden tabs measure 0).
NO_SCROLLBAR = """() => [document.scrollingElement, ...document.querySelectorAll("pre, table")]
    .concat([...document.querySelectorAll("table")].map(table => table.parentElement))
    .every(element => element.scrollWidth <= element.clientWidth)"""
ALGORITHMS = ("cross_entropy", "log_softmax", "softmax")
# What is left of the math once MathJax has run, outside code: any of these is a formula that
# did not render.
RAW_MATH = ("\\(", "\\)", "\\[", "\\]", "$")
UNKNOWN_MACROS = "els => els.map(e => e.textContent).filter(text => text.includes('\\\\'))"
# Text nodes outside code and outside what MathJax made, as the reader sees them.
VISIBLE_TEXT = """() => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const texts = [];
    while (walker.nextNode()) {
        const node = walker.currentNode;
        if (!node.parentElement.closest("pre, code, script, style, mjx-container")) {
            texts.push(node.textContent);
        }
    }
    return texts.join(" ");
}"""


def build(repo: Path, out: Path) -> tuple[Path, float]:
    """`nox -s docs`'s build, offline and outside the repo (the render is shared between tests):
    the site's folder and the seconds it took."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # the shared render stays as rendered
    sphinx: list[str | Path] = [sys.executable, "-m", "sphinx", "-M", "html", "docs", out, "-W", "--keep-going", "-q"]
    start = time.perf_counter()
    run([*offline_prefix(), *sphinx], cwd=repo, env=env)
    return out / "html", time.perf_counter() - start


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium, headless, driven by playwright (which cannot download its own here)."""
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no chromium on PATH: `apt-get install -y chromium` (.ci/run installs it)")
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def serve() -> Iterator[Any]:
    """serve(site) -> the URL of a local web server for the folder `site`, as GitHub Pages would
    serve it (the search page loads its index by URL)."""
    servers: list[ThreadingHTTPServer] = []

    def start(site: Path) -> str:
        handler = functools.partial(QuietHandler, directory=str(site))
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # the test's output stays its own


def search(page: Any, url: str, name: str) -> list[str]:
    """The links the site's search page lists for `name`."""
    page.goto(f"{url}search.html?q={name}")
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for()
    return [urldefrag(href)[0] for href in results.evaluate_all("els => els.map(e => e.href)")]


def rendered_math(page: Any) -> None:
    """Wait until MathJax has typeset the page (its startup promise resolves once it has)."""
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("() => MathJax.startup.promise")


# The fewest files and the most in the default `nox`, the two between them in `nox -s proofs`.
@pytest.mark.parametrize("combination", quick_share(COMBINATIONS, COMBINATIONS[::3], ids=lambda c: c.id))
def test_the_site_builds_offline_and_reads_in_a_browser(
    rendered: Render, combination: Combination, tmp_path: Path, browser: Any, serve: Any
) -> None:
    site, seconds = build(rendered("cookiecutter", combination), tmp_path / "build")
    print(f"docs build ({combination.id}, offline): {seconds:.1f} s")
    url = serve(site)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    # The math of every algorithm's page: typeset by MathJax from the site's own files, with no
    # error and no formula left as TeX.
    for name in ALGORITHMS:
        page.goto(f"{url}algorithms/{name}.html")
        rendered_math(page)
        assert page.locator("mjx-container").count() > 0, f"{name}: no formula rendered"
        assert page.locator("mjx-merror").count() == 0, f"{name}: MathJax could not read a formula"
        # A macro MathJax does not know stays in the formula as typed, backslash and all.
        unknown = page.eval_on_selector_all("mjx-container", UNKNOWN_MACROS)
        assert not unknown, f"{name}: formulas with macros MathJax does not know: {unknown}"
        text = page.evaluate(VISIBLE_TEXT)
        left = [raw for raw in RAW_MATH if raw in text]
        assert not left, f"{name}: raw math {left} in the page's text"
        assert page.locator(f"dt#{PACKAGE}\\.{name}\\.{name}").count() == 1, f"{name}: no signature"
        assert f"_{name}_numpy" in page.locator(".parity-port-numpy pre").inner_text(), "no reference"
    mathjax = [src for src in page.eval_on_selector_all("script[src]", "els => els.map(e => e.src)")]
    assert all(src.startswith(url) for src in mathjax), f"scripts from outside the site: {mathjax}"

    # The harness's page: its manual (help(parity)'s rules), then each public name with its
    # docstring, and none of the plugin's own helpers.
    page.goto(f"{url}harness.html")
    assert "The same rules in every helper" in page.locator("h2").all_inner_texts()
    for name in parity.__all__:
        assert page.locator(f'dt[id="parity.{name}"]').count() == 1, f"harness page: no {name}"
    for name in ["assert_matches_reference", "Spec"]:
        first_line = (inspect.getdoc(getattr(parity, name)) or "-").partition("\n")[0].replace("`", "")
        assert first_line in " ".join(page.locator(f'dt[id="parity.{name}"] + dd').inner_text().split())
    assert "teststatus" not in page.content()
    assert page.evaluate(NO_SCROLLBAR), "the harness page scrolls sideways"

    # Every link within the site leads to a file of it, and to an anchor on that page that exists.
    pages = sorted(path.relative_to(site).as_posix() for path in site.rglob("*.html"))
    links: dict[str, set[str]] = {}
    anchors: dict[str, set[str]] = {}
    for name in pages:
        page.goto(url + name)
        anchors[name] = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
        links[name] = set(page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"))
    broken = []
    for name, hrefs in links.items():
        for href in hrefs:
            target, fragment = urldefrag(href)
            if not target.startswith(url):
                continue
            path = urlsplit(target).path.removeprefix(urlsplit(url).path) or "index.html"
            if not (site / path).is_file() or (fragment and fragment not in anchors.get(path, ())):
                broken.append(f"{name} -> {href.removeprefix(url)}")
    assert not broken, broken

    # The search page finds each algorithm by its name.
    for name in ALGORITHMS:
        assert f"{url}algorithms/{name}.html" in search(page, url, name)
    assert not errors, errors


@pytest.mark.parametrize("layout", ["single", "split"])
def test_the_scaffold_adds_the_new_algorithm_s_page(
    rendered: Render, layout: str, tmp_path: Path, browser: Any, serve: Any
) -> None:
    """The page is the examples' page for another name; its stubs' docstrings build cleanly."""
    repo = Path(shutil.copytree(rendered("cookiecutter", Combination(layout, jax=False)), tmp_path / "repo"))
    run([*TOOLS, "new", "rms_norm", "x:...d", "weight:d"], cwd=repo)
    pages = repo / "docs" / "algorithms"
    example = (pages / "softmax.md").read_text(encoding="utf-8")
    assert (pages / "rms_norm.md").read_text(encoding="utf-8") == example.replace("softmax", "rms_norm")

    site, _ = build(repo, tmp_path / "build")
    url = serve(site)
    page = browser.new_page()
    page.goto(f"{url}algorithms/rms_norm.html")
    assert page.locator(f"dt#{PACKAGE}\\.rms_norm\\.rms_norm").count() == 1
    assert "_rms_norm_numpy" in page.locator(".parity-port-numpy pre").inner_text()
    assert f"{url}algorithms/rms_norm.html" in search(page, url, "rms_norm")


@pytest.fixture(scope="module")
def parity_report(rendered: Render, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report of a real run of the generated softmax tests (the values ones, to keep it short),
    in a git repo: `nox -s tests`'s run, without its environment."""
    rendered_repo = rendered("cookiecutter", Combination("single", jax=True, triton=True))
    repo = fresh_git_repo(rendered_repo, tmp_path_factory.mktemp("run") / "repo")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "rendered")
    env = {**os.environ, "PYTHONPATH": str(repo / "src"), "PYTHONDONTWRITEBYTECODE": "1"}
    pytest_args = ["-p", "no:cacheprovider", "-k", "test_matches_reference", "--parity-report=reports/parity.json"]
    run([sys.executable, "-m", "pytest", "tests/test_softmax.py", *pytest_args], cwd=repo, env=env)
    report: dict[str, Any] = json.loads((repo / "reports" / "parity.json").read_text(encoding="utf-8"))
    return report


@pytest.mark.parametrize("layout", ["single", "split"])
def test_softmax_s_page_shows_its_ports_and_their_parity(
    rendered: Render, layout: str, tmp_path: Path, browser: Any, serve: Any, parity_report: dict[str, Any]
) -> None:
    combination = Combination(layout, jax=True, triton=True)
    repo = Path(shutil.copytree(rendered("cookiecutter", combination), tmp_path / "repo"))
    page = browser.new_page(viewport={"width": 1280, "height": 800})

    # Before any test run: the page says how to make the report.
    site, _ = build(repo, tmp_path / "build")
    page.goto(f"{serve(site)}algorithms/softmax.html")
    assert "No parity report yet: run nox -s tests" in page.locator(".parity-no-report").inner_text()
    assert page.locator(".parity-grid").count() == 0

    # After one (the same output folder, built again: the report alone changed).
    (repo / "reports").mkdir()
    (repo / "reports" / "parity.json").write_text(json.dumps(parity_report), encoding="utf-8")
    site, seconds = build(repo, tmp_path / "build")
    print(f"docs build ({layout}, again with a report): {seconds:.1f} s")
    page.goto(f"{serve(site)}algorithms/softmax.html")
    rendered_math(page)
    assert page.locator(".parity-ports > label").all_inner_texts() == list(PORTS)
    for title, suffix in PORTS.items():
        page.locator(".parity-ports > label", has_text=title).click()
        code = page.locator(f".parity-port-{suffix} pre")
        assert code.is_visible(), f"{title}: its tab does not show its code"
        assert f"def _softmax_{suffix}(" in code.inner_text()
        assert page.evaluate(NO_SCROLLBAR), f"{title}: a horizontal scrollbar at 1280 px"
    assert "@triton.jit" in code.inner_text(), "the Triton port's tab lacks its kernels"

    # The grid: a row per port, the numbers of the report, its date and commit.
    grid = page.locator("table.parity-grid")
    grid.scroll_into_view_if_needed()
    page.screenshot(path=tmp_path / "softmax.png")
    assert page.evaluate(NO_SCROLLBAR), "a horizontal scrollbar at 1280 px"
    rows = {row.locator("td").first.inner_text(): row for row in grid.locator("tbody tr").all()}
    assert {"PyTorch", "JAX", "Triton"} <= set(rows)
    dtypes = grid.locator("thead th").all_inner_texts()
    where = ("torch", "float32", "cpu")
    row = next(r for r in parity_report["rows"] if (r["backend"], r["dtype"], r["device"]) == where)
    said = rows["PyTorch"].locator("td").nth(dtypes.index("float32")).inner_text()
    ulps = f" ({row['worst_ulps']:.3g} ulp)" if row["worst_ulps"] is not None else ""
    assert f"cpu: {row['calls_compared']} compared, worst {row['worst_fraction']:.3g}x{ulps}" in said
    above = page.locator("p", has_text="From the test run of").inner_text()
    assert parity_report["date"] in above
    assert parity_report["commit"] in above
