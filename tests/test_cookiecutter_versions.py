"""Older cookiecutters: the oldest supported one (README.md) renders the same repo; older ones, and
yes/no answers that arrive as text, stop with a message that names the version to install."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.render import COMBINATIONS, Combination, Render, cookiecutter_typed_input, only_child, run, tree

pytestmark = pytest.mark.slow
HOOK = Path(__file__).resolve().parents[1] / "hooks" / "pre_gen_project.py"
OLDEST = ".".join(re.findall(r"OLDEST_COOKIECUTTER = \((\d+), (\d+), (\d+)\)", HOOK.read_text(encoding="utf-8"))[0])
# cookiecutter 1.7.3 is what Debian 12 packages; 2.1.1 passes no `_repo_dir` to hooks.
TOO_OLD = ["1.7.3", "2.1.1"]


def install(version: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cookiecutter `version` in a virtual environment of its own; its executable."""
    venv = tmp_path_factory.mktemp(f"cookiecutter-{version}")
    run([sys.executable, "-m", "venv", venv])
    run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", f"cookiecutter=={version}"])
    return venv / "bin" / "cookiecutter"


@pytest.fixture(scope="module")
def oldest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install(OLDEST, tmp_path_factory)


def render(executable: Path, template: Path, out: Path, answers: dict[str, object]) -> subprocess.CompletedProcess[str]:
    """Answer the prompts as a user types them."""
    return subprocess.run(
        [str(executable), "-o", str(out), str(template)],
        input=cookiecutter_typed_input(answers),
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("combination", [COMBINATIONS[0], COMBINATIONS[-1]], ids=lambda c: c.id)
def test_the_oldest_supported_cookiecutter_renders_the_same_repo(
    oldest: Path, template_repo: Path, rendered: Render, combination: Combination, tmp_path: Path
) -> None:
    result = render(oldest, template_repo, tmp_path, combination.answers)
    assert result.returncode == 0, result.stderr
    assert tree(only_child(tmp_path)) == tree(rendered("cookiecutter", combination))


@pytest.mark.parametrize("version", TOO_OLD)
def test_older_cookiecutters_stop_with_the_version_to_install(
    version: str, template_repo: Path, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    # --no-input: cookiecutter 1.x would first ask for `__prompts__`, as JSON.
    command = [install(version, tmp_path_factory), "--no-input", "-o", tmp_path, template_repo]
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert f"This template needs cookiecutter {OLDEST} or newer; this is cookiecutter {version}." in result.stderr
    assert f'python -m pip install "cookiecutter>={OLDEST}"' in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not list(tmp_path.iterdir()), "something was left in the output folder"


def test_a_yes_no_answer_as_text_is_refused(oldest: Path, template_repo: Path, tmp_path: Path) -> None:
    """Before 2.7.1, `jax=false` on the command line arrives as the text "false", which is true."""
    command = [oldest, "--no-input", "-o", tmp_path, template_repo, "jax=false"]
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert f"jax=false arrived as text: cookiecutter {OLDEST} does not convert yes/no" in result.stderr
    assert 'python -m pip install "cookiecutter>=2.7.1"' in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not list(tmp_path.iterdir())
