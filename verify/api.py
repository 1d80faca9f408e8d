"""Entry points for notebooks: a claim checked in one regime, the derived leading terms at a setting, a
trajectory plotted. Re-exported by :mod:`verify`; the tutorial (docs/tutorial.md) uses nothing else.

``lemmas`` sits above ``verify`` in the layering (the claims use the engines), and SymPy and matplotlib
are slow to import, so each is imported inside the function that needs it.

Example::

    >>> from verify import make_setting, check_claim
    >>> s = make_setting(D=8, K=2, preset="cnn", vstar_norm="1", eta="1/10")
    >>> check_claim("lemma-C.2", s, 100).holds
    True
"""
from __future__ import annotations

import importlib
import io
import math

from .engines import Trajectory
from .errors import InvalidParameter, UnsupportedRegime, suggest
from .model.profiles import check_profile
from .model.quantities import KEYS as THEOREM_QUANTITIES  # Theorem 3.1's three quantities, in the theorem's order
from .plotting import LABELS
from .run.atomic import write_bytes_atomic


def claim_ids(per_regime: bool | None = None) -> list[str]:
    """The registered claim ids (``lemmas.CLAIMS``), in registry order; ``per_regime=True`` keeps the
    claims that can be checked in one regime (what :func:`check_claim` accepts), False the others."""
    from lemmas import CLAIMS  # heavy: loads flint,mpmath,numpy,sympy
    return [cid for cid, c in CLAIMS.items() if per_regime is None or bool(c.per_regime) == per_regime]


def check_claim(claim_id: str, setting, steps: int):
    """Whether claim ``claim_id``'s property holds in ``setting`` over ``steps`` GD steps.

    Returns the claim's ``verify.evidence.RegimeOutcome``: ``holds`` (True; False, a counterexample; None,
    undecided, e.g. a NaN), ``detail`` (what was measured), ``replay`` (a ``verify`` command that
    reproduces the run) and ``data``, where ``data["in_hypotheses"]`` says whether the regime meets the
    claim's hypotheses (outside them a failure is information, not a counterexample). One regime is
    not a verdict: ``verify check`` derives a claim's verdict from all its evidence (docs/verdicts.md).
    """
    from lemmas import CLAIMS  # heavy: loads flint,mpmath,numpy,sympy

    from .model import Setting  # heavy: loads numpy
    if not isinstance(claim_id, str) or claim_id not in CLAIMS:
        raise InvalidParameter("claim", claim_id, f"must be one of {', '.join(CLAIMS.ids())}")
    if not CLAIMS[claim_id].per_regime:
        raise InvalidParameter("claim", claim_id, "has no per-regime check; the claims that have one: "
                               + ", ".join(claim_ids(per_regime=True)))
    if not isinstance(setting, Setting):
        raise InvalidParameter("setting", type(setting).__name__, "must be a verify.Setting (from make_setting)")
    return CLAIMS[claim_id].regime_check(setting, steps)


def leading_terms(setting=None) -> dict:
    """The exact leading terms as T -> infinity of Theorem 3.1's quantities, as SymPy expressions.

    Derived from the reduced recursion (sigma = identity, 0 < K < D) with every named convention kept
    symbolic: c_L (1 for the summed loss, 1/(M N) for the mean), v (entry variance), lambda
    (P^T P = lambda I), beta (logit temperature) and eta_KQ; ``vnorm`` is ||V*||_F. Keys:
    ``excess_loss`` (L - L_opt), ``s_err`` (||S - S*||_F), ``w_err`` (||W_X - V*||_F), and ``c``, the
    coefficient of Delta u = -c u^3 for the off-support attention mass u, so that u(T) ~ (2 c T)^(-1/2)
    sets the 1/T rate (and the relative size of the next-order corrections).

    With ``setting``, every symbol but T is replaced by the setting's exact value (``c`` becomes a
    number); settings outside the derivation raise :class:`verify.errors.UnsupportedRegime`.
    """
    from .derive.asymptotics import leading_terms_general  # heavy: loads flint,mpmath,numpy,sympy
    lt = leading_terms_general()
    out = {**{q: lt[q] for q in THEOREM_QUANTITIES}, "c": lt["c"]}
    if setting is None:
        return out
    subs = _substitutions(setting)
    return {k: e.subs(subs) for k, e in out.items()}


def _substitutions(setting) -> dict:
    """The setting's exact values for every symbol of the leading terms but T (checks it is covered)."""

    from .model import symbols as sy  # heavy: loads flint,mpmath,sympy
    from .model import Setting  # heavy: loads numpy
    if not isinstance(setting, Setting):
        raise InvalidParameter("setting", type(setting).__name__, "must be a verify.Setting (from make_setting)")
    if not setting.sigma.is_identity:
        raise UnsupportedRegime(f"leading terms are derived for sigma = identity, not {setting.sigma.spec()}")
    if not 0 < setting.K < setting.D:
        raise UnsupportedRegime(f"leading terms are derived for 0 < K < D (here K = {setting.K}, D = {setting.D}); "
                                "K = 0 and K = D have closed forms instead (verify probe k-zero, d-eq-k)")
    ok, why = setting.reducible()
    if not ok:
        raise UnsupportedRegime(f"leading terms are derived from the reduced recursion, which does not apply: {why}")
    return sy.values_at(setting)


def leading_term_values(setting, steps) -> dict:
    """The leading terms of :func:`leading_terms` at ``setting`` for each T in ``steps``:
    ``{"excess_loss": array, "s_err": array, "w_err": array}`` (float64; NaN at T = 0, where the
    terms have no value), so ``leading_term_values(s, trajectory.steps())`` lines up with a trajectory.

    They hold where they were derived: sigma = identity, 0 < K < D and a setting the reduced recursion
    covers (``setting.reducible()``); anything else raises :class:`verify.errors.UnsupportedRegime`.
    """
    import numpy as np  # heavy: numpy
    import sympy as sp  # heavy: sympy

    from .model import symbols as sy  # heavy: loads flint,mpmath,sympy
    lt = leading_terms(setting)
    T = np.asarray(steps, dtype=float)
    if T.ndim > 1 or T.size == 0 or not np.all(np.isfinite(T)) or np.any(T < 0):
        raise InvalidParameter("steps", steps, "must be a step count >= 0 or a 1-d list of them")
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for q in THEOREM_QUANTITIES:
            expr = lt[q]
            if expr.free_symbols - {sy.T}:
                raise AssertionError(f"leading term of {q} keeps symbols {expr.free_symbols - {sy.T}}")
            vals = np.asarray(sp.lambdify(sy.T, expr, "numpy")(T), dtype=float) * np.ones_like(T)
            out[q] = np.where(T > 0, vals, np.nan)
    return out


def plot_trajectory(trajectory, path=None, *, quantities=THEOREM_QUANTITIES, leading: dict | None = None,
                    title: str | None = None):
    """A log-log figure of recorded quantities against the GD step, one panel per quantity; returns the
    ``matplotlib.figure.Figure`` and, with ``path``, also writes it there as a PNG (atomically).

    ``trajectory`` is a :class:`verify.Trajectory` or a dict {label: Trajectory} drawn together;
    ``quantities`` are Record fields with one number per step (``excess_loss``, ``s_err``, ``w_err``,
    ``loss``, ``wp_norm``, ``cos_wv``); ``leading`` is a dict {quantity: values at the first
    trajectory's steps} drawn dashed, e.g. :func:`leading_term_values`. Step 0 cannot appear on a log
    axis and is left out; Arb balls are drawn at their midpoints.
    """

    from matplotlib.figure import Figure  # heavy: matplotlib

    runs = {"GD": trajectory} if isinstance(trajectory, Trajectory) else trajectory
    if not isinstance(runs, dict) or not runs or not all(isinstance(t, Trajectory) for t in runs.values()):
        raise InvalidParameter("trajectory", type(trajectory).__name__, "must be a verify.Trajectory or a non-empty "
                               "dict {label: Trajectory}")
    if isinstance(quantities, str):
        quantities = (quantities,)
    scalar = ("excess_loss", "s_err", "w_err", "loss", "wp_norm", "cos_wv")
    bad = [q for q in quantities if q not in scalar]
    if bad or not quantities:
        raise InvalidParameter("quantities", list(quantities), f"must be a non-empty list of {', '.join(scalar)}")
    leading = dict(leading or {})
    first = next(iter(runs.values()))
    for q, vals in leading.items():
        if q not in quantities or len(vals) != len(first.records):
            raise InvalidParameter("leading", q, f"must map a plotted quantity to one value per recorded step "
                                   f"({len(first.records)})")

    def number(x) -> float:
        # mpmath and numpy numbers convert with float(); an Arb ball converts to its midpoint.
        v = float(x)
        return v if math.isfinite(v) else math.nan

    fig = Figure(figsize=(4.2 * len(quantities), 3.6), layout="constrained")
    axes = fig.subplots(1, len(quantities), squeeze=False)[0]
    for ax, q in zip(axes, quantities):
        words, sym = LABELS.get(q, (q.replace("_", " "), q))
        ys = []
        for label, tr in runs.items():
            pts = [(r.step, number(getattr(r, q))) for r in tr.records if r.step >= 1]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], lw=1.8, label=label)
            ys += [p[1] for p in pts]
        if q in leading:
            pts = [(r.step, float(v)) for r, v in zip(first.records, leading[q]) if r.step >= 1]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "k--", lw=1.2, label="derived leading term")
        ax.set_xscale("log")
        # A log axis needs positive values: a quantity that is 0 (W_P at zero initialisation) or
        # changes sign is drawn on a linear axis instead.
        ax.set_yscale("log" if ys and all(y > 0 for y in ys) else "linear")
        ax.set_xlabel("GD step t")
        ax.set_ylabel(sym)
        ax.set_title(words[:1].upper() + words[1:])
        ax.legend(fontsize="small")
    if title:
        fig.suptitle(title)
    if path is not None:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
        write_bytes_atomic(path, buf.getvalue())
    return fig


def _setting(setting):
    from .model import Setting  # heavy: loads numpy
    if not isinstance(setting, Setting):
        raise InvalidParameter("setting", type(setting).__name__, "must be a verify.Setting (from make_setting)")
    return setting


def certify(setting, **options):
    """An all-time certificate of Theorem 3.1's three quantities in ``setting`` (``verify certify``): lower and
    upper bounds on L - L_opt, ||S - S*||_F and ||W_X - V*||_F that hold for every T >= 0.

    ``options`` are the certificate's knobs (``bits``, ``u0``, ``C``, ``shells``, ``ratio``, ``n_u``, ``n_eps``,
    ``max_depth``, ``max_prefix``, ``check_every``, ``T0``; see ``verify certify --help``). Returns the certificate:
    ``cert.bounds_json(T)`` gives ``{"T", "excess_loss": [lo, hi], "s_err": [lo, hi], "w_err": [lo, hi]}`` as
    decimal strings rounded outwards, at any T (the cost does not grow with T), and ``cert.as_dict()`` every
    obligation it discharged. K = D and K = 0 are certified exactly; a regime the method does not cover raises
    :class:`verify.errors.InvalidParameter`, and a certificate that does not close raises
    ``verify.certify.CertificateFailed`` naming the obligation.

    Example::

        >>> s = make_setting(D=4, K=4, preset="cnn", eta="1/4", vstar_norm="2")   # K = D: geometric, exact
        >>> lo, hi = certify(s).bounds_json(10)["w_err"]
    """
    from .certify import certify as build  # heavy: loads flint,mpmath,numpy,sympy
    return build(_setting(setting), **options)


def sweep(grid, steps: int = 100_000, out="reports/sweep", **options) -> dict:
    """A grid of regimes on Dask (``verify sweep``): one row per regime, written to ``out`` as sweep.parquet,
    sweep.csv, sweep.json and figures, and returned.

    ``grid``: ``{axis: [values]}`` (axes as ``verify sweep --grid`` names them: D, K, eta, vstar_norm, loss, ...)
    or a list of ``"NAME=v1,v2"`` strings. ``options``: ``measures`` (trajectory, claims, certified, certificate),
    ``claim_steps``, ``arb_bits``, ``scheduler``, ``workers``, ``fresh`` (see verify.sweep.run_sweep). Returns
    ``{"rows", "meta", "files", "reused", "notes"}``; rows already computed by this code version are reused.

    Example::

        >>> res = sweep({"D": [8, 16], "K": [2]}, steps=2_000, out="/tmp/sweep", measures=["trajectory"])
        >>> [round(r["slope_excess_loss"], 1) for r in res["rows"]]
    """
    from .sweep import parse_grid, run_sweep  # heavy: loads flint,mpmath,numpy,sympy
    if isinstance(grid, dict):
        grid = [f"{k}={';'.join(map(str, v)) if any(',' in str(x) for x in v) else ','.join(map(str, v))}"
                for k, v in grid.items()]
    return run_sweep(parse_grid(list(grid)), steps, out, **options)


def reconcile(claims=None, profile: str = "ci", numerics: bool = True) -> dict:
    """Which reading of the conventions makes Theorem 3.1's D-exponents true (``verify reconcile``): with
    N = n D^a, eta_KQ lambda^2 beta^2 = eta g0 D^b and c_L v = h0 D^c, the exponent vectors (a, b, c) that
    reproduce the claimed exponents, whether T* then grows as claimed, and (``numerics``) GD's fitted
    D-exponents under each solution, at the ``profile``'s budget.

    ``claims``: None (Theorem 3.1 and T* ~ D^2), a dict ``{quantity: {variable: exponent}}`` (quantities loss,
    s_err, w_err, tstar; variables D, K, vnorm, eta, T; exponents such as "5/2") or the path of such a JSON file.
    Returns the ``verify reconcile --json`` object, every verdict derived from evidence records.
    """
    rc = importlib.import_module("verify.reconcile")     # the module (verify.reconcile is this function)
    parsed = None if claims is None else (rc.parse_claims(claims) if isinstance(claims, dict) else rc.load_claims(claims))
    return rc.reconcile(parsed, profile, numerics)


def run_probe(name: str, profile: str = "ci") -> dict:
    """Run the reviewer-question probe ``name`` (``verify probe NAME``; the names: ``verify probe --list``) and
    return its result as ``verify probe NAME --json`` prints it: the question, the regimes, the findings and
    every statement with its verdict derived from evidence records."""
    from .probes import PROBES  # heavy: loads flint,mpmath,numpy,sympy
    check_profile(profile)
    if name not in PROBES:
        names = sorted(PROBES)
        raise InvalidParameter("probe", name, f"must be one of {', '.join(names)}{suggest(name, names)}")
    probe = PROBES[name]
    # a probe is a verify.checks.Check (run at a profile); a probe registered as a bare function runs its
    # default regimes
    res = probe.run(profile) if hasattr(probe, "run") else probe.func()
    return res.as_dict()


__all__ = ["claim_ids", "check_claim", "leading_terms", "leading_term_values", "plot_trajectory", "certify", "sweep",
           "reconcile", "run_probe", "THEOREM_QUANTITIES"]
