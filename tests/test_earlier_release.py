"""A repo made by an earlier release keeps working after `copier update` to this one.

The earlier release is this repo at EARLIER (the last release before the scaffold's stubs raised
`NotYetImplemented`, the harness took a `Spec` and the dispatch checked dtypes in its conditions).
A researcher made a repo with it and scaffolded an algorithm whose stubs raise a plain
`NotImplementedError("not implemented yet: ...")`; that file and its test module are theirs, so an
update leaves them as they are. After `copier update` to this working tree, their tests are still
reported as not implemented yet (XFAIL), the worked examples still pass, and nothing fails.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import pytest

from tests.render import ROOT, Combination, commit_all, generate, git, harness_requirement, run
from tests.updating import copier_update

EARLIER = "5c062dd"  # main before this release's harness and contracts
COMBINATION = Combination("single", jax=False)


def template_at(commit: str, dest: Path) -> Path:
    """This repo's files at `commit`, as a git repository tagged v1.0.0."""
    archive = subprocess.run(["git", "-C", ROOT, "archive", commit], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(dest, filter="tar")
    commit_all(dest, "the earlier release", init=True)
    git(dest, "tag", "v1.0.0")
    return dest


def release_working_tree(template: Path) -> None:
    """This working tree (tracked and untracked files) as the template's next commit, v2.0.0."""
    for child in template.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    files = git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0")
    for name in filter(None, files):
        source = ROOT / name
        if source.exists() or source.is_symlink():
            (template / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, template / name, follow_symlinks=False)
    commit_all(template, "this release")
    git(template, "tag", "v2.0.0")


@pytest.mark.slow
def test_stubs_of_an_earlier_release_stay_expected_failures(tmp_path: Path) -> None:
    if subprocess.run(["git", "-C", ROOT, "cat-file", "-t", EARLIER], capture_output=True, check=False).returncode:
        pytest.skip(f"this clone has no commit {EARLIER} (a shallow clone?): fetch the history")
    template = template_at(EARLIER, tmp_path / "template")
    repo = generate(template, "copier", tmp_path / "work", COMBINATION)
    run([sys.executable, "scripts/new_algorithm.py", "mse", "prediction", "target"], cwd=repo)
    stub = (repo / "src" / "my_research_project" / "mse.py").read_text(encoding="utf-8")
    assert "raise NotImplementedError(msg)" in stub  # as the earlier scaffold wrote it
    commit_all(repo, "mse, to be written")

    release_working_tree(template)
    copier_update(repo)
    assert (repo / "src" / "my_research_project" / "mse.py").read_text(encoding="utf-8") == stub
    assert "NotYetImplemented" in (repo / "src" / "my_research_project" / "_dispatch.py").read_text(encoding="utf-8")
    # The harness was one file then, and is a package the repo depends on now: the update takes
    # the vendored copy away and pins the package; the tests' `import parity` finds it installed.
    assert not (repo / "tests" / "parity.py").exists()
    assert not (repo / "tests" / "parity").exists()
    assert harness_requirement(repo).startswith("parity @ git+"), "the update did not pin the harness"

    env = {"PYTHONPATH": str(repo / "src"), "HYPOTHESIS_PROFILE": "ci", "PATH": str(Path(sys.executable).parent)}
    result = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rx", "tests"], cwd=repo, env=env)
    summary = result.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary), result.stdout
    assert "xfailed" in summary, result.stdout
    assert not re.search(r"failed|error", summary.replace("xfailed", "")), result.stdout
    assert "XFAIL tests/test_mse.py::test_matches_reference" in result.stdout
