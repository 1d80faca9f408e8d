"""The README's findings and speed blocks, written from a report's results.json and a bench.json.

Every number the README quotes comes from here, so the README says what the report says: the blocks
between ``<!-- findings:begin -->`` / ``<!-- findings:end -->`` and ``<!-- speed:begin -->`` /
``<!-- speed:end -->`` are generated (``python -m verify.report.readme`` rewrites them from the committed
example report, reports/example, and bench, reports/example-bench), and a test fails when the README
and the regenerated blocks differ.
"""
from __future__ import annotations

import json
import re
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "reports" / "example"
EXAMPLE_BENCH = ROOT / "reports" / "example-bench"
BLOCKS = ("findings", "speed")


class MissingNumber(KeyError):
    """A number the README quotes is not in the report (the README cannot be written from it)."""


def _num(results: dict, name: str):
    for n in results.get("headline_numbers") or []:
        if n["name"] == name:
            if n["value"] is None:
                raise MissingNumber(f"{name}: {n['missing']}")
            return n["value"]
    raise MissingNumber(name)


def _part(results: dict, name: str) -> dict:
    p = next((p for p in results["parts"] if p["name"] == name), None)
    if p is None:
        raise MissingNumber(f"part {name}")
    return p


def _claim(results: dict, cid: str) -> dict:
    c = next((c for c in results["claims"] if c["id"] == cid), None)
    if c is None:
        raise MissingNumber(f"claim {cid}")
    return c


def _probe(results: dict, name: str) -> dict:
    p = next((p for p in results["probes"] if p["probe"] == name), None)
    if p is None:
        raise MissingNumber(f"probe {name}")
    return p


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


def verdict(results: dict, part: str) -> str:
    return f"*{_part(results, part)['verdict']}*"


def findings(results: dict) -> str:
    """The "What it finds" bullets, every number and verdict read from ``results``."""
    s = results["summary"]
    v = s["verdicts"]
    derive = _part(results, "derive")
    sigma_rows = {st["statement"].split(":")[0]: st for st in derive["statements"]}
    c2 = _claim(results, "lemma-C.2")
    env = _num(results, "Lemma C.2: largest alpha over the identity regimes (min, max)")
    cubic = _num(results, "Lemma C.2 outside the step-size hypothesis: alpha(t) for the cubic")
    tf = _num(results, "Theorem 3.1: fitted T-exponents (exponent, uncertainty, last decade)")
    rat = _num(results, "Theorem 3.1: iterate / exact leading term at the horizon")
    dex = _num(results, "Theorem 3.1: D-exponents of the exact leading terms (D -> oo)")
    claimed = _num(results, "Theorem 3.1: claimed D-exponents")
    sts = _num(results, "Theorem 3.1: sweep D-exponents of the constants (sts, N = 1)")
    cnn = _num(results, "Theorem 3.1: sweep D-exponents of the constants (cnn, N = D/K)")
    teachers = _num(results, "Four teachers: largest |fitted - predicted| tail exponent")
    ts = _num(results, "T*: D-exponent at fixed K (exponent, uncertainty)")
    tcross = _num(results, "T*_cross: D-exponents (K = 2; K = D/2, last pair)")
    eta = _num(results, "Step size: derived 2K/N and the bisected convergence / divergence boundaries")
    fa = _num(results, "Input-dependent attention: X-block of W_KQ (peak; at T over the P-P block)")
    asym = results["derivation"]["asymptotics"]
    cert = results["certify"]
    rec = results["reconcile"]
    sol = rec["solutions"][0] if rec["solutions"] else None
    fuzz = results["fuzz"]["claims"]
    neg = [c["id"] for c in results["claims"] if c.get("convention", {}).get("negative_control")]
    conv_max = max(float(x[1]) for x in eta["convergence"].values())
    lines = [
        f"- **Every verdict is derived from evidence records by one rule** (`verify/evidence.py`, "
        f"[docs/verdicts.md](docs/verdicts.md)) and printed with its scope: \"all dimensions\" means a proof in "
        f"symbolic dimensions, \"checked at dimensions {{…}}\" names the sizes checked. This report: "
        f"{s['parts']} parts ({s['ok']} finished), " + ", ".join(f"{n} {k}" for k, n in sorted(v.items())) + ".",
        f"- **The symmetry reduction is exact** ({sigma_rows['sigma = identity']['verdict']} for σ = identity and "
        f"{sigma_rows['sigma = erf']['verdict']} for σ = erf in every dimension: SymPy proves it for any per-entry kernel "
        "in symbolic M, d, D, N, K, including the D/(NK(D−K)) factor of the δ recursion, with each σ's parity lemma; "
        "explicit sizes are a second route). For ReLU it is "
        f"{sigma_rows['sigma = relu']['verdict']}: W_P leaves 0 unless frozen. W_P = 0 and two-valued attention columns: "
        f"{verdict(results, 'claim:wp-zero')}, {verdict(results, 'claim:two-level-attention')}.",
        f"- **Lemma C.2** is {c2['verdict']} ({c2['scope_label'].split(';')[0]}: the induction's inequalities are "
        "decided by z3; for σ ≠ identity Arb balls over finite t). The multiples are not bounded by 1: α rises to "
        f"{g(env[0])}–{g(env[1])} and returns to 1 from above. Outside the step-size hypothesis it fails "
        f"(σ = x + x³/10, η = 1/20, ‖V*‖ = 3: α(5) = {g(cubic[5])}), and with a non-orthogonal P; a random start is "
        "outside its hypotheses (the nonzero-init probe reports it as such).",
        "- **Theorem 3.1's T-exponents hold**: fitted " + ", ".join(
            pm(tf[q][0], tf[q][1]) for q in ("loss", "s_err", "w_err"))
        + f" for L − L_opt, ‖S − S*‖_F, ‖W_X − V*‖_F (four teachers' tails within {g(teachers, 2)} of −1, −½, −½), "
        f"and GD / derived leading term = {rat['loss']:.3f}, {rat['s_err']:.3f}, {rat['w_err']:.3f} at T = "
        f"{rat['horizon']}. The exact leading terms are L − L_opt ~ {asym['loss']}, ‖S − S*‖_F ~ {asym['s_err']}, "
        f"‖W_X − V*‖_F ~ {asym['w_err']}.",
        f"- **The T-rate is certified for every T** ({cert['verdict']}, `verify certify`): in gcn D = N = 64, K = 4, "
        f"η = 1/32, an Arb prefix to T0 = {cert['T0']}, a trapping region around the slow manifold and a discrete "
        f"comparison lemma give {g(cert['constants']['excess_loss']['c_lo'], 4)} ≤ ηT·(L − L_opt) ≤ "
        f"{g(cert['constants']['excess_loss']['c_hi'], 4)} for all T ≥ T0, with the limit in "
        f"[{g(cert['asymptotic']['excess_loss']['liminf_ge'], 13)}, {g(cert['asymptotic']['excess_loss']['limsup_le'], 13)}]; "
        "relative width at T = 10¹²: " + ", ".join(
            sci(cert["relative_width_at_1e12"][q]) for q in ("excess_loss", "s_err", "w_err")) + ".",
        "- **Theorem 3.1's D-dependence is refuted in the reference convention** "
        f"({verdict(results, 'claim:theorem-3.1-rates')}, from the derivation): as D → ∞ the exact leading terms grow "
        "like " + ", ".join(dpow(dex[q]["D (N fixed, D -> oo)"]) for q in ("loss", "s_err", "w_err"))
        + " with N fixed and " + ", ".join(dpow(dex[q]["D (N = D/K, D -> oo)"]) for q in ("loss", "s_err", "w_err"))
        + " with N = D/K (claimed " + ", ".join(dpow(claimed[q]) for q in ("loss", "s_err", "w_err"))
        + "); local sweeps over D = 8…32 "
        f"give {g(sts['loss'], 2)}, {g(sts['s_err'], 2)}, {g(sts['w_err'], 2)} (sts) and {g(cnn['loss'], 2)}, "
        f"{g(cnn['s_err'], 2)}, {g(cnn['w_err'], 2)} (cnn).",
    ]
    if sol:
        e = sol["exponents"]
        lines.append(
            f"- **Which convention?** (`verify reconcile`): writing N = n D^a, g = η_KQ λ² β² = η g₀ D^b and h = c_L v = "
            f"h₀ D^c, the claimed rates have a {rec['status']} solution a = {e['N']}, b = {e['g']}, c = {e['h']} "
            f"(N ∝ D as in gcn, η_KQ λ² β² shrinking like {dpow(e['g'])}); GD under it shows D-exponents "
            + ", ".join(pm(sol["fits"][q], sol["fit_errors"][q], 2) for q in ("loss", "s_err", "w_err"))
            + f". But T* then grows like {dpow(sol['tstar_exponent'])}, not {dpow(rec['tstar']['claimed_exponent'])}: the rates "
            f"and T* cannot hold together in this family "
            f"(*{next(st['verdict'] for st in rec['statements'] if st['statement'].startswith('the rates and T*'))}*), "
            "and at a fixed η GD leaves its stable range as D grows.")
    else:
        lines.append(f"- **Which convention?** (`verify reconcile`): no convention of the family reproduces the "
                     f"claimed rates ({rec['status']}).")
    lines += [
        f"- **Why Θ(1/T) without PL** (Q1): on the slow manifold the off-support attention mass u obeys "
        f"Δu = −c u³ with c = {asym['cubic_coefficient_c']} (derived), so u ~ T^(−1/2) and L ~ u² ~ 1/T.",
        f"- **T\\*** grows linearly in D at fixed K ({verdict(results, 'claim:theorem-3.1-tstar')}: exponent "
        f"{pm(ts[0], ts[1], 2)}; T*_cross {g(tcross[0], 3)}), like D² only when K ∝ D (last-pair exponent "
        f"{g(tcross[1], 3)}).",
        f"- **D = K** (Q3, {verdict(results, 'probe:d-eq-k')}): S = S* from step 0 and the errors decay geometrically, "
        f"so the Θ(1/T) lower bounds fail. **K = 0** (Q4, {verdict(results, 'probe:k-zero')}): the loss is optimal "
        "from step 0, but W_X never moves and S stays uniform.",
        f"- **OOD** (Q5, {verdict(results, 'claim:theorem-3.2-ood')}): the ‖V*‖² of the OOD loss multiplies "
        "‖S − S*‖² ∝ 1/‖V*‖², so the excess does not grow with ‖V*‖. **Non-Gaussian data** (Q7, "
        f"{verdict(results, 'probe:non-gaussian')}): for σ = identity the trajectory depends on the first two moments "
        f"only. **Non-uniform S\\*** (Q8, {verdict(results, 'probe:nonuniform-s')}): the same power-law tails. "
        f"**Step size**: GD converges for η < 2K/N = {g(eta['2K/N'])} (bisected boundary ≤ {g(conv_max, 4)}). "
        f"**P** (Q12, {verdict(results, 'probe:p-scale')}): PᵀP = λI is η_KQ → λ²η_KQ.",
        f"- **Input-dependent attention** (Q11, {verdict(results, 'probe:full-attention')}, exploratory): online SGD "
        "reaches the teacher at the same 1/T rate; the X part of W_KQ peaks at " + ", ".join(
            g(x["peak"], 2) for x in fa.values()) + " and ends at " + ", ".join(
            g(x["at_T_over_p_block"], 2) for x in fa.values()) + " of the positional block. **Finite samples** "
        f"(Q10, {verdict(results, 'probe:finite-sample')}): online SGD without label noise keeps 1/T.",
        f"- **Negative controls** ({', '.join(neg)}) come out *refuted* by the same machinery, and fuzzing "
        f"({len(fuzz)} searches, " + ", ".join(f"{c['claim']} {c['verdict']}" for c in fuzz
                                                 if c["verdict"] != "supported")
        + "; the rest supported) finds their counterexamples, each replayed at a 10× longer horizon.",
        f"- The ci profile ran in {round(s['wall_seconds'])} s on 2 cores (Dask LocalCluster).",
    ]
    return "\n".join(lines)


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
    dk = bench.get("dask")
    if dk:
        sc, ov = dk["sweep_scaling"], dk["overhead"]
        out.append(f"Dask: a certified sweep runs {g(sc['ratio'])}× faster on 2 workers than on 1; per-task overhead "
                   f"{g(100 * ov['overhead_fraction'], 2)}% of the mean task time of the default sweep.")
    return " ".join(out)


def blocks(results: dict, bench: dict) -> dict:
    return {"findings": findings(results), "speed": speed(bench)}


def example_blocks() -> dict:
    """The blocks written from the committed example report and bench."""
    results = json.loads((EXAMPLE / "results.json").read_text())
    bench = json.loads((EXAMPLE_BENCH / "bench.json").read_text())
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
    """``python -m verify.report.readme [--check]``: rewrite (or check) README.md's generated blocks."""
    argv = sys.argv[1:] if argv is None else argv
    path = ROOT / "README.md"
    text = path.read_text()
    new = example_blocks()
    if "--check" in argv:
        stale = [k for k, v in current_blocks(text).items() if v != new[k]]
        print("README.md blocks stale: " + ", ".join(stale) if stale else "README.md blocks are current")
        return 1 if stale else 0
    from ..run.atomic import write_bytes_atomic
    write_bytes_atomic(path, rewrite(text, new).encode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
