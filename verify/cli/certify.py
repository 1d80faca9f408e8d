"""``verify certify``: an all-time certificate for one regime, and its bounds at any T (verify.certify)."""
from __future__ import annotations

import json
import sys
from decimal import Decimal, InvalidOperation

import click

from .options import handle_errors, regime_option, setting_from_options, setting_options
from .progress import progress, progress_hook

DEFAULT_AT = (10**3, 10**6, 10**9, 10**12)


def parse_at(text: str | None) -> list[int]:
    """``"0,1000,1e12"`` -> [0, 1000, 10**12]: integers T >= 0 (scientific notation if it is an integer)."""
    from ..errors import InvalidParameter
    if text is None:
        return list(DEFAULT_AT)
    out = []
    for item in text.split(","):
        try:
            d = Decimal(item.strip())
        except InvalidOperation:
            d = None
        if d is None or not d.is_finite() or d != d.to_integral_value() or d < 0 or d.adjusted() > 1000:
            raise InvalidParameter("at", text, "must be comma-separated integers T >= 0 such as 0,1000,1e12 "
                                   "(at most 1e1000)")
        out.append(int(d))
    return out


def parse_subdivisions(text: str) -> tuple[int, int]:
    from ..errors import InvalidParameter
    try:
        n_u, n_eps = (int(x) for x in text.split(","))
    except ValueError:
        raise InvalidParameter("subdivisions", text, "must be two integers N_U,N_EPS such as 4,2 (slabs per annulus, "
                               "eps-pieces)") from None
    return n_u, n_eps


@click.command("certify")
@setting_options
@regime_option
@click.option("--at", "at", default=None, help="comma-separated steps T at which to print the bounds "
              "(default 1e3,1e6,1e9,1e12; any size: the cost does not grow with T)")
@click.option("--json", "as_json", is_flag=True, help='print one JSON object: "bounds" and "certificate"')
@click.option("--bits", type=int, default=None, help="Arb precision of the prefix and the enclosures [128]")
@click.option("--u0", default=None, help="region: u <= u0 (off-support mass; default: found automatically)")
@click.option("--C", "C", default=None, help="region: |alpha - alpha*(u)| <= C u^3 (default: found automatically)")
@click.option("--shells", type=int, default=None, help="nested shells u <= u0 r^j, j <= SHELLS [120]")
@click.option("--shell-ratio", default=None, help="r of the shells (1/2: the dyadic shells u0 2^-j) [3/4]")
@click.option("--subdivisions", default=None, help="N_U,N_EPS: slabs per annulus and eps-pieces of each [4,2]")
@click.option("--max-depth", type=int, default=None, help="bisections of a box that fails the check [6]")
@click.option("--max-prefix", type=int, default=None, help="longest certified prefix before giving up [2000000]")
@click.option("--check-every", type=int, default=None, help="prefix steps between region-membership checks [16]")
@click.option("--T0", "T0", type=int, default=None, help="end the prefix exactly at step T0 (no search)")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def certify_cmd(at, as_json, bits, u0, C, shells, shell_ratio, subdivisions, max_depth, max_prefix, check_every, T0,
                quiet, **kw):
    """Prove lower and upper bounds on L - L_opt, ||S - S*||_F and ||W_X - V*||_F for every T >= 0.

    A certified Arb prefix from zero initialisation, a trapping region around the slow manifold
    checked with Arb, and a discrete comparison lemma for the cubic decay of the off-support mass.
    A certificate that does not close exits with status 1 and names the failed obligation.
    """
    from ..certify import CertificateFailed, certify
    s = setting_from_options(kw, quiet=quiet)
    Ts = parse_at(at)
    n_u, n_eps = parse_subdivisions(subdivisions) if subdivisions is not None else (None, None)
    try:
        with progress("verify certify", None, quiet) as bar:
            cert = certify(s, bits=bits, u0=u0, C=C, shells=shells, ratio=shell_ratio, n_u=n_u, n_eps=n_eps,
                           max_depth=max_depth, max_prefix=max_prefix, check_every=check_every, T0=T0,
                           **progress_hook(certify, bar))
        bounds = [cert.bounds_json(T, None if as_json else 8) for T in Ts]
    except CertificateFailed as exc:
        if as_json:
            click.echo(json.dumps({"status": "failed", "failed_obligation": exc.obligation.as_dict(),
                                   "regime": s.config()}, indent=1))
        click.echo(str(exc), err=True)
        sys.exit(1)
    if as_json:
        click.echo(json.dumps({"status": "certified", "bounds": bounds, "certificate": cert.as_dict()}, indent=1))
        return
    d = cert.as_dict()
    click.echo(f"regime: D={s.D} K={s.K} N={s.N} M={s.M} d={s.d} sigma={s.sigma.spec()} eta={d['regime']['eta_v']} "
               f"eta_kq={d['regime']['eta_kq']} ||V*||^2={d['regime']['vstar_norm2']} loss={s.loss}")
    click.echo(f"certificate ({d['kind']}): {d['statement']}")
    if d["kind"] == "slow-manifold":
        r = d["region"]
        click.echo(f"  prefix: Arb {d['bits']} bits, T0 = {d['T0']}; region {r['definition']} with u0 = {r['u0']}, "
                   f"C = {r['C']} ({r['check']['boxes']} boxes)")
        click.echo(f"  decay (u - u')/u^3 in [a, b] = [{float(eval_frac(d['a'])):.6g}, {float(eval_frac(d['b'])):.6g}] "
                   f"on R, -> c = {d['cubic_coefficient_c']} on {len(d['shells'])} shells")
        for q, v in d["constants"].items():
            click.echo(f"  {v['statement']}: c_lo = {v['c_lo']}, c_hi = {v['c_hi']} "
                       f"(T -> inf: [{d['asymptotic'][q]['liminf_ge']}, {d['asymptotic'][q]['limsup_le']}])")
    else:
        click.echo(f"  rate: {d['rate']}")
    n_ok = sum(o["status"] == "discharged" for o in d["obligations"])
    methods = ", ".join(sorted({o["method"] for o in d["obligations"]}))
    click.echo(f"  obligations: {n_ok}/{len(d['obligations'])} discharged ({methods}); --json prints them all")
    click.echo(f"  {'T':>14s}  {'L - L_opt':>29s}  {'||S - S*||_F':>29s}  {'||W_X - V*||_F':>29s}")
    for b in bounds:
        cells = [f"[{b[q][0]}, {b[q][1]}]" for q in ("excess_loss", "s_err", "w_err")]
        click.echo(f"  {b['T']:>14d}  " + "  ".join(f"{c:>29s}" for c in cells))


def eval_frac(text: str):
    from fractions import Fraction
    return Fraction(text)
