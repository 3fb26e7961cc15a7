"""The oldest copier that copier.yml admits (`_min_copier_version`) renders the same repo."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.render import COMBINATIONS, Render, run, tree

pytestmark = pytest.mark.slow


def test_oldest_copier_renders_the_same_repo(
    oldest_copier: Path, template_repo: Path, rendered: Render, tmp_path: Path
) -> None:
    split_jax = COMBINATIONS[-1]
    dest = tmp_path / "my-research-project"
    run([oldest_copier, "copy", "--quiet", "--defaults", "-d", "layout=split", "-d", "jax=true", template_repo, dest])
    assert tree(dest) == tree(rendered("copier", split_jax))


def test_oldest_copier_refuses_a_bad_yes_no(oldest_copier: Path, template_repo: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [oldest_copier, "copy", "--quiet", "--defaults", "-d", "jax=maybe", template_repo, tmp_path / "out"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "neither yes nor no" in result.stderr
