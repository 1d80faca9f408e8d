"""The README's findings and speed blocks, written from a report's results.json and a bench.json.

Every number the README quotes comes from here, so the README says what the report says: the blocks
between ``<!-- findings:begin -->`` / ``<!-- findings:end -->`` and ``<!-- speed:begin -->`` /
``<!-- speed:end -->`` are generated (``python -m verify.report.readme`` rewrites them from the committed
example report, reports/example, and bench, reports/example-bench), and a test fails when the README
and the regenerated blocks differ. Numbers and verdicts are read by key (verify.report.numbers): a check's
``numbers[key]``, a statement by its id, a built-in part's saved field; the findings open with the paper's
claims part by part, as the report does.
"""
from __future__ import annotations

import json
import re
import sys
from fractions import Fraction
from pathlib import Path

from ..model.paper import claimed_exponent
from ..model.quantities import KEYS, QUANTITIES
from ..model.sigmas import parse_sigma
from ..run.atomic import write_bytes_atomic
from .numbers import MissingNumber, check, field, number, statement, statements
from .render import count_text, extent_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "reports" / "example"
EXAMPLE_BENCH = ROOT / "reports" / "example-bench"
BLOCKS = ("findings", "speed")


def g(x, digits: int = 3) -> str:
    """A number as the README writes it: ``digits`` significant digits, exact rationals as decimals."""
    if isinstance(x, str):
        x = float(Fraction(x))
    return f"{x:.{digits}g}"


def pm(v, e, digits: int = 3) -> str:
    return f"{v:.{digits}f} ± {e:.{digits}f}"


def sci(x: float, digits: int = 2) -> str:
    """``3.5·10⁻⁷¹``: a float in the README's scientific notation."""
    m, e = f"{x:.{digits - 1}e}".split("e")
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return f"{m}·10{str(int(e)).translate(sup)}"


def dpow(e) -> str:
    """``D^4``, ``D^(1/2)``: a power of D with an exact exponent string."""
    e = str(e)
    return f"D^{e}" if re.fullmatch(r"-?\d+", e) else f"D^({e})"


def label(q: str) -> str:
    """How the README names a quantity (verify.model.quantities), or its key when it is not one of them."""
    return QUANTITIES[q].label if q in QUANTITIES else q


# A report of another shape (an older schema) can lack a field a bullet reads: named like a missing number.
UNREADABLE = (MissingNumber, KeyError, IndexError, TypeError)


def gap(exc: Exception) -> str:
    return str(exc) if isinstance(exc, MissingNumber) else f"{type(exc).__name__}: {exc} (a report of another shape?)"


def _fits_text(entry: dict) -> str:
    """"4.00 ± 0.01, ... after dividing out the finite-D factors (raw fits 4.18, ...; derived 4, ...)"."""
    fits = ((entry.get("numerics") or {}).get("fits")) or {}
    qs = [q for q in ("excess_loss", "s_err", "w_err") if fits.get(q)]
    if not qs:
        raise MissingNumber("reconcile: GD fits of the representative")
    return (", ".join(pm(fits[q]["exponent"], fits[q]["error"]) for q in qs)
            + " after dividing out the finite-D factors (raw fits " + ", ".join(g(fits[q]["raw_exponent"]) for q in qs)
            + "; derived " + ", ".join(entry["d_exponents"][q] for q in qs) + ")")


# The reconciliation decides statements about the leading terms of the slow-manifold expansion, a formal (not
# proved) expansion checked against GD: its verdicts hold for those terms, and the README says so.
ON_EXPANSION = ", for the leading terms of the formal slow-manifold expansion, which it assumes"


def reconcile_line(rec: dict) -> str:
    """The "Which convention?" bullet: what the solver found over the whole family, and GD at its representative."""
    main = rec["readings"][0]["systems"]
    by = {s["id"]: s for s in main}
    rates, joint = by["rates"], main[-1]
    head = rec["verdict"]
    ref = rec["reference"]
    out = (f"- **Which convention?** (`verify reconcile`): {rec['family']['label']}, the claimed rates hold on a "
           f"{rates.get('dimension', 0)}-dimensional family of conventions, where T* grows like "
           f"{dpow(rates['general']['tstar_exponent'])}; ")
    if joint["feasible"]:
        rep = rec["representative"]
        out += (f"{joint['text']} hold together (*{head}*{ON_EXPANSION}) at, for example, {rep['text']} "
                f"({rep['combinations_text']}). "
                f"GD there shows D-exponents {_fits_text(rep)}.")
    else:
        out += f"{joint['text']} cannot hold together (*{head}*{ON_EXPANSION}, certificate: {joint['certificate']['sum']})."
    for rd in rec["readings"][1:]:
        s = rd["systems"][-1]
        st = rec["verdicts"][f"{rd['id']}:{s['id'].replace('+', '_')}"]
        out += (f" Read as {rd['text']}, " + ("they can hold together" if s["feasible"] else
                f"they cannot (certificate: {s['certificate']['sum']})" if s["feasible"] is False else "undecided")
                + f" (*{st['verdict']}*).")
    return out + (" Under the reference convention the leading terms grow like "
                  + ", ".join(dpow(ref["d_exponents"][q]) for q in ("excess_loss", "s_err", "w_err"))
                  + f" and T* like {dpow(ref['d_exponents']['tstar'])}.")


def family_text(cert: dict) -> str:
    """The family certificate beside the single regime (verify.certify.certify_part), when the result has one."""
    fam = cert.get("family") or {}
    if not fam.get("normalised_limits"):
        return ""
    dev = max(max(abs(float(Fraction(lo)) - 1), abs(float(Fraction(hi)) - 1))
              for lo, hi in fam["normalised_limits"].values())
    return (f" A whole family, {fam['label']} (every integer D, every η in the range), is certified at once "
            f"({fam['cells']} cells): for every member, lim q(T)/leading_q(T) lies within {sci(dev)} of 1 for all three "
            "quantities.")


class Writer:
    """Writes the findings bullets from one results.json. Each clause that quotes a number is written by
    :meth:`clause`: a number missing from the report is marked in the text ("[not in this report: ...]") and
    listed in :attr:`missing`, never written as 0 and never dropped silently."""

    def __init__(self, results: dict):
        self.r = results
        self.missing: list[str] = []

    def clause(self, make) -> str:
        try:
            return make()
        except UNREADABLE as exc:
            self.missing.append(gap(exc))
            return f"[not in this report: {gap(exc)}]"

    def verdict(self, sid: str) -> str:
        return f"*{statement(self.r, sid)['verdict']}*"

    def part_verdict(self, kind: str, cid: str) -> str:
        return f"*{check(self.r, kind, cid)['verdict']}*"

    def parts_of(self, cid: str, names: dict) -> str:
        """"upper bound: *certified*; ...": every claim statement of check ``cid``, named by ``names`` (statement
        id -> how the README says it; an unnamed statement is named by its id)."""
        sts = statements(self.r, check_id=cid, role="claim")
        if not sts:
            raise MissingNumber(f"claim {cid} (no statement of the paper's claim)")
        return "; ".join(f"{names.get(s['id'], s['id'])}: *{s['verdict']}*" for s in sts)

    # ---- the bullets -----------------------------------------------------------------------------------------
    def rule(self) -> str:
        s = field(self.r, "summary")
        roles = {k: field(self.r, "summary", "roles", k) or {} for k in ("claim", "control", "finding")}
        ext = extent_text(s, "claim")
        return ("- **Every verdict is derived from evidence records by one rule** (`verify/evidence/`, "
                "[docs/verdicts.md](docs/verdicts.md)) and printed with its scope: *proved* and *certified* mean that "
                "proofs or rigorous enclosures cover everything the statement quantifies over (every D, every t, "
                "every regime); a statement established on a finite part only (\"checked at dimensions {…}\", "
                "\"t <= 150\") reads *supported*, and its why names that part. This report: "
                f"{s['parts']} parts ({s['ok']} finished). **The paper's claims**, part by part: "
                f"{sum(roles['claim'].values())} statements, {count_text(roles['claim'])}"
                + (f" ({ext})" if ext else "") + "; negative controls: "
                f"{sum(roles['control'].values())}, {count_text(roles['control'])}; the toolkit's own findings: "
                f"{sum(roles['finding'].values())}, {count_text(roles['finding'])}. A finding (an edge regime outside a "
                "claim's hypotheses, a sharper statement) is never counted as a verdict on the paper.")

    def reduction(self) -> str:
        sig = field(self.r, "derivation", "sigmas")
        groups: dict = {}
        for spec, verdict in sig.items():           # the derive part's sigmas: every registered family's examples
            groups.setdefault(verdict, []).append(parse_sigma(spec).readable())
        named = lambda v: "σ ∈ {" + ", ".join(groups[v]) + "}"  # noqa: E731
        proved = f"*proved* for {named('proved')} in every dimension" if "proved" in groups else ""
        others = " ".join(f"For {named(v)} it is *{v}*" + (": W_P leaves 0 unless frozen (σ not odd)." if v == "refuted"
                                                             else ".") for v in groups if v != "proved")
        return (f"- **The symmetry reduction is exact** ({proved}: SymPy proves it for any per-entry kernel in symbolic "
                "M, d, D, N, K, including the D/(NK(D−K)) factor of the δ recursion, with each σ's parity lemma; "
                f"explicit sizes are a second route). {others + ' ' if others else ''}W_P = 0 "
                f"and two-valued attention columns: {self.verdict('wp-zero')}, {self.verdict('two-level-attention')}.")

    def lemma_c2(self) -> str:
        n = lambda *k: number(self.r, "claim", "lemma-C.2", *k)  # noqa: E731
        env = self.clause(lambda: "with 0 < K < D, α rises to {}–{} and returns to 1 from above".format(*map(g, n("alpha_overshoot"))))
        out = self.clause(lambda: f"{n('outside_step_size', 'regime')}: α({n('outside_step_size', 't')}) = "
                                  f"{g(n('outside_step_size', 'alpha'))}")
        return (f"- **Lemma C.2**: {self.clause(lambda: self.parts_of('lemma-C.2', LEMMA_C2))}. The multiples are not "
                f"bounded by 1: {env}. Outside the step-size hypothesis it fails ({out}), and with a non-orthogonal P; "
                "a random start is outside its hypotheses (the nonzero-init probe reports it as such).")

    def theorem_3_1(self) -> str:
        n = lambda *k: number(self.r, "claim", "theorem-3.1", *k)  # noqa: E731
        qs = KEYS

        def lower():
            bounds = n("lower_constant_bounds")
            lead, claimed = n("d_exponents"), n("claimed_d_exponents")
            paths = list(lead[qs[0]])
            drops = "; ".join(", ".join(dpow(-(Fraction(claimed[q]) - Fraction(lead[q][p]))) for q in qs)
                              + f" with {p[3:-1]}" for p in paths)
            uni = n("uniform_constant")
            ray = (f"; over every D of the atlas's certified ray K = {uni['ray']['rho']} D, lim sup of q/f_q is certified "
                   "below a bound that tends to 0 as D grows, so no D-uniform constant exists (one member replayed, D = "
                   f"{uni['member']['D']}: certified q/f_q at T = 10¹² of " + ", ".join(
                       g(uni['replay_ratios'][q]) for q in qs) + ")" if uni.get("holds") is False else "")
            return ("any such constant is at most " + ", ".join(f"{g(bounds[q]['bound'])} for {label(q)}" for q in qs)
                    + f" at D = {bounds[qs[0]]['D']}, K = {bounds[qs[0]]['K']}; the derived leading terms fall below the "
                    f"claimed orders by {drops}{ray}")

        def tstar():
            over = n("tstar", "over_D2")
            return f"T*/D² = {g(min(over.values()))}…{g(max(over.values()))} over D = {min(over, key=int)}…{max(over, key=int)}"

        def onset():
            t = n("tstar")
            st = statement(self.r, "theorem-3.1.onset-linear")
            return (f"{st['text'].removeprefix('Sharper: ').rstrip('.')} (*{st['verdict']}*; onset exponent "
                    f"{pm(t['exponent'], t['uncertainty'], 2)})")
        return ("- **Theorem 3.1**, part by part: " + self.clause(lambda: self.parts_of("theorem-3.1", THEOREM_3_1))
                + f". The lower bound as quantified: {self.clause(lower)}. The sufficient time: {self.clause(tstar)}. "
                f"Sharper, the toolkit's finding: {self.clause(onset)}.")

    def t_rates(self) -> str:
        n = lambda *k: number(self.r, "claim", "theorem-3.1", *k)  # noqa: E731

        def fits():
            tf = n("t_exponents")
            return ", ".join(f"{pm(tf[q][0], tf[q][1])} for {label(q)} (claimed {claimed_exponent(q, 'T')})" for q in KEYS)

        def ratios():
            rat = n("leading_ratio")
            return ", ".join(f"{rat[q]:.3f}" for q in KEYS) + f" at T = {rat['horizon']}"

        def terms():
            lt = n("leading_terms")
            return ", ".join(f"{label(q)} ~ {lt[q]}" for q in KEYS)

        def sweeps():
            sw = n("sweep_d_exponents")
            return "; ".join(f"{', '.join(g(sw[k][q], 2) for q in KEYS)} ({k})" for k in sw)
        return (f"- **Theorem 3.1's T-rates**: fitted T-exponents {self.clause(fits)}; four teachers' tails within "
                f"{self.clause(self.teachers)} of the claimed exponents; GD / derived leading term = "
                f"{self.clause(ratios)}. The exact leading terms: {self.clause(terms)}; the D-exponents of their "
                f"constants fitted along local sweeps in D: {self.clause(sweeps)}.")

    def teachers(self) -> str:
        """The largest |fitted - claimed| tail exponent over the rates probe's teachers (the probe's own number)."""
        return g(number(self.r, "probe", "rates", "worst_tail_deviation"), 2)

    def certificate(self) -> str:
        c = lambda *k: field(self.r, "certify", *k)  # noqa: E731
        qs = ("excess_loss", "s_err", "w_err")
        return (f"- **The T-rate is certified for every T** (*{c('verdict')}*, `verify certify`): in gcn D = N = 64, "
                f"K = 4, η = 1/32, an Arb prefix to T0 = {c('T0')}, a trapping region around the slow manifold and a "
                f"discrete comparison lemma give {g(c('constants', 'excess_loss', 'c_lo'), 4)} ≤ ηT·(L − L_opt) ≤ "
                f"{g(c('constants', 'excess_loss', 'c_hi'), 4)} for all T ≥ T0, with the limit in "
                f"[{g(c('asymptotic', 'excess_loss', 'liminf_ge'), 13)}, {g(c('asymptotic', 'excess_loss', 'limsup_le'), 13)}];"
                " relative width at T = 10¹²: " + ", ".join(sci(c("relative_width_at_1e12", q)) for q in qs) + "."
                + family_text(self.r.get("certify") or {}))

    def reconcile(self) -> str:
        rec = self.r.get("reconcile")
        if not rec:
            raise MissingNumber("reconcile: the part did not run")
        return reconcile_line(rec)

    def why_rate(self) -> str:
        return ("- **Why Θ(1/T) without PL** (Q1): on the slow manifold the off-support attention mass u obeys "
                f"Δu = −c u³ with c = {field(self.r, 'derivation', 'asymptotics', 'cubic_coefficient_c')} (derived), so "
                "u ~ T^(−1/2) and L ~ u² ~ 1/T.")

    def tstar_probe(self) -> str:
        t = lambda *k: number(self.r, "probe", "tstar", *k)  # noqa: E731
        return (f"- **T\\*** (Q9): the crossing time T*_cross grows like D^{g(t('A: K = 2', 'fit', 'exponent_t_cross'))} "
                f"at fixed K and like D^{g(t('B: K = D/2', 'fit', 'local_exponent_t_cross_last_pair'))} (last pair) when "
                f"K ∝ D (probe tstar, {self.part_verdict('probe', 'tstar')}).")

    def edges(self) -> str:
        return (f"- **Outside the hypotheses** (the toolkit's findings, never counted against the paper): **D = K** (Q3, "
                f"{self.clause(lambda: self.part_verdict('probe', 'd-eq-k'))}): S = S* from step 0 and the errors decay "
                "geometrically, so the Θ(1/T) lower bounds fail there. **K = 0** (Q4, "
                f"{self.clause(lambda: self.part_verdict('probe', 'k-zero'))}; S* = 0 is not a member of the teacher "
                "class): the loss is optimal from step 0, but W_X never moves and S stays uniform.")

    def beyond(self) -> str:
        def eta():
            n = lambda *k: number(self.r, "probe", "large-eta", *k)  # noqa: E731
            top = max(float(x[1]) for x in n("boundaries", "convergence").values())
            return (f"GD converges for η < 2K/N = {g(n('boundaries', 'derived_near_optimum_2K_over_N'))} (bisected "
                    f"boundary ≤ {g(top, 4)})")
        v = lambda p: self.clause(lambda: self.part_verdict("probe", p))  # noqa: E731
        return (f"- **OOD** (Q5, {self.clause(lambda: self.verdict('theorem-3.2-ood'))}): the ‖V*‖² of the OOD loss "
                "multiplies ‖S − S*‖² ∝ 1/‖V*‖², so the excess does not grow with ‖V*‖. **Non-Gaussian data** (Q7, "
                f"{v('non-gaussian')}): for σ = identity the trajectory depends on the first two moments only. "
                f"**Non-uniform S\\*** (Q8, {v('nonuniform-s')}): the same power-law tails. **Step size**: "
                f"{self.clause(eta)}. **P** (Q12, {v('p-scale')}): PᵀP = λI is η_KQ → λ²η_KQ.")

    def attention(self) -> str:
        def x_block():
            n = lambda *k: number(self.r, "probe", "full-attention", *k)  # noqa: E731
            peak, end = n("x_block_peak"), n("x_block")
            seeds = {v["n"] for v in peak.values()}
            return ("the X part of W_KQ peaks at " + ", ".join(g(v["mean"], 2) for v in peak.values())
                    + " and ends at " + ", ".join(g(end[k]["mean"], 2) for k in peak)
                    + f" of the positional block (means over {', '.join(map(str, sorted(seeds)))} seeds)")
        v = lambda p: self.clause(lambda: self.part_verdict("probe", p))  # noqa: E731
        return (f"- **Input-dependent attention** (Q11, {v('full-attention')}, exploratory): online SGD reaches the "
                f"teacher at the same 1/T rate; {self.clause(x_block)}. **Finite samples** (Q10, {v('finite-sample')}): "
                "online SGD without label noise keeps 1/T.")

    def controls(self) -> str:
        ctrl = statements(self.r, role="control")
        fuzz = statements(self.r, part="fuzz:")
        odd = [f"{f['about']} {f['verdict']}" for f in fuzz if f["verdict"] != "supported"]
        named = ", ".join(f"{s['id']} *{s['verdict']}*" for s in ctrl)
        return (f"- **Negative controls** ({named}) run through the "
                f"same machinery, and fuzzing ({len(fuzz)} searches inside the claims' hypotheses"
                + (f": {', '.join(odd)}; the rest supported" if odd else ", all supported")
                + ") finds the controls' counterexamples, each replayed at a 10× longer horizon.")

    def run_time(self) -> str:
        secs = field(self.r, "summary", "computed_wall_seconds")
        return f"- The {self.r['profile']} profile ran in {round(secs)} s (Dask LocalCluster)."

    def bullets(self) -> list[str]:
        """Every bullet; one that cannot be written keeps its title and names what is missing."""
        parts = [("Verdicts", self.rule), ("The symmetry reduction", self.reduction), ("Lemma C.2", self.lemma_c2),
                 ("Theorem 3.1", self.theorem_3_1), ("Theorem 3.1's T-rates", self.t_rates),
                 ("The all-time certificate", self.certificate), ("Which convention?", self.reconcile),
                 ("Why Θ(1/T) without PL", self.why_rate), ("T\\*", self.tstar_probe),
                 ("Outside the hypotheses", self.edges), ("OOD, data, S\\*, step size, P", self.beyond),
                 ("Input-dependent attention, finite samples", self.attention), ("Negative controls", self.controls),
                 ("Run time", self.run_time)]
        out = []
        for title, make in parts:
            try:
                out.append(make())
            except UNREADABLE as exc:
                self.missing.append(gap(exc))
                out.append(f"- **{title}**: [not in this report: {gap(exc)}]")
        return out


# How the README names the parts of the paper's claims, by statement id (a statement it does not name reads
# by its id).
LEMMA_C2 = {"lemma-C.2": "as stated", "lemma-C.2-small-step": "small steps", "lemma-C.2-large-step": "the rest of the "
            "step-size range, 0 < K < D", "lemma-C.2-k-equals-d": "the large step at K = D",
            "lemma-C.2-other-sigma": "σ ≠ identity"}
THEOREM_3_1 = {"theorem-3.1-upper": "upper bound", "theorem-3.1-lower": "lower bound with D-uniform constants",
               "theorem-3.1-lower-T": "T-rate of the lower bound", "theorem-3.1-tstar": "sufficient time T* = O(D²)"}


def findings(results: dict) -> str:
    """The "What it finds" bullets, every number and verdict read from ``results`` by key (:class:`Writer`)."""
    return "\n".join(Writer(results).bullets())


def missing(results: dict) -> list[str]:
    """The numbers the findings quote that ``results`` does not hold."""
    w = Writer(results)
    w.bullets()
    return w.missing


def speed(bench: dict) -> str:
    """The "Speed" paragraph from a ``verify bench --json`` result."""
    e, r = bench["engines"], bench["ratios"]
    out = [f"Speed (`verify bench`, D = N = 64, K = 4, η = 1/32, medians): reduced float64 (numba) "
           f"{sci(e['reduced-float64-numba']['steps_per_s'])} steps/s; certified Arb 256-bit "
           f"{sci(e['certified-arb256']['steps_per_s'])} steps/s with radius "
           f"{sci(bench['certified_radius']['max_state_radius'])} after {bench['certified_radius']['steps']:,} steps; "
           f"full-matrix float64 {sci(e['full-float64-D64']['steps_per_s'])} steps/s (reduced/full: "
           f"{sci(r['reduced numba/full float64 (D=N=64)'])}× compiled, {g(r['reduced/full float64 (D=N=64)'])}× plain "
           f"Python)."]
    cert = bench.get("certificate")
    if cert:
        w = cert["relative_width"]
        out.append(f"All-time certificate of that regime: {g(cert['seconds'])} s; relative width at T = 10¹² "
                   + ", ".join(sci(w["1e+12"][q]) for q in ("excess_loss", "s_err", "w_err")) + ".")
    out += target_sentences(bench)
    dk = bench.get("dask")
    if dk:
        sc, ov = dk["sweep_scaling"], dk["overhead"]
        out.append(f"Dask: a certified sweep runs {g(sc['ratio'])}× faster on 2 workers than on 1; per-task overhead "
                   f"{g(100 * ov['overhead_fraction'], 2)}% of the mean task time of the default sweep.")
    return " ".join(out)


def met_word(met) -> str:
    return {True: "target met", False: "target not met", None: "not measured"}[met]


def target_sentences(bench: dict) -> list[str]:
    """The bench's targets, each as a ratio to the baseline measured in the same run, and whether it is met."""
    out = []
    fm = bench.get("full_matrix")
    if fm:
        parts = [f"{k}: {v if isinstance(v, str) else g(v)}× ({met_word(fm['met'][k])})"
                 for k, v in bench["ratios"].items() if k in fm["met"]]
        out.append("Full-matrix engines against the baselines a user would write (same run): " + "; ".join(parts) + ".")
    cfr = bench.get("certified_full_radius")
    if cfr:
        out.append(f"Certified full-matrix balls after {cfr['steps']:,} steps at D = N = {cfr['D']}: relative radius "
                   f"{sci(cfr['max_relative_radius'])} ({met_word(cfr['met'])}).")
    cr = bench.get("certificate_ratios")
    if cr:
        out.append("All-time certificates against a plain 10⁵-step Arb iteration of the same map: " + "; ".join(
            f"{k}: {g(v['ratio'])}× (target ≤ {g(v['target_ratio'])}×, {met_word(v['met'])})" for k, v in cr.items()) + ".")
    fam = bench.get("family")
    if fam:
        tf = fam["target_family"]
        done = (f"certified in {g(tf['seconds'])} s on 2 workers ({tf['cells']} cells, "
                f"{tf.get('entries', {}).get('tube', 0)} entered through the tube; relative width at T = 10¹² at "
                f"most {sci(tf['relative_width_at_1e12'])} over nine members)" if tf.get("completed") else
                "not run (quick bench)" if not tf.get("run") else
                f"not finished within {g(fam['targets']['seconds_max'])} s ({tf.get('cells_done')} cells done"
                + (f", every length through D = {tf['complete_through_D']} closed" if tf.get("complete_through_D") else "")
                + ")")
        rk = tf.get("recheck")
        if tf.get("completed") and rk:
            done += (f"; its file re-checked by the independent checker in {g(rk['recheck_seconds'])} s on "
                     f"{rk['workers']} workers ({'verified' if rk['verified'] else 'NOT verified'})")
        from_file = (f", {g(fam['query_file_seconds'])} s from its file of {g(fam['file_bytes_per_cell'] / 1e3)} kB "
                     "a cell" if "file_bytes_per_cell" in fam else "")
        out.append(f"Family certificate of sts, K = 4, D = 8…512, η ∈ [1/16, 1/8]: {done}; a member query takes "
                   f"{g(fam['query_seconds'])} s ({g(fam['query_command_seconds'])} s as a command{from_file}), "
                   f"relative width at T = 10¹² at most {sci(fam['relative_width_at_1e12'])}.")
    rb = bench.get("region_b")
    if rb:
        c = rb["counts"]
        where = "in one process" if rb["workers"] is None else f"{rb['workers']} Dask workers"
        out.append(f"Lemma C.2's Region B (`verify bench --only region_b`, {where}): "
                   f"{c['certified']} cells certified, {c['open']} open, {c['refuted']} refuted in {g(rb['seconds'])} s; "
                   f"α > 0 decided in {rb['decided_fraction']:.1%} of its volume (target ≥ "
                   f"{rb['targets']['decided_fraction_min']:.0%}, {met_word(rb['met'])}); the independent re-check "
                   f"{'passed' if rb['recheck_passed'] else 'FAILED'} in {g(rb['recheck_seconds'])} s.")
    return out


def blocks(results: dict, bench: dict) -> dict:
    return {"findings": findings(results), "speed": speed(bench)}


def example_blocks() -> dict:
    """The blocks written from the committed example report and bench."""
    results = json.loads((EXAMPLE / "results.json").read_text())
    bench = json.loads((EXAMPLE_BENCH / "bench.json").read_text())
    # a target run alone (verify bench --only NAME) writes NAME.json beside bench.json: read as bench[NAME]
    for alone in sorted(EXAMPLE_BENCH.glob("*.json")):
        if alone.name != "bench.json":
            bench.setdefault(alone.stem, json.loads(alone.read_text()))
    return blocks(results, bench)


def _pattern(name: str):
    return re.compile(rf"(<!-- {name}:begin[^>]*-->)(.*?)(<!-- {name}:end -->)", re.S)


def current_blocks(readme: str) -> dict:
    """The blocks as the README holds them now."""
    out = {}
    for name in BLOCKS:
        m = _pattern(name).search(readme)
        out[name] = m.group(2).strip("\n") if m else None
    return out


def rewrite(readme: str, new: dict) -> str:
    for name, text in new.items():
        readme, n = _pattern(name).subn(lambda m: m.group(1) + "\n" + text + "\n" + m.group(3), readme)
        if n != 1:
            raise ValueError(f"README.md needs one <!-- {name}:begin --> ... <!-- {name}:end --> block")
    return readme


def main(argv=None) -> int:
    """``python -m verify.report.readme [--check]``: rewrite (or check) README.md's generated blocks. A number the
    findings quote that the example report lacks is marked in the text and named here (exit status 1)."""
    argv = sys.argv[1:] if argv is None else argv
    path = ROOT / "README.md"
    text = path.read_text()
    new = example_blocks()
    gaps = missing(json.loads((EXAMPLE / "results.json").read_text()))
    for gap in gaps:
        print(f"README.md: a number is not in {EXAMPLE.relative_to(ROOT)}: {gap}", file=sys.stderr)
    if "--check" in argv:
        stale = [k for k, v in current_blocks(text).items() if v != new[k]]
        print("README.md blocks stale: " + ", ".join(stale) if stale else "README.md blocks are current")
        return 1 if stale or gaps else 0
    write_bytes_atomic(path, rewrite(text, new).encode())
    return 1 if gaps else 0


if __name__ == "__main__":
    raise SystemExit(main())
