"""Engines that iterate the GD recursions: reduced and full-matrix, in float64, mpmath and Arb balls."""
import importlib
from dataclasses import dataclass
from typing import Callable

from ..errors import InvalidParameter
from ..lazy import lazy_exports
from ..model.validation import check_int
from .trajectory import Record, Trajectory, checkpoint_steps

# Public names and their modules, imported on first use (PEP 562): a caller of one engine (verify.engines.arb for
# a certificate's balls) does not load the others (the full-matrix engine's generated gradients); the light
# trajectory types load at once.
_EXPORTS = {"Arith": ".arith", "FullState": ".full", "iterate_full": ".full", "ReducedState": ".reduced_iteration",
            "iterate_reduced": ".reduced_iteration", "require_reducible": ".reduced_iteration", "ball_str": ".arb",
            "cover_radius": ".arb", "iterate_certified": ".arb", "iterate_fast": ".fast",
            "iterate_certified_full": ".fullarb", "PrecisionWarning": ".precision_checks",
            "cross_check": ".precision_checks", "require_horizon": ".precision_checks", "tolerance": ".precision_checks"}


# ---- the routes: which function iterates an engine in an arithmetic ------------------------------------------
@dataclass(frozen=True)
class Route:
    """One way to iterate GD: an ``engine`` ("reduced", "full", ...) in the ``arithmetics`` it serves, and the
    function that runs it, named by module (relative to this package or absolute) and attribute so a caller of one
    route does not load the others. ``when``: a predicate on (setting, steps) narrowing where the route applies
    (None: wherever its engine and arithmetic are asked for). ``certified``: the function takes Arb ``bits`` (a
    precision in bits) where the others take an ``Arith`` (verify.engines.arith) built from ``dps``."""

    engine: str
    arithmetics: tuple[str, ...]
    module: str
    function: str
    certified: bool = False
    when: Callable | None = None

    def applies(self, engine: str, arithmetic: str, setting=None, steps: int = 0) -> bool:
        return (engine == self.engine and arithmetic in self.arithmetics
                and (self.when is None or bool(self.when(setting, steps))))

    def runner(self):
        return getattr(importlib.import_module(self.module, __name__), self.function)


# In preference order: the first route that applies to (engine, arithmetic, setting, steps) runs; iterate() knows
# no engine by name.
ROUTES: list[Route] = []
DEFAULT_BITS = 256


def register_route(route: Route, *, preferred: bool = False) -> Route:
    """Add ``route`` to :data:`ROUTES`: after the ones already there, or before them when ``preferred`` (a route
    that applies only somewhere, ``when``, and should win there). Two unconditional routes for the same engine and
    arithmetic are refused: the second would never run."""
    if route.when is None and any(r.when is None and r.engine == route.engine
                                  and set(r.arithmetics) & set(route.arithmetics) for r in ROUTES):
        raise ValueError(f"a route for engine {route.engine!r} in {route.arithmetics} is registered already")
    ROUTES.insert(0, route) if preferred else ROUTES.append(route)
    return route


for _r in (Route("reduced", ("float64", "mpmath"), ".reduced_iteration", "iterate_reduced"),
           Route("full", ("float64", "mpmath"), ".full", "iterate_full"),
           Route("reduced", ("arb",), ".arb", "iterate_certified", certified=True),
           Route("full", ("arb",), ".fullarb", "iterate_certified_full", certified=True)):
    register_route(_r)


def _names(values) -> str:
    values = list(dict.fromkeys(values))
    return ", ".join(values[:-1]) + " or " + values[-1] if len(values) > 1 else values[0]


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
    is called as the run advances (see iterate_reduced / iterate_full). The function that runs is the first of
    :data:`ROUTES` that applies.
    """
    steps = check_int("steps", steps, 0, 10**12)
    if engine not in {r.engine for r in ROUTES}:
        raise InvalidParameter("engine", engine, "must be " + _names(r.engine for r in ROUTES))
    if arithmetic not in {a for r in ROUTES for a in r.arithmetics}:
        raise InvalidParameter("arithmetic", arithmetic, "must be " + _names(a for r in ROUTES for a in r.arithmetics))
    route = next((r for r in ROUTES if r.applies(engine, arithmetic, setting, steps)), None)
    if route is None:
        raise InvalidParameter("arithmetic", arithmetic, f"engine {engine} runs in " + _names(
            a for r in ROUTES if r.engine == engine for a in r.arithmetics), also=("engine",))
    if route.certified:
        return route.runner()(setting, steps, DEFAULT_BITS if bits is None else bits, checkpoints, progress)
    if bits is not None:
        raise InvalidParameter("bits", bits, "is the precision of `arithmetic=arb`; float64 and mpmath take `dps`",
                               also=("arithmetic",))
    arith = importlib.import_module(".arith", __name__).Arith     # mpmath loads with the route that needs it
    return route.runner()(setting, steps, arith.make(arithmetic, dps, steps), checkpoints, progress=progress)


__all__ = ["Arith", "iterate", "Route", "ROUTES", "register_route", "iterate_full", "iterate_reduced", "require_reducible", "FullState", "ReducedState",
           "Record", "Trajectory", "checkpoint_steps", "iterate_certified", "iterate_certified_full", "ball_str", "cover_radius", "iterate_fast",
           "cross_check", "require_horizon", "tolerance", "PrecisionWarning"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
