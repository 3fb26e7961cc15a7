"""Where CPU builds of torch come from, and whether a GPU is there: the generated noxfile's own
rules, for the tests, the benchmarks and the template's noxfile (which loads this module by its
path).

A generated repo stands alone, so its noxfile holds the rules. They are taken here from
template/noxfile.py (plain Python: copied, not rendered) without running the rest of it (its
sessions, its reading of a repo's pyproject.toml): its top-level imports and the definitions
named in `TAKEN`, and nothing else.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

GENERATED_NOXFILE = Path(__file__).resolve().parents[1] / "template" / "noxfile.py"
TAKEN = frozenset({"TORCH_INDEX_HOST", "CPU_INDEX", "resolves", "torch_index", "why_no_gpu"})


def _defines(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {target.id for target in node.targets if isinstance(target, ast.Name)}
    return set()


def _rules() -> dict[str, Any]:
    tree = ast.parse(GENERATED_NOXFILE.read_text(encoding="utf-8"))
    kept = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom) or _defines(node) & TAKEN]
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=kept, type_ignores=[]), GENERATED_NOXFILE, "exec"), namespace)
    if missing := TAKEN - namespace.keys():
        raise ImportError(f"{GENERATED_NOXFILE} no longer defines {sorted(missing)}")
    return namespace


_RULES = _rules()
TORCH_INDEX_HOST: str = _RULES["TORCH_INDEX_HOST"]
TORCH_CPU_INDEX: str = _RULES["CPU_INDEX"]
#: Whether a host has an address: offline machines reach package indexes through a mirror.
resolves: Callable[[str], bool] = _RULES["resolves"]
#: Why this machine cannot run CUDA tests, or None where `nvidia-smi -L` lists a GPU.
why_no_gpu: Callable[[], str | None] = _RULES["why_no_gpu"]


def torch_index_url() -> str:
    """TORCH_INDEX_URL as set; unset, PyTorch's CPU index where it resolves, else "" (pip's own
    index and configuration: what an offline machine has, a local wheelhouse or mirror)."""
    url: str = _RULES["torch_index"]("TORCH_INDEX_URL", TORCH_CPU_INDEX)
    return url
