"""Symbolic derivation (SymPy): kernels, closed-form loss, gradients (3.3)-(3.4), reduction."""
from .kernels import Kernel, kernel, radial_slope
from .reduced import Reduced, case_of, column_quantities, reduced, reduced_step_exprs

__all__ = ["Kernel", "kernel", "radial_slope", "Reduced", "reduced", "reduced_step_exprs", "case_of",
           "column_quantities"]
