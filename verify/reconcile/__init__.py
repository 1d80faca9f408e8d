"""Which conventions make Theorem 3.1's D-dependence true, over every scaling a paper might use.

``verify reconcile`` (verify/cli/reconcile.py) and the ``reconcile`` part of ``verify all``
(verify.reconcile.reconcile_part). The modules, in the order the data flow:

* scaling_family  the widened scaling family and the D-exponents of the leading terms and of T*
* combinations    through which combinations the conventions enter GD (SymPy proofs)
* constraints     step-size stability, W_X relaxation within T*, 1 <= N <= D, as linear inequalities
* claims          the claimed orders (Theorem 3.1's rates; T* under each reading) and claims files
* solve           the exact solver: linsolve, z3 over the rationals, Farkas certificates
* systems         the claim systems and their whole solution sets
* realise         settings realising a member on a grid of D
* confirm         GD under a realised member: fitted D-exponents and their error model
* analysis        records and statements; reconciliation: the whole result; reconcile_part; figure
"""
from .claims import load_claims, parse_claims
from .reconciliation import reconcile

__all__ = ["load_claims", "parse_claims", "reconcile"]
