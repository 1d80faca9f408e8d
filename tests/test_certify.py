"""All-time certificates (verify.certify, ``verify certify``): containment, failure when an obligation is
removed, the regimes that must be refused or handled exactly, and time independence in T.

Second opinions: a 60-digit mpmath iteration of the reduced recursion (verify.engines), the derived
leading terms of verify.derive.asymptotics, and the closed forms of K = D / K = 0 evaluated by hand
with mpmath.
"""
from __future__ import annotations

import json
import shlex
import shutil
from fractions import Fraction

import mpmath
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from verify.certify import CertificateFailed, ExactCertificate, certificate_evidence, certified_band_figure, certify
from verify.certify.coordinates import param_values, slow_coordinates
from verify.certify.comparison import lemma_obligations
from verify.certify.certificate_records import regime_scope
from verify.certify.obligations import identity, smt
from verify.certify.region import Profile, check_region, exprel_obligation, initial_boxes
from verify.cli import main
from verify.engines import iterate
from verify.errors import InvalidParameter
from verify.evidence import decide
from verify.model import make_setting

QUANTITIES = ("excess_loss", "s_err", "w_err")
SMALL = dict(D=4, K=2, preset="cnn", eta="1/4", vstar_norm="2")    # T0 = 64: beyond-prefix T within reach of mpmath


def frac(x) -> Fraction:
    """An mpmath number (or 0) as the exact rational it stores."""
    if not isinstance(x, mpmath.mpf):
        return Fraction(x)              # exact constants (0) come out as Python numbers
    man, exp = x.man_exp                # not mpf(x): that would round to the current precision
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def assert_contains(cert, s, steps):
    """The printed bounds at every T in ``steps`` contain the 60-digit mpmath iterate.

    Tolerance |v| 1e-50: the mpmath run carries 60 + guard digits, so its rounding error after a few
    thousand steps is below 1e-55 relative; the bounds' widths are at least the Arb radius (~1e-38).
    """
    tr = iterate(s, max(steps), "reduced", "mpmath", 60, checkpoints=sorted(set(steps)))
    for rec in tr.records:
        b = cert.bounds_json(rec.step)
        for q in QUANTITIES:
            v = frac(getattr(rec, q))
            lo, hi = Fraction(b[q][0]), Fraction(b[q][1])
            tol = abs(v) / 10**50
            assert lo - tol <= v <= hi + tol, (rec.step, q, b[q], float(v), b["route"])


@pytest.fixture(scope="module")
def small():
    s = make_setting(**SMALL)
    return s, certify(s)


def test_symbolic_obligations_discharged():
    obs = slow_coordinates().obligations + lemma_obligations() + (exprel_obligation(),)
    failed = [o.name for o in obs if not o.ok]
    assert not failed
    names = {o.name for o in obs}
    assert {"rows-share-alpha", "increment-over-u2", "eps-update", "cubic-coefficient", "one-step-lower",
            "one-step-upper", "loss-over-u2"} <= names
    assert {o.method for o in obs} == {"sympy", "smt"}
    smt_steps = [o for o in obs if o.method == "smt"]
    assert smt_steps and all(set(o.solvers) == {"z3", "cvc5"} and all(r["status"] == "proved" for r in o.solvers.values())
                             for o in smt_steps)


def test_obligations_can_fail():
    """The checkers are not rubber stamps: a false identity and a false inequality are not discharged."""
    import sympy as sp
    x = sp.Symbol("x")
    assert not identity("false", "x = x + 1", x, x + 1).ok

    def false_step(lib):         # the one-step lower bound with 3a instead of 2a is false
        a, x2, q = lib.Reals("a x2 q")
        return [x2 > 0, a > 0, a <= q, q <= a, q * x2 < 1], 1 >= (1 + 3 * a * x2) * (1 - q * x2) ** 2
    ob = smt("false", "z' >= z + 3a", false_step)
    assert not ob.ok and {r["status"] for r in ob.solvers.values()} == {"disproved"}


@pytest.mark.slow
def test_bounds_contain_mpmath_inside_and_beyond_prefix(small):
    s, cert = small
    assert cert.kind == "slow-manifold" and 0 < cert.T0 <= 1000
    T0 = cert.T0
    assert_contains(cert, s, [0, 1, 2, T0 // 3, T0 - 1, T0, T0 + 1, T0 + 2, T0 + 50, T0 + 777, T0 + 2500])
    # not vacuous: beyond the prefix the band is narrow, inside it is the Arb radius
    b = cert.bounds_json(T0 + 2500)
    for q in QUANTITIES:
        lo, hi = Fraction(b[q][0]), Fraction(b[q][1])
        assert 0 < lo <= hi and (hi - lo) / lo < Fraction(1, 5)
    p = cert.bounds_json(T0 // 2)
    assert all((Fraction(p[q][1]) - Fraction(p[q][0])) <= Fraction(p[q][1]) / 10**30 for q in QUANTITIES)


@st.composite
def short_prefix_regimes(draw):
    """Small regimes whose prefix is short (strong coupling), across the named conventions."""
    D = draw(st.integers(3, 6))
    preset = draw(st.sampled_from(["sts", "gcn"]))
    K = draw(st.integers(1, D - 1))
    N = 1 if preset == "sts" else D
    loss = draw(st.sampled_from(["sum", "mean"]))
    law_var = draw(st.sampled_from(["1", "2"]))
    c_L = Fraction(1) if loss == "sum" else Fraction(1, N)
    frac_of_limit = draw(st.sampled_from([Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)]))
    eta = frac_of_limit * 2 * K / (c_L * Fraction(law_var) * N)       # a fraction of the stability limit
    eta_kq = draw(st.sampled_from([None, str(eta / 2)]))
    return make_setting(D=D, K=K, preset=preset, eta=str(eta), eta_kq=eta_kq, loss=loss, law_var=law_var,
                        vstar_norm=draw(st.sampled_from(["1", "3/2", "2"])))


@pytest.mark.slow
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(short_prefix_regimes())
def test_bounds_contain_mpmath_over_regimes(s):
    try:
        cert = certify(s, max_prefix=1500)
    except CertificateFailed as exc:
        # an honest failure (e.g. a prefix longer than this test affords) is not a wrong bound
        assume(exc.obligation.name != "prefix-in-region")
        raise
    T0 = cert.T0
    assert_contains(cert, s, [1, T0 // 2, T0, T0 + 1, T0 + 40, T0 + 400])


def test_shrinking_C_breaks_invariance(small):
    s, cert = small
    u0, C = Fraction(cert.knobs["u0"]), Fraction(cert.knobs["C"])
    with pytest.raises(CertificateFailed) as e:
        certify(s, u0=u0, C=C / 64)
    assert e.value.obligation.name == "region-invariant" and "leaves [-C, C]" in e.value.obligation.detail


def test_dropping_a_shell_breaks_the_cover(small):
    s, cert = small
    u0, C = Fraction(cert.knobs["u0"]), Fraction(cert.knobs["C"])
    half = Fraction(1, 2)                                                        # the dyadic shells u0 2^-j
    boxes = initial_boxes(Profile.constant(u0, half, 12, C), 8, 2)
    assert check_region(param_values(s), u0, C, shells=12, boxes=boxes, ratio=half).ok  # control: the cover closes
    hole = [b for b in boxes if not (u0 / 2**4 <= b.u_lo and b.u_hi <= u0 / 2**3)]   # drop shell 3's annulus
    with pytest.raises(CertificateFailed) as e:
        certify(s, u0=u0, C=C, shells=12, ratio=half, region_boxes=hole)
    assert e.value.obligation.name == "region-cover"


def test_stopping_the_prefix_early_fails(small):
    s, cert = small
    with pytest.raises(CertificateFailed) as e:
        certify(s, u0=cert.knobs["u0"], C=cert.knobs["C"], T0=2)
    assert e.value.obligation.name == "prefix-in-region"


def test_time_independent_in_T(small):
    """10^12 and 10^99 are evaluated in closed form (no step loop), and the band keeps shrinking."""
    _, cert = small
    widths = []
    for T in (10**9, 10**12, 10**99):
        b = cert.bounds_json(T)
        assert b["route"] == "comparison lemma on the trapping region"
        widths.append(max((Fraction(b[q][1]) - Fraction(b[q][0])) / Fraction(b[q][0]) for q in QUANTITIES))
    assert widths[0] > widths[1] > widths[2] and widths[1] < Fraction(1, 20)
    # the loss decays like 1/T: 10^87 times smaller from 10^12 to 10^99 (within the band)
    lo12, hi99 = Fraction(cert.bounds_json(10**12)["excess_loss"][0]), Fraction(cert.bounds_json(10**99)["excess_loss"][1])
    assert hi99 < lo12 / 10**86


def test_shells_tighten_to_the_cubic_coefficient(small):
    """[a_j, b_j] on the nested shells shrink to c = D c_L eta_KQ lambda^2 v ||V*||^2 / (K (D - K)^2) (by hand:
    4 * (1/4) * 4 / (2 * 2^2) = 1/2 for SMALL), and every shell is entered in order."""
    _, cert = small
    c = Fraction(1, 2)
    assert Fraction(cert.as_dict()["cubic_coefficient_c"]) == c
    first, last = cert.shells[0], cert.shells[-1]
    assert first.b - first.a > 1000 * (last.b - last.a) and last.a <= c <= last.b
    assert (last.b - last.a) / c < Fraction(1, 10**9)
    assert [sh.t for sh in cert.shells] == sorted(sh.t for sh in cert.shells)
    assert all(sh.Zl * sh.u_j**2 >= 1 for sh in cert.shells)     # u <= u_j from t_j on


def test_asymptotic_constants_contain_the_derived_leading_terms(small):
    """eta T q(T)^(1/p) -> the leading constant of verify.derive.asymptotics (a second derivation)."""
    import sympy as sp
    from verify.model import symbols as sy
    from verify.derive.asymptotics import leading_terms_general
    s, cert = small
    lt = leading_terms_general()
    sub = sy.values_at(s)
    for q, key, p in (("excess_loss", "excess_loss", 1), ("s_err", "s_err", sp.Rational(1, 2)), ("w_err", "w_err", sp.Rational(1, 2))):
        const = sp.N(lt[key].subs(sub) * (sy.T ** p) * sp.Rational(s.eta_v) ** p, 30)
        a = cert.asymptotic[q]
        assert Fraction(a["liminf_ge"]) <= Fraction(str(const)) <= Fraction(a["limsup_le"]), (q, a, const)
        k = cert.constants[q]
        assert 0 < Fraction(k["c_lo"]) <= Fraction(a["liminf_ge"]) and Fraction(a["limsup_le"]) <= Fraction(k["c_hi"])


def test_k_equals_d_is_exact_and_geometric():
    s = make_setting(D=4, K=4, preset="cnn", eta="1/10", vstar_norm="3/2", M=2, d=2)
    cert = certify(s)
    assert isinstance(cert, ExactCertificate) and cert.kind == "exponential"
    assert_contains(cert, s, [0, 1, 2, 17, 300])
    # T = 10^12 against the closed form written by hand: rho = 1 - eta N/D, L = N ||V*||^2 rho^(2T)/(2D)
    with mpmath.workdps(40):
        rho = 1 - mpmath.mpf(1) / 10 * s.N / s.D
        T = 10**12
        hand = {"excess_loss": s.N * mpmath.mpf(9) / 4 * rho ** (2 * T) / (2 * s.D), "w_err": mpmath.mpf(3) / 2 * rho**T}
        b = cert.bounds_json(T)
        for q, v in hand.items():
            assert mpmath.mpf(b[q][0]) <= v * (1 + mpmath.mpf(10) ** -30) and v <= mpmath.mpf(b[q][1]) * (1 + mpmath.mpf(10) ** -30)
        assert b["s_err"] == ["0", "0"]
    assert cert.as_dict()["rate"]["rho"] == "39/40"


def test_k_zero_is_exact():
    s = make_setting(D=5, K=0, preset="sts", M=2, d=3, eta="1/2", vstar_norm="3/2")
    cert = certify(s)
    assert cert.kind == "constant"
    for T in (0, 3, 10**12):
        b = cert.bounds_json(T)
        assert b["excess_loss"] == ["0", "0"]
        assert Fraction(b["w_err"][0]) <= Fraction(3, 2) <= Fraction(b["w_err"][1])
        lo, hi = Fraction(b["s_err"][0]), Fraction(b["s_err"][1])
        assert lo * lo <= Fraction(1, 5) <= hi * hi          # sqrt(N/D), N = 1, D = 5
    assert_contains(cert, s, [0, 5, 40])


@pytest.mark.parametrize("kw, name, text", [
    (dict(SMALL, eta="2"), "eta", "no trapping region"),                       # eta = 2K/N exactly
    (dict(SMALL, eta="3"), "eta", "no trapping region"),
    (dict(D=4, K=4, preset="cnn", eta="8"), "eta", "no trapping region"),       # K = D: 2K/N = 8
    (dict(SMALL, loss="mean", eta="4"), "eta", "2K/(c_L v N) = 4"),              # mean loss: c_L = 1/(M N)
    (dict(SMALL, sigma="erf"), "sigma", "must be identity"),
    (dict(SMALL, init="random", init_scale="1/10"), "init", "zero"),
    (dict(SMALL, law_mean="1/2"), "law_mean", "must be 0"),
])
def test_refused_regimes_name_the_reason(kw, name, text):
    with pytest.raises(InvalidParameter) as e:
        certify(make_setting(**kw))
    assert e.value.name == name and text in str(e.value)


def test_evidence_is_certified_never_proved(small):
    s, cert = small
    ev = certificate_evidence(s, cert)
    scope = regime_scope(s)
    assert decide(ev, scope).verdict == "certified"
    tests = [r for r in ev if r["role"] == "test"]
    assert len(tests) == 6 and all(r["kind"] == "arb" and r["holds"] is True for r in tests)
    assert {r["kind"] for r in ev if r["role"] == "context"} == {"symbolic", "smt", "arb", "formal"}
    # the kernel route of the chain is context only: its boxes here never run (no route saved for this
    # certificate), so the chain is at most partial (the comparison lemma and the map identities, with coqc)
    (kern,) = [r for r in ev if r["kind"] == "formal"]
    assert kern["holds"] is None and "trapping region: its boxes were not kernel-checked" in kern["result"]
    assert kern["kernel"]["parts"]["trapping-region"]["status"] == "not run" and "trusted to Arb" in kern["result"]
    assert kern["kernel"]["status"] == ("partial" if shutil.which("coqc") else "not run")
    assert "region-invariant" not in kern["kernel"]["accepted_keys"]
    routes = {r["obligation"]["name"]: r["routes"] for r in ev if r.get("obligation")}
    assert routes["region-invariant"] == ["Arb"] and routes["one-step-lower"][:2] == ["z3", "cvc5"]
    assert routes["eps-update"] == (["SymPy", "Coq"] if shutil.which("coqc") else ["SymPy"])
    assert all(r["scope"]["horizon"] == "all" for r in ev)
    # a certificate that does not close is inconclusive, never a weaker claim
    failed = certificate_evidence(s, u0=cert.knobs["u0"], C=Fraction(cert.knobs["C"]) / 64)
    assert decide(failed, scope).verdict == "inconclusive" and failed[0]["role"] == "failed"
    # K = D and an unstable eta lie outside the theorem's hypotheses and never decide
    kd = make_setting(D=4, K=4, preset="cnn", eta="1/10")
    ev_kd = certificate_evidence(kd)
    assert ev_kd[0]["role"] == "outside" and ev_kd[0]["holds"] is False and ev_kd[0]["replay"].startswith("verify certify")
    ev_eta = certificate_evidence(make_setting(**dict(SMALL, eta="3")))
    assert ev_eta[0]["role"] == "outside" and "no trapping region" in ev_eta[0]["result"]


@pytest.mark.slow
def test_cli_json_contract(small):
    _, cert = small
    r = CliRunner().invoke(main, ["certify", "--D", "4", "--K", "2", "--preset", "cnn", "--eta", "1/4",
                                  "--vstar-norm", "2", "--at", f"0,{cert.T0 + 5},1e12", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert [b["T"] for b in out["bounds"]] == [0, cert.T0 + 5, 10**12]
    for b in out["bounds"]:
        for q in QUANTITIES:
            assert isinstance(b[q][0], str) and Fraction(b[q][0]) <= Fraction(b[q][1])
    c = out["certificate"]
    assert c["T0"] == cert.T0 and {"u0", "C", "k"} <= set(c["region"]) and Fraction(c["a"]) <= Fraction(c["b"])
    assert c["constants"]["excess_loss"]["c_lo"] and c["shells"] and "smt" in {o["method"] for o in c["obligations"]}
    # the re-check command (verify.model.flags' spelling of the regime, with the certificate's knobs) rebuilds
    # the same certificate
    assert c["recheck"].startswith("verify certify --D 4 --preset cnn --K 2")
    again = CliRunner().invoke(main, shlex.split(c["recheck"])[1:])
    assert again.exit_code == 0, again.output
    c2 = json.loads(again.stdout)["certificate"]
    assert c2["T0"] == c["T0"] and c2["constants"] == c["constants"]


def test_cli_failed_certificate_exits_1_and_names_the_obligation():
    r = CliRunner().invoke(main, ["certify", "--D", "4", "--K", "2", "--preset", "cnn", "--eta", "1/4",
                                  "--vstar-norm", "2", "--T0", "2"])
    assert r.exit_code == 1 and "prefix-in-region" in r.stderr


@pytest.mark.slow
def test_band_figure_is_a_png(small):
    s, cert = small
    tr = iterate(s, 2000, "reduced", "float64", None, checkpoints=[1, 10, 100, 1000, 2000])
    traj = {"T": tr.steps(), **{q: [float(x) for x in tr.series(q)] for q in QUANTITIES}}
    png, caption = certified_band_figure(cert, traj)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and "10^12" in caption


# ----- the region's hulls, the shells' entry steps and lower ends, refusals before long work ---------------------

def decay_ratio(s, u, digits: int = 60):
    """Q = (u - u')/u^3 of one exact GD step from the slow manifold (alpha = alpha*(u), eps = 0) at off-support
    mass u, by the generated reduced recursion at ``digits`` digits: alpha*(u) = <s, s*>/||s||^2 written by hand."""
    import sympy as sp
    from verify.derive.reduced_map import reduced_step_exprs
    from verify.model import symbols as sy
    _, inc = reduced_step_exprs(s.sigma, "interior")
    D, K = s.D, s.K
    u = sp.Rational(u)
    a_star = ((1 - u) / K) / ((1 - u) ** 2 / K + u**2 / (D - K))
    E = (D - K) * (1 - u) / (K * u)                       # e^delta at off-support mass u
    vals = sy.values_at(s) | {sy.alpha: a_star, sy.delta: sp.log(E), sy.vn: sp.Rational(s.vstar_norm2())}
    Delta = inc.subs(vals)
    u_next = (D - K) / (K * E * sp.exp(Delta) + D - K)
    return Fraction(str(sp.N((u - u_next) / u**3, digits)))


def straddling_cover(u0: Fraction, C: Fraction, shells: int, ratio: Fraction, width=Fraction(1, 32), n_u=16, n_eps=4):
    """A cover of [0, u0] x [-C, C] in which every shell edge u_j = u0 r^j (j >= 1) lies inside one box
    [u_j (1 - width), u_j (1 + width)]; between those boxes, n_u thin slabs (so that boxes wholly below u_j
    have tight enclosures), each cut into n_eps eps-pieces."""
    from verify.certify.region import Box
    edges = [u0 * ratio**j for j in range(1, shells + 1)]
    cuts = sorted({Fraction(0), u0} | {e * (1 + k * width) for e in edges for k in (-1, 1)})
    fine = []
    for a, b in zip(cuts, cuts[1:]):
        k = 1 if any(a < e < b for e in edges) else n_u
        fine += [a + (b - a) * i / k for i in range(k)]
    fine.append(u0)
    ec = [-C + 2 * C * i / n_eps for i in range(n_eps + 1)]
    return [Box(a, b, e0, e1) for a, b in zip(fine, fine[1:]) for e0, e1 in zip(ec, ec[1:])]


def test_hull_takes_boxes_straddling_a_shell_edge():
    """The shells' [a_j, b_j] on a cover whose boxes straddle the shell edges contain the true decay ratio at
    the edge itself (an exact GD step at 60 digits), and the hull equals a brute-force hull over overlapping
    boxes. The old selection by upper edge (lo <= u_hi <= hi) drops the straddling box, and there, where Q
    grows with u, its b_j lies below Q(u_j): an unsound bound the check must reject."""
    s = make_setting(D=16, K=4, preset="gcn", eta="1/16")
    u0, C, ratio, J = Fraction(1, 4), Fraction(1, 36), Fraction(3, 4), 4     # an invariant region of this regime
    rc = check_region(param_values(s), u0, C, shells=J, boxes=straddling_cover(u0, C, J, ratio), ratio=ratio,
                      max_depth=0)
    assert rc.ok
    c = Fraction(16, 16 * 4 * 12**2)      # the cubic coefficient D eta ||V*||^2/(K (D - K)^2): hulls are of (u - u')/(c u^3)
    for j in range(1, J):
        uj = u0 * ratio**j
        q = decay_ratio(s, uj) / c
        h = rc.shell_bounds(j)
        assert h["a"] <= q <= h["b"], (j, float(h["a"]), float(q), float(h["b"]))
        meets = [r for r in rc.results if r.box.u_lo <= uj]
        assert h["b"] == max(r.Q[1] for r in meets) and h["a"] == min(r.Q[0] for r in meets)
        lo = uj * Fraction(9, 10)                          # a lower end inside a box: that box counts too
        both = [r for r in rc.results if r.box.u_lo <= uj and r.box.u_hi >= lo]
        assert rc.hull(lo, uj)["b"] == max(r.Q[1] for r in both)
        below = [r for r in rc.results if r.box.u_hi <= uj]   # the old selection
        assert max(r.Q[1] for r in below) < q


def test_hull_of_an_empty_or_lowest_selection():
    """A range no box meets gives None (not a crash, not the whole region); the lowest range gives the lowest
    box only."""
    from verify.certify.region import Box, BoxResult, RegionCheck
    z = (Fraction(0), Fraction(0))
    boxes = [Box(Fraction(1, 8), Fraction(1, 4), Fraction(-1), Fraction(1)), Box(Fraction(1, 4), Fraction(1, 2),
                                                                                 Fraction(-1), Fraction(1))]
    rc = RegionCheck(Fraction(1, 2), Fraction(1), 1)
    rc.results = [BoxResult(b, (Fraction(k + 1), Fraction(k + 2)), z, Fraction(1), z, z, True) for k, b in enumerate(boxes)]
    assert rc.hull(Fraction(0), Fraction(1, 16)) is None
    assert rc.hull(Fraction(3, 4), Fraction(1)) is None
    assert (rc.hull(Fraction(0), Fraction(1, 8))["a"], rc.hull(Fraction(0), Fraction(1, 8))["b"]) == (1, 2)
    assert (rc.hull(Fraction(1, 5), Fraction(3, 10))["a"], rc.hull(Fraction(1, 5), Fraction(3, 10))["b"]) == (1, 3)
    assert rc.hull(Fraction(3, 8), Fraction(1))["a"] == 2


def test_entry_steps_equal_the_linear_search(small, monkeypatch):
    """Galloping + bisection gives exactly the shells of the step-by-step search (the first n with the rounded
    z_lo(n) >= 1/u_(j+1)^2), on a case small enough for the linear search."""
    from verify.certify import comparison
    from verify.certify.arbfun import dyadic_down

    def linear(Zl, a, need):
        n = max(0, comparison.ceil_div(need - Zl, 2 * a))
        while dyadic_down(Zl + 2 * a * n) < need:
            n += 1
        return n
    s, cert = small
    knobs = dict(u0=cert.knobs["u0"], C=cert.knobs["C"], shells=40)
    fast = certify(s, **knobs)
    monkeypatch.setattr(comparison, "entry_steps", linear)
    slow = certify(s, **knobs)
    assert fast.shells == slow.shells and len(fast.shells) == 41


def test_lower_ends_are_checked(small):
    """The lower-end obligation is computed from the shells: a lower end set above what z_hi allows fails it."""
    from dataclasses import replace
    from verify.certify.comparison import shell_obligations
    _, cert = small
    ok = {o.name: o.ok for o in shell_obligations(cert.shells)}
    assert all(ok.values()) and "shell-lower-ends" in ok
    bad = list(cert.shells)
    bad[3] = replace(bad[3], lo=bad[3].u_j)               # u >= u_j on the whole shell: not what z_hi gives
    out = {o.name: o for o in shell_obligations(bad)}
    assert not out["shell-lower-ends"].ok and "shell 3" in out["shell-lower-ends"].detail


def test_unreachable_region_is_refused_before_the_prefix(monkeypatch):
    """||V*|| = 1e-3 makes the cubic coefficient 1e6 times smaller: the prefix would need ~1e10 steps. It is
    refused, naming --max-prefix, before any region check or prefix step runs."""
    from verify.certify import certificate

    def forbidden(*a, **k):
        raise AssertionError("long work started before the refusal")
    monkeypatch.setattr(certificate, "check_region", forbidden)
    monkeypatch.setattr(certificate, "run_prefix", forbidden)
    with pytest.raises(InvalidParameter) as e:
        certify(make_setting(D=64, K=4, preset="gcn", eta="1/32", vstar_norm="1/1000"))
    assert e.value.name == "max_prefix" and "steps" in str(e.value)
    # the estimate is below the prefix actually needed (it never refuses what closes): the benchmark regime
    s = make_setting(D=64, K=4, preset="gcn", eta="1/32")
    assert certificate.prefix_steps_needed(param_values(s), Fraction(60, 64), Fraction(1, 4)) < 39728
