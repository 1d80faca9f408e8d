"""``verify run``: iterate GD in one regime and print the final recorded quantities.

Two kinds of result:
- a run in mpmath (any ``--dps``) or float64, cross-checked at checkpoints against a reference that
  is strictly more precise (verify.engines.precision_checks);
- with ``--arb BITS``, certified Arb balls of the reduced or the full-matrix recursion: the balls are the
  result, every digit they certify is printed with its radius, and an mpmath run cross-checks the first
  checkpoints.

Before a long run the time is estimated from a short timed calibration and said on stderr; a run
estimated above an hour needs ``--yes`` (``--estimate-only`` prints the estimate and stops).
"""
from __future__ import annotations

import json
import math
from dataclasses import replace

import click
from click.core import ParameterSource

from ..engines import iterate
from ..engines.bits import MAX_BITS, MIN_BITS
from ..engines.estimate import calibrate, run_phases
from ..engines.trajectory import Record, checkpoint_steps
from ..errors import InvalidParameter
from ..model import make_setting
from ..model.hypotheses import hypothesis, step_x
from ..model.numbers import frac_str
from ..model.validation import Problems, check_int
from .options import CliError, handle_errors, regime_option, setting_args, setting_options
from .progress import ANNOUNCE_SECONDS, CONFIRM_SECONDS, duration, note, progress
from .sizes import check_build, entries

MAX_STEPS = 10**12
# A full-matrix mpmath step costs O(D N) big-number operations (about 20 steps/s at D = N = 64): when no
# exact reference is cheaper, a full-engine result is cross-checked on its first steps only, at most
# FULL_CHECK_STEPS of them and at most FULL_CHECK_WORK entry-steps (D N per step): 200 steps at D = N = 64,
# 12 at D = N = 256, 1 at D = N = 1024.
FULL_CHECK_STEPS = 200
FULL_CHECK_WORK = 200 * 64 * 64
# With --arb the balls are the result; the independent mpmath run checks them up to this step only
# (it would otherwise cost as much as the certified run itself, or more).
ARB_CHECK_STEPS = 1000

QUANTITIES = ("loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv")
LIST_QUANTITIES = ("alpha", "offspan", "support_mass")


def record_json(rec: Record, fmt) -> dict:
    """A Record as JSON with every number a decimal string (``fmt``)."""
    return {"step": rec.step, "loss": fmt(rec.loss), "excess_loss": fmt(rec.excess_loss), "s_err": fmt(rec.s_err),
            "w_err": fmt(rec.w_err), "wp_norm": fmt(rec.wp_norm), "cos_wv": fmt(rec.cos_wv),
            "alpha": [fmt(a) for a in rec.alpha], "offspan": [fmt(a) for a in rec.offspan],
            "support_mass": [fmt(p) for p in rec.support_mass]}


def certified_str(x, digits: int) -> tuple[str, str]:
    """(midpoint, radius) decimals of the Arb ball ``x``: every digit the ball certifies and no more
    (correct up to +-1 in the last digit, python-flint's arb.str), at most ``digits`` digits; the
    printed midpoint +- radius contains the ball. An exact ball prints its value and radius 0."""
    from ..engines.arb import huge  # heavy: loads flint,mpmath,sympy
    if not x.is_finite() or huge(x):
        return "nan", "inf"
    text = x.str(digits, radius=True)
    if not text.startswith("["):
        mid = text
        if "e" not in mid and "." in mid:
            mid = mid.rstrip("0").rstrip(".") or "0"
        return mid, "0"
    mid, rad = text[1:-1].split("+/-")
    return (mid.strip() or "0"), rad.strip()


def certified_json(rec: Record, digits: int) -> dict:
    """A Record of Arb balls as JSON: "<name>" the midpoint, "<name>_rad" the radius (decimal strings)."""
    out: dict = {"step": rec.step}
    for k in QUANTITIES:
        out[k], out[f"{k}_rad"] = certified_str(getattr(rec, k), digits)
    for k in LIST_QUANTITIES:
        pairs = [certified_str(x, digits) for x in getattr(rec, k)]
        out[k], out[f"{k}_rad"] = [m for m, _ in pairs], [r for _, r in pairs]
    return out


def resolve_engine(setting, engine: str) -> tuple[str, str | None]:
    """(engine, why) for ``--engine``: ``auto`` is the reduced recursion when it is exact for the
    regime (verify.derive.reduction_proof), the full-matrix engine otherwise; the reason is recorded."""
    if engine != "auto":
        return engine, None
    ok, why = setting.reducible()
    return ("reduced", "auto: the reduced recursion is exact here") if ok else ("full", f"auto: full, since {why}")


def full_check_steps(setting, steps: int) -> int:
    """How many first steps of a full-matrix run the mpmath reference repeats (see FULL_CHECK_WORK)."""
    return min(steps, FULL_CHECK_STEPS, max(1, FULL_CHECK_WORK // (setting.D * setting.N)))


def max_cross_checked_dps(steps: int) -> int:
    """The largest --dps whose cross-check fits in Arb's precision: the reference carries more digits than the
    run (verify.engines.precision_checks.reference_bits), and Arb takes at most MAX_BITS bits."""
    from ..engines import precision_checks  # heavy: loads mpmath
    lo, hi = 5, 100_000
    while lo < hi:                      # reference_bits grows with dps: bisect for the last one that fits
        mid = (lo + hi + 1) // 2
        if precision_checks.reference_bits(precision_checks.work_digits("mpmath", mid, steps), steps) <= MAX_BITS:
            lo = mid
        else:
            hi = mid - 1
    return lo


def run_problems(setting, steps: int, engine: str, arithmetic: str, arb_bits: int | None, dps: int | None = None,
                 cross_check: bool = False) -> None:
    """Every conflict between the run options, reported together (InvalidParameter), before any work."""
    from ..engines.arb import MAX_STEPS as ARB_MAX_STEPS  # heavy: loads flint,mpmath,sympy
    from ..engines.fullarb import MAX_STEPS as FULL_ARB_MAX_STEPS  # heavy: loads flint,mpmath,sympy
    from ..engines import fulljax  # heavy: loads flint,mpmath,sympy
    from ..engines.full import require_route  # heavy: loads flint,mpmath,sympy
    pr = Problems()
    if (dps is not None and cross_check and arb_bits is None and arithmetic == "mpmath" and setting.reducible()[0]
            and dps > max_cross_checked_dps(steps)):
        pr.add("dps", dps, f"must be at most {max_cross_checked_dps(steps)} for {steps} steps with the cross-check: "
               f"its Arb reference carries more digits than the run, and Arb takes at most {MAX_BITS} bits",
               hint="or pass `cross_check=False`")
    if engine == "full":
        with pr.check():
            require_route(setting, "arb" if arb_bits is not None else arithmetic, fulljax.available())
    if engine == "reduced" and not setting.reducible()[0]:
        pr.add("engine", engine, f"must be full (or auto) here: the reduced recursion is not exact, since "
               f"{setting.reducible()[1]}; use `engine=full`")
    if arb_bits is not None:
        with pr.check():
            check_int("steps", steps, 0, FULL_ARB_MAX_STEPS if engine == "full" else ARB_MAX_STEPS)
        if arithmetic != "mpmath":
            pr.add("arb", arb_bits, f"computes in Arb balls: it cannot be combined with `arithmetic={arithmetic}`",
                   also=("arithmetic",))
    pr.raise_all()


def exact_reference(setting) -> bool:
    """A run of this setting can be repeated in mpmath (not for the finite sum over images: JAX float64 only)."""
    return setting.data.route(setting.sigma) != "images"


NO_REFERENCE = ("not available: the finite sum over the images (data = {data}, sigma = {sigma}) is differentiated by "
                "jax.grad in float64 only, so there is no more precise run to compare with")


def precision_check(setting, tr, engine: str, progress=None) -> dict:
    """Cross-check ``tr`` at higher precision (verify.engines.precision_checks); raises on disagreement.

    The reference is the certified Arb enclosure of the reduced recursion whenever the regime is
    reducible (the reduction is exact, so a full-matrix result must agree with it too), at more bits
    than the run carries (precision_checks.reference_bits), compared within its ball; otherwise the same
    engine at 20 more digits, up to step FULL_CHECK_STEPS.
    """
    from ..engines import precision_checks  # heavy: loads mpmath
    if setting.reducible()[0]:
        cc = precision_checks.cross_check(setting, replace(tr, engine="reduced", notes=tr.notes), reference="arb",
                                          on_disagreement="raise", checkpoints=4, progress=progress,
                                          summed=precision_checks.summed_terms(setting, engine))
        scope = "all checkpoints" + ("" if engine == "reduced" else " (full-matrix run vs the exact reduced enclosure)")
    else:
        part = replace(tr, records=[r for r in tr.records if r.step <= full_check_steps(setting, max(tr.steps()))],
                       notes=tr.notes)
        cc = precision_checks.cross_check(setting, part, reference="mpmath", on_disagreement="raise",
                                          checkpoints=4, progress=progress)
        scope = f"checkpoints up to step {max(part.steps())}"
    return {"reference": cc.reference, "agree": cc.agree, "compared": len(cc.rows), "scope": scope,
            "max_tolerance": precision_checks.g3(max(cc.tolerance.values()))}


def arb_check_steps(setting, engine: str, steps: int) -> int:
    """The horizon of the mpmath check of a certified run: ARB_CHECK_STEPS (reduced), as a full-matrix
    mpmath reference allows (full)."""
    return min(steps, ARB_CHECK_STEPS) if engine == "reduced" else full_check_steps(setting, steps)


def arb_check(setting, tr, progress=None) -> dict:
    """Cross-check certified balls ``tr`` against an independent mpmath run of the same engine (more digits
    than the balls carry) at up to 4 checkpoints up to arb_check_steps: each mpmath value must lie in its ball."""
    from ..engines import precision_checks  # heavy: loads mpmath
    last = arb_check_steps(setting, tr.engine, max(tr.steps()))
    part = replace(tr, records=[r for r in tr.records if r.step <= last], notes=tr.notes)
    cc = precision_checks.cross_check(setting, part, reference="mpmath", on_disagreement="raise", checkpoints=4,
                                      progress=progress)
    return {"reference": cc.reference, "agree": cc.agree, "compared": len(cc.rows),
            "scope": f"mpmath values inside the balls at checkpoints up to step {max(part.steps())}",
            "max_tolerance": precision_checks.g3(max(cc.tolerance.values()))}


def _digits_of(arith_dps: int | None, bits: int) -> int:
    """Printed digits of a certified run: what ``bits`` carry (+3, arb.str trims to what the ball
    certifies), capped by ``--dps`` when given."""
    most = math.ceil(bits * math.log10(2)) + 3
    return most if arith_dps is None else min(most, arith_dps)


def run_arith(arithmetic: str, dps: int | None, steps: int, summed: int = 1):
    """The run's Arith; float64 prints only the digits it carries over ``steps`` steps that each sum up to
    ``summed`` numbers (PrecisionError when fewer than ``dps``, or than 3 when ``dps`` is not given)."""
    from ..engines import precision_checks  # heavy: loads mpmath
    from ..engines.arith import Arith  # heavy: loads mpmath
    ar = Arith.make(arithmetic, dps, steps)
    if arithmetic == "float64":
        carried = precision_checks.require_horizon("float64", steps, dps if dps is not None else 3, summed=summed)
        ar = replace(ar, dps=dps if dps is not None else max(3, min(15, math.floor(carried))))
    return ar


def run_json(setting, steps: int, engine: str, arithmetic: str, dps: int | None, arb_bits: int | None = None,
             cross_check: bool = True, bar=None) -> dict:
    """The JSON object ``verify run --json`` prints (with ``arb_bits``: certified balls, "<name>_rad" radii).

    Precision policy (verify.engines.precision_checks): float64 prints only the digits it carries over the
    horizon (an error if fewer than requested); every result is re-run at higher precision (Arb for
    the reduced engine, mpmath with 20 more digits for the full one) at checkpoints and a
    disagreement is an error; ``cross_check=False`` skips that and says so in the output.
    With ``arb_bits`` the Arb balls are the result (no full mpmath trajectory): printed to every
    certified digit (``dps`` caps the digits), cross-checked by mpmath up to step ARB_CHECK_STEPS.
    ``bar`` (a verify.cli.progress.Bar) follows the runs.
    """
    engine, why = resolve_engine(setting, engine)
    run_problems(setting, steps, engine, arithmetic, arb_bits, dps, cross_check)
    track = _tracker(bar)
    cps = checkpoint_steps(steps, log_points=5)
    cfg = setting.config() | {"engine": engine}
    if why:
        cfg["engine_choice"] = why
    if arb_bits is not None:
        tr = iterate(setting, steps, engine, "arb", checkpoints=cps, bits=arb_bits,
                     progress=track(f"certified run ({engine}, Arb {arb_bits} bits)", steps))
        digits = _digits_of(dps, arb_bits)
        what = "reduced recursion" if engine == "reduced" else "full-matrix recursion (every entry of W_X, W_P, W_KQ)"
        cfg |= {"arithmetic": f"arb{arb_bits}", "arb_bits": arb_bits, "dps": digits, "steps": steps,
                "result": f"certified Arb balls of the exact {what} (exact rational parameters)",
                "certified": ("each <name>_rad bounds |exact - printed <name>| for the exact recursion; every digit "
                              "the ball certifies is printed (correct up to +-1 in the last digit)")}
        if cross_check:
            cfg["precision_check"] = arb_check(setting, tr, track("cross-check (mpmath)",
                                                                  arb_check_steps(setting, engine, steps)))
        else:
            cfg["precision_check"] = "skipped (--no-cross-check): the balls are certified but not cross-checked"
        return {"config": cfg, "final": certified_json(tr.final, digits)}
    from ..engines.precision_checks import summed_terms  # heavy: loads mpmath
    ar = run_arith(arithmetic, dps, steps, summed_terms(setting, engine))
    tr = iterate(setting, steps, engine, arithmetic, ar.dps if arithmetic == "mpmath" else None, checkpoints=cps,
                 progress=track(f"GD ({engine}, {arithmetic})", steps))
    cfg |= {"arithmetic": arithmetic, "dps": ar.dps, "work_dps": ar.work_dps, "steps": steps}
    if tr.backend is not None:
        cfg["backend"] = tr.backend
    if cross_check and not exact_reference(setting):
        cfg["precision_check"] = NO_REFERENCE.format(data=setting.data.spec(), sigma=setting.sigma.spec())
    elif cross_check:
        ref_steps = steps if setting.reducible()[0] else full_check_steps(setting, steps)
        cfg["precision_check"] = precision_check(setting, tr, engine, track("cross-check (reference)", ref_steps))
    else:
        cfg["precision_check"] = "skipped (--no-cross-check): these digits are not cross-checked"
    return {"config": cfg, "final": record_json(tr.final, ar.fmt)}


def _tracker(bar):
    """A factory of progress callbacks, one per phase (run, cross-check), advancing one display: phase k
    moves the bar from the steps of phases 1..k-1 onwards. None when nothing is shown."""
    done = {"offset": 0, "last": 0}

    def track(description: str, total: int):
        if bar is None or not bar.shown:
            return None
        done["offset"] += done["last"]
        done["last"] = total
        offset = done["offset"]
        bar.update(completed=offset, description=description)
        return lambda step: bar.update(completed=offset + step)
    return track


# ----- time estimate -----------------------------------------------------------------------------

def estimate(setting, steps: int, engine: str, arithmetic: str, dps: int | None, arb_bits: int | None,
             cross_check: bool) -> dict:
    """Estimated seconds of ``run_json`` with these options, from a short timed calibration of each
    engine it will run (verify.engines.estimate): {"seconds", "phases": [(what, steps, steps_per_s)]}."""
    from ..engines import precision_checks  # heavy: loads mpmath
    engine, _ = resolve_engine(setting, engine)
    run_problems(setting, steps, engine, arithmetic, arb_bits, dps, cross_check)
    phases = []         # (what, steps, (steps/s, fixed seconds))
    if arb_bits is not None:
        phases.append((f"certified {engine} Arb {arb_bits} bits", steps,
                       run_phases(setting, steps, engine, "arb", bits=arb_bits)))
        if cross_check:
            n_ref = arb_check_steps(setting, engine, steps)
            ref_dps = math.ceil(arb_bits * math.log10(2)) + 20
            phases.append((f"mpmath cross-check dps={ref_dps}", n_ref,
                           run_phases(setting, n_ref, engine, "mpmath", ref_dps)))
    else:
        # refuses what it cannot carry
        run_arith(arithmetic, dps, steps, precision_checks.summed_terms(setting, engine))
        run_dps = dps if arithmetic == "mpmath" else None
        phases.append((f"{engine} {arithmetic}", steps, run_phases(setting, steps, engine, arithmetic, run_dps)))
        if cross_check and setting.reducible()[0]:
            from ..engines.arb import iterate_certified  # heavy: loads flint,mpmath,sympy
            w = precision_checks.work_digits(arithmetic, dps, steps)
            bits = precision_checks.reference_bits(w, steps)
            phases.append((f"cross-check Arb {bits} bits", steps,
                           calibrate(lambda n: iterate_certified(setting, n, bits, [n]), steps)))
        elif cross_check and exact_reference(setting):
            n_ref = full_check_steps(setting, steps)
            ref_dps = math.ceil(precision_checks.work_digits(arithmetic, dps, steps)) + 20
            phases.append((f"cross-check {engine} mpmath dps={ref_dps}", n_ref,
                           run_phases(setting, n_ref, engine, "mpmath", ref_dps)))
    return {"seconds": sum(fixed + n / rate for _, n, (rate, fixed) in phases),
            "phases": [(what, n, rate) for what, n, (rate, _) in phases]}


def stability_warning(setting) -> str | None:
    """A warning when GD is outside its stable range (the hypothesis eta-stable, verify.model.hypotheses):
    beyond it the W_X block does not contract and the iterates oscillate or diverge. None inside it, and
    for K = 0 (S* = 0: W_X stays at 0 whatever the step size)."""
    h = hypothesis("eta-stable")
    if setting.K == 0 or h.holds(setting):
        return None
    return (f"GD is outside its stable range: eta_V c_L v N = {frac_str(step_x(setting))} >= 2K = {2 * setting.K} "
            f"(stable: {h.text}); the iterates oscillate or diverge")


def estimate_text(est: dict, steps: int) -> str:
    parts = ", ".join(f"{what} at {r:.2g} steps/s" for what, _, r in est["phases"])
    return f"estimated time: {duration(est['seconds'])} for {steps:,} steps ({parts})"


def steps_of(steps: int, file_steps: int | None) -> int:
    """The horizon: --steps, or the regime file's "steps" when --steps is not on the command line (both: an error)."""
    if file_steps is None:
        return steps
    if click.get_current_context().get_parameter_source("steps") == ParameterSource.COMMANDLINE:
        raise InvalidParameter("steps", steps, f"is given again by the regime file (steps = {file_steps}): give it once")
    return file_steps


@click.command("run")
@setting_options
@regime_option
@click.option("--steps", type=click.IntRange(0, MAX_STEPS), default=1000, show_default=True)
@click.option("--engine", type=click.Choice(["auto", "reduced", "full"]), default="auto", show_default=True,
              help="auto: the reduced recursion when it is exact for the regime, else the full-matrix engine")
@click.option("--arithmetic", type=click.Choice(["mpmath", "float64"]), default="mpmath", show_default=True)
@click.option("--dps", type=click.IntRange(5, 100000), default=None,
              help="decimal digits for mpmath (default 30); with --arb: at most this many printed digits")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--arb", "arb_bits", type=click.IntRange(MIN_BITS, MAX_BITS), default=None, metavar="BITS",
              help="certified run: Arb balls at BITS bits are the result (reduced or full engine), printed to every "
                   "digit they certify with <name>_rad radii; mpmath cross-checks the first checkpoints")
@click.option("--cross-check/--no-cross-check", default=True, show_default=True,
              help="re-run at higher precision at checkpoints and fail on disagreement")
@click.option("--estimate-only", is_flag=True, help="print the estimated run time and stop")
@click.option("--yes", is_flag=True, help=f"run even when the estimate exceeds {duration(CONFIRM_SECONDS)}")
@click.option("--quiet", is_flag=True, help="no time estimate or progress on stderr")
@handle_errors
def run_cmd(steps, engine, arithmetic, dps, as_json, arb_bits, cross_check, estimate_only, yes, quiet, **kw):
    """Run GD from the chosen initialisation and report the final state.

    Long runs: the time is estimated first (a short timed calibration) and said on stderr; above an
    hour the run needs --yes. Progress with an ETA is shown on stderr when it is a terminal.
    """
    args, file_steps = setting_args(kw, steps="optional")
    steps = steps_of(steps, file_steps)
    build = check_build(args, yes=yes or estimate_only, quiet=quiet or estimate_only, command="verify run")
    if estimate_only and build is not None and build > ANNOUNCE_SECONDS:
        text = (f"estimated time: at least {duration(build)} to build the regime (V* has {entries(args):,} exact "
                "entries); the run itself is timed once the regime is built")
        click.echo(json.dumps({"estimated_seconds": build, "estimate": text}, indent=1) if as_json else text)
        return
    s = make_setting(**args)
    warning = stability_warning(s)
    if warning:
        note(f"verify run: warning: {warning}")
    est = estimate(s, steps, engine, arithmetic, dps, arb_bits, cross_check)
    text = estimate_text(est, steps)
    if estimate_only:
        click.echo(json.dumps({"estimated_seconds": est["seconds"], "estimate": text}, indent=1) if as_json else text)
        return
    if est["seconds"] > CONFIRM_SECONDS and not yes:
        raise CliError(f"--steps {steps}: {text}; pass --yes to run it anyway, or fewer --steps "
                       f"(--estimate-only prints the estimate)")
    if est["seconds"] > ANNOUNCE_SECONDS:
        note(f"verify run: {text}", quiet)
    total = sum(n for _, n, _ in est["phases"])
    with progress(f"verify run ({duration(est['seconds'])} estimated)", total, quiet) as bar:
        out = run_json(s, steps, engine, arithmetic, dps, arb_bits, cross_check, bar=bar)
    if warning:
        out["warnings"] = [warning]
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    f, c = out["final"], out["config"]
    click.echo(f"regime: D={s.D} K={s.K} N={s.N} M={s.M} d={s.d} sigma={s.sigma.spec()} eta={c['eta_v']}"
               f" engine={c['engine']}/{c['arithmetic']}")
    pm = lambda k, v, i=None: v if f"{k}_rad" not in f else \
        f"{v} +- {f[k + '_rad'] if i is None else f[k + '_rad'][i]}"  # noqa: E731 (certified radius)
    for k in ("step",) + QUANTITIES:
        click.echo(f"  {k:12s} {pm(k, f[k])}")
    click.echo(f"  {'alpha':12s} {', '.join(pm('alpha', a, i) for i, a in enumerate(f['alpha']))}")
    click.echo(f"  {'support_mass':12s} {pm('support_mass', f['support_mass'][0], 0)} (column 0 of {s.N})")
    if arb_bits is not None:
        click.echo(f"  certified: each +- radius bounds |exact - printed| (Arb, {arb_bits} bits)")
