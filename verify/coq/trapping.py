"""The trapping region's box checks (verify.certify.region) as CoqInterval goals, one theorem per box, generated
from a saved all-time certificate file (``verify certify ... --save FILE``).

Each box [u_lo, u_hi] x [e_lo, e_hi] of the file's cover becomes the re-checker's box condition
(recheck.certificates.check_box) as a theorem over the reals, in the certificate's own formulas (the file's
"map", which must be this code version's verify.certify.formulas): for every u, eps in the box with u > 0,

    G = G(u, eps),  y = c u^2 G,  X = (e^y - 1)/y,  R = R(u, G, X),  Q = Q(u, G, X),  u' = u/R,
    eps' = eps_next(u, eps, u', Q, R):      0 < R,  0 < Q,  -C <= eps' <= C

(C the least C(u) of the annuli the image can reach; with a non-constant profile the theorem also bounds u'
from below by that annulus' inner edge). X is exprel(y) at its exact value, written as the quotient it is for
y != 0; that is where the certificate meets a 0/0 (y -> 0 as u -> 0 in the core box). The proof follows the
certificate's arithmetic: ``interval`` encloses G over the box and shows G > 0 (so y > 0), then y, and the
file's lemma ``exprel_bounds`` (1 <= (e^y - 1)/y <= 1/(1 - y) for 0 < y <= 1/2, from 1 + t <= e^t at t = y
and t = -y, proved with the standard library) gives X an enclosure without dividing by an interval that holds
0; G, y and X are then opaque variables with bounds, and ``interval`` checks the three conditions on the
formulas as Arb does (one variable per enclosed quantity). Every constant is the file's exact rational.

What the theorems do not cover, and the records say so: the prefix (T0 Arb steps to the end ball) stays trusted
to Arb; that the boxes cover R is the re-checker's sweep. The identities tying G, R, Q, eps_next to the reduced
map are the certificate-map group's theorems (verify.coq.groups), the comparison lemma the comparison-lemma
group's: with them the certificate's chain after its prefix is kernel-checked (verify.coq.kernel.chain_route).
"""
from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import Path

import sympy as sp

from ..errors import InvalidParameter
from ..model.regimes import BENCHMARK_REGIME
from ..run.cache import cache_dir
from .printer import coq
from .theorems import CoqFile, Theorem

MAX_FILE_BYTES = 256 << 20
BOXES_PER_FILE = 32          # a file is one coqc run (a Dask task): about a minute of CPU
PRECISION = 64               # bits of CoqInterval's floating-point intervals (the certificate's Arb used 128)
GROUP = "trapping-region"
OBLIGATION = "region-invariant"   # the certificate's obligation the boxes state (verify.certify.region), box by box
TRUST = ("prefix trusted to Arb (its T0 steps are not iterated in Coq); the cover of R by the boxes is the "
         "re-checker's sweep")

# Symbols of the statements (u, epsilon as in verify.certify.coordinates; R, Q print as R_, Q_ in Coq).
u, eps = sp.Symbol("u", positive=True), sp.Symbol("epsilon", real=True)
G, Y, X, Rs, Qs, W, EN = sp.symbols("G y X R Q w eps_next", real=True)


def read_certificate(path) -> dict:
    """A one-regime certificate file (verify.certify.files), read bounded; InvalidParameter naming
    ``--certificate`` otherwise."""
    p = Path(path)
    if not p.is_file():
        raise InvalidParameter("--certificate", str(path), "must be a certificate file saved by `verify certify "
                               "... --save FILE`")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise InvalidParameter("--certificate", str(path), f"is larger than {MAX_FILE_BYTES >> 20} MB")
    try:
        cert = json.loads(p.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidParameter("--certificate", str(path), f"must be a JSON certificate file ({exc})") from None
    if not isinstance(cert, dict) or cert.get("format") != "verify-certificate" or cert.get("kind") != "slow-manifold":
        raise InvalidParameter("--certificate", str(path), "must be a one-regime certificate (format "
                               "verify-certificate, kind slow-manifold)")
    if "boxes" not in cert.get("region", {}):
        raise InvalidParameter("--certificate", str(path), "must list its region's boxes (region.boxes)")
    return cert


def bench_certificate_path() -> Path:
    """Where the bench regime's certificate file is kept for export (the verify cache, verify.run.cache)."""
    return cache_dir("coq") / "bench-regime-certificate.json"


def bench_certificate() -> Path:
    """The saved certificate file of the bench regime (gcn, D = N = 64, K = 4, eta = 1/32: verify.model.regimes),
    written once by ``verify certify``'s own code (verify.certify.files) when absent or of another code version."""
    from ..certify import certify  # heavy: loads numpy
    from ..certify.files import certificate_file, save  # heavy: loads numpy
    from ..model import make_setting  # heavy: loads numpy
    path = bench_certificate_path()
    if path.is_file():
        try:
            box_formulas(read_certificate(path))
            return path
        except (InvalidParameter, ValueError, KeyError):   # unreadable, or another code version's: certify again
            pass
    save(certificate_file(certify(make_setting(**BENCHMARK_REGIME)), []), path)
    return path


def certificate_digest(cert: dict) -> str:
    """What the group's theorems depend on in a certificate file (its region, invariants and coordinates), hashed:
    the key under which a claim about the same certificate finds the kernel's verdict."""
    key = {k: cert.get(k) for k in ("region", "invariants")} | {"coordinates": cert.get("map", {}).get("coordinates")}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def _frac(text) -> Fraction:
    return Fraction(str(text))


def _q(f: Fraction) -> sp.Rational:
    return sp.Rational(f.numerator, f.denominator)


def box_formulas(cert: dict) -> dict:
    """G(u, eps), R(u, G, X), Q(u, G, X), eps_next(u, eps, w, Q, R) and y = c u^2 G with the file's invariants
    (s, x, y) and c put in as exact rationals: verify.certify.formulas' expressions, after checking that the file
    states the same formulas (its "map" is this code version's); ValueError otherwise."""
    from ..certify.formulas import certificate_formulas, file_map  # heavy: loads numpy
    names = ("G", "R", "Q", "eps_next", "c")
    stated = cert.get("map", {}).get("coordinates", {})
    ours = file_map()["coordinates"]
    if any(stated.get(n) != ours[n] for n in names):
        raise ValueError("the certificate's formulas are not this code version's (re-save it with verify certify)")
    co = certificate_formulas()["coordinates"]
    inv = {sp.Symbol(k, positive=True): _q(_frac(cert["invariants"][k])) for k in ("s", "x", "y")}
    c = co["c"].subs(inv)
    sym = {s.name: s for e in (co[n] for n in names) for s in e.free_symbols}
    put = inv | {sym["c"]: c} | {sym[n]: v for n, v in (("u", u), ("epsilon", eps), ("G", G), ("X", X), ("R", Rs),
                                                        ("Q", Qs), ("w", W)) if n in sym}
    out = {n: co[n].subs(put, simultaneous=True) for n in ("G", "R", "Q", "eps_next")}
    out["y"], out["c"] = c * u**2 * G, c
    return out


def profile_of(cert: dict) -> tuple:
    """(u0, ratio, C per annulus outermost first) from the file's region (C_runs, or one C)."""
    reg = cert["region"]
    J = int(reg["shells"])
    values = ([_frac(v) for v, n in reg["C_runs"] for _ in range(int(n))] if "C_runs" in reg
              else [_frac(reg["C"])] * (J + 1))
    return _frac(reg["u0"]), _frac(reg["ratio"]), values


def target_of(cert: dict, box: tuple) -> tuple:
    """(C, edge) for a box: the least C over the annuli its image can reach and the inner edge u0 r^(i+1) of the
    deepest one (0 when that is the core, or when C is one value: u' > 0 suffices). The image reaches no annulus
    deeper than the one holding u_lo R_hi^-1; the generator takes the deepest annulus meeting [u_lo/2, u_hi]
    (the one-step decay u' > u/2 holds on R by far: R <= 1 + c u^2 G X), so the theorem states u' >= edge."""
    u0, ratio, values = profile_of(cert)
    if len(set(values)) == 1:
        return values[0], Fraction(0)
    lo = box[0] / 2
    J = len(values) - 1
    i = next((k for k in range(J) if lo > u0 * ratio ** (k + 1)), J)
    return values[i], (u0 * ratio ** (i + 1) if i < J else Fraction(0))


def exprel_lemma(F: dict) -> str:
    """The lemma every box cites, in the printed form of X (so ``apply`` unifies): exprel(y) in [1, 1/(1 - y)]."""
    Xe = (sp.exp(Y) - 1) / Y
    return ("\n(* exprel(y) = (e^y - 1)/y lies in [1, 1/(1 - y)] for 0 < y <= 1/2: 1 + t <= e^t at t = y and t = -y. *)\n"
            f"Lemma exprel_bounds : forall y : R, 0 < y -> y <= 1 / 2 -> 1 <= {coq(Xe)} <= {coq(1 / (1 - Y))}.\n"
            "Proof.\n"
            "  intros y Hy Hy2.\n"
            "  pose proof (exp_ineq1_le y) as H1. pose proof (exp_ineq1_le (- y)) as H2. pose proof (exp_pos y) as H3.\n"
            "  rewrite exp_Ropp in H2.\n"
            "  assert (H4 : (1 - y) * exp y <= 1).\n"
            "  { apply Rmult_le_reg_r with (/ exp y); [apply Rinv_0_lt_compat; lra|].\n"
            "    rewrite Rmult_assoc, Rinv_r, Rmult_1_l, Rmult_1_r by lra. lra. }\n"
            "  split.\n"
            "  - apply Rmult_le_reg_r with y; [lra|]. unfold Rdiv. rewrite Rmult_assoc, Rinv_l by lra. lra.\n"
            "  - apply Rmult_le_reg_r with (y * (1 - y)); [nra|]. field_simplify; [nra|lra|lra].\n"
            "Qed.\n")


def _script(F: dict, edge: Fraction) -> str:
    """The proof: enclose G (and G > 0), then y, then X by exprel_bounds; with G, y, X opaque and bounded, interval
    on each condition."""
    p = f"with (i_prec {PRECISION})"
    conds = "split; [|split]" + ("; [| |split]" if edge else "")
    return "\n  ".join([
        "intros u epsilon Hul Huh Hel Heh Hu0 G y X R_ Q_ w eps_next.",
        f"assert (HG0 : 0 < G) by (unfold G; interval {p}).",
        f"let g := eval unfold G in G in interval_intro g {p} as HG; change g with G in HG.",
        "clearbody G.",
        "assert (Hy0 : 0 < y) by (unfold y; assert (0 < u ^ 2) by (apply pow_lt; lra); nra).",
        f"let t := eval unfold y in y in interval_intro t {p} as Hy; change t with y in Hy.",
        "clearbody y.",
        f"assert (HX : 1 <= X <= / (1 - y)) by (unfold X; apply exprel_bounds; [lra | interval {p}]).",
        f"interval_intro (/ (1 - y)) upper {p} as HXu.",
        "pose proof (Rle_trans _ _ _ (proj2 HX) HXu) as HXb. pose proof (proj1 HX) as HXl.",
        "clearbody X. clear HX HXu.",
        "unfold eps_next, w, Q_, R_.",
        f"{conds}; interval {p}.",
    ])


def box_theorem(name: str, box: tuple, F: dict, C: Fraction, edge: Fraction = Fraction(0),
                expect: str = "accepted", label: str = "", key: str = "trapping-box") -> Theorem:
    """The box condition on ``box`` = (u_lo, u_hi, e_lo, e_hi) (exact Fractions) as a theorem (module docstring)."""
    u_lo, u_hi, e_lo, e_hi = (_q(Fraction(b)) for b in box)
    lets = ((G, F["G"]), (Y, F["y"]), (X, (sp.exp(Y) - 1) / Y), (Rs, F["R"]), (Qs, F["Q"]), (W, u / Rs),
            (EN, F["eps_next"]))
    Cq = _q(C)
    concl = (sp.StrictLessThan(0, Rs, evaluate=False), sp.StrictLessThan(0, Qs, evaluate=False),
             sp.And(sp.LessThan(-Cq, EN, evaluate=False), sp.LessThan(EN, Cq, evaluate=False), evaluate=False))
    if edge:
        concl += (sp.LessThan(_q(edge), W, evaluate=False),)
    hyps = (sp.LessThan(u_lo, u, evaluate=False), sp.LessThan(u, u_hi, evaluate=False),
            sp.LessThan(e_lo, eps, evaluate=False), sp.LessThan(eps, e_hi, evaluate=False),
            sp.StrictLessThan(0, u, evaluate=False))
    statement = (f"trapping region, {label or 'a box'}: for u in [{coq(u_lo)}, {coq(u_hi)}], eps in [{coq(e_lo)}, "
                 f"{coq(e_hi)}], u > 0, the map's R = u/u' > 0, Q = (u - u')/(c u^3) > 0 and |eps'| <= {Cq}"
                 + (f", u' >= {coq(_q(edge))}" if edge else ""))
    return Theorem(name, statement, (u, eps), hyps, concl, _script(F, edge), key, expect, lets=lets)


def boxes_of(cert: dict) -> list[tuple]:
    """The file's boxes (exact Fractions), in the file's order."""
    return [tuple(_frac(v) for v in b) for b in cert["region"]["boxes"]]


def moved_box(cert: dict) -> tuple:
    """The negative control: the box with the largest u (the outermost annulus, where alpha relaxes slowest, rho
    largest) moved in eps past the region's edge, to [C, 3C]: there eps' > C at eps = 3C (the map contracts
    eps by rho < 1 only, and the drift c Q DD is positive), so the theorem is false."""
    b = max(boxes_of(cert), key=lambda b: (b[1], b[3]))
    C, _ = target_of(cert, b)
    return (b[0], b[1], C, 3 * C)


def trapping_files(path, boxes: int | None = None, per_file: int = BOXES_PER_FILE) -> list[CoqFile]:
    """The group's files: the certificate's boxes (the first ``boxes`` of them when given), ``per_file`` to a file,
    then the negative control (a box moved past the edge) in a file of its own. Each file records its source: the
    certificate's path and digest, the boxes exported and the boxes of the cover."""
    cert = read_certificate(path)
    try:
        F = box_formulas(cert)
    except (ValueError, KeyError) as exc:
        raise InvalidParameter("--certificate", str(path), f"must state this code version's formulas and "
                               f"invariants ({exc})") from None
    pre = exprel_lemma(F)
    allb = boxes_of(cert)
    chosen = allb if boxes is None else allb[:boxes]
    thms = []
    for k, b in enumerate(chosen):
        C, edge = target_of(cert, b)
        thms.append(box_theorem(f"trapping_box_{k}", b, F, C, edge, label=f"box {k + 1} of {len(allb)}",
                                key=f"trapping-box-{k}"))
    src = (("certificate", str(path)), ("digest", certificate_digest(cert)), ("boxes", len(chosen)),
           ("of", len(allb)), ("trusted", TRUST))
    out = [CoqFile(f"trapping_region_{i // per_file:04d}", GROUP, "interval", tuple(thms[i:i + per_file]), pre, src)
           for i in range(0, len(thms), per_file)]
    mb = moved_box(cert)
    C, edge = target_of(cert, mb)
    ctl = box_theorem("trapping_box_moved_past_edge", mb, F, C, edge, expect="rejected", key="trapping-box-moved",
                      label=f"the outermost box moved past the edge to eps in [{coq(_q(mb[2]))}, {coq(_q(mb[3]))}]")
    out.append(CoqFile("trapping_region_control", GROUP, "interval", (ctl,), pre, src))
    return out


__all__ = ["bench_certificate", "bench_certificate_path", "certificate_digest", "read_certificate", "box_formulas", "box_theorem", "boxes_of", "moved_box", "trapping_files",
           "exprel_lemma", "target_of", "TRUST", "GROUP", "OBLIGATION"]
