"""A generated repo passes the Scientific Python ecosystem's own reviews on day one.

Every tool runs for real, on every combination of options: sp-repo-review, validate-pyproject,
check-jsonschema (GitHub's workflow and Dependabot schemas) and zizmor. The license and citation
files, the pre-commit hooks, the README and the git and editor settings have modules of their own.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.render import BIN, Combination, Render, read_pyproject, run, workflow_files


def repo_review(repo: Path) -> dict[str, Any]:
    """sp-repo-review's report (it exits non-zero when a check fails: the caller says which)."""
    result = subprocess.run(
        [BIN / "sp-repo-review", repo, "--format", "json"], capture_output=True, text=True, check=False
    )
    assert result.stdout.startswith("{"), result.stdout + result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


# sp-repo-review, validate-pyproject ---------------------------------------------------------------


def test_sp_repo_review_passes(rendered: Render, combination: Combination) -> None:
    """Every applicable check passes; the ones we disagree with are ignored with a reason."""
    repo = rendered("cookiecutter", combination)
    report = repo_review(repo)
    failed = {
        name: f"{check['description']}: {check['err_msg'].strip()}"
        for name, check in report["checks"].items()
        if check["result"] is False
    }
    assert not failed, json.dumps(failed, indent=2, ensure_ascii=False)


def test_repo_review_ignores_give_their_reasons(rendered: Render) -> None:
    """`[tool.repo-review] ignore` is a table: each ignored check with the reason next to it."""
    repo = rendered("cookiecutter", Combination("single", jax=False))
    ignore = read_pyproject(repo).get("tool", {}).get("repo-review", {}).get("ignore", {})
    assert isinstance(ignore, dict), 'write `ignore = {CHECK = "reason"}`, not a bare list'
    assert all(isinstance(reason, str) and reason.strip() for reason in ignore.values()), ignore
    report = repo_review(repo)
    for name, reason in ignore.items():
        assert report["checks"][name]["skip_reason"] == reason


def test_validate_pyproject_accepts_pyproject(rendered: Render, combination: Combination) -> None:
    run([BIN / "validate-pyproject", rendered("cookiecutter", combination) / "pyproject.toml"])


# GitHub workflows --------------------------------------------------------------------------------


def test_workflows_match_github_schema(rendered: Render, combination: Combination) -> None:
    repo = rendered("cookiecutter", combination)
    workflows = workflow_files(repo)
    assert workflows, "the generated repo has no GitHub workflow"
    run([BIN / "check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows])
    dependabot = repo / ".github" / "dependabot.yml"
    if dependabot.exists():
        run([BIN / "check-jsonschema", "--builtin-schema", "vendor.dependabot", dependabot])


def test_zizmor_finds_nothing_of_medium_severity_or_above(rendered: Render, combination: Combination) -> None:
    repo = rendered("cookiecutter", combination)
    assert workflow_files(repo), "the generated repo has no GitHub workflow"
    result = subprocess.run(
        [BIN / "zizmor", "--offline", "--format", "json", repo], capture_output=True, text=True, check=False
    )
    findings = json.loads(result.stdout)
    serious = [
        f"{finding['ident']} ({finding['determinations']['severity']}): {finding['desc']} in "
        f"{finding['locations'][0]['symbolic']['key']}"
        for finding in findings
        if finding["determinations"]["severity"] in {"Medium", "High"}
    ]
    assert not serious, "\n".join(serious)
