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


def run_json(setting, steps: int, engine: str, arithmetic: str, dps: int | None) -> dict:
    """The JSON object ``verify run --json`` prints."""
    from ..engines.arith import Arith
    tr = iterate(setting, steps, engine, arithmetic, dps)
    ar = Arith.make(arithmetic, dps, steps)
    cfg = setting.config() | {"engine": engine, "arithmetic": arithmetic, "dps": ar.dps, "work_dps": ar.work_dps,
                              "steps": steps}
    return {"config": cfg, "final": record_json(tr.final, ar.fmt)}


@click.command("run")
@setting_options
@click.option("--steps", type=int, default=1000, show_default=True)
@click.option("--engine", type=click.Choice(["reduced", "full"]), default="reduced", show_default=True)
@click.option("--arithmetic", type=click.Choice(["mpmath", "float64"]), default="mpmath", show_default=True)
@click.option("--dps", type=int, default=None, help="decimal digits for mpmath (default 30)")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@handle_errors
def run_cmd(steps, engine, arithmetic, dps, as_json, **kw):
    """Run GD from the chosen initialisation and report the final state."""
    s = setting_from_options(kw)
    out = run_json(s, steps, engine, arithmetic, dps)
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    f = out["final"]
    click.echo(f"regime: D={s.D} K={s.K} N={s.N} M={s.M} d={s.d} sigma={s.sigma.spec()} eta={out['config']['eta_v']}"
               f" engine={engine}/{arithmetic}")
    for k in ("step", "loss", "excess_loss", "s_err", "w_err", "wp_norm", "cos_wv"):
        click.echo(f"  {k:12s} {f[k]}")
    click.echo(f"  {'alpha':12s} {', '.join(f['alpha'])}")
    click.echo(f"  {'support_mass':12s} {f['support_mass'][0]} (column 0 of {s.N})")
