"""verify: symbolic-numeric checks of 'Transformers Trained via Gradient Descent Can Provably Learn a
Class of Teacher Models' (Zhang, Zhao, Gu, Cao; arXiv:2603.22801) under the setting of docs/setting.md.

Public API (everything else is internal; docs/api.md lists it, docs/tutorial.md uses it):

- a regime: :func:`make_setting` -> :class:`Setting`
- the engines: :func:`iterate` (reduced or full-matrix recursion, float64, mpmath or Arb balls) and
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
import sys
import types

from .lazy import lazy_exports

# Each public name and the module that defines it. The package imports nothing at import time (PEP 562): a name
# is imported on first use, so that a command line or a submodule run alone loads only what it uses.
_EXPORTS = {"check_claim": ".api", "claim_ids": ".api", "leading_term_values": ".api", "leading_terms": ".api",
            "plot_trajectory": ".api", "certify": ".api", "sweep": ".api", "reconcile": ".api", "run_probe": ".api",
            "Trajectory": ".engines", "iterate": ".engines", "iterate_certified": ".engines",
            "InvalidParameter": ".errors", "PrecisionError": ".errors", "UnsupportedRegime": ".errors",
            "VerificationError": ".errors", "Scope": ".evidence", "decide": ".evidence", "record": ".evidence",
            "Setting": ".model", "make_setting": ".model"}
# Entry points named like subpackages (verify.certify, verify.sweep, verify.reconcile): importing the subpackage
# would bind its name on this package; the name stays the function (the subpackages are reached by
# ``from verify.sweep import ...``).
_ENTRY_POINTS = frozenset({"certify", "sweep", "reconcile"})

__all__ = ["make_setting", "Setting", "iterate", "iterate_certified", "Trajectory", "leading_terms",
           "leading_term_values", "claim_ids", "check_claim", "certify", "sweep", "reconcile", "run_probe", "record",
           "Scope", "decide", "plot_trajectory", "VerificationError", "InvalidParameter", "PrecisionError",
           "UnsupportedRegime"]


class _Package(types.ModuleType):
    """This package, refusing to let an imported subpackage take the name of an entry point."""

    def __setattr__(self, name, value):
        if name in _ENTRY_POINTS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
sys.modules[__name__].__class__ = _Package
