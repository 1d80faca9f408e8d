"""The independent re-checker for atlas files: ``python -m recheck.atlas FILE``.

Like recheck.certificates (whose steps it reuses: it imports that module and recheck.positivity, nothing of ``verify``, only
python-flint and the standard library besides), it re-verifies a file written by ``verify atlas --save FILE``:

  format          kind "atlas", the box (rho, x, kappa), every cell's status one of certified / refuted / open
  digest          each cell's sha256 over its canonical JSON matches (a cell edited after writing is named)
  coordinates     the representative regimes' parameters (spec.parameters, formulas in rho, x, kappa) give, by the
                  file's own invariant formulas, exactly s = rho/(1 - rho), x = x, y = kappa x (an identity of
                  rational functions): so every point of a cell stands for the regimes with those invariants
  atlas-cover     the cells (whatever their status) cover the box
  cell checks     each certified cell's checks, by name (RECHECKS): "trajectory" is the family cell re-check of
                  recheck.certificates (invariants, region, entry through the tube, the Taylor prefix or the
                  split prefix, slab hulls, limits) on the cell's parameter box, which must hold the ties' image
                  of the cell; a check this checker does not know is refused (a cell is certified only by what
                  was re-checked)
  refutation      each refuted cell's replay (verify.certify.replay's record: statement, claim about alpha, member,
                  step): the statement is one of the file's checks, the member lies in the cell and inside the
                  hypotheses, and this checker iterates the member's map (its own Prefix on the file's formulas,
                  Arb balls) to the step, where the ball of alpha must contradict the claim: the stored result is
                  replayed, not trusted

  rho = 0 region  an open cell holding rho = 0 that states a trapping region for every member (its trajectory
                  check's "region_scaled", verify.certify.scaled) has it re-checked: the file's "scaled_coordinates"
                  formulas are the reduced map with the lag in units of s (exact identities, after the model's and
                  the coordinates' own), and every box of the stated cover, rebuilt here, is mapped into the region
                  for s in [rho_lo/(1 - rho_lo), rho_hi/(1 - rho_hi)] (the cell's own box: s = rho/(1 - rho) by the
                  coordinates step), x and y = kappa x, s = 0 included
  drift band      such a cell's drift band before R~ (verify.certify.drift), when it states one: the file's "drift"
                  formulas are the model's map in the chart (nu, t, h) (exact identities, recheck.drift) and every
                  box of the stated cover, rebuilt here, maps into the band or into the re-checked R~
  landing         such a cell's landing into its drift band (verify.certify.landing), when it states one: the file's
                  "landing" formulas are the band's chart in eta = s h (exact identities, recheck.landing), every
                  box of the stated cover, rebuilt here, contracts eta towards the band (hyper-dual mean-value
                  forms), and the count that bounds the steps into the band is recomputed; and the approach into the
                  landing likewise (eta rising every step, the growth of nu bounded)
  far             such a cell's far approach into its approach (verify.certify.far), when it states one: the file's
                  "far" formulas are the model's map in (beta, varpi, t) = (1/alpha, alpha/omega, s omega^4) (exact
                  identities, recheck.far), every box of both stated covers rebuilt here (progress in varpi, alpha
                  and omega monotone, the exit layer inside the approach's entry set), and the hand-over's nu
                  bound recomputed from the stated landing and approach
  passage         such a cell's passage into its far approach (verify.certify.passage), when it states one: the
                  file's "passage" formulas are the far ones at t = xi/(beta^2 varpi^3) (exact identities,
                  recheck.passage), every box of the stated cover rebuilt here (progress in varpi, alpha never
                  falling, xi never growing, k alpha^2 + log alpha^2 growing by at least psi_min and alpha^2 by
                  at most q_max per unit of log varpi)

Open cells decide nothing else and are only counted; a cell holding rho = 0 cannot be certified in this file format
(its representative D = 1/rho is infinite) and is refused if it claims so.
"""
from __future__ import annotations

import hashlib
import json
import sys

from recheck import certificates as R
from recheck import drift as D
from recheck import far as FA
from recheck import landing as L
from recheck import passage as PA
from recheck import positivity as P

STATUSES = ("certified", "refuted", "open")
COORDINATES = ("rho", "x", "kappa")


def check_digest(cell: dict) -> None:
    body = {k: v for k, v in cell.items() if k != "digest"}
    got = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    if got != cell.get("digest"):
        raise R.CheckFailed("digest", f"cell {cell.get('path')}: its content does not match its digest (changed "
                            "after it was written)")


def check_coordinates(F: R.Formulas, ties: dict) -> None:
    """s = rho/(1 - rho), x = x, y = kappa x from the ties, exactly, by the file's invariant formulas."""
    alg = R.RFAlg(list(COORDINATES))
    names = {k: alg.var(k) for k in COORDINATES}
    env = {k: R.evaluate(R.parse(str(v)), names, alg) for k, v in ties.items()}
    rho, x, kappa = names["rho"], names["x"], names["kappa"]
    want = {"s": rho / (alg.num(1) - rho), "x": x, "y": kappa * x}
    for n in R.PARAM_NAMES:
        if not F("invariants", n, env, alg).equals(want[n]):
            raise R.CheckFailed("coordinates", f"the representative regimes' {n} is not the atlas's "
                                f"{ {'s': 'rho/(1 - rho)', 'x': 'x', 'y': 'kappa x'}[n] }")


def check_ties_in_box(cell: dict, ties: dict) -> None:
    """The ties' image of the cell's (rho, x, kappa) box lies in its stated parameter box (each tie a monomial)."""
    alg = R.RFAlg(list(COORDINATES))
    names = {k: alg.var(k) for k in COORDINATES}
    box = {k: (R.frac(lo), R.frac(hi)) for k, (lo, hi) in cell["box"].items()}
    if box["rho"][0] <= 0:
        raise R.CheckFailed("coordinates", f"cell {cell['path']}: a certified cell must have rho > 0 (this format "
                            "states a cell through regimes with D = 1/rho)")
    for k, v in ties.items():
        got = R.corner_range(R.evaluate(R.parse(str(v)), names, alg), box)
        lo, hi = (R.frac(t) for t in cell["parameters"][k])
        if got is None or not (lo <= got[0] and got[1] <= hi):
            raise R.CheckFailed("parameters", f"cell {cell['path']}: {k} = {v} does not range inside the stated "
                                f"[{lo}, {hi}]")


def recheck_trajectory(F: R.Formulas, cell: dict, result: dict, ties: dict, log) -> None:
    view = dict(result["evidence"]) | {"path": cell["path"], "box": cell["box"], "parameters": cell["parameters"]}
    R.check_cell(F, view, log, ties)


def recheck_positivity(F: R.Formulas, cell: dict, result: dict, ties: dict, log) -> None:
    """Lemma C.2's alpha > 0 over the cell: the stored band re-checked by recheck.positivity (which
    states the map itself), and the band's cell holds the atlas cell."""
    ev = result["evidence"]
    if not all(R.frac(ev["cell"][n][0]) <= R.frac(cell["box"][n][0]) and R.frac(cell["box"][n][1])
               <= R.frac(ev["cell"][n][1]) for n in cell["box"]):
        raise R.CheckFailed("positivity", f"cell {cell['path']}: the band's cell {ev['cell']} does not hold the cell")
    try:
        P.recheck(ev)
    except P.CheckFailed as exc:
        raise R.CheckFailed("positivity", f"cell {cell['path']}: step {exc.step}: {exc.detail}") from None
    log("positivity", f"cell {cell['path']}: {P.describe(ev)} for every t >= 1 ({ev.get('set', 'band')} re-checked)")


def recheck_rho_zero_region(F: R.Formulas, cell: dict, region: dict, log) -> None:
    """The trapping region an open cell states for every member, in the chart e = eps/s, re-checked on the cell's
    own invariant box (computed here from its (rho, x, kappa) box: each invariant is monotone in each coordinate)."""
    box = {n: (R.frac(lo), R.frac(hi)) for n, (lo, hi) in cell["box"].items()}
    (r_lo, r_hi), (x_lo, x_hi), (k_lo, k_hi) = (box[n] for n in COORDINATES)
    P = [(r_lo / (1 - r_lo), r_hi / (1 - r_hi)), (x_lo, x_hi), (k_lo * x_lo, k_hi * x_hi)]
    try:
        results = R.check_region(F, region, P, group="scaled_coordinates")
    except R.CheckFailed as exc:
        raise R.CheckFailed(exc.step, f"cell {cell['path']} (its region for every D): {exc.detail}") from None
    log("rho-zero-region", f"cell {cell['path']}: R~(u0 = {region['u0']}) mapped into itself for every rho in "
        f"[{r_lo}, {r_hi}], on {len(results)} boxes (s = 0 included)")


RECHECKS = {"trajectory": recheck_trajectory, "positivity": recheck_positivity}
RELATIONS = {">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}
REPLAY_BITS = 256


def recheck_refutation(F: R.Formulas, cell: dict, statements: dict, log) -> None:
    """A refuted cell: some check's replay names a statement of the file, a member of the cell inside the
    hypotheses (0 < rho < 1, 0 < x < 2, kappa > 0) and a step where its claim about alpha fails; the member's map
    is iterated here (this checker's Prefix on the file's formulas, Arb balls) and the ball of alpha at the step
    must lie wholly on the failing side. The stored result is not trusted."""
    reps = [(n, r["evidence"]["replay"]) for n, r in cell.get("checks", {}).items()
            if r.get("status") == "refuted" and isinstance(r.get("evidence", {}).get("replay"), dict)]
    if not reps:
        raise R.CheckFailed("refutation", f"cell {cell['path']}: refuted, but no check carries a replay")
    name, rep = reps[0]
    if name not in statements or rep.get("statement") != name:
        raise R.CheckFailed("refutation", f"cell {cell['path']}: the replay's statement {rep.get('statement')!r} is "
                            f"not the file's check {name!r}")
    m = {n: R.frac(rep["member"][n]) for n in ("rho", "x", "kappa")}
    if not (0 < m["rho"] < 1 and 0 < m["x"] < 2 and m["kappa"] > 0):
        raise R.CheckFailed("refutation", f"cell {cell['path']}: the member {rep['member']} is outside the "
                            "hypotheses, so it refutes nothing")
    if not all(R.frac(cell["box"][n][0]) <= m[n] <= R.frac(cell["box"][n][1]) for n in m):
        raise R.CheckFailed("refutation", f"cell {cell['path']}: the member {rep['member']} is not in the cell")
    claim, step = rep["claim"], int(rep["step"])
    if claim.get("quantity") != "alpha" or claim.get("relation") not in RELATIONS or step < 1:
        raise R.CheckFailed("refutation", f"cell {cell['path']}: this checker replays claims alpha REL bound at a "
                            f"step >= 1, not {claim} at {step}")
    old = R.ctx.prec
    R.ctx.prec = REPLAY_BITS
    try:
        s = m["rho"] / (1 - m["rho"])
        pre = R.Prefix(F, [(s, s), (m["x"], m["x"]), (m["kappa"] * m["x"], m["kappa"] * m["x"])])
        pc, pb, dp = pre.balls()
        while pre.t < step:
            pre.step(pc, pb, dp)
        a = pre.centre_box()[0]
        lo, hi = R.lower(a), R.upper(a)
    finally:
        R.ctx.prec = old
    holds, bound = RELATIONS[claim["relation"]], R.frac(claim["bound"])
    if holds(lo, bound) or holds(hi, bound):
        raise R.CheckFailed("refutation", f"cell {cell['path']}: the replay does not reproduce: alpha({step}) in "
                            f"[{float(lo):.6g}, {float(hi):.6g}] does not contradict alpha {claim['relation']} "
                            f"{claim['bound']}")
    log("refutation", f"cell {cell['path']}: {name} fails at {rep['member']}, step {step}: alpha in "
        f"[{float(lo):.6g}, {float(hi):.6g}] (replayed here)")


def check_atlas(cert: dict, log) -> dict:
    """Every step of the module docstring; raises CheckFailed naming the first that fails."""
    if cert.get("kind") != "atlas":
        raise R.CheckFailed("format", "not an atlas file (kind must be 'atlas')")
    R.ctx.prec = int(cert["bits"])
    F = R.Formulas(cert["map"])
    R.check_map_identities(F)
    R.check_derivatives(F)
    log("map-identities", "the coordinates are the reduced map, and the derivatives are derivatives (exact)")
    spec, cells = cert["spec"], cert["cells"]
    ties = spec["parameters"]
    check_coordinates(F, ties)
    log("coordinates", "the representative regimes D = 1/rho, eta_V = x, eta_KQ = kappa x, the rest 1, have "
        "s = rho/(1 - rho), x, y = kappa x (exact)")
    for c in cells:
        if c.get("status") not in STATUSES:
            raise R.CheckFailed("format", f"cell {c.get('path')}: status {c.get('status')!r} is not one of "
                                f"{', '.join(STATUSES)}")
        check_digest(c)
    log("digest", f"{len(cells)} cells match their digests")
    target = {n: (R.frac(lo), R.frac(hi)) for n, (lo, hi) in spec["ranges"].items()}
    gap = R.cover_gap([{n: (R.frac(lo), R.frac(hi)) for n, (lo, hi) in c["box"].items()} for c in cells], target)
    if gap is not None:
        raise R.CheckFailed("atlas-cover", f"no cell covers {gap}")
    log("atlas-cover", f"{len(cells)} cells cover {spec['ranges']}")
    counts = {s: 0 for s in STATUSES}
    linear = scaled = False
    done = set()
    for c in cells:
        counts[c["status"]] += 1
        if c["status"] == "open":
            region = c.get("checks", {}).get("trajectory", {}).get("evidence", {}).get("region_scaled")
            if isinstance(region, dict) and region.get("ok"):
                if not scaled:
                    R.check_model(F)
                    R.check_scaled_identities(F)
                    log("scaled-identities", "the scaled chart's formulas are the model's map with eps = s e (exact)")
                    scaled = True
                recheck_rho_zero_region(F, c, region, log)
            # the pieces before R~, each handing over to the one before it (CHAINED)
            before = region
            for key, step, ident, identities, proved, check, says in CHAINED:
                ev = c.get("checks", {}).get("trajectory", {}).get("evidence", {}).get(key)
                if isinstance(ev, dict) and ev.get("ok"):
                    if not (isinstance(before, dict) and before.get("ok")):
                        raise R.CheckFailed(step, f"cell {c['path']}: a {key} with nothing to hand over to")
                    if ident not in done:
                        identities(F)
                        log(ident, proved)
                        done.add(ident)
                    n = check(F, c, ev, before)
                    log(step, f"cell {c['path']}: {says(ev, n)}, for every rho in {c['box']['rho']}")
                before = ev
            continue
        if c["status"] == "refuted":
            recheck_refutation(F, c, cert.get("checks", {}), log)
            continue
        if not c.get("checks"):
            raise R.CheckFailed("cell-checks", f"cell {c['path']}: certified by no check")
        check_ties_in_box(c, ties)
        for name, res in c["checks"].items():
            if name not in RECHECKS:
                raise R.CheckFailed("cell-checks", f"cell {c['path']}: certified by the check {name!r}, which this "
                                    f"checker does not re-check (it knows {', '.join(RECHECKS)})")
            if res.get("status") != "certified":
                raise R.CheckFailed("cell-checks", f"cell {c['path']}: certified, but its check {name} says "
                                    f"{res.get('status')}")
            if name == "trajectory" and R.entry_kind(res["evidence"]) == "tube" and not linear:
                R.check_linearity(F)
                linear = True
            RECHECKS[name](F, c, res, ties, log)
    if counts != cert.get("counts", counts):
        raise R.CheckFailed("format", f"the stated counts {cert.get('counts')} are not the cells' {counts}")
    log("cell-checks", f"{counts['certified']} certified cells re-checked; {counts['refuted']} refuted cells replayed; "
        f"{counts['open']} open")
    return counts


# The pieces of an open cell holding rho = 0 before its trapping region R~, in the order they hand over (each to the
# one before it): (evidence key, step, identities' step, the identities, what they prove, the piece's replay
# check(F, cell, stated, stated before it) -> boxes, what its log line says)
CHAINED = (
    ("drift_band", "drift-band", "drift-identities", D.check_drift_identities,
     "the drift band's chart is the model's map (exact)", D.check_band,
     lambda ev, n: f"the band (tau = {ev['tau']}, W = {ev['W']}) mapped into itself or into R~ on {n} boxes"),
    ("landing", "landing", "landing-identities", L.check_landing_identities,
     "the landing's chart is the drift band's in eta = s h (exact)", L.check_landing,
     lambda ev, n: f"the landing (eps = {ev['eps']}) reaches the band within {ev['j_f']} + j_n(s) steps on {n} boxes"),
    ("approach", "approach", "landing-identities", L.check_landing_identities,
     "the landing's chart is the drift band's in eta = s h (exact)", L.check_approach,
     lambda ev, n: f"the approach (eps_a = {ev['eps_a']}) reaches the landing within {ev['N_a']} steps on {n} boxes"),
    ("far", "far", "far-identities", FA.check_far_identities,
     "the far approach's chart is the model's map in (1/alpha, alpha/omega, s omega^4) (exact)", FA.check_far,
     lambda ev, n: f"the far approach (beta_max = {ev['beta_max']}, s <= {ev['s_hi']}) reaches the approach on {n} "
     "boxes"),
    ("passage", "passage", "passage-identities", PA.check_passage_identities,
     "the passage's chart is the far approach's in xi = s alpha omega (exact)", PA.check_passage,
     lambda ev, n: f"the passage (beta_a = {ev['beta_a']}, psi_min = {float(R.frac(ev['psi_min'])):.4g}) reaches the far "
     f"approach on {n} boxes"),
)


def check_file(path: str, log=lambda step, detail: None) -> dict:
    try:
        with open(path) as fh:
            cert = json.load(fh)
    except (OSError, ValueError) as exc:
        raise R.CheckFailed("format", f"cannot read {path}: {exc}") from None
    if not isinstance(cert, dict) or cert.get("format") != "verify-certificate" or cert.get("version") != R.VERSION:
        raise R.CheckFailed("format", f"{path} is not a verify-certificate file of version {R.VERSION}")
    check_atlas(cert, log)
    return cert


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m recheck.atlas FILE", file=sys.stderr)
        return 2
    return R.report_check(check_file, argv[0], "atlas")


if __name__ == "__main__":
    sys.exit(main())
