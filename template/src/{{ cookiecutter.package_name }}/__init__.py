"""Algorithms with a NumPy reference implementation and a port to each other backend.

Each public function dispatches on the type of its arrays, all from one backend, and returns the
same kind of array (same dtype, same device): {{ cookiecutter.__array_types }}.
"""

from .cross_entropy import cross_entropy
from .softmax import softmax

__all__ = ["cross_entropy", "softmax"]
