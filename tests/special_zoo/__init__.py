"""A third zoo: functions the project did not design, taken from SciPy's special functions and
NumPy's, PyTorch's and JAX's elementwise, binary and reduction operations, chosen for hard
numerics, each with one planted bug.

The modules have the format of tests/zoo/ (its docstring says what each name declares), and the
same functions read and write them (`tests.zoo.algorithms("tests.special_zoo")`, `tests.zoo.write`).
Each is the plain library call, written as a researcher would: the reference in NumPy or
`scipy.special` (imported inside it; its result cast back to the operands' dtype, since SciPy
computes float16 in float32 or float64), the port in PyTorch (`torch`, `torch.special`), and a
JAX port where JAX has the function and gets it right (otherwise no `jax` function: its tests
stay the scaffold's "not implemented yet"). What they are chosen for:

- poles: reciprocal, rsqrt, tan, cotangent, log_abs, digamma, trigamma, gamma, lgamma,
  hurwitz_zeta; infinities at a domain's end: arctanh, erfinv, ndtri, logit, log1p, xlog1py,
  bessel_y0, bessel_y1, bessel_k0
- branch cuts and signed zeros: atan2, angle (PyTorch's phase of -0 is 0, NumPy's π), copysign,
  sign, remainder (NumPy's 0 % -2 is -0)
- whole-number results, jumps: floor, ceil, trunc, round_decimals, frac, floor_divide,
  remainder, fmod, heaviside
- no derivative in PyTorch (`--no-gradient` in SCAFFOLD): floor_divide, heaviside, hurwitz_zeta,
  hermite and the torch.special Bessel functions
- the libraries' own precision (`TOLERANCES`, measured against SciPy): PyTorch's bessel_j0,
  bessel_j1, bessel_y0, bessel_y1 and airy_ai; the others within the default tolerances
- removable singularities and cancellation: sinc, spherical_j0, expm1, log1p, entr, xlogy,
  erfcx, log_ndtr, expit, logaddexp, hypot, bessel_i0, bessel_i0e, bessel_i1, bessel_i1e,
  multigammaln, gammainc, hermite
- reductions along the last axis: logsumexp_axis, logcumsumexp, cummax, prod, vector_norm

tests/test_special_zoo.py runs them in a generated repo; `python -m benchmarks.zoo --zoo special`
under many seeds.
"""
