"""One registry per concept: part kinds in the report, certificate methods, engine routes, claims' sigma lists.

Each registry gets an entry written in a temporary module (nothing else edited) and the consumer is shown to pick
it up; a source scan checks that no consumer switches on a part kind's or a certificate kind's name.
"""
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from verify.certify.methods import METHODS, method_for, methods
from verify.cli import main
from verify.engines import ROUTES, iterate
from verify.errors import InvalidParameter
from verify.model import make_setting
from verify.model.hypotheses import admitted_sigmas, closure
from verify.report import figure_jobs
from verify.report.kinds import REPORT_KINDS
from verify.report.results import assemble, load_parts

ROOT = Path(__file__).resolve().parents[1]


def _plugin(tmp_path, name: str, text: str):
    """Write ``text`` as module ``name`` in ``tmp_path``, import it; the caller forgets it afterwards."""
    (tmp_path / f"{name}.py").write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


# ---- part kinds in the report ------------------------------------------------------------------------------------
KIND = '''
from verify.report.kinds import PartKind, report_kind


@report_kind
class Tally(PartKind):
    kind = "tally"
    order = -1

    def decision(self, rec, statements):
        return {"verdict": "inconclusive", "scope_label": "(none)", "reason": "tally of " + rec["result"]["n"]}

    def finding(self, rec, statements):
        return "counted " + rec["result"]["n"]

    def figures(self, rec):
        return [("figures/tally.png", len, rec["result"], rec["part"])]
'''


def _record(part: str, result: dict, status: str = "ok") -> dict:
    kind, _, arg = part.partition(":")
    return {"part": part, "kind": kind, "arg": arg, "status": status, "options": {}, "seconds": 1.0,
            "result": result, "error": None}


def test_a_part_kind_registered_in_a_new_module_is_read_by_the_report(tmp_path):
    before = set(REPORT_KINDS)
    _plugin(tmp_path, "toy_tally_kind", KIND)
    try:
        pdir = tmp_path / "parts"
        pdir.mkdir()
        for rec in (_record("bench", {"seconds": 1}), _record("tally", {"n": "seven"})):
            (pdir / f"{rec['part']}.json").write_text(json.dumps(rec))
        recs = load_parts(pdir)
        assert [r["part"] for r in recs] == ["tally", "bench"]        # its order (-1) puts it first
        res = assemble(recs, profile="ci", timing={}, reused=[], figures=[], provenance={})
        row = next(p for p in res["parts"] if p["name"] == "tally")
        assert (row["verdict"], row["reason"], row["finding"]) == ("inconclusive", "tally of seven", "counted seven")
        bench = next(p for p in res["parts"] if p["name"] == "bench")
        assert bench["verdict"] == "n/a"                             # the built-in kind still reads as before
        assert [j[0] for j in figure_jobs(recs)] == ["figures/tally.png"]
    finally:
        REPORT_KINDS.pop("tally", None)
    assert set(REPORT_KINDS) == before


def test_an_undescribed_kind_reads_as_a_generic_part():
    rec = _record("mystery", {"finding": "something  found"}) | {"file": "mystery.json"}
    res = assemble([rec], profile="ci", timing={}, reused=[], figures=[], provenance={})
    assert res["parts"][0]["verdict"] == "inconclusive" and res["parts"][0]["finding"] == "something found"


# ---- certificate methods -----------------------------------------------------------------------------------------
METHOD = '''
from dataclasses import dataclass, field

from verify.certify.methods import Method, certificate_method
from verify.evidence import record


@dataclass
class Toy:
    setting: object
    bits: int
    kind: str = "toy-kind"
    T0: int = 0
    obligations: list = field(default_factory=list)

    def as_dict(self):
        return {"kind": self.kind, "statement": "a toy statement", "regime": self.setting.config(),
                "obligations": []}

    def bounds_json(self, T, digits=None):
        return {"T": T, "excess_loss": ["0", "1"], "s_err": ["0", "1"], "w_err": ["0", "1"], "route": "toy"}


@certificate_method
class ToyMethod(Method):
    name = "toy"
    kinds = ("toy-kind",)
    order = 0
    status = "toy status"

    def applies(self, setting):
        return setting.D == 7 and setting.K == 3

    def build(self, setting, knobs, **extra):
        return Toy(setting, knobs["bits"])

    def describe(self, d):
        return ["  toy line: " + d["statement"]]

    def records(self, setting, cert, scope, replay):
        return [record("toy route", "symbolic", scope, "toy result", None, role="context")]
'''


def test_a_certificate_method_in_a_new_module_is_used_by_certify_the_cli_and_the_records(tmp_path):
    from verify.certify import certificate_evidence, certify
    from verify.certify.files import certificate_file
    from verify.sweep.measurements.certificate import certificate as sweep_column
    builtin = [m.name for m in methods()]
    _plugin(tmp_path, "toy_certificate_method", METHOD)
    try:
        assert [m.name for m in methods()][0] == "toy"               # order 0: preferred
        s = make_setting(D=7, K=3, preset="sts", eta="1/16")
        cert = certify(s)
        assert type(cert).__name__ == "Toy" and cert.bits == 128
        ev = certificate_evidence(s, cert)
        assert [e["route"] for e in ev] == ["toy route"]
        with pytest.raises(InvalidParameter, match="toy certificate is printed by --json"):
            certificate_file(cert, [])
        assert sweep_column(s, 10, {})["certificate_status"] == "toy status"
        out = CliRunner().invoke(main, ["certify", "--D", "7", "--K", "3", "--preset", "sts", "--eta", "1/16"])
        assert out.exit_code == 0, out.output
        assert "certificate (toy-kind): a toy statement" in out.output and "  toy line: a toy statement" in out.output
        # a regime it does not apply to still goes to the built-in methods (K = D: the closed form)
        assert method_for(make_setting(D=8, K=8, preset="cnn", eta="1/10")).name == "closed-form"
    finally:
        METHODS.pop("toy", None)
    assert [m.name for m in methods()] == builtin


def test_the_built_in_methods_cover_every_K_once():
    """K = 0 and K = D have closed forms, 0 < K < D the slow-manifold certificate: exactly one applies."""
    for K in range(0, 7):
        s = make_setting(D=6, K=K, preset="sts", eta="1/100")
        assert [m.name for m in methods() if m.applies(s)] == (["closed-form"] if K in (0, 6) else ["slow-manifold"])


# ---- engine routes -----------------------------------------------------------------------------------------------
ROUTE = '''
from verify.engines import Route, register_route


def run(setting, steps, ar, checkpoints=None, progress=None):
    return ("toy trajectory", steps, ar.name)


register_route(Route("toy", ("float64",), __name__, "run"))
# preferred where it applies (three steps of the reduced engine in float64), the built-in route elsewhere
register_route(Route("reduced", ("float64",), __name__, "run", when=lambda setting, steps: steps == 3), preferred=True)
'''


def test_an_engine_route_in_a_new_module_is_chosen_by_iterate(tmp_path):
    s = make_setting(D=4, K=2, preset="sts", eta="1/10")
    with pytest.raises(InvalidParameter, match="must be reduced or full"):
        iterate(s, 3, engine="toy", arithmetic="float64")
    (tmp_path / "toy_engine_route.py").write_text(ROUTE)
    sys.path.insert(0, str(tmp_path))
    before = list(ROUTES)
    try:
        importlib.import_module("toy_engine_route")
        assert iterate(s, 3, engine="toy", arithmetic="float64") == ("toy trajectory", 3, "float64")
        assert iterate(s, 3, engine="reduced", arithmetic="float64") == ("toy trajectory", 3, "float64")
        assert iterate(s, 4, engine="reduced", arithmetic="float64").steps()[-1] == 4      # the built-in route
        with pytest.raises(InvalidParameter, match="engine toy runs in float64"):
            iterate(s, 3, engine="toy", arithmetic="mpmath")
    finally:
        ROUTES[:] = [r for r in ROUTES if r.module != "toy_engine_route"]
        sys.path.remove(str(tmp_path))
        sys.modules.pop("toy_engine_route", None)
    assert ROUTES == before


# ---- claims' sigma lists -----------------------------------------------------------------------------------------
def test_admitted_sigmas_follow_the_hypotheses():
    """By hand: odd sigmas are identity, erf and x + x^3/10 (x + x^2/2 and relu are not odd); "identity" admits
    identity only; no sigma hypothesis admits every registered representative."""
    assert admitted_sigmas(("odd",)) == ("identity", "erf", "poly:0,1,0,1/10")
    assert admitted_sigmas(("identity",)) == ("identity",)
    assert set(admitted_sigmas(("centred",))) >= {"identity", "erf", "relu", "poly:0,1,1/2"}


def test_every_claim_tests_only_sigmas_its_hypotheses_admit():
    """A sigma a claim lists (its statements' scope) must be admitted by that statement's hypotheses."""
    from lemmas import CLAIMS
    bad = []
    for cid, c in CLAIMS.items():
        for st in c.statements:
            sig = st.scope.sigma
            if sig == "all" or not sig:
                continue
            ids = [h.id for h in st.hypotheses]
            outside = set(sig) - set(admitted_sigmas(ids))
            if outside:
                bad.append((cid, st.id, sorted(outside), sorted(closure(ids))))
    assert bad == []


# (claim, statement) whose sigma list is computed from its hypotheses
COMPUTED = (("wp-zero", "wp-zero"), ("two-level-attention", "two-level-attention"),
            ("early-alignment", "early-alignment"))
OTHER = ("lemma-C.2", "lemma-C.2-other-sigma")      # every admitted sigma but the identity (its own test below)


def _admitted_by_hand(ids) -> list:
    """The registered representatives every sigma predicate of the hypotheses' closure accepts, read from the
    hypothesis registry one hypothesis at a time (not through admitted_sigmas's combined restriction)."""
    from verify.model.hypotheses import HYPOTHESES
    from verify.model.sigmas import parse_sigma, sigma_examples
    tests = [HYPOTHESES[h].restrict.sigma for h in closure(ids) if HYPOTHESES[h].restrict.sigma is not None]
    return [spec for spec in sigma_examples() if all(t(parse_sigma(spec)) for t in tests)]


@pytest.mark.parametrize("cid, sid", COMPUTED)
def test_claims_sigma_lists_are_what_their_hypotheses_admit(cid, sid):
    """Each of these statements claims exactly the registered sigmas its hypotheses admit, and its title names them."""
    from lemmas import CLAIMS
    st = CLAIMS[cid].statement(sid)
    assert list(st.scope.sigma) == _admitted_by_hand([h.id for h in st.hypotheses])


def test_lemma_c2_other_sigma_is_every_admitted_sigma_but_the_identity_each_with_a_regime():
    """lemma-C.2-other-sigma claims every sigma its hypotheses admit except the identity (the identity's three parts add
    their step-size hypotheses), and runs a regime of each, W_P frozen where sigma is not odd (its "wp-zero")."""
    from lemmas import CLAIMS
    from lemmas.lemma_C_2 import regimes
    from verify.model.sigmas import parse_sigma
    st = CLAIMS["lemma-C.2"].statement("lemma-C.2-other-sigma")
    want = [x for x in _admitted_by_hand([h.id for h in st.hypotheses]) if not parse_sigma(x).is_identity]
    assert list(st.scope.sigma) == want == ["erf", "poly:0,1,0,1/10", "poly:0,1,1/2", "relu"]
    run = {s.sigma.spec(): s for s in regimes() if not s.sigma.is_identity}
    assert sorted(run) == sorted(want)
    assert all(s.wp_trainable is s.sigma.odd for s in run.values())
    assert st.text.startswith("For sigma in {erf, x + x^3/10, x + x^2/2 with W_P frozen, relu with W_P frozen}, ")


def test_claims_sigma_lists_by_hand():
    """By hand: two-level-attention and early-alignment assume nothing of sigma's parity (only W_P = 0, or M = 1
    unless linear), so they admit every registered representative; their prose names each, with its condition."""
    from lemmas import CLAIMS
    every = ("identity", "erf", "poly:0,1,0,1/10", "poly:0,1,1/2", "relu")
    assert CLAIMS["two-level-attention"].statement("two-level-attention").scope.sigma == every
    assert CLAIMS["early-alignment"].statement("early-alignment").scope.sigma == every
    assert ("(sigma in {identity, erf, x + x^3/10, x + x^2/2 with W_P frozen, relu with W_P frozen})"
            in CLAIMS["two-level-attention"].title)
    assert ("for sigma in {identity, erf with M = 1, x + x^3/10 with M = 1, x + x^2/2 with M = 1, relu with M = 1}"
            in CLAIMS["early-alignment"].title)


SINE_THEN_CLAIMS = '''
import sys
sys.path.insert(0, sys.argv[1])
import toy_sine_sigma                     # registers the family "sine" (odd) before the claims are read
from lemmas import CLAIMS
print({sid: list(CLAIMS[cid].statement(sid).scope.sigma) for cid, sid in %r})
''' % (COMPUTED + (OTHER,),)


def test_a_new_odd_sigma_is_claimed_by_the_computed_lists(tmp_path):
    """A newly registered odd family (test_sigma_plugin's sin) joins the sigma list of every statement above whose
    hypotheses admit it (wp-zero's include "odd"; the others admit any sigma), and so its proof routes and scope,
    with no edit of the claims."""
    from test_sigma_plugin import TOY
    (tmp_path / "toy_sine_sigma.py").write_text(TOY)
    out = subprocess.run([sys.executable, "-c", SINE_THEN_CLAIMS, str(tmp_path)], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    lists = json.loads(out.stdout.strip().replace("'", '"'))
    every = ["identity", "erf", "poly:0,1,0,1/10", "poly:0,1,1/2", "relu", "sine"]
    assert lists == {"wp-zero": ["identity", "erf", "poly:0,1,0,1/10", "sine"], "two-level-attention": every,
                     "early-alignment": every, "lemma-C.2-other-sigma": every[1:]}


# ---- no consumer switches on a kind's name -------------------------------------------------------------------------
PART_KINDS = "claim|probe|fuzz|bench|certify|derive|reconcile|convergence|attention|discovery"
# a certificate's kind: "slow-manifold" is no other kind's name; "exponential" and "constant" are also fits' kinds
# (verify.probes.support.classify), so they count only beside the word cert
SWITCH = re.compile(r"""kind["'\]\)]* ?(==|!=|in|not in) ?\(?["'](""" + PART_KINDS + "|slow-manifold)[\"']"
                    r"""|cert\S*kind["'\]\)]* ?(==|!=|in|not in) ?\(?["'](exponential|constant)["']"""
                    r"""|startswith\(\(?["'](""" + PART_KINDS + "):")
# verify.coq.trapping reads a certificate file whose format it checks (kind slow-manifold is part of the format)
EXEMPT = {"verify/coq/trapping.py"}


def test_no_consumer_switches_on_a_kind_name():
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for folder in ("verify", "lemmas")
            for p in sorted((ROOT / folder).rglob("*.py")) if str(p.relative_to(ROOT)) not in EXEMPT
            and not p.name.startswith("recheck")          # the independent re-checker reads files, imports nothing
            for i, line in enumerate(p.read_text().splitlines(), 1)
            if SWITCH.search(line) or "isinstance" in line and "ExactCertificate" in line
            or re.search(r'"(upper|lower) rate" in', line)]
    assert hits == []


# ---- records select on structured fields -------------------------------------------------------------------------
def test_theorem_3_1_selects_certificate_records_by_their_bound_not_their_prose(monkeypatch):
    """The certificate's rate records are split by ``bound.direction`` and keyed by ``bound.quantity``: records whose
    route prose says the opposite (and come in another order) are still read by their fields."""
    from lemmas import theorem_3_1
    from lemmas.theorem_3_1 import certificate_records
    fields = [("w_err", "lower"), ("excess_loss", "upper"), ("s_err", "lower"), ("w_err", "upper"),
              ("excess_loss", "lower"), ("s_err", "upper")]
    recs = [{"role": "test", "route": f"{'lower' if d == 'upper' else 'upper'} rate of something",
             "bound": {"quantity": q, "direction": d, "value": str(i)}, "constants": {"c_hi": str(i)}}
            for i, (q, d) in enumerate(fields)] + [{"role": "context", "route": "upper rate context"}]
    monkeypatch.setattr(theorem_3_1, "certificate_evidence", lambda base: recs)    # imported at its module's top
    up, lo, consts = certificate_records(None)
    assert [r["bound"]["quantity"] for r in up] == ["excess_loss", "w_err", "s_err"]
    assert [r["bound"]["quantity"] for r in lo] == ["w_err", "s_err", "excess_loss"]
    assert consts == {"excess_loss": {"c_hi": "1"}, "w_err": {"c_hi": "3"}, "s_err": {"c_hi": "5"}}


def test_a_rate_bound_names_a_known_quantity_and_direction():
    from verify.certify.certificate_records import rate_bound
    assert rate_bound("s_err", "lower", "1/3") == {"quantity": "s_err", "direction": "lower", "value": "1/3"}
    with pytest.raises(ValueError, match="direction must be one of upper, lower"):
        rate_bound("s_err", "sideways", "1")
    with pytest.raises(ValueError, match="quantity must be one of"):
        rate_bound("loss", "upper", "1")
