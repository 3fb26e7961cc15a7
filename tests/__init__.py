"""The template's tests. Run from the repo's root; tests.render, tests.scaffolded and tests.torch_index serve
the benchmarks too."""
