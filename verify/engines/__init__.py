"""Engines that iterate the GD recursions: reduced and full-matrix, float64 and mpmath."""
from .arith import Arith
from .full import FullState, iterate_full
from .reduced import ReducedState, iterate_reduced, require_reducible
from .trajectory import Record, Trajectory, checkpoint_steps
from .arb import ball_str, cover_radius, iterate_certified
from .fast import iterate_fast
from .precision import PrecisionWarning, cross_check, require_horizon, tolerance


def iterate(setting, steps: int, engine: str = "reduced", arithmetic: str = "mpmath", dps: int | None = None,
            checkpoints=None, progress=None) -> Trajectory:
    """Run GD for ``steps`` steps with one engine and arithmetic; the common entry point.

    float64 overflow or NaN raises NumericalTrouble (step, quantity, what to try); ``progress(step)``
    is called as the run advances (see iterate_reduced / iterate_full).
    """
    from ..errors import InvalidParameter
    from ..model.validation import check_int
    steps = check_int("steps", steps, 0, 10**12)
    ar = Arith.make(arithmetic, dps, steps)
    if engine == "reduced":
        return iterate_reduced(setting, steps, ar, checkpoints, progress=progress)
    if engine == "full":
        return iterate_full(setting, steps, ar, checkpoints, progress=progress)
    raise InvalidParameter("engine", engine, "must be reduced or full")


__all__ = ["Arith", "iterate", "iterate_full", "iterate_reduced", "require_reducible", "FullState", "ReducedState",
           "Record", "Trajectory", "checkpoint_steps", "iterate_certified", "ball_str", "cover_radius", "iterate_fast",
           "cross_check", "require_horizon", "tolerance", "PrecisionWarning"]
