"""Engines that iterate the GD recursions: reduced and full-matrix, in float64, mpmath and Arb balls."""
from ..lazy import lazy_exports
from .trajectory import Record, Trajectory, checkpoint_steps

# Public names and their modules, imported on first use (PEP 562): a caller of one engine (verify.engines.arb for
# a certificate's balls) does not load the others (the full-matrix engine's generated gradients); the light
# trajectory types load at once.
_EXPORTS = {"Arith": ".arith", "FullState": ".full", "iterate_full": ".full", "ReducedState": ".reduced",
            "iterate_reduced": ".reduced", "require_reducible": ".reduced", "ball_str": ".arb",
            "cover_radius": ".arb", "iterate_certified": ".arb", "iterate_fast": ".fast",
            "iterate_certified_full": ".fullarb", "PrecisionWarning": ".precision", "cross_check": ".precision",
            "require_horizon": ".precision", "tolerance": ".precision"}


def iterate(setting, steps: int, engine: str = "reduced", arithmetic: str = "mpmath", dps: int | None = None,
            checkpoints=None, progress=None, bits: int | None = None) -> Trajectory:
    """Run GD for ``steps`` steps with one engine and arithmetic; the common entry point.

    engine "reduced" (the exact reduced recursion, where the setting admits it) or "full" (every entry of
    W_X, W_P, W_KQ); arithmetic "float64" (the full engine on JAX when installed and the run has at least
    ``verify.engines.full.JAX_MIN_STEPS`` = 1000 steps, else numpy), "mpmath" (``dps``
    digits) or "arb": certified Arb balls at ``bits`` bits (default 256) whose Records hold flint.arb
    balls (``x.lower()``, ``x.upper()``) containing the exact recursion's values, e.g.
    ``iterate(s, 1000, engine="full", arithmetic="arb", bits=256).final.excess_loss``.
    float64 overflow or NaN raises NumericalTrouble (step, quantity, what to try); ``progress(step)``
    is called as the run advances (see iterate_reduced / iterate_full).
    """
    from ..errors import InvalidParameter
    from ..model.validation import check_int
    from .arb import iterate_certified
    from .arith import Arith
    from .full import iterate_full
    from .reduced import iterate_reduced
    steps = check_int("steps", steps, 0, 10**12)
    if engine not in ("reduced", "full"):
        raise InvalidParameter("engine", engine, "must be reduced or full")
    if arithmetic not in ("float64", "mpmath", "arb"):
        raise InvalidParameter("arithmetic", arithmetic, "must be float64, mpmath or arb")
    if arithmetic == "arb":
        if engine == "reduced":
            return iterate_certified(setting, steps, 256 if bits is None else bits, checkpoints, progress)
        from .fullarb import iterate_certified_full
        return iterate_certified_full(setting, steps, 256 if bits is None else bits, checkpoints, progress)
    if bits is not None:
        raise InvalidParameter("bits", bits, "is the precision of `arithmetic=arb`; float64 and mpmath take `dps`",
                               also=("arithmetic",))
    ar = Arith.make(arithmetic, dps, steps)
    if engine == "reduced":
        return iterate_reduced(setting, steps, ar, checkpoints, progress=progress)
    return iterate_full(setting, steps, ar, checkpoints, progress=progress)


__all__ = ["Arith", "iterate", "iterate_full", "iterate_reduced", "require_reducible", "FullState", "ReducedState",
           "Record", "Trajectory", "checkpoint_steps", "iterate_certified", "iterate_certified_full", "ball_str", "cover_radius", "iterate_fast",
           "cross_check", "require_horizon", "tolerance", "PrecisionWarning"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
