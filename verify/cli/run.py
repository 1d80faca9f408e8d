"""``verify run``: iterate GD in one regime and print the final recorded quantities."""
from __future__ import annotations

import json

import click

from ..engines import iterate
from ..engines.trajectory import Record
from .options import handle_errors, setting_from_options, setting_options


def record_json(rec: Record, fmt) -> dict:
    """A Record as JSON with every number a decimal string (``fmt``)."""
    return {"step": rec.step, "loss": fmt(rec.loss), "excess_loss": fmt(rec.excess_loss), "s_err": fmt(rec.s_err),
            "w_err": fmt(rec.w_err), "wp_norm": fmt(rec.wp_norm), "cos_wv": fmt(rec.cos_wv),
            "alpha": [fmt(a) for a in rec.alpha], "offspan": [fmt(a) for a in rec.offspan],
            "support_mass": [fmt(p) for p in rec.support_mass]}


def add_radii(final: dict, ball: Record) -> dict:
    """Add "<name>_rad" to every number of ``final``: a radius (rounded up) such that the printed
    number +- radius contains the exact value (it covers the certified ball and the printing)."""
    from ..engines.arb import cover_radius
    out = dict(final)
    for k, v in final.items():
        if k == "step":
            continue
        b = getattr(ball, k)
        out[f"{k}_rad"] = [cover_radius(x, p) for x, p in zip(b, v)] if isinstance(v, list) else cover_radius(b, v)
    return out


# Full-matrix mpmath steps cost O(D^3) big-number operations (0.75 steps/s at D = N = 64): when no
# exact reference is cheaper, a full-engine result is cross-checked on its first steps only.
FULL_CHECK_STEPS = 200


def precision_check(setting, tr, engine: str) -> dict:
    """Cross-check ``tr`` at higher precision (verify.engines.precision); raises on disagreement.

    The reference is the certified Arb enclosure of the reduced recursion whenever the regime is
    reducible (the reduction is exact, so a full-matrix result must agree with it too); otherwise
    the same engine at 20 more digits, up to step FULL_CHECK_STEPS.
    """
    from dataclasses import replace
    from ..engines import precision
    if setting.reducible()[0]:
        cc = precision.cross_check(setting, replace(tr, engine="reduced", notes=tr.notes), reference="arb",
                                   on_disagreement="raise", checkpoints=4)
        scope = "all checkpoints" + ("" if engine == "reduced" else " (full-matrix run vs the exact reduced enclosure)")
    else:
        part = replace(tr, records=[r for r in tr.records if r.step <= FULL_CHECK_STEPS], notes=tr.notes)
        cc = precision.cross_check(setting, part, reference="mpmath", on_disagreement="raise", checkpoints=4)
        scope = f"checkpoints up to step {max(part.steps())}"
    return {"reference": cc.reference, "agree": cc.agree, "compared": len(cc.rows), "scope": scope,
            "max_tolerance": f"{max(cc.tolerance.values()):.3g}"}


def run_json(setting, steps: int, engine: str, arithmetic: str, dps: int | None, arb_bits: int | None = None,
             cross_check: bool = True) -> dict:
    """The JSON object ``verify run --json`` prints (with ``arb_bits``: certified radii too).

    Precision policy (verify.engines.precision): float64 prints only the digits it carries over the
    horizon (an error if fewer than requested); every result is re-run at higher precision (Arb for
    the reduced engine, mpmath with 20 more digits for the full one) at checkpoints and a
    disagreement is an error; ``cross_check=False`` skips that and says so in the output.
    """
    import math
    from dataclasses import replace
    from ..engines import precision
    from ..engines.arith import Arith
    from ..engines.trajectory import checkpoint_steps
    from ..errors import InvalidParameter
    if arb_bits is not None and engine != "reduced":
        raise InvalidParameter("arb", arb_bits, "certified radii need --engine reduced")
    ar = Arith.make(arithmetic, dps, steps)
    if arithmetic == "float64":
        carried = precision.require_horizon("float64", steps, dps if dps is not None else 3)
        ar = replace(ar, dps=dps if dps is not None else max(3, min(15, math.floor(carried))))
    tr = iterate(setting, steps, engine, arithmetic, ar.dps if arithmetic == "mpmath" else None,
                 checkpoints=checkpoint_steps(steps, log_points=5))
    cfg = setting.config() | {"engine": engine, "arithmetic": arithmetic, "dps": ar.dps, "work_dps": ar.work_dps,
                              "steps": steps}
    if cross_check:
        cfg["precision_check"] = precision_check(setting, tr, engine)
    else:
        cfg["precision_check"] = "skipped (--no-cross-check): these digits are not cross-checked"
    final = record_json(tr.final, ar.fmt)
    if arb_bits is not None:
        from ..engines.arb import iterate_certified
        cert = iterate_certified(setting, steps, arb_bits, [steps])
        final = add_radii(final, cert.final)
        cfg["arb_bits"] = arb_bits
        cfg["certified"] = ("each <name>_rad bounds |exact - printed <name>| for the exact recursion with the exact "
                            "rational parameters (Arb balls, mean-value form)")
    return {"config": cfg, "final": final}


@click.command("run")
@setting_options
@click.option("--steps", type=int, default=1000, show_default=True)
@click.option("--engine", type=click.Choice(["reduced", "full"]), default="reduced", show_default=True)
@click.option("--arithmetic", type=click.Choice(["mpmath", "float64"]), default="mpmath", show_default=True)
@click.option("--dps", type=int, default=None, help="decimal digits for mpmath (default 30)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--arb", "arb_bits", type=int, default=None, metavar="BITS",
              help="also certify: add <name>_rad radii from Arb balls at BITS bits (reduced engine)")
@click.option("--cross-check/--no-cross-check", default=True, show_default=True,
              help="re-run at higher precision at checkpoints and fail on disagreement")
@handle_errors
def run_cmd(steps, engine, arithmetic, dps, as_json, arb_bits, cross_check, **kw):
    """Run GD from the chosen initialisation and report the final state."""
    s = setting_from_options(kw)
    out = run_json(s, steps, engine, arithmetic, dps, arb_bits, cross_check)
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    f = out["final"]
    click.echo(f"regime: D={s.D} K={s.K} N={s.N} M={s.M} d={s.d} sigma={s.sigma.spec()} eta={out['config']['eta_v']}"
               f" engine={engine}/{arithmetic}")
    pm = lambda k, v, i=None: v if f"{k}_rad" not in f else \
        f"{v} +- {f[k + '_rad'] if i is None else f[k + '_rad'][i]}"  # noqa: E731 (certified radius)
    for k in ("step", "loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv"):
        click.echo(f"  {k:12s} {pm(k, f[k])}")
    click.echo(f"  {'alpha':12s} {', '.join(pm('alpha', a, i) for i, a in enumerate(f['alpha']))}")
    click.echo(f"  {'support_mass':12s} {pm('support_mass', f['support_mass'][0], 0)} (column 0 of {s.N})")
    if arb_bits is not None:
        click.echo(f"  certified: each +- radius bounds |exact - printed| (Arb, {arb_bits} bits)")
