"""Certificates that cannot be faked by editing their file (issue 29, section 2).

One table of edits to a saved one-regime certificate and to a saved family file, each with the step the
independent re-checker (python -m recheck) must name when it refuses: the regime block edited to
another D and K, a genuine certificate relabelled as another regime with its map edited to match (refused only
because the checker derives the reduced map from its own statement of the model), ||V*|| changed in a regime block
or in a family's options, a family cell's box widened with its neighbour deleted, a member's parameters edited.
Then queries of a tampered family file (T0 cut from its value to 10, the eta range widened, u0 edited): each is
refused, and never prints a bound that excludes the true value, computed here by a 40-digit mpmath iteration of the
member's (alpha, delta) recursion written out by hand from the per-column loss (docs/setting.md), independent of
the toolkit and of the checker. The certificates are tests/conftest.py's session fixtures (made once).
"""
from __future__ import annotations

import json
import re
from fractions import Fraction

import mpmath
import pytest
from click.testing import CliRunner

from conftest import rechecked
from recheck import certificates as rc
from verify.cli import main




def _substituted(text: str, values: dict) -> str:
    """A formula with the names s, x, y replaced by exact constants."""
    return re.sub(r"\b(s|x|y)\b", lambda m: f"({values[m.group(1)]})", text)


def _relabelled(d: dict) -> None:
    """The genuine certificate of cnn D = 4, K = 2 relabelled as cnn D = 6, K = 2 (regime block and parameters),
    with every formula a relabelling must change edited to match: the invariants and prefactors as the original's
    constants, and the reduced map in the parameters as the map in (s, x, y) at those constants. Every identity
    between the file's formulas still holds and the prefix, region and shells are the original's, so only the
    model stated in the checker tells the map is not the regime's."""
    from verify.model import make_setting
    other = make_setting(D=6, K=2, preset="cnn", eta="1/4", vstar_norm="2")
    d["regime"] = json.loads(json.dumps(other.config()))
    d["parameters"] = {**d["parameters"], "D": "6", "N": "3"}
    inv = {k: d["invariants"][k] for k in ("s", "x", "y")}
    m = d["map"]
    m["invariants"] = {k: f"({v})" for k, v in inv.items()}
    m["prefactors"] = {q: f"({v})" for q, v in d["prefactors"].items()}
    rm = m["reduced_map"]
    m["reduced_map_parameters"] = {
        "alpha_next": f"alpha + ({_substituted(rm['alpha_increment'], inv)})",
        "delta_increment": _substituted(rm["delta_increment"], inv),
        "loss": f"({d['prefactors']['excess_loss']})*({_substituted(rm['loss'], inv)})",
        "s_err2": f"({d['prefactors']['s_err2']})*({_substituted(rm['s_err2'], inv)})"}


def _regime_D_K(d: dict) -> None:
    d["regime"].update(D=8, K=4)


def _regime_vstar(d: dict) -> None:
    """||V*|| changed from 2 to 1 in the regime block (its square too); the parameters keep V2 = 4."""
    d["regime"].update(vstar_norm="1", vstar_norm2="1")


def _widened_cell(d: dict) -> None:
    """Cell D8's box widened to D = 8..9 and the neighbouring cell D9 deleted: the cover still holds."""
    d["cells"] = [c for c in d["cells"] if c["path"] != "D9:"]
    d["cells"][0]["box"]["D"] = ["8", "9"]
    d["members"] = [m for m in d["members"] if m["cell"] == "D8:"]


def _family_vstar(d: dict) -> None:
    d["spec"]["options"]["vstar_norm"] = "2"


def _family_vstar_untied(d: dict) -> None:
    """||V*|| = 2 in the options and the file's own ties removed: the cells' parameters, certified for 1, differ."""
    d["spec"]["options"]["vstar_norm"] = "2"
    del d["spec"]["parameters"]


def _member_eta(d: dict) -> None:
    d["members"][0]["parameters"]["eta_V"] = "1/10"


REGIME_FILE, FAMILY_FILE = "regime_certificate", "small_family_path"


@pytest.mark.slow
@pytest.mark.parametrize("fixture, change, step", [
    (REGIME_FILE, _regime_D_K, "regime"),
    (REGIME_FILE, _relabelled, "model"),
    (REGIME_FILE, _regime_vstar, "regime"),
    (REGIME_FILE, lambda d: d["regime"].update(sigma="erf"), "regime"),
    (REGIME_FILE, lambda d: d["regime"].update(init="random", init_scale="1/10"), "regime"),
    (REGIME_FILE, lambda d: d["parameters"].update(V2="1"), "regime"),
    (REGIME_FILE, lambda d: d["map"]["reduced_map_parameters"].update(
        delta_increment="2*(" + d["map"]["reduced_map_parameters"]["delta_increment"] + ")"), "map-identities"),
    (FAMILY_FILE, _family_vstar, "parameters"),
    (FAMILY_FILE, _family_vstar_untied, "parameters"),
    (FAMILY_FILE, _widened_cell, "parameters"),
    (FAMILY_FILE, _member_eta, "members"),
    (FAMILY_FILE, lambda d: d["spec"]["options"].update(sigma="erf"), "regime"),
    (FAMILY_FILE, lambda d: d["spec"]["options"].update(preset="gcn"), "parameters"),
], ids=["regime-D-K", "relabelled", "regime-vstar", "regime-sigma", "regime-init", "parameters-V2", "map-scaled",
        "family-vstar", "family-vstar-untied", "widened-cell", "member-parameters", "family-sigma", "family-preset"])
def test_an_edited_certificate_is_refused_naming_the_step(request, tmp_path, fixture, change, step):
    data = json.loads(request.getfixturevalue(fixture).read_text())
    change(data)
    bad = tmp_path / "edited.json"
    bad.write_text(json.dumps(data))
    code, out = rechecked(bad)
    assert code == 1 and out.splitlines()[-1].startswith(f"FAILED {step}:"), out[-600:]


def test_the_checker_states_the_reduced_map_the_toolkit_derived(regime_certificate):
    """The checker's model (its own ten lines) gives the toolkit's reduced map exactly, and the one-regime file's
    parameters are its regime block's by the checker's rules: D = 4, K = 2, N = D/K = 2, V2 = ||V*||^2 = 4."""
    data = json.loads(regime_certificate.read_text())
    rc.check_model(rc.Formulas(data["map"]))
    got = rc.regime_parameters(data["regime"])
    assert (got["D"], got["K"], got["N"], got["V2"], got["eta_V"]) == (4, 2, 2, 4, Fraction(1, 4))


# ----- queries of a tampered family file ------------------------------------------------------------------------
def true_member(D: int, K: int, eta: Fraction, Ts: list, dps: int = 40) -> dict:
    """{T: (L - L_opt, ||S - S*||_F, ||W_X - V*||_F)} of the sts member (N = 1, ||V*|| = 1, v = c_L = lambda = beta = 1)
    by a 40-digit iteration of GD on (alpha, delta), written here from the per-column loss
    ell = 1/2 (K (alpha a - 1/K)^2 + (D - K) (alpha b)^2), a = E/Z, b = 1/Z, Z = K E + D - K, E = e^delta:
    alpha' = alpha - eta dell/dalpha, delta' = delta - eta D/(K (D - K)) E dell/dE."""
    with mpmath.workdps(dps):
        a, d, out, e = mpmath.mpf(0), mpmath.mpf(0), {}, mpmath.mpf(eta.numerator) / eta.denominator
        for t in range(max(Ts) + 1):
            E = mpmath.exp(d)
            Z = K * E + D - K
            on, off = E / Z, 1 / Z
            if t in Ts:
                ell = (K * (a * on - mpmath.mpf(1) / K) ** 2 + (D - K) * (a * off) ** 2) / 2
                s2 = K * (on - mpmath.mpf(1) / K) ** 2 + (D - K) * off ** 2
                out[t] = (ell, mpmath.sqrt(s2), abs(a - 1))
            dl_da = a * (K * on ** 2 + (D - K) * off ** 2) - on
            # d on/dE = (D - K)/Z^2, d off/dE = -K/Z^2
            dl_dE = K * (a * on - mpmath.mpf(1) / K) * a * (D - K) / Z ** 2 - (D - K) * a * off * a * K / Z ** 2
            a, d = a - e * dl_da, d - e * D / (K * (D - K)) * E * dl_dE
        return out


def test_the_hand_iteration_agrees_with_the_toolkits_engine():
    """The test's own iteration against verify's reduced engine at 40 digits (a second route to the true value)."""
    from verify.engines import iterate
    from verify.model import make_setting
    rec = iterate(make_setting(D=9, K=4, preset="sts", eta="63/1000", vstar_norm="1"), 1000, "reduced", "mpmath", 40,
                  checkpoints=[1000]).records[-1]
    mine = true_member(9, 4, Fraction(63, 1000), [1000])[1000]
    with mpmath.workdps(40):
        for v, q in zip(mine, ("excess_loss", "s_err", "w_err")):
            assert abs(v - getattr(rec, q)) <= mpmath.mpf(10) ** -30 * abs(v), q


def _T0_cut(d):
    next(c for c in d["cells"] if c["path"] == "D9:")["T0"] = 10


def _eta_widened(d):
    d["spec"]["ranges"]["eta"][1] = "1/8"
    for c in d["cells"]:
        c["box"]["eta"][1] = "1/8"


def _u0_edited(d):
    reg = next(c for c in d["cells"] if c["path"] == "D9:")["region"]
    reg["u0"] = str(Fraction(reg["u0"]) * 3 / 2)


@pytest.mark.slow
@pytest.mark.parametrize("change, eta", [(_T0_cut, Fraction(63, 1000)), (_eta_widened, Fraction(1, 10)),
                                         (_u0_edited, Fraction(63, 1000))], ids=["T0", "eta-range", "u0"])
def test_a_tampered_family_file_never_answers_a_bound_that_excludes_the_truth(small_family_path, tmp_path, change, eta):
    data = json.loads(small_family_path.read_text())
    change(data)
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(data))
    Ts = [20, 1000]
    r = CliRunner().invoke(main, ["certify", "--family", str(bad), "--query", f"D=9,eta={eta}", "--at", "20,1000",
                                  "--json"])
    truth = true_member(9, 4, eta, Ts)
    if r.exit_code == 0:            # whatever is answered must hold the true value
        for b in json.loads(r.stdout)["bounds"]:
            for v, q in zip(truth[b["T"]], ("excess_loss", "s_err", "w_err")):
                assert Fraction(b[q][0]) <= Fraction(mpmath.nstr(v, 35)) <= Fraction(b[q][1]), (b["T"], q)
    # and here each tamper is caught by the re-check of the cell the query uses: one line, exit 2, nothing printed
    assert r.exit_code == 2 and not r.stdout, r.output
    assert "re-check" in r.stderr and "--family" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_query_whose_observables_leave_positive_is_refused_in_one_line(small_family_path, monkeypatch):
    """tail_bounds raising ObservablesNotPositive (a vacuous bound) ends the query with one line, exit 2, no
    traceback and no bound."""
    from verify.certify import bounds

    def vacuous(*a, **k):
        raise bounds.ObservablesNotPositive("at t = 1 after T0: Lt = [+/- 1]")
    monkeypatch.setattr(bounds, "tail_bounds", vacuous)
    r = CliRunner().invoke(main, ["certify", "--family", str(small_family_path), "--query", "D=9,eta=0.063",
                                  "--at", "1e6"])
    assert r.exit_code == 2 and "observables-positive" in r.stderr and not r.stdout, r.output
    assert "Traceback" not in r.output and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_bench_times_the_recheck_beside_the_certification(small_family):
    """verify bench's record of a family file's independent re-check (here the two-cell family, on two Dask
    workers): the file verifies, and the record carries the certification's own time beside the re-check's."""
    from verify.bench.timings import recheck_timing
    got = recheck_timing(small_family, workers=2)
    assert got["verified"] and got["failure"] == "", got
    assert (got["cells"], got["workers"]) == (2, 2)
    assert got["certify_seconds"] == round(small_family.seconds, 2) and got["recheck_seconds"] > 0


@pytest.mark.slow
def test_a_tampered_family_is_refused_the_same_on_dask_workers(small_family_path, tmp_path):
    """The cells re-checked on two Dask processes (python -m recheck FILE --workers 2): a cell's T0
    cut to 10 is refused naming the step, as in one process; a bad --workers is a usage error (exit 2)."""
    import subprocess
    import sys
    from pathlib import Path
    data = json.loads(small_family_path.read_text())
    _T0_cut(data)
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(data))
    root = Path(__file__).resolve().parents[1]
    def run(*args):
        return subprocess.run([sys.executable, "-m", "recheck", *args], capture_output=True, text=True,
                              cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    r = run(str(bad), "--workers", "2")
    assert r.returncode == 1 and re.match(r"FAILED (tube-time|prefix):", r.stdout.splitlines()[-1]), r.stdout[-400:]
    assert "cell D9:" in r.stdout.splitlines()[-1]
    r = run(str(bad), "--workers", "0")
    assert r.returncode == 2 and "--workers" in r.stderr
