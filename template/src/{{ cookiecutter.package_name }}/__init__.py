"""Algorithms with a NumPy reference implementation and a port to each other backend.

Each public function dispatches on the type of its arrays, all from one backend, and returns the
same kind of array (same dtype, same device): {{ cookiecutter.__array_types }}.
"""

{#- Rendered over an existing repo (an update), copier leaves the Array API example out
(copier.yml, `_exclude`), and so its import: a line here would conflict with the user's. #}
{%- set has_log_softmax = not (_copier_conf is defined and _copier_conf.overwrite) %}

from .cross_entropy import cross_entropy
{%- if has_log_softmax %}
from .log_softmax import log_softmax
{%- endif %}
from .softmax import softmax

__all__ = ["cross_entropy", {{ '"log_softmax", ' if has_log_softmax else '' }}"softmax"]
