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
    """The claims table's routes, from hand-built records: the SMT solvers of each step, SymPy for identities, and
    the kernel route (partial, complete, or not run)."""
    from verify.report.statements import proof_routes
    smt = {"method": "smt", "solvers": {"z3": {}, "cvc5": {}}}
    steps = [smt] * 3 + [{"method": "sympy identity"}]

    def st(kernel):
        return {"evidence": [{"route": "p", "kind": "smt", "role": "test", "scope": {}, "result": "", "holds": True,
                              "steps": steps, **({"kernel": kernel} if kernel else {})}]}
    assert proof_routes(st(None)) == "Routes: z3, cvc5, SymPy."
    assert proof_routes(st({"status": "kernel-checked", "accepted": 3})) == \
        "Routes: z3, cvc5, SymPy, Coq (kernel-checked: 3 of the proof's 4 steps)."
    assert proof_routes(st({"status": "kernel-checked", "accepted": 4})) == \
        "Routes: z3, cvc5, SymPy, Coq (kernel-checked: every step)."
    assert proof_routes(st({"status": "not run"})) == "Routes: z3, cvc5, SymPy. Kernel route not run."


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
    from verify.coq.trapping import G as Gs, Qs, Rs, W, X, Y, box_formulas, eps, read_certificate, u
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
    from verify import bench
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
