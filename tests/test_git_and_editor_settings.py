"""What a generated repo tells git and editors: `.gitignore` keeps research artefacts (data,
checkpoints, run logs, environments) out and the repo's own files in; `.editorconfig` wraps lines
where ruff does."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.render import COMBINATIONS, Combination, Render, fresh_git_repo, git, read_pyproject


def test_gitignore_keeps_research_artefacts_out(rendered: Render, combination: Combination, tmp_path: Path) -> None:
    repo = fresh_git_repo(rendered("cookiecutter", combination), tmp_path / "repo")
    assert "!!" not in git(repo, "status", "--porcelain", "--ignored"), "it ignores a generated file"
    artefacts = {
        "data/train.csv",
        "checkpoints/epoch-3.pt",
        "model.ckpt",
        "weights.safetensors",
        "outputs/2024-05-01/run.log",
        "wandb/run-1/files",
        "lightning_logs/version_0",
        "notebooks/.ipynb_checkpoints/a-checkpoint.ipynb",
        ".venv/bin/python",
        "src/pkg/__pycache__/mod.cpython-311.pyc",
    }
    kept = {"tests/data/reference.npz", "src/pkg/data/__init__.py", "notebooks/explore.ipynb"}
    check = subprocess.run(
        ["git", "-C", repo, "check-ignore", "--no-index", *sorted(artefacts | kept)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert set(check.stdout.split()) == artefacts, check.stdout


def test_editorconfig_agrees_with_ruff(rendered: Render) -> None:
    repo = rendered("cookiecutter", COMBINATIONS[0])
    editorconfig = (repo / ".editorconfig").read_text(encoding="utf-8")
    line_length = read_pyproject(repo)["tool"]["ruff"]["line-length"]
    assert f"max_line_length = {line_length}\n" in editorconfig
