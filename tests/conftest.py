"""Test configuration: Hypothesis profiles live here and only here, and the session's on-disk cache.

``ci`` (selected when CI=true or with HYPOTHESIS_PROFILE=ci) is derandomised with a fixed budget,
so a run is reproducible; ``dev`` explores more, randomly.

The on-disk cache (verify.run.cache: cached derivations, the fuzz database) is a temporary folder made for the
session and removed after it, named by $VERIFY_CACHE_DIR, which every process the tests start inherits (and
pytest-xdist's workers share): a local run computes what CI computes, never reusing a derivation cached by
an earlier run, while the tests of one session still share what they derive.
"""
import json
import os
import resource
import shutil
import tempfile
import time

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, max_examples=25, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=60, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

_CACHE_OWNER = "_VERIFY_TEST_CACHE_OWNER"   # the pid of the process that made the session's cache folder


def pytest_configure(config):
    """A fresh cache folder for the session (module docstring); xdist's workers inherit the controller's."""
    if os.environ.get(_CACHE_OWNER) and os.environ.get("PYTEST_XDIST_WORKER"):
        return
    os.environ["VERIFY_CACHE_DIR"] = tempfile.mkdtemp(prefix="verify-test-cache-")
    os.environ[_CACHE_OWNER] = str(os.getpid())


def pytest_unconfigure(config):
    if os.environ.get(_CACHE_OWNER) == str(os.getpid()):
        shutil.rmtree(os.environ.pop("VERIFY_CACHE_DIR"), ignore_errors=True)
        os.environ.pop(_CACHE_OWNER)


def _cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of the children it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With $DURLOG set, append one JSON line per test to that file: its node id, the xdist worker, its wall and
    CPU seconds (set-up, call and tear-down, fixtures built for it included) and when it started and ended (for
    the workers' balance). The suite's costs in tests/README.md come from this log; nothing asserts on it."""
    log = os.environ.get("DURLOG")
    if not log:
        yield
        return
    wall0, cpu0 = time.time(), _cpu_seconds()
    yield
    wall1, cpu1 = time.time(), _cpu_seconds()
    row = {"id": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
           "wall": round(wall1 - wall0, 3), "cpu": round(cpu1 - cpu0, 3), "start": round(wall0, 3),
           "end": round(wall1, 3), "slow": item.get_closest_marker("slow") is not None,
           "group": next((m.args[0] for m in item.iter_markers("xdist_group")), None)}
    with open(log, "a") as f:
        f.write(json.dumps(row) + "\n")


# Session fixtures that take tens of seconds to a few minutes to build: under pytest-xdist (`--dist loadgroup`, the
# suite's default) the tests that use one run on one worker, so each is built once per session, not once per worker.
SHARED_FIXTURES = ("ci_claims", "small_family", "small_family_path", "regime_certificate", "tube_cell")


def xdist_group_of(item) -> str | None:
    """The xdist group of a test: the shared session fixture it uses (SHARED_FIXTURES), else its module when it
    uses a module- or class-scoped fixture (test_probes.py's probe results, say: built once, read by many tests),
    else None (the test may run on any worker)."""
    used = [f for f in SHARED_FIXTURES if f in getattr(item, "fixturenames", ())]
    if used:
        return "small_family" if used[0] == "small_family_path" else used[0]
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    if any(d and d[-1].scope in ("module", "class") for d in defs):
        return item.nodeid.split("::", 1)[0]
    return None


# A test's expected cost, for the order the workers take the work in: a slow-marked test (over about 2 s of CPU,
# the README's rule) counts as 20 of the others. Only the order depends on it, never what runs.
SLOW_WEIGHT, TEST_WEIGHT = 20.0, 1.0


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Put each test in its xdist group (xdist_group_of), so a fixture meant to be built once is built once: first
    of the collection hooks (tryfirst), so the marks are there when pytest-xdist's worker reads them in its own
    hook of this name. Then order the work units (a group, or a test in none) by their expected cost, largest first (SLOW_WEIGHT), the
    longest-first rule for two workers: the long units start at once instead of one of them ending the run on one
    worker while the other idles. pyproject passes --no-loadscope-reorder, so xdist keeps this order (its own
    orders units by their number of tests, which puts a group of many quick tests before a 50-second test)."""
    unit, cost = {}, {}
    for item in items:
        group = xdist_group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
        unit[item] = group or item.nodeid
        weight = SLOW_WEIGHT if item.get_closest_marker("slow") else TEST_WEIGHT
        cost[unit[item]] = cost.get(unit[item], 0.0) + weight
    position = {item: i for i, item in enumerate(items)}
    items.sort(key=lambda item: (-cost[unit[item]], position[item]))


# Every statement's verdict, worked out by hand from what each statement quantifies over and what its evidence
# covers (never by applying verify.evidence.decide to the saved records again): (verdict, extent, words the why
# must contain). "whole": exact or rigorous records cover everything the statement quantifies over; "part": they
# cover a finite part only (the statement reads supported).
CLAIM_EXPECTED = {
    # an SMT induction on the SymPy reduction, in symbolic dimensions, for every t, under exactly its hypotheses
    "lemma-C.2-small-step": ("proved", "whole", ["the SymPy reduction, then an SMT induction"]),
    # 0 < K < D: the induction does not close; Arb balls to t = 150 in three regimes, float64 to 1500
    "lemma-C.2-large-step": ("supported", "part", ["certified only for t <= 150 in 3 regimes", "float64 runs agree "
                                                   "to t = 1500", "open: delta(t) >= 0 for all t",
                                                   "an invariant set (of a kind of verify.certify.positivity_sets: "
                                                   "band, ratio, threshold or stair) certified",
                                                   "every regime whose (rho = K/D, x, kappa) lies in",
                                                   # region B-zero, decided in every run: rho in [0, 1/32]
                                                   "11 of 11 cells of Region B-zero",
                                                   "from rho = 0: every D >= 32 K"]),
    # K = D: alpha stays in (0, 2], an SMT induction in symbolic dimensions for every t
    "lemma-C.2-k-equals-d": ("proved", "whole", ["the SymPy reduction, then an SMT induction at K = D"]),
    # sigma != identity: Arb balls at three sizes to t = 150 only; the statement is for every size and t
    "lemma-C.2-other-sigma": ("supported", "part", ["certified only on part of the statement", "t <= 150",
                                                    "not for all dimensions"]),
    # identity: proved for every size and t; every other admitted sigma (M = 1): Arb balls to t = 150 at two sizes only
    "early-alignment": ("supported", "part", ["certified only on part of the statement", "t <= 150"]),
    "wp-zero": ("proved", "whole", ["exact proofs cover the whole statement"]),
    "two-level-attention": ("proved", "whole", ["exact proofs cover the whole statement"]),
    # the finding speaks of the regimes run over t <= 40 (ci): the full-matrix Arb balls cover exactly that
    "two-level-attention.full-balls": ("certified", "whole", ["rigorous enclosures cover the whole statement"]),
    "loss-monotone": ("supported", "", ["numerics or a formal expansion agree"]),
    # every D: certificates at D = 8 (K = 2) and over the family D = 8..9 (K = 4, eta in a range) only
    # ... and over the committed atlas's cell rho = 1/16, x in [1/64, 1/32], kappa = 1/4 (every D = 16 K)
    "theorem-3.1-upper": ("supported", "part", ["certified only on part of the statement", "D=8..9",
                                                "rho = 1/16, x in [1/64, 1/32]", "not for all dimensions"]),
    # one c_lo for every D: the committed atlas's cell holds every D = 16 K, and its certified limit constants put
    # lim sup q/f_q below B_q(D) = (1 + 1e-15) 15/(64 D^4) for L - L_opt (and D^-2, D^-3/2 for the errors), which
    # tends to 0: every c_lo fails at some member for every large T, a certified bound that contradicts
    "theorem-3.1-lower": ("refuted", "", ["refuted for every c_lo > 0 by the atlas's certified limit constants",
                                         "K = 1/16 D", "no D-uniform c_lo exists"]),
    # "in each regime of the hypotheses": the same two certificates cover finitely many regimes
    "theorem-3.1-lower-T": ("supported", "part", ["certified only on part of the statement", "D=8..9",
                                                  "rho = 1/16, x in [1/64, 1/32]"]),
    # the atlas's cell certifies T0 <= C D at its points only; every D rests on the measured onsets
    "theorem-3.1-tstar": ("supported", "part", ["certified only on part of the statement",
                                                "rho = 1/16, x in [1/64, 1/32]"]),
    # the family's normalised limits over D = 8..9 only; every D rests on the formal expansion
    "theorem-3.1.leading-terms": ("supported", "part", ["certified only on part of the statement",
                                                        "the rest rests on the exact leading terms"]),
    "theorem-3.1.onset-linear": ("supported", "", ["numerics or a formal expansion agree"]),
    # the certified OOD bound of one regime (D = 8, K = 2) for every T: every size is not covered
    "theorem-3.2-ood": ("supported", "part", ["certified only on part of the statement", "not for all dimensions"]),
    "theorem-3.2-ood.vstar-norm": ("supported", "", ["numerics or a formal expansion agree"]),
    # the negative controls: numeric counterexamples that replayed at 10x the horizon
    "neg-alpha-le-1": ("refuted", "", ["a counterexample that failed again at t = "]),
    "neg-loss-monotone-any-eta": ("refuted", "", ["a counterexample that failed again at t = "]),
    "neg-rate-exponential": ("refuted", "", ["a counterexample that failed again at t = "]),
}


def holds_values(obj, path="$"):
    """Every value stored under a key "holds", anywhere in a JSON document, with its path."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "holds":
                yield path + ".holds", v
            yield from holds_values(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from holds_values(v, f"{path}[{i}]")


@pytest.fixture(scope="session")
def ci_claims():
    """Every claim of lemmas.CLAIMS run once at the ci profile, shared by the tests that read their results (a run
    takes minutes; the tests that change a claim's evidence run it again themselves)."""
    from lemmas import CLAIMS
    return {cid: c.run("ci") for cid, c in CLAIMS.items()}


def answered_from(claims: dict):
    """A replacement for verify.checks.Check.run that answers a claim's run at the ci profile under the reference
    convention from ``claims`` (the session's ci_claims: the same run, already computed) and runs anything else.
    A test of a command that reads a claim's evidence (``verify check --json``, ``check ID --regime``) then tests the
    command's own path without paying for the claim a second time."""
    from verify.checks import Check
    from verify.model.convention import active
    original = Check.run

    def run(self, profile="ci", convention=None):
        reference = (convention if convention is not None else active()).is_reference
        if profile == "ci" and reference and self.id in claims:
            return claims[self.id]
        return original(self, profile, convention)
    return run


@pytest.fixture
def claims_from_the_session(ci_claims, monkeypatch):
    """Check.run answered from the session's ci_claims for the test (answered_from)."""
    from verify.checks import Check
    monkeypatch.setattr(Check, "run", answered_from(ci_claims))


# ----- saved certificates shared by the re-checker's tests (each costs tens of seconds to make) -----------------
SMALL_FAMILY = ({"preset": "sts", "K": 4, "vstar_norm": "1"}, {"D": (8, 9), "eta": ("1/16", "51/800")})
REGIME = ["--D", "4", "--K", "2", "--preset", "cnn", "--eta", "1/4", "--vstar-norm", "2"]   # T0 = 32, ~1000 boxes


@pytest.fixture(scope="session")
def small_family():
    """The family sts K = 4, D = 8..9, eta in [1/16, 51/800] (a 2% interval), certified once (two cells)."""
    from fractions import Fraction

    from verify.certify.family import FamilySpec, certify_family
    options, ranges = SMALL_FAMILY
    spec = FamilySpec.of(options, {"D": ranges["D"], "eta": tuple(Fraction(v) for v in ranges["eta"])})
    return certify_family(spec, workers=2, processes=False)


@pytest.fixture(scope="session")
def small_family_path(small_family, tmp_path_factory):
    """Its file, with the members at the corners (D = 8, eta = 1/16) and (D = 9, eta = 51/800)."""
    from fractions import Fraction

    from verify.certify.files import family_file, save
    path = tmp_path_factory.mktemp("fam") / "family.json"
    eta = [Fraction(v) for v in SMALL_FAMILY[1]["eta"]]
    save(family_file(small_family, [10**6, 10**12], [{"D": 8, "eta": eta[0]}, {"D": 9, "eta": eta[1]}]), path)
    return path


@pytest.fixture(scope="session")
def regime_certificate(tmp_path_factory):
    """A one-regime certificate file (cnn, D = 4, K = 2, eta = 1/4, ||V*|| = 2), saved by the command line."""
    from click.testing import CliRunner

    from verify.cli import main
    path = tmp_path_factory.mktemp("cert") / "cert.json"
    r = CliRunner().invoke(main, ["certify", *REGIME, "--at", "0,17,40,1e6,1e12", "--save", str(path)])
    assert r.exit_code == 0, r.output
    return path


@pytest.fixture(scope="session")
def tube_cell():
    """One family cell entered through the tube alone (sts K = 4, ||V*|| = 1, D = 64, every eta in [1/16, 1/8]),
    built once by the toolkit and shared by tests/test_tube.py and tests/test_recheck_tube.py (none changes it)."""
    from fractions import Fraction
    from verify.certify.family import CELL_KNOBS, Cell, FamilySpec, certify_cell
    spec = FamilySpec.of({"preset": "sts", "K": 4, "vstar_norm": "1"},
                         {"D": (64, 64), "eta": (Fraction(1, 16), Fraction(1, 8))})
    out = certify_cell(spec, Cell(spec.ranges), CELL_KNOBS | {"entry": "tube"})
    assert out["status"] == "certified" and out["entry"]["kind"] == "tube", out.get("failed_obligation")
    return out


def one_cell_atlas(box: dict, knobs: dict, path):
    """An atlas of ``box`` as one cell (depth 0, run in this process with the cell knobs ``knobs``), saved to
    ``path``; returns ``path``."""
    from verify.certify import atlas as A
    cells = A.run_atlas(A.seed_cells(box), depth=0, dask=False, knobs=knobs)
    A.save_atlas(A.atlas_file(box, cells, knobs=A.atlas_knobs(knobs), depth=0, seconds=0.0), path)
    return path


def rechecked(path) -> tuple[int, str]:
    """(exit code, output) of the independent re-checker's main run in this process on ``path`` (Arb's precision
    restored after), for the re-checker's tests."""
    import contextlib
    import io

    from flint import ctx

    from recheck import certificates as rc
    out, prec = io.StringIO(), ctx.prec
    try:
        with contextlib.redirect_stdout(out):
            code = rc.main([str(path)])
    finally:
        ctx.prec = prec
    return code, out.getvalue()
