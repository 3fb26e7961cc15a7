"""Older cookiecutters: the oldest supported one (README.md) renders the same repo; older ones, and
yes/no answers that arrive as text, stop before writing anything, with a message that names the
version to install (for 1.x, Debian 12's 1.7.3, the README names it)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.render import COMBINATIONS, Combination, Render, cookiecutter_typed_input, only_child, run, tree

pytestmark = pytest.mark.slow
EXTENSION = Path(__file__).resolve().parents[1] / "local_extensions.py"
OLDEST = re.findall(r'OLDEST_COOKIECUTTER = "([\d.]+)"', EXTENSION.read_text(encoding="utf-8"))[0]


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


def stop_before_writing(version: str, template_repo: Path, tmp_path_factory: pytest.TempPathFactory, out: Path) -> str:
    """Render with cookiecutter `version`; assert it stopped cleanly, leaving nothing; what it printed."""
    # --no-input: cookiecutter 1.x would first ask for `__prompts__`, as JSON.
    command = [install(version, tmp_path_factory), "--no-input", "-o", out, template_repo]
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "Traceback" not in result.stdout + result.stderr
    assert not list(out.iterdir()), "something was left in the output folder"
    return result.stdout + result.stderr


def test_cookiecutter_2_1_stops_with_the_version_to_install(
    template_repo: Path, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    printed = stop_before_writing("2.1.1", template_repo, tmp_path_factory, tmp_path)
    assert f"This template needs cookiecutter {OLDEST} or newer; this is cookiecutter 2.1.1." in printed
    assert f'python -m pip install "cookiecutter>={OLDEST}"' in printed


def test_cookiecutter_1_stops_with_the_message_the_readme_explains(
    template_repo: Path, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """cookiecutter 1.x cannot import local_extensions.py, so our check cannot run: the README's
    install section quotes the message it prints instead, and the line to run."""
    printed = stop_before_writing("1.7.3", template_repo, tmp_path_factory, tmp_path)
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    message = "Unable to load extension: No module named 'local_extensions'"
    assert message in printed
    assert message in " ".join(readme.split())
    assert f'python -m pip install "cookiecutter>={OLDEST.rsplit(".", 1)[0]}"' in readme


def test_a_yes_no_answer_as_text_is_refused(oldest: Path, template_repo: Path, tmp_path: Path) -> None:
    """Before 2.7.1, `jax=false` on the command line arrives as the text "false", which is true."""
    command = [oldest, "--no-input", "-o", tmp_path, template_repo, "jax=false"]
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert f"jax=false arrived as text: cookiecutter {OLDEST} does not convert yes/no" in result.stderr
    assert 'python -m pip install "cookiecutter>=2.7.1"' in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert not list(tmp_path.iterdir())
