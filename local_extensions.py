"""The part of the template that runs inside cookiecutter's own process.

cookiecutter (2.1 and later, and cruft) imports this module from the template's folder, as
`_extensions` in cookiecutter.json asks. It gives cookiecutter's Jinja:

- the function `check_answers`, in the name of the folder cookiecutter renders (the symlink
  `{{ check_answers(cookiecutter) }}{{ cookiecutter.__project_dir }}` to template/; cruft wants
  `cookiecutter.` in that name). Before anything is written it refuses a
  cookiecutter too old for this template, a checkout without symlinks, and every answer that a
  `validator:` of copier.yml refuses: those expressions are the rules' only copy, evaluated here
  with the filters copier provides, so both engines accept and refuse the same answers;
- the functions `answers_file` and `next_steps`, and the filter `hex`, which cookiecutter
  evaluates while it renders hooks/post_gen_project.py: the texts that hook writes and prints;
- the functions `template_source` and `template_commit`: where the template is and its commit,
  which copier knows of itself, for the harness's requirement (templates/parity-requirement.jinja).

Done here rather than in hook processes, it saves two Python start-ups that import Jinja and
PyYAML (0.08-0.12 s each; docs/measurements.md, "Rendering in cookiecutter's process").
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from cookiecutter.exceptions import FailedHookException
from jinja2 import Environment, FileSystemLoader
from jinja2.ext import Extension
from jinja2.sandbox import SandboxedEnvironment

TEMPLATE_REPO = Path(__file__).resolve().parent
# copier.yml's `_answers_file`, which `copier update` reads.
ANSWERS_FILE = ".copier-answers.yml"
# The oldest cookiecutter that asks yes/no questions and shows __prompts__ (README.md; tested in
# tests/test_cookiecutter_versions.py). 2.2.0's `__version__` says 2.1.2.dev0, hence the 2.1.2.
OLDEST_COOKIECUTTER = "2.2.0"
OLDEST_COOKIECUTTER_SAYS = (2, 1, 2)
# Before 2.7.1 a yes/no answer given on the command line (`jax=false`, `triton=false`) arrives as text, which
# templates would read as true.
CONVERTS_COMMAND_LINE_BOOLEANS = "2.7.1"


class Refused(FailedHookException):  # type: ignore[misc]  # cookiecutter has no type information
    """An answer, or the cookiecutter running, this template cannot take: cookiecutter (and cruft)
    stop on it as on a failed hook, before anything is written."""


def installed_cookiecutter() -> str:
    """The installed cookiecutter's version, for messages (a lookup of 50 ms, so only then)."""
    from importlib.metadata import version

    return version("cookiecutter")


def cookiecutter_too_old() -> str | None:
    import cookiecutter

    said = tuple(int(part) for part in re.findall(r"\d+", cookiecutter.__version__)[:3])
    if said >= OLDEST_COOKIECUTTER_SAYS:
        return None
    running = installed_cookiecutter()
    return (
        f"This template needs cookiecutter {OLDEST_COOKIECUTTER} or newer; this is cookiecutter {running}.\n"
        f'  Install a newer one with `python -m pip install "cookiecutter>={OLDEST_COOKIECUTTER}"` (or use\n'
        "  copier: `copier copy <template> <folder>`), then run it again. Nothing was generated."
    )


def checkout_problem() -> str | None:
    """cookiecutter reaches template/ through a symlink; a checkout without symlinks (git on
    Windows without core.symlinks) holds a small text file there instead."""
    (entry,) = (path for path in TEMPLATE_REPO.iterdir() if "cookiecutter" in path.name and "{" in path.name)
    if entry.is_dir():
        return None
    return (
        f"{entry} is not a symlink to template/ in this checkout (git without symlink support?).\n"
        "  Clone again with `git clone -c core.symlinks=true ...` (on Windows, enable Developer Mode\n"
        "  first), or render with `copier copy`, which does not need the symlink."
    )


def textual_yes_no(answers: dict[str, Any]) -> str | None:
    """Why a yes/no answer arrived as text (an older cookiecutter's command line), or None."""
    name = next((name for name in ("jax", "triton") if isinstance(answers.get(name), str)), None)
    if name is None:
        return None
    return (
        f"{name}={answers[name]} arrived as text: cookiecutter {installed_cookiecutter()} does not convert yes/no\n"
        "  answers given on the command line, and the template would read any text as true.\n"
        f"  Answer {name} at the prompt instead (leave out --no-input), or install a newer cookiecutter:\n"
        f'  `python -m pip install "cookiecutter>={CONVERTS_COMMAND_LINE_BOOLEANS}"`. Nothing was generated.'
    )


def cruft_update_answers(context: dict[str, Any]) -> dict[str, Any] | None:
    """The answers of the repo `cruft update` is updating, or None when this render is not that.

    Only cruft puts `_commit` in the context, and its update runs in the repo, whose `.cruft.json`
    names this template.
    """
    state_file = Path(os.environ.get("PWD", Path.cwd()), ".cruft.json")
    if "_commit" not in context or not state_file.is_file():
        return None
    state = json.loads(state_file.read_text(encoding="utf-8"))
    if state.get("template") != context.get("_template"):
        return None
    answers: dict[str, Any] = state["context"]["cookiecutter"]
    return answers


def sandbox(loader: FileSystemLoader | None = None) -> SandboxedEnvironment:
    """A Jinja environment for a template run once: trailing newlines kept as cookiecutter's
    environment keeps them (Jinja then reuses its lexer), and no constant folding, a sixth of
    the compiling that a single run would not get back."""
    return SandboxedEnvironment(loader=loader, keep_trailing_newline=True, optimized=False)


def regex_search(value: str, pattern: str) -> str | None:
    match = re.search(pattern, value)
    return match.group() if match else None


def regex_replace(value: str, pattern: str, replacement: str = "") -> str:
    return re.sub(pattern, replacement, value)


def refusals(context: dict[str, Any], answers: dict[str, Any]) -> list[str]:
    """Messages of every copier.yml validator that refuses its answer."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # PyYAML's C parser, where built
    questions = yaml.load((TEMPLATE_REPO / "copier.yml").read_text(encoding="utf-8"), Loader=loader)
    env = sandbox(FileSystemLoader(TEMPLATE_REPO))
    env.filters.update(regex_search=regex_search, regex_replace=regex_replace)
    previous = cruft_update_answers(context)
    messages = []
    for name, question in questions.items():
        if name.startswith("_") or "validator" not in question:
            continue
        # copier passes the raw `--data` values as _copier_conf.data; cookiecutter has already
        # turned yes/no answers into booleans. In a cruft update, the validators compare with the
        # repo's answers as copier's do (`overwrite`, `_external_data`).
        message = env.from_string(question["validator"]).render(
            answers,
            _copier_conf={"data": answers, "overwrite": previous is not None},
            _external_data={"previous": previous or {}},
            _folder_name=context["__project_dir"],
        )
        if message.strip():
            messages.append(f"  {name}: {message.strip()}")
    return messages


def check_answers(context: dict[str, Any]) -> str:
    """Nothing (the folder's name follows) once every check has passed; otherwise the problem, on
    stderr as the hook that did these checks printed it, and `Refused`."""
    answers = {key: value for key, value in context.items() if not key.startswith("_")}
    problem = cookiecutter_too_old() or checkout_problem() or textual_yes_no(answers)
    if problem is None and (messages := refusals(context, answers)):
        problem = "The template refused these answers; nothing was generated:\n" + "\n".join(messages)
    if problem is not None:
        print(problem, file=sys.stderr)
        raise Refused("Stopped before writing anything: see the message above.")
    return ""


def template_git(*args: str) -> str | None:
    """What `git <args>` prints in the template's checkout; None without git or outside one."""
    try:
        result = subprocess.run(["git", "-C", str(TEMPLATE_REPO), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:  # git is not installed
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def template_version() -> str | None:
    """`git describe --tags --always` of the template, as copier records it in `_commit`."""
    return template_git("describe", "--tags", "--always")


def template_commit() -> str | None:
    """The template's full commit hash, as copier gives it (`_copier_conf.vcs_ref_hash`)."""
    return template_git("rev-parse", "HEAD")


def source_path(template: str) -> str:
    """What copier needs to find the template again: a URL as typed, a local folder absolute (as
    cruft passes it: TEMPLATE_REPO is then cruft's temporary clone)."""
    if Path(template).is_absolute() and Path(template).is_dir():
        return template
    looks_remote = ":" in template and not Path(template).exists()
    return template if looks_remote else str(TEMPLATE_REPO)


def answers_file(context: dict[str, Any]) -> str:
    """The text of .copier-answers.yml, from the template file copier renders for it."""
    answers = {key: value for key, value in context.items() if not key.startswith("_")}
    commit = template_version()
    if commit is None:
        print(
            f"Note: {TEMPLATE_REPO} is not a git checkout (or git is missing), so `copier update` will not "
            "be able to bring later template changes into this project.",
            file=sys.stderr,
        )
    else:
        answers["_commit"] = commit
    answers["_src_path"] = source_path(context["_template"])
    env = sandbox()
    env.filters["to_nice_yaml"] = lambda data: yaml.dump(data, indent=4, allow_unicode=True, default_flow_style=False)
    (template_file,) = (TEMPLATE_REPO / "template").glob("*_copier_conf.answers_file*")
    return env.from_string(template_file.read_text(encoding="utf-8")).render(_copier_answers=answers)


def shown_path(project: Path) -> str:
    """The project's folder as the user would type it: relative to the shell's folder if inside it."""
    try:
        return str(project.relative_to(Path(os.environ["PWD"]).resolve()))
    except (KeyError, ValueError):
        return str(project)


def next_steps(context: dict[str, Any]) -> str:
    """The text copier prints after a copy (`_message_after_copy`), rendered with the same names."""
    project = Path(context.get("_output_dir", Path.cwd()), context["__project_dir"]).resolve()
    env = sandbox(FileSystemLoader(TEMPLATE_REPO))
    return env.get_template("templates/next-steps.jinja").render(
        cookiecutter=context, _copier_conf={"dst_path": shown_path(project)}
    )


class TemplateExtension(Extension):
    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        environment.optimized = False  # each template runs once: see `sandbox`
        environment.globals.update(check_answers=check_answers, answers_file=answers_file, next_steps=next_steps)
        # The harness's requirement (templates/parity-requirement.jinja): copier's source and commit.
        environment.globals.update(template_source=source_path, template_commit=template_commit)
        environment.filters["hex"] = lambda text: text.encode("utf-8").hex()
