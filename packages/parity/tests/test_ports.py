"""parity_tools.ports, in a Sphinx site of its own: an algorithm's reference and ports read from
the source (the split layout's siblings too), and the parity grid from a report that the plugin
wrote, whose planted port 3 times its allowance off reads 3 on the page; without a report, the
page says how to make one."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from ports_written import DOUBLE, PLANTED

SINGLE = '''
def _planted_numpy(x):
    """The reference."""
    return 2.0 * x


def _planted_pytorch(x):
    return x + x
'''
CONF = 'extensions = ["parity_tools.ports"]\nparity_report = "../reports/parity.json"\n'
PAGE = "Planted\n=======\n\n.. parity-ports:: ../src/{path}\n"


def build(root: Path, path: str) -> str:
    """The page's HTML, built with warnings as errors."""
    docs = root / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "conf.py").write_text(CONF, encoding="utf-8")
    (docs / "index.rst").write_text(PAGE.format(path=path), encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-q",
        "-W",
        "-b",
        "html",
        str(docs),
        str(root / "html"),
    ]
    subprocess.run(command, check=True, capture_output=True)
    return (root / "html" / "index.html").read_text(encoding="utf-8")


def test_the_page_shows_the_ports_and_the_planted_port_3_times_off(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "src").mkdir()
    (pytester.path / "src" / "planted.py").write_text(SINGLE, encoding="utf-8")
    html = build(pytester.path, "planted.py")
    assert "No parity report yet: run nox -s tests (it writes reports/parity.json)" in html
    assert "_planted_numpy" in html
    assert "_planted_pytorch" in html

    pytester.makepyfile(test_planted=PLANTED)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--parity-report=reports/parity.json")
    html = build(pytester.path, "planted.py")  # the same output: the report alone changed
    assert "No parity report yet" not in html
    assert 'class="parity-grid' in html
    assert re.search(r"cpu: 1 failed, worst 3(\.0\d)?x \(\d{3} ulp\)", html), html


def test_the_split_layout_s_ports_are_the_reference_s_siblings(tmp_path: Path) -> None:
    folder = tmp_path / "src" / "planted"
    folder.mkdir(parents=True)
    reference, port = SINGLE.split("\n\n\ndef _planted_pytorch")
    (folder / "numpy_impl.py").write_text(reference, encoding="utf-8")
    (folder / "pytorch_impl.py").write_text("def _planted_pytorch" + port, encoding="utf-8")
    html = build(tmp_path, "planted/numpy_impl.py")
    assert "NumPy (the reference)" in html
    assert "PyTorch" in html
    assert "_planted_pytorch" in html


def test_the_grid_says_which_capabilities_a_port_has_and_lacks(pytester: pytest.Pytester) -> None:
    (pytester.path / "src").mkdir()
    source = (
        "def _double_numpy(x):\n    return 2 * x\n\n\ndef _double_pytorch(x):\n    return x * 2\n"
    )
    (pytester.path / "src" / "double.py").write_text(source, encoding="utf-8")
    pytester.makepyfile(test_double=DOUBLE)
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--parity-report=reports/parity.json")
    html = build(pytester.path, "double.py")
    assert "lacks forward mode" in html, html
    assert "has second derivative" in html, html
    assert "Lacked, in the library" in html, html
