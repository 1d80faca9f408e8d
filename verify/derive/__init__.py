"""Symbolic derivation (SymPy): closed-form loss, gradients (3.3)-(3.4), reduction, proof obligations."""
from ..lazy import lazy_exports
from .obligations import Obligation, ProofReport
from .reduced import Reduced, case_of, column_quantities, reduced, reduced_step_exprs

# The reduction's proof and the stability obligations, imported on first use (PEP 562): a module needing only the
# reduced map does not load them. (``reduced`` stays eager: the name is also its module's.)
_EXPORTS = {"obligations_for": ".reduction", "prove_reduction": ".reduction", "prove_reduction_symbolic": ".reduction",
            "positivity_obligations": ".stability"}

__all__ = ["Reduced", "reduced", "reduced_step_exprs", "case_of",
           "column_quantities", "Obligation", "ProofReport", "prove_reduction", "prove_reduction_symbolic",
           "obligations_for", "positivity_obligations"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
