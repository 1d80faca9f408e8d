"""The kernel route (verify.coq): obligations as Coq theorems, checked by coqc.

The kernel checks skip only when coqc is missing and CI is not "true" (under CI a missing coqc fails them:
the set-up installs `coq libcoq-interval`). What the kernel does is compared with what is known about each
statement independently of the toolkit: a true statement is accepted, a statement made false by hand (a sign
flipped, a hypothesis weakened past min(K, D - K)) is rejected.
"""
import os
import re
import shutil
from pathlib import Path

import pytest
import sympy as sp
from click.testing import CliRunner

from verify.coq import sympylib
from verify.coq.groups import C2_PLANS, c2_obligations, c2_theorems, files, identity_theorem
from verify.coq.kernel import check_file, kernel_route
from verify.coq.printer import coq
from verify.coq.theorems import CoqFile, Theorem, variables_of
from verify.derive.stability import block_column, next_alpha_Z2

DATA = Path(__file__).parent / "data" / "coq"
BOXES = DATA / "bench_boxes.json"        # the bench certificate's file, 3 of its 968 boxes (make_bench_boxes.py)
needs_coq = pytest.mark.skipif(shutil.which("coqc") is None and os.environ.get("CI") != "true",
                               reason="coqc not installed (apt-get install -y coq libcoq-interval)")


def kernel(thms, name="T") -> dict:
    """coqc's verdict on each theorem of a file made of ``thms``."""
    f = CoqFile(name, "test", "reals", tuple(thms))
    return {n: r["status"] for n, r in check_file(f.text(), f.lines())["theorems"].items()}


def test_printer_hand_values():
    x, y, n = sp.symbols("x y N")
    assert coq(x**2 + sp.Rational(1, 32) * y) == "x ^ 2 + y / 32"      # pow on nat, exact rationals
    assert coq(sp.Rational(-3, 4) + x) == "((-3) / 4) + x"
    assert coq(x / (y + 1) ** 3) == "x / (1 + y) ^ 3"
    assert coq(n) == "N_"                                                    # N is Coq's binary naturals
    assert coq(sp.Or(sp.Eq(x, 0), sp.Ge(x, 1))) == "(x = 0) \\/ (x >= 1)"
    with pytest.raises(ValueError):
        coq(sp.Float(0.5) * x)                                                # only exact numbers


def test_sympylib_keeps_relations():
    """The z3-style builders give SymPy relations, not Python booleans (n == 0 must stay an equation)."""
    hyp, concl = sympylib.formula(lambda lib: ([lib.Or(lib.Real("n") == 0, lib.Real("n") >= 1)], lib.Real("n") > -1))
    n = sp.Symbol("n", real=True)
    assert hyp == (sp.Or(sp.Eq(n, 0), n >= 1),) and concl == (n > -1)


@pytest.fixture(scope="module")
def c2():
    return c2_theorems(c2_obligations())


@pytest.mark.slow
def test_small_theorem_equals_hand_written_file(c2):
    (pos,) = [t for t in c2 if t.key == "c2-positive"]
    assert pos.text() == (DATA / "c2_positive.v").read_text()


def test_text_is_a_pure_function_of_the_obligation(c2):
    again = c2_theorems(c2_obligations())
    assert [t.text() for t in again] == [t.text() for t in c2]
    fs = files(("lemma-C.2", "invariants"))
    assert [f.text() for f in fs] == [f.text() for f in files.__wrapped__(("lemma-C.2", "invariants"))]


def test_every_generated_theorem_ends_in_qed():
    """A scan of every exported file (the trapping region's from the trimmed bench certificate): each Theorem's and
    Lemma's proof ends in Qed; nothing admitted, no axiom declared."""
    for f in files((), (("certificate", str(BOXES)),)):
        text = re.sub(r"\(\*.*?\*\)", "", f.text(), flags=re.S)      # comments (the obligations' statements)
        assert not re.search(r"\b(Admitted|admit|Axiom|Parameter|Abort)\b", text), f.name
        assert len(re.findall(r"(?m)^Theorem ", text)) == len(f.theorems) > 0
        blocks = re.split(r"(?m)^(?:Theorem|Lemma) ", text)[1:]
        assert len(blocks) == len(f.theorems) + len(re.findall(r"(?m)^Lemma ", text))
        for b in blocks:
            proof = b.split("\nProof.\n", 1)[1]
            assert proof.rstrip().endswith("Qed."), f.name
            assert proof.count("Qed.") == 1


@needs_coq
@pytest.mark.slow
def test_lemma_c2_induction_accepted_and_controls_rejected(c2):
    """The induction's four steps are accepted; the two negative controls (x < 2K only; K = 0) are rejected."""
    main = [t for t in c2 if t.expect == "accepted"]
    assert [t.key for t in main] == ["c2-positive", "c2-factor", "c2-step", "c2-base"]
    assert set(kernel(main).values()) == {"accepted"}
    lemmas = [t for t in main if t.key in ("c2-positive", "c2-factor")]
    (large,) = [t for t in c2 if t.key == "c2-outside-large-x"]
    assert kernel(lemmas + [large])[large.name] == "rejected"


@needs_coq
@pytest.mark.slow
def test_x_just_above_min_k_d_minus_k_rejected(c2):
    """The step with x <= min(K, D - K) + 1/64 instead (false: at x = K + 1/64, E and alpha large, alpha' < 0) is
    rejected by the kernel, with the same proof plan as the true step."""
    h = sp.Rational(1, 64)

    def build(lib):
        c = block_column(lib)
        x, a = lib.Reals("x alpha")
        hyp = c["base"] + [a >= 0, x > 0, x <= c["K"] + h, lib.Or(c["n"] == 0, x <= c["n"] + h)]
        return hyp, next_alpha_Z2(c, x, a) > 0
    hyp, concl = sympylib.formula(build)
    # the statement is false: a hand counterexample, K = 1, n = 0, x = 65/64, E = 100, alpha = 10^4
    K, n, E, x, a = sp.symbols("K n E x alpha", real=True)
    assert concl.subs({K: 1, n: 0, E: 100, x: 1 + h, a: 10**4}) == sp.false
    lemmas = [t for t in c2 if t.key in ("c2-positive", "c2-factor")]
    cite = {t.key: f"pose proof ({t.name} {' '.join(v.name for v in t.variables)}) as H_{t.name}; "
                   f"repeat (specialize (H_{t.name} ltac:(assumption)))" for t in lemmas}
    above = Theorem("c2_step_x_above", "induction step with x <= min(K, D - K) + 1/64", variables_of(hyp, concl),
                    hyp, concl, C2_PLANS["c2-step"](cite), expect="rejected")
    got = kernel(lemmas + [above])
    assert got == {"c2_positive": "accepted", "c2_factor": "accepted", "c2_step_x_above": "rejected"}


@needs_coq
@pytest.mark.slow
def test_reduction_identity_accepted_and_sign_flip_rejected():
    """(*) for 0 < K < D as generated is accepted; with the sign of its teacher term flipped it is rejected."""
    (red,) = files(("reduction",))
    (rec,) = [t for t in red.theorems if t.name == "alpha_recursion_interior"]
    lhs, rhs = rec.conclusion.lhs, rec.conclusion.rhs
    E = sp.Symbol("E", positive=True)
    teacher = [t for t in sp.Add.make_args(rhs) if t.has(E) and not t.has(sp.Symbol("alpha", positive=True))]
    assert len(teacher) == 1
    flipped = identity_theorem("alpha_recursion_flipped", "sign flipped", lhs, rhs - 2 * teacher[0],
                               rec.hypotheses[-1:], expect="rejected")
    assert kernel([rec, flipped]) == {"alpha_recursion_interior": "accepted", "alpha_recursion_flipped": "rejected"}


@needs_coq
@pytest.mark.slow
def test_claim_record_says_kernel_checked():
    route = kernel_route("lemma-C.2", ("c2-positive", "c2-factor", "c2-step", "c2-base"))
    assert route["status"] == "kernel-checked" and route["versions"]["coq"][0].isdigit()
    assert route["why"].startswith("4 of 4 obligations accepted")
    # the accepted obligations are named by their statements, as the proof's steps are (so the report marks them)
    want = [o for o in c2_obligations() if o.key in ("c2-positive", "c2-factor", "c2-step", "c2-base")]
    assert sorted(route["accepted_obligations"]) == sorted(o.evidence()["route"] for o in want)


def test_prove_without_coqc_exits_2(tmp_path, monkeypatch):
    import json
    from verify.cli import main
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "verify-coq", "version": 1, "files": []}))
    monkeypatch.setenv("PATH", str(tmp_path))           # no coqc on it
    res = CliRunner().invoke(main, ["prove", "--coq", str(tmp_path)])
    assert res.exit_code == 2
    assert len(res.output.strip().splitlines()) == 1 and "apt-get install -y coq libcoq-interval" in res.output


def test_prove_refuses_a_folder_without_manifest_or_an_edited_file(tmp_path):
    import json
    from verify.cli import main
    res = CliRunner().invoke(main, ["prove", "--coq", str(tmp_path)])
    assert res.exit_code == 2 and "--coq" in res.output and "manifest.json" in res.output
    f = CoqFile("T", "test", "reals", ())
    (tmp_path / "T.v").write_text(f.text() + "Axiom cheat : False.\n")     # edited after export
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "verify-coq", "version": 1, "files": [
        {"file": "T.v", "group": "test", "digest": f.digest(), "lines": {}, "theorems": []}]}))
    res = CliRunner().invoke(main, ["prove", "--coq", str(tmp_path)])
    assert res.exit_code == 2 and "T.v" in res.output and "export again" in res.output


@needs_coq
@pytest.mark.slow
def test_comparison_lemma_accepted_and_reversed_inequality_rejected():
    """The comparison lemma's three inequalities are accepted; one-step-lower with its inequality reversed (false:
    at x2 = 1/2, a = q = b = 1 the left side is 1/2 < 1) is rejected with the same proof plan."""
    (f,) = files(("comparison-lemma",))
    assert [t.key for t in f.theorems] == ["one-step-lower", "one-step-upper", "step-error-monotone"]
    low = f.theorems[0]
    rev = sp.GreaterThan(low.conclusion.lhs, low.conclusion.rhs, evaluate=False)
    a, q, x2 = sp.symbols("a q x2", real=True)
    assert low.conclusion.lhs.subs({a: 1, q: 1, x2: sp.Rational(1, 2)}) == sp.Rational(1, 2)
    flipped = Theorem("one_step_lower_reversed", "reversed", low.variables, low.hypotheses, rev, low.tactic,
                      expect="rejected")
    got = kernel(list(f.theorems) + [flipped])
    assert got == {t.name: "accepted" for t in f.theorems} | {"one_step_lower_reversed": "rejected"}


def test_report_names_the_routes():
    """The claims table's routes, from hand-built records: per obligation, the SMT solvers of each step, SymPy for
    identities, Coq where the proof's kernel route accepted the step (by its statement), grouped; "kernel-checked"
    for every obligation only when Coq accepted each; an all-time certificate's obligations with their routes."""
    from verify.report.statements import proof_routes
    smt = [{"route": f"step {i}", "method": "smt", "solvers": {"z3": {}, "cvc5": {}}} for i in range(3)]
    steps = smt + [{"route": "identity", "method": "sympy identity"}]

    def st(kernel, steps=steps):
        return {"evidence": [{"route": "p", "kind": "smt", "role": "test", "scope": {}, "result": "", "holds": True,
                              "steps": steps, **({"kernel": kernel} if kernel else {})}]}
    assert proof_routes(st(None)) == "Routes: z3, cvc5, SymPy (3 obligations by z3 + cvc5, 1 by SymPy)."
    three = {"status": "kernel-checked", "accepted_obligations": ["step 0", "step 1", "step 2"]}
    assert proof_routes(st(three)) == ("Routes: z3, cvc5, Coq, SymPy (3 obligations by z3 + cvc5 + Coq, 1 by SymPy); "
                                       "kernel-checked: 3 of its 4 obligations.")
    every = {"status": "kernel-checked", "accepted_obligations": ["step 0", "step 1", "step 2", "identity"]}
    assert proof_routes(st(every)).endswith("(3 obligations by z3 + cvc5 + Coq, 1 by SymPy + Coq); kernel-checked "
                                            "(every obligation).")
    assert proof_routes(st({"status": "not run"})).endswith("1 by SymPy). Kernel route not run.")
    nested = st(None, [{"route": "inner", "steps": smt[:2]}, steps[-1]])              # a step that is a proof
    assert proof_routes(nested) == "Routes: z3, cvc5, SymPy (2 obligations by z3 + cvc5, 1 by SymPy)."
    ctx = {"role": "context", "kind": "symbolic", "scope": {}, "holds": None}
    cert = {"evidence": [ctx | {"route": "obligation a", "routes": ["SymPy", "Coq"]},
                         ctx | {"route": "obligation b", "kind": "arb", "routes": ["Arb"]},
                         ctx | {"route": "chain", "kind": "formal", "kernel": {"status": "partial"}}]}
    assert proof_routes(cert) == ("Routes: SymPy, Coq, Arb (1 obligation by SymPy + Coq, 1 by Arb); kernel-checked: 1 "
                                  "of its 2 obligations.")


def test_certificate_obligation_routes():
    """An obligation's routes: its method's (SymPy, Arb) or its SMT solvers, and Coq when the kernel accepted it."""
    from verify.certify.obligations import Obligation
    assert Obligation("eps-update", "s", "sympy", True).routes(["eps-update"]) == ["SymPy", "Coq"]
    assert Obligation("one-step-lower", "s", "smt", True, solvers={"z3": {}, "cvc5": {}}).routes() == ["z3", "cvc5"]
    assert Obligation("region-invariant", "s", "arb", True).routes(["eps-update"]) == ["Arb"]


# ---- the trapping region's boxes (verify.coq.trapping) -------------------------------------------------------------


def hand_map(u, e):
    """eps' at (u, eps) for the bench regime (gcn, D = N = 64, K = 4, eta = 1/32), by hand from the reduced recursion
    in the parameters (not from the certificate's coordinates): p_on = (1 - u)/K, p_off = u/(D - K),
    alpha* = p_on/||s||^2, alpha = alpha* + eps u^3; alpha' = (1 - eta N ||s||^2) alpha + eta N p_on,
    delta' - delta = kappa p_on p_off alpha (1 - alpha K (p_on - p_off)), kappa = eta D/K = 1/2; then u' from
    e^delta' and eps' = (alpha' - alpha*(u'))/u'^3."""
    import mpmath as mp
    D, K, eta = 64, 4, mp.mpf(1) / 32
    col = lambda v: ((1 - v) / K, v / (D - K))                               # noqa: E731
    star = lambda v: col(v)[0] / (K * col(v)[0] ** 2 + (D - K) * col(v)[1] ** 2)  # noqa: E731
    with mp.workdps(150):
        u, e = mp.mpf(u.numerator) / u.denominator, mp.mpf(e.numerator) / e.denominator
        pon, poff = col(u)
        a = star(u) + e * u**3
        sq = K * pon**2 + (D - K) * poff**2
        a1 = (1 - eta * 64 * sq) * a + eta * 64 * pon
        E1 = pon / poff * mp.exp(eta * D / K * pon * poff * a * (1 - a * K * (pon - poff)))
        u1 = (D - K) / (K * E1 + D - K)
        return float((a1 - star(u1)) / u1**3)


def test_hand_map_is_the_certificates_map():
    """The hand map above agrees with the certificate's coordinates (G, X = exprel, R, Q, eps_next) at a point: so
    the negative control's falsity below rests on the map the theorems state."""
    from fractions import Fraction
    from verify.coq.trapping import G as Gs, Qs, Rs, W, X, box_formulas, eps, read_certificate, u
    F = box_formulas(read_certificate(BOXES))
    pt = {u: sp.Rational(1, 5), eps: sp.Rational(1, 1000)}
    g = F["G"].subs(pt)
    y = F["y"].subs(pt | {Gs: g})
    x = (sp.exp(y) - 1) / y
    R, Q = (F[k].subs(pt | {Gs: g, X: x}) for k in ("R", "Q"))
    en = F["eps_next"].subs(pt | {Rs: R, Qs: Q, W: pt[u] / R})
    assert abs(float(sp.N(en, 50)) - hand_map(Fraction(1, 5), Fraction(1, 1000))) < 1e-15


def test_trapping_text_is_a_pure_function_of_the_box():
    """Same box, same text (from the group's files and from box_theorem alone); the file's exact box ends appear as
    Coq rationals; another box gives another text."""
    import json
    from fractions import Fraction
    from verify.coq.trapping import box_formulas, box_theorem, read_certificate, target_of, trapping_files
    cert = read_certificate(BOXES)
    fs = trapping_files(BOXES)
    assert [f.name for f in fs] == ["trapping_region_0000", "trapping_region_control"]
    assert [f.text() for f in fs] == [f.text() for f in trapping_files(BOXES)]
    raw = json.loads(BOXES.read_text())["region"]["boxes"]
    b = tuple(Fraction(v) for v in raw[1])
    thm = box_theorem("trapping_box_1", b, box_formulas(cert), *target_of(cert, b), label="box 2 of 3",
                      key="trapping-box-1")
    assert thm.text() == fs[0].theorems[1].text()
    u_lo = raw[1][0].split("/")
    assert f"({u_lo[0]} / {u_lo[1]}) <= u ->" in thm.text()                # exact, as the file states it
    assert "(1 / 450)" in thm.text() and thm.text().rstrip().endswith("Qed.")
    assert fs[0].theorems[2].text() != thm.text()
    (ctl,) = fs[1].theorems
    assert ctl.expect == "rejected" and "epsilon <= (1 / 150)" in ctl.text()   # moved to eps in [C, 3C]


def test_moved_box_is_false_and_true_corners_map_inside():
    """Independent values (the hand map): at the moved box's corner u = 1/4, eps = 3C the image has eps' > C (the
    control states a falsehood); at the corners of the fixture's true boxes |eps'| <= C."""
    from fractions import Fraction
    from verify.coq.trapping import boxes_of, moved_box, read_certificate
    cert = read_certificate(BOXES)
    C = Fraction(1, 450)
    mb = moved_box(cert)
    assert mb == (Fraction(15, 64), Fraction(1, 4), C, 3 * C)
    assert hand_map(mb[1], mb[3]) > float(C) * 1.3
    for b in boxes_of(cert):
        for uu in (b[0] or b[1] / 2, b[1]):
            for e in (b[2], b[3]):
                assert abs(hand_map(uu, e)) <= float(C)


def test_certificate_route_says_what_the_kernel_accepted():
    """kernel-checked only when every box of the cover was accepted and the control rejected (hand-built results)."""
    from verify.coq.kernel import certificate_route
    src = {"of": 968, "digest": "d", "certificate": "f", "trusted": "prefix trusted to Arb"}
    ok = lambda n: [{"expect": "accepted", "status": "accepted"}] * n                     # noqa: E731
    ctl = [{"expect": "rejected", "status": "rejected"}]
    ver = {"coq": "8.16.1", "interval": "4.6.1"}
    full = certificate_route(src, ok(968) + ctl, ver)
    assert full["status"] == "kernel-checked" and full["why"].startswith("trapping region: 968 of 968 boxes kernel")
    assert "prefix trusted to Arb" in full["why"]
    part = certificate_route(src, ok(4) + ctl, ver)
    assert part["status"] == "partial" and "4 of 968 boxes" in part["why"] and "of the 4 exported" in part["why"]
    bad = certificate_route(src, ok(967) + [{"expect": "accepted", "status": "rejected"}] + ctl, ver)
    assert bad["status"] == "rejected"
    loose = certificate_route(src, ok(968) + [{"expect": "rejected", "status": "accepted"}], ver)
    assert loose["status"] == "rejected" and "NOT rejected" in loose["why"]


def test_export_trapping_region_options(tmp_path):
    """--certificate and --boxes: the first N boxes and the control; bad values exit 2 naming the flag."""
    import json
    from verify.cli import main
    res = CliRunner().invoke(main, ["export", "--coq", str(tmp_path), "--group", "trapping-region", "--certificate",
                                    str(BOXES), "--boxes", "2"])
    assert res.exit_code == 0, res.output
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert [len(f["theorems"]) for f in man["files"]] == [2, 1]
    assert man["files"][0]["source"]["boxes"] == 2 and man["files"][0]["source"]["of"] == 3
    for args, flag in ((["--boxes", "0"], "--boxes"), (["--certificate", str(tmp_path / "none.json")], "--certificate")):
        res = CliRunner().invoke(main, ["export", "--coq", str(tmp_path), "--group", "trapping-region",
                                        "--certificate", str(BOXES)] + args)
        assert res.exit_code == 2 and flag in res.output and len(res.output.strip().splitlines()) == 1


@needs_coq
@pytest.mark.slow
def test_trapping_box_accepted_and_moved_box_rejected():
    """The core box (u from 0: exprel's 0/0 at u = 0) is accepted by the kernel; the outermost box moved past the
    edge (false: test_moved_box_is_false...) is rejected, and the route says so."""
    from verify.coq.kernel import certificate_route
    from verify.coq.trapping import trapping_files
    fs = trapping_files(BOXES, boxes=1)
    (box,) = fs[0].theorems
    assert "0 <= u ->" in box.text()                                       # the core box
    got = {}
    for f in fs:
        got |= {n: r["status"] for n, r in check_file(f.text(), f.lines())["theorems"].items()}
    assert got == {"trapping_box_0": "accepted", "trapping_box_moved_past_edge": "rejected"}
    route = certificate_route(dict(fs[0].source), [{"expect": t.expect, "status": got[t.name]} for f in fs
                                                   for t in f.theorems], {"coq": "8.16.1", "interval": "4.6.1"})
    assert route["status"] == "partial" and route["why"].startswith("trapping region: 1 of 3 boxes kernel-checked")
    assert "moved past the edge rejected" in route["why"]


def test_bench_prints_the_boxes_figure():
    """verify bench's markdown gives the trapping region's figure: boxes, seconds, seconds per box (hand values)."""
    from verify.bench import timings as bench
    base = {"quick": False, "regime": {}, "machine": {"cpus": 2}, "convention": "c", "engines": {}, "ratios": {},
            "certified_radius": {"bits": 256, "max_state_radius": 0.0, "steps": 1, "seconds": 0.0},
            "monte_carlo": {"state": {"d": 4}, "mc_rms_rel_error_at_n0": 0.1, "n0": 1, "reduced_gradient_seconds": 0.1,
                            "rows": []}}
    kb = {"available": True, "boxes": 32, "of": 968, "files": 2, "export_seconds": 4.5, "prove_wall_seconds": 100.0,
          "coqc_cpu_seconds": 86.0, "wall_seconds_per_box": 3.125, "cpu_seconds_per_box": 2.69,
          "why": "trapping region: 32 of 968 boxes kernel-checked"}
    text = bench.to_markdown(base | {"kernel_boxes": kb})
    assert "32 of 968 boxes in 2 files" in text and "(3.12 s wall and 2.69 s CPU a box)" in text
    missing = bench.to_markdown(base | {"kernel_boxes": {"available": False, "why": "coqc is not installed"}})
    assert "Trapping region's boxes in Coq: not measured (coqc is not installed)" in missing


def test_target_of_a_box_with_a_profile():
    """With C(u) per annulus (u0 = 1/4, r = 1/2, annuli [1/8, 1/4], [1/16, 1/8], ..., core [0, 1/64]), a box's image
    must land in |eps'| <= C of the annulus holding u_lo/2, and the theorem states u' >= that annulus' inner edge
    (hand values); one C for all needs no edge."""
    from fractions import Fraction as Fr
    from verify.coq.trapping import target_of
    cert = {"region": {"u0": "1/4", "ratio": "1/2", "shells": 3, "C_runs": [["1/100", 2], ["1/200", 2]]}}
    assert target_of(cert, (Fr(3, 16), Fr(1, 4), 0, 0)) == (Fr(1, 100), Fr(1, 16))   # u_lo/2 = 3/32 in [1/16, 1/8]
    assert target_of(cert, (Fr(1, 8), Fr(3, 16), 0, 0)) == (Fr(1, 200), Fr(1, 32))   # 1/16: the edge, next annulus
    assert target_of(cert, (Fr(0), Fr(1, 64), 0, 0)) == (Fr(1, 200), Fr(0))          # the core
    one = {"region": {"u0": "1/4", "ratio": "1/2", "shells": 3, "C": "1/450"}}
    assert target_of(one, (Fr(3, 16), Fr(1, 4), 0, 0)) == (Fr(1, 450), Fr(0))


# ---- the certificate's map tied to the reduced recursion (group certificate-map) -------------------------------------


def test_certificate_map_hand_values():
    """The u-update and cubic-decay identities as exported, at u = 1/2, c = G = X = 1 (hand: R = 1 + (1 - u) c u^2 G X
    = 9/8, u' = u/R = 4/9, (u - u')/u^3 = (1/18) 8 = 4/9 = c Q with Q = (1 - u) G X / R = 4/9); the domain
    hypotheses are u < 1 and G > 0 beside the symbols' signs."""
    from verify.coq.groups import map_theorems
    thms = {t.key: t for t in map_theorems()}
    assert list(thms) == ["increment-over-u2", "u-next-is-u-over-R", "cubic-decay", "eps-update"]
    for key in ("u-next-is-u-over-R", "cubic-decay"):
        t = thms[key]
        pt = {s: (sp.Rational(1, 2) if s.name == "u" else 1) for s in t.variables}
        assert [s.name for s in t.variables] == ["G", "X", "c", "u"]
        assert t.conclusion.lhs.subs(pt) == t.conclusion.rhs.subs(pt) == sp.Rational(4, 9)
        assert "u < 1 ->" in t.text() and "G > 0 ->" in t.text()
    assert "G > 0" not in thms["eps-update"].text() and "u < 1 ->" in thms["eps-update"].text()


def _off_by_u3(t):
    """The identity with u^3 added to its right side (false: the two sides then differ by u^3 > 0), same plan."""
    u = next(s for s in t.variables if s.name == "u")
    from verify.coq.groups import map_domain
    return identity_theorem(t.name + "_off", "off by u^3", t.conclusion.lhs, t.conclusion.rhs + u**3,
                            map_domain(t.conclusion), expect="rejected", tactic=t.tactic)


@needs_coq
@pytest.mark.slow
def test_certificate_map_accepted_and_off_by_u3_rejected():
    """The four identities tying G, R, Q, eps' to the reduced map are accepted by the kernel; each with u^3 added to
    its right side is rejected with the same plan. The variants are false: at a point of the domain (u = 1/3, every
    other symbol 2/3: G > 0, u < 1) the sides differ."""
    from verify.coq.groups import map_theorems
    thms = list(map_theorems())
    off = [_off_by_u3(t) for t in thms]
    for t in off:
        pt = {s: (sp.Rational(1, 3) if s.name == "u" else sp.Rational(2, 3)) for s in t.variables}
        assert t.conclusion.lhs.subs(pt) != t.conclusion.rhs.subs(pt)
    got = kernel(off + thms)         # the false ones first: coqc stops at each, so its re-runs are short
    assert got == {t.name: "accepted" for t in thms} | {t.name: "rejected" for t in off}


def test_chain_route_rule(monkeypatch):
    """The certificate's chain is kernel-checked only when the comparison lemma, the map identities and every box
    are; a partial box count keeps it partial (with the count), a rejected part makes it rejected (hand-built
    routes)."""
    from verify.coq import kernel as k
    ok = {"route": "coq", "status": "kernel-checked", "why": "3 of 3 obligations accepted"}
    boxes = lambda n: {"route": "coq", "status": "kernel-checked" if n == 968 else "partial",        # noqa: E731
                       "why": f"trapping region: {n} of 968 boxes kernel-checked", "accepted": n, "boxes": 968,
                       "digest": "d"}
    monkeypatch.setattr(k, "group_keys", lambda g: ("a",))
    for lemma, trap, want in ((ok, boxes(968), "kernel-checked"), (ok, boxes(96), "partial"),
                              (ok | {"status": "rejected"}, boxes(968), "rejected"),
                              ({"route": "coq", "status": "not run", "why": "coqc is not installed"},
                               {"route": "coq", "status": "not run", "why": "trapping region: not run"}, "not run")):
        monkeypatch.setattr(k, "kernel_route", lambda g, keys, lemma=lemma: lemma)
        monkeypatch.setattr(k, "trapping_route", lambda f, trap=trap: trap)
        r = k.chain_route({})
        assert r["status"] == want, (lemma, trap)
        assert "prefix" in r["why"] and r["why"].count("trapping region") == 1
    monkeypatch.setattr(k, "kernel_route", lambda g, keys: ok)
    monkeypatch.setattr(k, "trapping_route", lambda f: boxes(96))
    r = k.chain_route({})
    assert "96 of 968 boxes" in r["why"] and r["boxes_accepted"] == 96


def test_certify_result_depends_on_the_saved_kernel_routes(tmp_path, monkeypatch):
    """The certify part's options (what its saved result is keyed by) change when `verify prove --coq` saves a route,
    so a cached result cannot keep saying "not run" after the kernel accepted the boxes."""
    from verify.coq.kernel import save_route
    from verify.run.parts import discover, spec
    monkeypatch.setenv("VERIFY_CACHE_DIR", str(tmp_path))
    discover()
    before = spec("certify").extra_options("", "ci")
    save_route({"digest": "abc", "status": "partial", "accepted": 32, "boxes": 968})
    mid = spec("certify").extra_options("", "ci")
    save_route({"digest": "abc", "status": "kernel-checked", "accepted": 968, "boxes": 968})
    after = spec("certify").extra_options("", "ci")
    assert before["kernel_routes"] == [] and mid["kernel_routes"] == [["abc", "partial", 32]]
    assert after["kernel_routes"] == [["abc", "kernel-checked", 968]]
    assert {k: v for k, v in before.items() if k != "kernel_routes"} == \
        {k: v for k, v in after.items() if k != "kernel_routes"}


@needs_coq
@pytest.mark.slow
def test_prove_keeps_and_reuses_each_files_verdict(tmp_path, monkeypatch):
    """A second prove of the same folder reuses the kept verdicts (same statuses, no coqc run); --fresh runs coqc
    again; a file edited and exported again is not matched by the old verdict."""
    import json
    from verify.cli import main
    from verify.coq.kernel import export, prove
    monkeypatch.setenv("VERIFY_CACHE_DIR", str(tmp_path / "cache"))
    x = sp.Symbol("x", positive=True)
    good = identity_theorem("square", "(x + 1)^2 = x^2 + 2x + 1", (x + 1) ** 2, x**2 + 2 * x + 1)
    monkeypatch.setattr("verify.coq.groups.files", lambda groups=(), options=(): (CoqFile("T", "t", "reals", (good,)),))
    export(tmp_path / "d")
    first = prove(tmp_path / "d")
    again = prove(tmp_path / "d")
    assert [f["reused"] for f in first["files"]] == [False] and [f["reused"] for f in again["files"]] == [True]
    assert [t["status"] for t in again["theorems"]] == [t["status"] for t in first["theorems"]] == ["accepted"]
    res = CliRunner().invoke(main, ["prove", "--coq", str(tmp_path / "d"), "--fresh", "--quiet"])
    assert res.exit_code == 0 and "reused" not in res.output
    assert json.loads((tmp_path / "d" / "kernel.json").read_text())["reused_files"] == 0
    bad = identity_theorem("square", "(x + 1)^2 = x^2 + x + 1", (x + 1) ** 2, x**2 + x + 1)
    monkeypatch.setattr("verify.coq.groups.files", lambda groups=(), options=(): (CoqFile("T", "t", "reals", (bad,)),))
    export(tmp_path / "d")
    third = prove(tmp_path / "d")
    assert [f["reused"] for f in third["files"]] == [False] and third["theorems"][0]["status"] == "rejected"


def test_bench_only_kernel_boxes_writes_its_figure(tmp_path, monkeypatch):
    """`verify bench --only kernel_boxes` runs the boxes' figure alone and writes OUT/kernel_boxes.json and .md (the
    measurement replaced by hand values: the full run is not a test)."""
    import json
    from verify.bench import timings as bench
    kb = {"available": True, "boxes": 968, "of": 968, "files": 32, "export_seconds": 40.0, "prove_wall_seconds": 3000.0,
          "coqc_cpu_seconds": 2600.0, "wall_seconds_per_box": 3.099, "cpu_seconds_per_box": 2.686,
          "why": "trapping region: 968 of 968 boxes kernel-checked"}
    monkeypatch.setattr(bench, "trapping_bench", lambda tick=None: kb)      # the bench imports it at its top
    res, md = bench.run_only("kernel_boxes", str(tmp_path))
    assert res == kb == json.loads((tmp_path / "kernel_boxes.json").read_text())
    assert "968 of 968 boxes in 32 files" in md and "(3.1 s wall and 2.69 s CPU a box)" in md
    assert (tmp_path / "kernel_boxes.md").read_text() == md


@needs_coq
def test_a_coqc_run_out_of_time_is_no_verdict_and_is_not_kept(tmp_path, monkeypatch):
    """coqc killed at its time limit: the theorems are not accepted, the result says timed_out, and nothing is kept
    for the next prove to reuse (a timeout is not the kernel's verdict)."""
    from verify.coq import kernel as k
    monkeypatch.setenv("VERIFY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(k, "FILE_TIMEOUT", 0)
    x = sp.Symbol("x", positive=True)
    f = CoqFile("T", "t", "reals", (identity_theorem("square", "s", (x + 1) ** 2, x**2 + 2 * x + 1),))
    (tmp_path / "T.v").write_text(f.text())
    res = k._check_path(str(tmp_path / "T.v"), f.lines())
    assert res["timed_out"] and res["theorems"]["square"]["status"] == "rejected"
    assert "out of time" in res["theorems"]["square"]["error"]
    assert not k.checked_path(f.text(), f.lines()).exists()


def test_the_prove_eta_counts_only_the_files_coqc_ran(monkeypatch):
    """Three kept verdicts reused in no time, then one file run in 60 s: 2 files left take about 120 s (60 s a
    file run), not 2 x 15 s as a count over all four files would say; before any run the ETA is unknown."""
    from verify.cli import prove as prove_cli
    clock = iter([1000.0, 1060.0])     # the ticker's start, then the one run's end (reused files read no clock)
    monkeypatch.setattr(prove_cli.time, "monotonic", lambda: next(clock))
    seen = []

    class Bar:
        def update(self, **kw):
            seen.append(("update", kw["completed"], kw["description"]))

        def set_eta(self, seconds):
            seen.append(("eta", seconds))

    tick = prove_cli.file_ticker(Bar())
    for i in range(3):
        tick(f"f{i}.v", i + 1, 6, True)
    tick("f3.v", 4, 6, False)
    assert [s for s in seen if s[0] == "eta"] == [("eta", None)] * 3 + [("eta", 120.0)]
    assert seen[0] == ("update", 1, "coqc: f0.v reused") and seen[-2] == ("update", 4, "coqc: f3.v checked")
