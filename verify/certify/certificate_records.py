"""Evidence records (verify.evidence) from an all-time certificate, for theorem-3.1-rates.

One regime, horizon "all". A closed certificate gives, per quantity, an upper-rate and a lower-rate
record of kind "arb" (role "test", holds True): the composite statement is certified only when every
obligation was discharged, so the obligations themselves are attached as "context" records (their
kinds: symbolic / smt / arb), never as separate confirmations -- a SymPy lemma alone proves nothing
about the rate. A certificate that does not close is a "failed" record (the verdict becomes
inconclusive, never a weaker claim); a refused regime (eta >= 2K/(c_L v N), sigma != identity, ...)
and the exact K = D / K = 0 cases lie outside Theorem 3.1's hypotheses (0 < K < D) and are "outside"
records: K = D and K = 0 report where the Theta(1/T) lower bounds fail, with a replay command.
"""
from __future__ import annotations

import json
import math
import os
from fractions import Fraction
from pathlib import Path

import sympy as sp

from ..coq.kernel import chain_route
from ..derive.asymptotics import leading_terms_general
from ..errors import InvalidParameter
from ..evidence import From, Region, Scope, dims_of, record
from ..model import symbols as sy
from ..model.flags import family_command, setting_command
from ..model.spec import BY_NAME
from ..model.hypotheses import REFERENCE
from ..model.numbers import frac_str
from ..model.paper import claimed_exponent, exponent_of, theorem_3_1_orders
from ..model.profiles import check_profile
from ..model.setting import REFERENCE_LABEL
from ..run.cache import by_code_version, cache_dir
from .certificate import certify
from .methods import method_of
from .family import FamilySpec, certify_family
from .files import certificate_file, load_family
from .obligations import CertificateFailed, EVIDENCE_KIND
from recheck.certificates import CheckFailed, check_file

RATE_DIRECTIONS = ("upper", "lower")
POWER_TEXT = {"excess_loss": ("L - L_opt", "eta T"), "s_err": ("||S - S*||_F", "(eta T)^(1/2)"),
              "w_err": ("||W_X - V*||_F", "(eta T)^(1/2)")}


def regime_scope(s) -> Scope:
    """The scope of exactly this regime: its dimensions, sigma, every convention and parameter, all t."""
    c = s.config()
    dims = dims_of(s) + (f" {s.preset}" if s.preset else "")
    conv = (f"eta={c['eta_v']} eta_kq={c['eta_kq']} ||V*||^2={c['vstar_norm2']} loss={c['loss']} "
            f"law_var={c['law_var']} law_mean={c['law_mean']} p_lambda={c['p_lambda']} beta={c['beta']} init={c['init']}")
    return Scope(dims=(dims,), sigma=(s.sigma.spec(),), conventions=(conv,), horizon="all")


def replay_command(s) -> str:
    return setting_command("certify", s, "--json")


def certificate_evidence(setting, cert=None, **knobs) -> list[dict]:
    """Evidence records for the T-rates of Theorem 3.1 in ``setting`` (module docstring).

    ``cert``: an already built certificate of this setting (else :func:`certify` is run with ``knobs``).
    """
    scope = regime_scope(setting)
    replay = replay_command(setting)
    if cert is None:
        try:
            cert = certify(setting, **knobs)
        except InvalidParameter as exc:
            return [record("all-time certificate (verify certify)", "arb", scope, f"not applicable: {exc}", None,
                           role="outside", replay=replay)]
        except CertificateFailed as exc:
            return [record("all-time certificate (verify certify)", "arb", scope,
                           f"the certificate did not close, so nothing is certified: {exc}", None, role="failed",
                           failed_obligation=exc.obligation.as_dict(), replay=replay)]
    method = method_of(cert)
    kernel = trapping_kernel_record(cert, scope) if method.rechecks else None
    accepted = kernel["kernel"].get("accepted_keys", ()) if kernel else ()
    context = [record(f"obligation {o.name}", EVIDENCE_KIND[o.method], scope, f"{o.statement}: {o.status} ({o.detail})",
                      None, role="context", obligation=o.as_dict(), routes=o.routes(accepted)) for o in cert.obligations]
    return method.records(setting, cert, scope, replay) + context + ([kernel] if kernel else [])


def trapping_kernel_record(cert, scope: Scope) -> dict:
    """A context record: what Coq's kernel accepted of this certificate's chain after its Arb prefix (verify.coq:
    the comparison lemma, the identities tying its map to the reduced recursion, and its trapping region's boxes,
    the route `verify prove --coq` saved for the same certificate by its file's digest), e.g. "kernel-checked: ...
    968 of 968 boxes kernel-checked ...; not kernel-checked: the prefix ...", or "partial" with how many boxes, or
    that the kernel route was not run. It decides nothing: the certificate's verdict is Arb's and the re-checker's."""
    route = chain_route(json.loads(json.dumps(certificate_file(cert, []))))
    return record("kernel route of the certificate's chain after its prefix (Coq)", "formal", scope,
                  f"{route['status']}: {route['why']}", None, role="context", kernel=route)


def rate_bound(quantity: str, direction: str, value: str) -> dict:
    """What a rate record bounds, as data a consumer selects on (never its prose route): the quantity (a key of
    POWER_TEXT), the direction ("upper": scale * quantity <= value for every T >= T0; "lower": >= value > 0) and
    the certified constant."""
    if quantity not in POWER_TEXT:
        raise ValueError(f"quantity must be one of {', '.join(POWER_TEXT)}, not {quantity!r}")
    if direction not in RATE_DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(RATE_DIRECTIONS)}, not {direction!r}")
    return {"quantity": quantity, "direction": direction, "value": value}


# ----- families of regimes -----------------------------------------------------------------------------------------
# The family each profile certifies (sts, K = 4, ||V*|| = 1, eta_KQ = eta), within the profile's part time (cells
# run in the part's own process): ci the whole range of two lengths, dev and deep wider ones. The benchmark family,
# D = 8..512 over eta in [1/16, 1/8] (TARGET_FAMILY), is verify bench's: its cells (ranges of lengths, the whole
# eta range, entered through the tube of verify.certify.entry) run on a 2-worker cluster within a 10-minute target.
FAMILIES = {"ci": {"D": (8, 9), "eta": (Fraction(1, 16), Fraction(51, 800))},
            "dev": {"D": (8, 12), "eta": (Fraction(1, 16), Fraction(1, 14))},
            "deep": {"D": (8, 16), "eta": (Fraction(1, 16), Fraction(1, 8))}}
TARGET_FAMILY = {"D": (8, 512), "eta": (Fraction(1, 16), Fraction(1, 8))}
FAMILY_OPTIONS = {"preset": "sts", "K": 4, "vstar_norm": "1"}
# What every member of a family satisfies and the certificate uses (ids of verify.model.hypotheses): sigma =
# identity (the reduced map), 0 < K < D and the W_X-block stability bound (verify.certify.family.check_family
# refuses a family with a member outside them), and the reference convention (zero initialisation, orthogonal P,
# centred i.i.d. Gaussian entries, uniform S* weights, one step size eta_KQ = eta, ...) under which the reduction
# full GD = the 2-D map is proved (verify.derive.reduction_proof).
FAMILY_ASSUMES = ("identity", "0<K<D", "eta-stable") + REFERENCE
FAMILY_USES = ("upper", "lower", "uniform-lower-constant", "limits")    # the "use" of each family_evidence record


def family_label(ranges: dict, options: dict = FAMILY_OPTIONS) -> str:
    """``"sts K=4 D=8..512, eta in [1/16, 1/8], ||V*|| = 1"``: the members a family's scope speaks of."""
    lo, hi = ranges["D"]
    elo, ehi = ranges["eta"]
    return (f"{options['preset']} K={options['K']} D={lo}..{hi}, eta in [{frac_str(elo)}, {frac_str(ehi)}], "
            f"||V*|| = {options['vstar_norm']}")


def family_region(ranges: dict, options: dict = FAMILY_OPTIONS) -> Region:
    """The members a family covers, as a box: every integer D and every eta in its ranges, its fixed K and
    ||V*||, the sts teacher's sizes (M = d = N = 1); read as :func:`family_label`."""
    return Region(D=ranges["D"], eta=ranges["eta"], K=options["K"], vnorm=Fraction(options["vstar_norm"]), M=1, d=1,
                  N=1, text=family_label(ranges, options))


def family_scope(ranges: dict) -> Scope:
    """The family's members (a region of sizes and parameters), sigma = identity, the reference convention, every
    T from some T0 on (each cell's bounds hold from its T0), FAMILY_ASSUMES."""
    return Scope(dims=family_region(ranges), sigma=("identity",), conventions=(REFERENCE_LABEL,), horizon=From(),
                 assumes=FAMILY_ASSUMES)


# A saved family certificate a claim reads when it exists and re-checks: the file named by the environment variable
# VERIFY_FAMILY_FILE (`verify check --family-file FILE` sets it), else the one `verify bench` saves when it completes
# the target family. At the ci profile a file above RECHECK_CI_BYTES is not re-checked (the independent re-checker
# reads every cell: minutes for the target family's tens of megabytes), so the claim keeps its own family and says so.
FAMILY_FILE_VARIABLE = "VERIFY_FAMILY_FILE"
RECHECK_CI_BYTES = 2_000_000


def bench_family_path() -> Path:
    """Where `verify bench` saves the target family's certificate (gitignored cache)."""
    return cache_dir("families") / "target-family.json"


def saved_family_path() -> Path | None:
    """The saved family file a claim should read (module comment above), or None when there is none."""
    named = os.environ.get(FAMILY_FILE_VARIABLE)
    if named:
        return Path(named)
    path = bench_family_path()
    return path if path.is_file() else None


@by_code_version("family-recheck")
def _rechecked(path: str, size: int, mtime_ns: int) -> str:
    """The independent re-check of a family file (recheck.certificates, which imports nothing of the toolkit):
    "" when it verified, else the failing step; cached by the file's size and time and by code version."""
    try:
        check_file(path)
    except CheckFailed as exc:
        return f"{exc.step}: {exc.detail}"
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        return f"format: {type(exc).__name__}: {exc}"
    return ""


def chosen_family(profile: str):
    """(family certificate, source) for the claims at ``profile``: a saved family file (:func:`saved_family_path`)
    when it loads and the independent re-checker verifies it (the whole file; at ci only below RECHECK_CI_BYTES),
    else the profile's own family (FAMILIES[profile]). ``source`` says which and why: {"kind": "saved" | "own",
    "path", "rechecked", "note"}. A CertificateFailed of the own family propagates."""
    path, note = saved_family_path(), ""
    if path is not None:
        try:
            size = path.stat().st_size
        except OSError as exc:
            size, note = None, f"the saved family file {path} cannot be read ({exc})"
        if size is not None and profile == "ci" and size > RECHECK_CI_BYTES:
            note = (f"a saved family certificate ({path}, {size / 1e6:.1f} MB) was not re-checked within the ci profile's "
                    f"budget (files above {RECHECK_CI_BYTES / 1e6:.0f} MB are re-checked at dev and deep), so it is not "
                    "read")
        elif size is not None:
            failed = _rechecked(str(path), size, path.stat().st_mtime_ns)
            if failed:
                note = f"the saved family certificate {path} did not re-check ({failed}), so it is not read"
            else:
                try:
                    fc = load_family(path)
                    options = {k: str(v) for k, v in dict(fc.spec.options).items()}
                    if all(options.get(k) == str(v) for k, v in FAMILY_OPTIONS.items()):
                        return fc, {"kind": "saved", "path": str(path), "rechecked": True, "note": (
                            f"the saved family certificate {path}, re-checked in full by the independent re-checker "
                            "(python -m recheck)")}
                    note = f"the saved family certificate {path} is of another family ({dict(fc.spec.options)}): not read"
                except InvalidParameter as exc:
                    note = f"the saved family certificate {path} does not load ({exc}), so it is not read"
    own = f"the profile's own family ({family_label(FAMILIES[profile])}), certified in this run"
    return profile_family(profile), {"kind": "own", "path": None, "rechecked": False,
                                     "note": (note + "; " if note else "no saved family certificate; ") + own}


@by_code_version("family-certificate")
def profile_family(profile: str):
    """The family certificate of ``profile`` (FAMILIES), its cells run in this process (a report's parts already
    run on Dask workers); cached on disk by code version (verify.run.cache), so a report reuses it until the sources
    change."""
    return certify_family(FamilySpec.of(FAMILY_OPTIONS, FAMILIES[profile]), dask=False)


def family_evidence(profile: str) -> list[dict]:
    """Evidence records for Theorem 3.1 over the family FAMILIES[profile], kind "arb", each with its ``use``
    (FAMILY_USES): "upper" and "lower" -- every member has certified upper and positive lower bounds of the
    1/T (1/sqrt(T)) shape for all T >= T0 of its cell (tests); "uniform-lower-constant" -- at the largest D, any
    D-uniform c_lo of Theorem 3.1 is at most lim (eta T)^p q / ((eta T)^p f_q) (context: a bound on the constant,
    never a refutation of a Theta by finitely many sizes); "limits" -- lim q/leading_q over every member lies in
    the certified table, an enclosure containing 1 (a test of the derived leading terms). A family that does not
    close gives one failed record per use."""
    check_profile(profile)
    ranges = FAMILIES[profile]
    replay = family_command("certify", {k: FAMILY_OPTIONS[k] for k in ("preset", "K")}, ranges,
                            BY_NAME["vstar_norm"].flag, FAMILY_OPTIONS["vstar_norm"], "--json")
    try:
        fc, source = chosen_family(profile)
    except CertificateFailed as exc:
        scope, label = family_scope(ranges), family_label(ranges)
        return [record(f"family certificate of {label}", "arb", scope, f"the family certificate did not close, so "
                       f"nothing is certified: {exc}", None, role="failed", replay=replay, use=u) for u in FAMILY_USES]
    ranges = fc.spec.range_of
    scope, label = family_scope(ranges), family_label(ranges)
    if source["kind"] == "saved":
        replay = f"python -m recheck {source['path']}"
    table = fc.table()
    at_max = limits_at_largest_D(fc, table)
    common = dict(replay=replay, cells=len(fc.cells), normalised_limits={q: [frac_str(lo), frac_str(hi)]
                                                                         for q, (lo, hi) in table.items()},
                  family=label, family_source=source)
    n = fc.entries()
    entry = (f"every member's entry into the region through the entry tube ({n['tube']} cells) or a Taylor-model "
             f"Arb prefix over the cell ({n['taylor']})")
    how = (f"{len(fc.cells)} cells, each closed: {entry}, a trapping region invariant for every member, the "
           "comparison lemma with the member's own cubic coefficient")
    return [record(f"family certificate: upper bounds for every member of {label}", "arb", scope,
                   f"every member (every integer D, every eta in the range) has certified upper bounds U_q(T) on L - "
                   f"L_opt, ||S - S*||_F, ||W_X - V*||_F for all T >= T0 of its cell, with (eta T)^p U_q -> at most "
                   f"{_table_ends(table, 1)} times the derived leading constant ({how})", True, threshold={
                       "value": "every cell closed", "why": "a cell's bounds hold for every member only when its "
                       "prefix, region and lemma obligations are all discharged"}, use="upper", **common),
            record(f"family certificate: positive lower bounds for every member of {label}", "arb", scope,
                   f"every member has certified lower bounds on the three quantities for all T >= T0 of its cell, "
                   f"with lim (eta T)^p q >= {_table_ends(table, 0)} times the derived leading constant > 0: the "
                   f"T-rates of the lower bound hold in every member ({how})",
                   all(lo > 0 for lo, _ in table.values()), threshold={"value": "lim q/leading_q > 0 for every "
                   "member", "why": "a positive lower limit of (eta T)^p q is a lower rate constant from some T on"},
                   use="lower", **common),
            uniform_lower_record(fc, at_max, scope, replay) | {"family": label, "family_source": source},
            record(f"family certificate: the normalised limit constants over {label}", "arb", scope,
                   "lim q(T)/leading_q(T) for every member lies in " + "; ".join(
                       f"{q}: 1 + [{float(lo - 1):.3g}, {float(hi - 1):.3g}]" for q, (lo, hi) in table.items())
                   + " (leading_q: the derived leading terms of verify.derive.asymptotics, e.g. K N (D - K)/(4 D "
                   "eta T) for L - L_opt); at D = " + f"{ranges['D'][1]} the limits of (eta T)^p q lie in "
                   + "; ".join(f"{q}: [{float(lo):.10g}, {float(hi):.10g}]" for q, (lo, hi) in at_max.items()),
                   all(lo <= 1 <= hi for lo, hi in table.values()), threshold={
                       "value": "each enclosure contains 1", "why": "the deepest shell of every cell bounds Lt/Q, "
                       "1/sqrt(Q) and W/sqrt(Q) uniformly over the cell; 1 outside would contradict the leading terms"},
                   use="limits", limits_at_largest_D={"D": ranges["D"][1], **{
                       q: [frac_str(lo), frac_str(hi)] for q, (lo, hi) in at_max.items()}}, **common)]


def _table_ends(table: dict, end: int) -> str:
    return ", ".join(f"1 + {float(v[end] - 1):.3g}" for v in table.values())


def uniform_lower_record(fc, at_max: dict, scope: Scope, replay: str) -> dict:
    """Context: a c_lo valid for every D satisfies c_lo f_q(T) <= q(T) for large T at the family's largest D, so
    c_lo <= lim (eta T)^p q / ((eta T)^p f_q) there (f_q: the claimed order, verify.model.paper; the T-dependence
    cancels). A certified bound on such a constant; finitely many sizes never refute the existence of one."""
    bounds = uniform_lower_bounds(fc, at_max)
    D = fc.spec.range_of["D"][1]
    return record(f"family certificate: any D-uniform lower constant c_lo at D = {D}", "arb", scope,
                  "any c_lo valid for every D is at most " + ", ".join(
                      f"{float(b):.4g} for {q}" for q, b in bounds.items())
                  + f" (the certified limits at D = {D} over the claimed orders f_q)", None, role="context",
                  replay=replay, use="uniform-lower-constant", D=D, bounds={q: _decimal_up(b) for q, b in bounds.items()})


def _decimal_up(x: Fraction, digits: int = 12) -> str:
    """``x > 0`` as a decimal of ``digits`` significant digits, rounded up (a stated upper bound stays one)."""
    k = digits - 1 - math.floor(math.log10(x))
    return f"{math.ceil(x * Fraction(10) ** k)}e{-k}"


def uniform_lower_bounds(fc, at_max: dict) -> dict:
    """{q: the largest c_lo the certified limits at the largest D allow}: hi / ((eta T)^p f_q) (exact, rounded up)."""
    rng = fc.spec.range_of
    s = fc.spec.setting({"D": rng["D"][1], "eta": rng["eta"][0]})
    out = {}
    for q, f in theorem_3_1_orders().items():
        p = -exponent_of(f, sy.T)
        norm = sp.nsimplify(sp.simplify((f * (sy.eta * sy.T) ** p).subs(sy.values_at(s))))
        val = at_max[q][1] / Fraction(str(sp.N(norm, 40)))
        out[q] = val * (1 + Fraction(1, 10**30))       # the 40-digit norm, rounded so the bound stays above
    return out


def limits_at_largest_D(fc, table: dict) -> dict:
    """[lo, hi] of lim (eta T)^p q(T) over the members with the largest D: the table times the derived leading
    constant (eta T)^p leading_q, taken at both ends of the eta range (it does not depend on eta when
    eta_KQ = eta, which the two ends confirm)."""
    lt = leading_terms_general()
    power = {q: -claimed_exponent(q, "T") for q in table}      # Theorem 3.1's T-exponents: 1, 1/2, 1/2
    rng = fc.spec.range_of
    out = {}
    for q in table:
        vals = []
        for eta in sorted(set(rng["eta"])):
            s = fc.spec.setting({"D": rng["D"][1], "eta": eta})
            c = sp.nsimplify(lt[q].subs(sy.values_at(s)) * sy.T ** power[q] * sp.Rational(s.eta_v) ** power[q])
            vals.append(Fraction(str(sp.N(c, 30))))
        out[q] = (table[q][0] * min(vals) * (1 - Fraction(1, 10**20)), table[q][1] * max(vals) * (1 + Fraction(1, 10**20)))
    return out
