"""Symbolic derivation (SymPy): closed-form loss, gradients (3.3)-(3.4), reduction, proof obligations."""
from .obligations import Obligation, ProofReport
from .reduced import Reduced, case_of, column_quantities, reduced, reduced_step_exprs
from .reduction import obligations_for, prove_reduction, prove_reduction_symbolic
from .stability import positivity_obligations

__all__ = ["Reduced", "reduced", "reduced_step_exprs", "case_of",
           "column_quantities", "Obligation", "ProofReport", "prove_reduction", "prove_reduction_symbolic",
           "obligations_for", "positivity_obligations"]
