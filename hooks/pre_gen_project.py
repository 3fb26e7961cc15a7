"""Refuse bad answers, and cookiecutters too old for this template, before anything is written.

The rules are the `validator:` expressions of copier.yml, evaluated here with the same Jinja
filters copier provides, so both engines accept and refuse exactly the same answers.
"""

import json
import os
import re
import sys
from importlib.metadata import version
from pathlib import Path

from jinja2 import FileSystemLoader
from jinja2.sandbox import SandboxedEnvironment

# The answers arrive as JSON, where every quote is escaped: no answer can end this raw string and
# run as code.
CONTEXT = json.loads(r"""{{ cookiecutter | tojson }}""")
# The oldest cookiecutter that asks yes/no questions and shows __prompts__ (README.md; tested in
# tests/test_cookiecutter_versions.py). Before 2.7.1 a yes/no answer given on the command line
# (`jax=false`) arrives as text, which templates would read as true.
OLDEST_COOKIECUTTER = (2, 2, 0)
CONVERTS_COMMAND_LINE_BOOLEANS = "2.7.1"


def running_cookiecutter() -> str:
    """The version of the cookiecutter running this hook: hooks run in its Python. (Its
    `__version__` is not reliable: 2.2.0 says 2.1.2.dev0.)"""
    return version("cookiecutter")


def cookiecutter_too_old() -> str | None:
    """Why the running cookiecutter cannot render this template, or None. From 2.2.0 on,
    cookiecutter passes `_repo_dir`: looking up the version (50 ms) is left to older ones."""
    if "_repo_dir" in CONTEXT:
        return None
    found = tuple(int(part) for part in re.findall(r"\d+", running_cookiecutter())[:3])
    if found >= OLDEST_COOKIECUTTER:
        return None
    oldest = ".".join(map(str, OLDEST_COOKIECUTTER))
    return (
        f"This template needs cookiecutter {oldest} or newer; this is cookiecutter {running_cookiecutter()}.\n"
        f'  Install a newer one with `python -m pip install "cookiecutter>={oldest}"` (or use\n'
        "  copier: `copier copy <template> <folder>`), then run it again. Nothing was generated."
    )


def textual_yes_no(answers: dict[str, object]) -> str | None:
    """Why a yes/no answer arrived as text (an older cookiecutter's command line), or None."""
    if not isinstance(answers["jax"], str):
        return None
    return (
        f"jax={answers['jax']} arrived as text: cookiecutter {running_cookiecutter()} does not convert yes/no\n"
        "  answers given on the command line, and the template would read any text as true.\n"
        "  Answer jax at the prompt instead (leave out --no-input), or install a newer cookiecutter:\n"
        f'  `python -m pip install "cookiecutter>={CONVERTS_COMMAND_LINE_BOOLEANS}"`. Nothing was generated.'
    )


def template_repo(repo_dir: str) -> Path:
    """The template's folder, absolute: cookiecutter may record it relative, as typed.

    Hooks run in the project folder while cookiecutter itself sits in the template folder: on
    Linux that is the parent's cwd; elsewhere the shell's $PWD (left alone by cookiecutter's chdir)
    resolves a relative path. post_gen_project.py repeats this: hooks cannot import each other.
    """
    parent_cwd = Path(f"/proc/{os.getppid()}/cwd")
    if parent_cwd.exists():
        return parent_cwd.resolve()
    return Path(os.environ.get("PWD", Path.cwd()), repo_dir).resolve()


def regex_search(value: str, pattern: str) -> str | None:
    match = re.search(pattern, value)
    return match.group() if match else None


def regex_replace(value: str, pattern: str, replacement: str = "") -> str:
    return re.sub(pattern, replacement, value)


def cruft_update_answers() -> dict[str, object] | None:
    """The answers of the repo `cruft update` is updating, or None when this render is not that.

    Only cruft puts `_commit` in the context. Its update renders in a temporary folder, while its
    user's shell sits in the repo ($PWD), whose `.cruft.json` names this template.
    """
    project = Path(os.environ.get("PWD", Path.cwd())).resolve()
    state_file = project / ".cruft.json"
    if "_commit" not in CONTEXT or Path.cwd().resolve().is_relative_to(project) or not state_file.is_file():
        return None
    state = json.loads(state_file.read_text(encoding="utf-8"))
    if state.get("template") != CONTEXT.get("_template"):
        return None
    answers: dict[str, object] = state["context"]["cookiecutter"]
    return answers


def refusals(repo_dir: Path, answers: dict[str, object], previous: dict[str, object] | None) -> list[str]:
    """Messages of every copier.yml validator that refuses its answer; `previous`: the answers of
    the repo being updated, if this is an update."""
    import yaml  # here, after the version check: cookiecutter 1.x does not install PyYAML

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # PyYAML's C parser, where built
    questions = yaml.load((repo_dir / "copier.yml").read_text(encoding="utf-8"), Loader=loader)
    env = SandboxedEnvironment(loader=FileSystemLoader(repo_dir))
    env.filters.update(regex_search=regex_search, regex_replace=regex_replace)
    messages = []
    for name, question in questions.items():
        if name.startswith("_") or "validator" not in question:
            continue
        # copier passes the raw `--data` values as _copier_conf.data; cookiecutter has
        # already turned yes/no answers into booleans. In an update, the validators compare
        # with the repo's answers as copier's do (`overwrite`, `_external_data`).
        message = env.from_string(question["validator"]).render(
            answers,
            _copier_conf={"data": answers, "overwrite": previous is not None},
            _external_data={"previous": previous or {}},
            _folder_name=Path.cwd().name,
        )
        if message.strip():
            messages.append(f"  {name}: {message.strip()}")
    return messages


def checkout_problem(repo_dir: Path) -> str | None:
    """cookiecutter reaches template/ through a symlink; a checkout without symlinks (git on
    Windows without core.symlinks) holds a small text file there instead."""
    (entry,) = (path for path in repo_dir.iterdir() if "cookiecutter" in path.name and "{" in path.name)
    if entry.is_dir():
        return None
    return (
        f"{entry} is not a symlink to template/ in this checkout (git without symlink support?).\n"
        "  Clone again with `git clone -c core.symlinks=true ...` (on Windows, enable Developer Mode\n"
        "  first), or render with `copier copy`, which does not need the symlink."
    )


def main() -> int:
    if problem := cookiecutter_too_old():
        print(problem, file=sys.stderr)
        return 1
    repo_dir = template_repo(CONTEXT.get("_repo_dir", "."))
    if problem := checkout_problem(repo_dir):
        print(problem, file=sys.stderr)
        return 1
    answers = {key: value for key, value in CONTEXT.items() if not key.startswith("_")}
    if problem := textual_yes_no(answers):
        print(problem, file=sys.stderr)
        return 1
    messages = refusals(repo_dir, answers, cruft_update_answers())
    if messages:
        print("The template refused these answers; nothing was generated:", file=sys.stderr)
        print("\n".join(messages), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
