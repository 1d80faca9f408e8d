"""Symbolic derivation (SymPy): closed-form loss, gradients (3.3)-(3.4), reduction, proof obligations."""
from ..lazy import lazy_exports
from .obligations import Obligation, ProofReport
from .reduced_map import Reduced, case_of, column_quantities, reduced, reduced_step_exprs

# The reduction's proof and the stability obligations, imported on first use (PEP 562): a module needing only the
# reduced map (verify.derive.reduced_map) does not load them.
_EXPORTS = {"obligations_for": ".reduction_proof", "prove_reduction": ".reduction_proof",
            "prove_reduction_symbolic": ".reduction_proof", "positivity_obligations": ".stability"}

__all__ = ["Reduced", "reduced", "reduced_step_exprs", "case_of",
           "column_quantities", "Obligation", "ProofReport", "prove_reduction", "prove_reduction_symbolic",
           "obligations_for", "positivity_obligations"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
