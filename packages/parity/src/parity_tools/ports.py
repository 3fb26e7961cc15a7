"""A Sphinx extension: an algorithm's NumPy reference and its ports side by side, and how close
each port came in the latest test run.

In a page (MyST)::

    ```{parity-ports} ../../src/package/softmax.py
    ```

names the file of the reference (``_softmax_numpy``); in the split layout, ``numpy_impl.py``,
whose siblings (``pytorch_impl.py``, ``jax_impl.py``, ``triton_impl.py``) hold the ports. The
Triton port's tab also holds the kernels it launches (``_softmax_triton_kernels.py``, or
``_triton_kernels.py`` in the split layout), where there are. Their
code is read from the source at build time (parsed, never imported: a backend need not be
installed to show its port), one tab each, long lines wrapped to the page's width. Below them,
the parity grid, port x dtype, from the report the tests wrote (``pytest --parity-report``; the
``parity_report`` setting, ``../reports/parity.json`` from the docs' folder unless conf.py says
otherwise), with its date and commit; or how to make one where none exists.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from html import escape
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from parity.report import lacked, merged

#: A port's tab: the suffix of its function's name (``_softmax_<suffix>``), and its title.
PORTS = {"numpy": "NumPy (the reference)", "pytorch": "PyTorch", "jax": "JAX", "triton": "Triton"}
#: The report's backends (parity's names), and their titles in the grid.
BACKENDS = {"numpy": "NumPy", "torch": "PyTorch", "jax": "JAX", "triton": "Triton"}
DTYPES = ("float64", "float32", "float16", "bfloat16")
STATIC = Path(__file__).parent / "static"
NO_REPORT = "No parity report yet: run nox -s tests (it writes {path}), then build the docs again."


def functions(files: Iterable[Path], name: str) -> dict[str, str]:
    """The source of each ``_<name>_<suffix>`` function in `files`, decorators and all."""
    found: dict[str, str] = {}
    wanted = {f"_{name}_{suffix}": suffix for suffix in PORTS}
    for file in files:
        source = file.read_text(encoding="utf-8")
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef) and node.name in wanted:
                lines = source.splitlines()
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
                found[wanted[node.name]] = "\n".join(lines[start : node.end_lineno])
    return {suffix: found[suffix] for suffix in PORTS if suffix in found}


def tabs(group: str, panels: dict[str, str]) -> nodes.container:
    """One tab per panel, switched by radio buttons and CSS alone (parity-ports.css)."""
    box = nodes.container(classes=["parity-ports"])
    for index, (suffix, code) in enumerate(panels.items()):
        ident = f"{group}-{suffix}"
        checked = " checked" if index == 0 else ""
        box += nodes.raw(
            "",
            f'<input type="radio" name="{group}" id="{ident}"{checked}>'
            f'<label for="{ident}">{escape(PORTS[suffix])}</label>',
            format="html",
        )
        panel = nodes.container(classes=["parity-port", f"parity-port-{suffix}"])
        panel += nodes.literal_block(code, code, language="python")
        box += panel
    return box


def cell(rows: list[dict[str, Any]], skips: dict[str, str]) -> str:
    """A grid cell: per device, calls compared and the worst error as a fraction of the
    allowance (and in units in the last place, where the report has them), or that it was
    skipped (its reason noted in `skips`, shown once below)."""
    parts = []
    for row in rows:
        worst = f"worst {row['worst_fraction']:.3g}x"
        if row.get("worst_ulps") is not None:
            worst += f" ({row['worst_ulps']:.3g} ulp)"
        if row["failed"]:
            state = f"{row['failed']} failed, {worst}"
        elif row["elements"]:
            state = f"{row['calls_compared']} compared, {worst}"
        elif row["calls_compared"]:
            state = f"{row['calls_compared']} compared (type, dtype, device: no values)"
        elif row["skipped"] and not row["passed"]:
            state = "skipped"
            skips.setdefault(row["device"], "; ".join(row["skipped"]))
        else:
            state = "nothing compared"
        parts.append(f"{row['device']}: {state}")
    return "\n".join(parts) or "-"


def capabilities(rows: list[dict[str, Any]], absent: dict[str, str]) -> str:
    """A port's capabilities over its rows: those it lacks (each reason noted in `absent`), then
    those it has."""
    states = merged(row.get("capabilities", {}) for row in rows)
    lacks = lacked(states)
    for capability in lacks:
        absent.setdefault(capability, states[capability].removeprefix("absent: "))
    has = sorted(name for name, state in states.items() if state == "present")
    said = [(verb, names) for verb, names in [("lacks", lacks), ("has", has)] if names]
    return "\n".join(f"{verb} {', '.join(names).replace('_', ' ')}" for verb, names in said) or "-"


def grid(report: dict[str, Any], name: str) -> list[nodes.Node]:
    """The port x dtype table of `name`'s rows in `report`, under the run it came from."""
    rows = [row for row in report.get("rows", []) if row["algorithm"] == name]
    commit = report.get("commit") or "no git commit"
    said = nodes.paragraph(
        text=f"From the test run of {report.get('date', '?')}, at commit {commit}: calls "
        "compared and the worst error as a fraction of what was allowed (1.00x: at the limit),"
        " and in units in the last place (ulp) where the allowance is mostly relative."
    )
    if not rows:
        said += nodes.Text(f" It compared nothing of {name}: run nox -s tests.")
        return [said]
    found = {row["backend"] for row in rows}
    backends = [known for known in BACKENDS if known in found] + sorted(found - set(BACKENDS))
    dtypes = [dtype for dtype in DTYPES if any(row["dtype"] == dtype for row in rows)]
    table = nodes.table(classes=["parity-grid"])
    group = nodes.tgroup(cols=len(dtypes) + 2)
    table += group
    group.extend(nodes.colspec(colwidth=1) for _ in range(len(dtypes) + 2))
    head = nodes.thead()
    head += line(["port", *dtypes, "capabilities"])
    body = nodes.tbody()
    skips: dict[str, str] = {}
    absent: dict[str, str] = {}
    for backend in backends:
        mine = [row for row in rows if row["backend"] == backend]
        cells = [cell([row for row in mine if row["dtype"] == dtype], skips) for dtype in dtypes]
        body += line([str(BACKENDS.get(backend, backend)), *cells, capabilities(mine, absent)])
    group += head
    group += body
    skipped = [f"{device}: {reason}" for device, reason in sorted(skips.items())]
    notes = [nodes.paragraph(text="Skipped here: " + "; ".join(skipped) + ".")] if skipped else []
    lacking = [f"{name.replace('_', ' ')}: {why}" for name, why in sorted(absent.items())]
    if lacking:
        notes.append(nodes.paragraph(text="Lacked, in the library's words: " + "; ".join(lacking)))
    return [said, table, *notes]


def line(texts: list[str]) -> nodes.row:
    row = nodes.row()
    for text in texts:
        entry = nodes.entry()
        for part in text.split("\n"):
            entry += nodes.paragraph(text=part)
        row += entry
    return row


class Ports(SphinxDirective):
    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict[str, Any]] = {}

    def run(self) -> list[nodes.Node]:
        _, path = self.env.relfn2path(self.arguments[0])
        reference = Path(path)
        files = [reference]
        if reference.name == "numpy_impl.py":  # the split layout: the ports are its siblings
            files += sorted(set(reference.parent.glob("*_impl.py")) - {reference})
        split = reference.name == "numpy_impl.py"
        name = reference.parent.name if split else reference.stem
        kernels_file = "_triton_kernels.py" if split else f"_{name}_triton_kernels.py"
        kernels = reference.with_name(kernels_file)
        for file in [*files, kernels]:
            self.env.note_dependency(str(file))
        found = functions(files, name)
        if "numpy" not in found:
            msg = f"parity-ports: no _{name}_numpy in {reference}"
            raise self.error(msg)
        if "triton" in found and kernels.is_file():  # the port launches them: they are its code
            code = kernels.read_text(encoding="utf-8").strip()
            found["triton"] += f"\n\n\n# {kernels.name}: the kernels it launches\n\n{code}"
        nodes_: list[nodes.Node] = [tabs(f"parity-ports-{name}", found)]
        report_path = Path(self.env.srcdir, self.config.parity_report)
        self.env.note_dependency(str(report_path))  # a new report: the page is built again
        if report_path.is_file():
            report = json.loads(report_path.read_text(encoding="utf-8"))
            nodes_ += grid(report, name)
        else:
            shown = self.config.parity_report.removeprefix("../") or "a report"
            nodes_.append(
                nodes.paragraph(text=NO_REPORT.format(path=shown), classes=["parity-no-report"])
            )
        return nodes_


def add_static(app: Any) -> None:
    app.config.html_static_path.append(str(STATIC))


def setup(app: Any) -> dict[str, Any]:
    # Where a repo's `nox -s tests` writes it, relative to the docs' folder.
    app.add_config_value("parity_report", "../reports/parity.json", "env")
    app.add_directive("parity-ports", Ports)
    app.connect("builder-inited", add_static)
    app.add_css_file("parity-ports.css")
    return {"parallel_read_safe": True}
