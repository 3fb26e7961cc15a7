"""`parity`'s public names are what a researcher's test module calls, and the docs site's harness
page shows each from its docstring: every name in `__all__` has one (a constant, the ``#:``
comment where it is assigned), none starts with an underscore, and each is called by a test file
that `parity new` writes or, where this package sits in the template's repository, by the
template's test files, its guide, or the test files its own tests write into a generated repo.
The plugin's and the commands' own helpers are imported from their modules, not from `parity`."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import parity
from parity_tools.docstrings import reexported_comment
from parity_tools.new import Constraints, Parameter, Repo, files

ROOT = Path(__file__).resolve().parents[3]
# Files that hold a researcher's calls: the template's worked examples and guide, and the test
# files the template's own tests write into a generated repo (the zoo, the harness's cases).
CALLERS = [
    "template/tests/*.py",
    "template/docs/guide/*.md",
    "tests/zoo/*.py",
    "tests/special_zoo/*.py",
    "tests/*_cases*.py",
]
# What `parity new` may write: each layout, with JAX or not; (shared, triton): its options.
LAYOUTS = [("single", False), ("single", True), ("split", False), ("split", True)]
OPTIONS = [(False, False), (True, False), (False, True)]
# Helpers of the plugin and of the commands, public until they had a page to appear on.
INTERNAL = {"tallied", "teststatus", "missing_device", "called_as_public", "with_defaults"}
CALLED = re.compile(r"\bparity\.(\w+)|from parity import (?:\(([^)]*)\)|([\w ,]+))")


def called(text: str) -> set[str]:
    """The names `text` takes from `parity`: ``parity.name`` or ``from parity import name``."""
    names = set()
    for attribute, *imported in CALLED.findall(text):
        names |= {attribute, *(name.strip() for name in ",".join(imported).split(","))}
    return names - {""}


def test_every_public_name_is_documented_and_called_from_a_test_file() -> None:
    written = [
        text
        for (layout, jax), (shared, triton) in itertools.product(LAYOUTS, OPTIONS)
        for text in files(
            Repo("pkg", layout, jax),
            "rms_norm",
            {"x": "...d", "weight": "d"},
            [Parameter("eps", "float", "1e-6")],
            Constraints(),
            shared,
            triton=triton,
        ).values()
    ]
    template = [path.read_text(encoding="utf-8") for glob in CALLERS for path in ROOT.glob(glob)]
    used = set().union(*map(called, written + template))

    undocumented, uncalled = [], []
    for name in parity.__all__:
        obj = getattr(parity, name)
        if callable(obj):  # not the signature a dataclass without a docstring gets as one
            documented = bool(obj.__doc__) and not obj.__doc__.startswith(f"{name}(")
        else:  # a constant: autodoc finds its comment where the harness page's build does
            lines = (type(obj).__doc__ or "").splitlines()
            reexported_comment(None, "data", f"parity.{name}", obj, None, lines)
            documented = lines != (type(obj).__doc__ or "").splitlines()
        undocumented += [] if documented else [name]
        uncalled += [] if name in used else [name]
    assert not undocumented, f"public names without a docstring (the harness page): {undocumented}"
    assert not uncalled, f"public names that no test file or guide calls: {uncalled}"
    assert not [name for name in parity.__all__ if name.startswith("_")]
    assert not INTERNAL & set(parity.__all__)
    assert not [name for name in INTERNAL if hasattr(parity, name)], "reachable as parity.name"
