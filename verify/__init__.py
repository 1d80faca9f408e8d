"""verify: symbolic-numeric checks of 'Transformers Trained via Gradient Descent Can Provably Learn a
Class of Teacher Models' (Zhang, Zhao, Gu, Cao; arXiv:2603.22801) under the setting of docs/setting.md.

Public API (everything else is internal; docs/api.md lists it, docs/tutorial.md uses it):

- a regime: :func:`make_setting` -> :class:`Setting`
- the engines: :func:`iterate` (reduced or full-matrix recursion, float64 or mpmath) and
  :func:`iterate_certified` (Arb balls that contain the exact values) -> :class:`Trajectory`
- the derivation: :func:`leading_terms` (SymPy), :func:`leading_term_values` (at a setting)
- the claims: :func:`claim_ids`, :func:`check_claim` (one claim in one regime)
- the commands: :func:`certify` (an all-time certificate), :func:`sweep` (a grid of regimes on Dask),
  :func:`reconcile` (which convention makes Theorem 3.1's D-exponents true), :func:`run_probe` (a reviewer
  question's probe)
- verdicts: :func:`record`, :class:`Scope`, :func:`decide` (the one rule, docs/verdicts.md)
- figures: :func:`plot_trajectory`
- errors: :class:`VerificationError` and its subclasses

>>> from verify import make_setting, iterate
>>> s = make_setting(D=8, K=2, M=1, d=2, preset="cnn", vstar_norm="1", eta="1/10")
>>> r = iterate(s, 100, engine="reduced", arithmetic="mpmath", dps=30).final
>>> r.step
100
"""
# verify.certify, verify.sweep and verify.reconcile are imported before the entry points of the same names
# replace them here: a module imported later would rebind its name on this package (so ``from verify import
# sweep`` is the function; the modules are ``verify.sweep.run``, ``from verify.sweep import ...``).
from . import certify as _certify_module, reconcile as _reconcile_module, sweep as _sweep_module  # noqa: F401
from .api import (certify, check_claim, claim_ids, leading_term_values, leading_terms, plot_trajectory, reconcile,
                  run_probe, sweep)
from .engines import Trajectory, iterate, iterate_certified
from .errors import InvalidParameter, PrecisionError, UnsupportedRegime, VerificationError
from .evidence import Scope, decide, record
from .model import Setting, make_setting

__all__ = ["make_setting", "Setting", "iterate", "iterate_certified", "Trajectory", "leading_terms",
           "leading_term_values", "claim_ids", "check_claim", "certify", "sweep", "reconcile", "run_probe", "record",
           "Scope", "decide", "plot_trajectory", "VerificationError", "InvalidParameter", "PrecisionError",
           "UnsupportedRegime"]
