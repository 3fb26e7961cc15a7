"""The template's tests; `tests.render` and `tests.scaffolded` are shared with benchmarks/."""
