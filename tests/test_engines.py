"""cookiecutter and copier generate the same repo, file by file, for every combination of options."""

from __future__ import annotations

import difflib
import stat
from pathlib import Path

from tests.render import Combination, Render, tree


def describe_differences(left: Path, right: Path) -> str:
    """A readable account of how two generated trees differ: missing files and unified diffs."""
    left_tree, right_tree = tree(left), tree(right)
    lines = [f"only from cookiecutter: {name}" for name in sorted(left_tree.keys() - right_tree.keys())]
    lines += [f"only from copier: {name}" for name in sorted(right_tree.keys() - left_tree.keys())]
    for name in sorted(left_tree.keys() & right_tree.keys()):
        before, after = left_tree[name], right_tree[name]
        if before != after:
            lines += difflib.unified_diff(
                (before or b"").decode(errors="replace").splitlines(),
                (after or b"").decode(errors="replace").splitlines(),
                f"cookiecutter/{name}",
                f"copier/{name}",
                lineterm="",
            )
    return "\n".join(lines)


def test_identical_files(rendered: Render, combination: Combination) -> None:
    from_cookiecutter = rendered("cookiecutter", combination)
    from_copier = rendered("copier", combination)
    differences = describe_differences(from_cookiecutter, from_copier)
    assert not differences, differences


def test_identical_file_modes(rendered: Render, combination: Combination) -> None:
    """An executable script stays executable with either engine."""

    def modes(root: Path) -> dict[str, int]:
        return {
            path.relative_to(root).as_posix(): stat.S_IMODE(path.stat().st_mode) & 0o111
            for path in root.rglob("*")
            if path.is_file()
        }

    assert modes(rendered("cookiecutter", combination)) == modes(rendered("copier", combination))


def test_the_layout_decides_the_files(rendered: Render, combination: Combination) -> None:
    """No leftovers of the other layout (an empty folder would shadow a module of the same name)."""
    package = rendered("copier", combination) / "src" / "my_research_project"
    for algorithm in ("softmax", "cross_entropy", "log_softmax"):
        assert (package / f"{algorithm}.py").is_file() == (combination.layout == "single")
        assert (package / algorithm).is_dir() == (combination.layout == "split")
