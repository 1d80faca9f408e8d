"""Quantifiers as data (verify.model.regions, verify.evidence.Scope): a statement over every D, every t or every regime
is proved or certified only by evidence that covers all of it. Every expected verdict and coverage below is
worked out by hand from the sets involved, never by applying the rule again to stored evidence."""
import random
from fractions import Fraction

from verify.evidence import ALL, From, Scope, covered, decide, record, uncovered
from verify.model.regions import Interval, Region, merged, union_covers

EVERY_D = Scope(dims="all", sigma=("identity",), horizon="all")        # "for every D (and every other size)"
AT_8_9 = Scope(dims=("M=1 d=1 D=8 N=1 K=2", "M=1 d=1 D=9 N=1 K=2"), sigma=("identity",), horizon="all")
BALLS = {"value": 0, "why": "every ball above 0"}
HALF = Fraction(1, 2)


def test_a_certificate_at_two_sizes_only_supports_a_statement_for_every_D():
    d = decide([record("Arb balls at D = 8, 9", "arb", AT_8_9, "every ball > 0", True, threshold=BALLS)], EVERY_D)
    assert d.verdict == "supported"
    # the reason names what was certified (the two sizes, every t) and what it leaves (every other dimension)
    assert "at {M=1 d=1 D=8 N=1 K=2; M=1 d=1 D=9 N=1 K=2}, all t" in d.reason
    assert "not for all dimensions" in d.reason


def test_a_certificate_over_every_D_certifies_it():
    every = Scope(dims=Region(), sigma=("identity",), horizon="all")       # the whole space, as a region
    d = decide([record("Arb over every D", "arb", every, "ok", True, threshold=BALLS)], EVERY_D)
    assert d.verdict == "certified" and d.scope.startswith("all dimensions")
    # two records, D = 1..10 and D >= 11, cover every D together (D >= 1 is the domain of D)
    low = Scope(dims=Region(D=(1, 10)), sigma=("identity",))
    high = Scope(dims=Region(D=Interval(11)), sigma=("identity",))
    recs = [record("Arb, D <= 10", "arb", low, "ok", True, threshold=BALLS),
            record("Arb, D >= 11", "arb", high, "ok", True, threshold=BALLS)]
    assert decide(recs, EVERY_D).verdict == "certified"
    # ... but D = 1..10 and D >= 12 leave D = 11 out
    gap = Scope(dims=Region(D=Interval(12)), sigma=("identity",))
    recs[1] = record("Arb, D >= 12", "arb", gap, "ok", True, threshold=BALLS)
    assert decide(recs, EVERY_D).verdict == "supported"


def test_a_certified_bound_that_contradicts_refutes_and_says_so():
    ok = record("Arb balls at D = 8, 9", "arb", AT_8_9, "ok", True, threshold=BALLS)
    bad = record("certified upper bound at D = 9", "arb", AT_8_9, "q <= 0.3 < 0.5 = the claimed lower bound", False,
                 threshold=BALLS, replay="verify certify --D 9 --json")
    d = decide([ok, bad], EVERY_D)
    assert d.verdict == "refuted" and d.reason.startswith("a certified bound")
    # a certified bound that assumed more than the statement's hypotheses refutes nothing
    more = record("certified bound, assuming P^T P = lambda I", "arb", Scope(dims=AT_8_9.dims, assumes=("orthogonal-P",)),
                  "contradicts", False, threshold=BALLS, replay="x")
    assert decide([ok, more], EVERY_D).verdict == "inconclusive"


def test_proofs_and_enclosures_together_certify():
    proof = record("closed form for D >= 10", "symbolic", Scope(dims=Region(D=Interval(10)), sigma=("identity",)),
                   "ok", True)
    small = record("Arb for D < 10", "arb", Scope(dims=Region(D=(1, 9)), sigma=("identity",)), "ok", True,
                   threshold=BALLS)
    assert decide([proof, small], EVERY_D).verdict == "certified"
    d = decide([proof], EVERY_D)
    assert d.verdict == "supported" and "D >= 10" in d.reason


def test_a_family_box_covers_exactly_its_members():
    family = Region(D=(8, 512), K=4, eta=(Fraction(1, 16), Fraction(1, 8)))
    assert family.covers(Region(D=(8, 9), K=4, eta=(Fraction(1, 16), Fraction(51, 800))))
    assert not family.covers(Region(D=(8, 513), K=4, eta=(Fraction(1, 16), Fraction(1, 8))))
    assert not family.covers(Region(D=(8, 9), K=4, eta=(Fraction(1, 16), Fraction(1, 7))))
    assert not family.covers(Region(D=(8, 9), eta=(Fraction(1, 16), Fraction(1, 8))))   # every K, not K = 4
    assert not family.covers(Region())                                                   # not every D
    fam = Scope(dims=family, sigma=("identity",), horizon=From())
    assert not covered([fam], EVERY_D)


def test_unions_of_boxes_and_their_edges():
    assert union_covers([Region(rho=(0, HALF)), Region(rho=(HALF, 1))], Region())        # rho's domain is [0, 1]
    # [0, 1/2) and (1/2, 1] leave rho = 1/2 out
    assert not union_covers([Region(rho=Interval(0, HALF, hi_open=True)), Region(rho=Interval(HALF, 1, lo_open=True))],
                            Region())
    # boxes in two coordinates: D = 1..10 with eta <= 1, D = 1..10 with eta >= 1, and D >= 11: everything
    assert union_covers([Region(D=(1, 10), eta=(0, 1)), Region(D=(1, 10), eta=Interval(1)), Region(D=Interval(11))],
                        Region())
    assert not union_covers([Region(D=(1, 10), eta=(0, 1)), Region(D=Interval(11))], Region())


def _same_union(a: list, b: list) -> bool:
    """Two unions of boxes equal, by subtraction (union_covers) both ways."""
    return all(union_covers(a, r) for r in b) and all(union_covers(b, r) for r in a)


def test_merged_boxes_read_fewer_and_cover_exactly_the_same_points():
    q = Fraction(1, 4)
    grid = [Region(rho=(i * q, (i + 1) * q), x=(j, j + 1)) for i in range(2) for j in range(2)]
    assert merged(grid) == [Region(rho=(0, HALF), x=(0, 2))]                      # a 2 x 2 tiling: one box
    ell = grid[:3]                                                                # an L: two boxes, by hand
    out = merged(ell)
    assert len(out) == 2 and _same_union(out, ell)
    assert not union_covers(out, Region(rho=(q, HALF), x=(1, 2)))                 # the missing corner stays out
    # touching ends: [0, 1/2) and (1/2, 1] miss 1/2 and stay apart; [0, 1/2) and [1/2, 1] join
    apart = [Region(rho=Interval(0, HALF, hi_open=True)), Region(rho=Interval(HALF, 1, lo_open=True))]
    assert len(merged(apart)) == 2
    assert merged([Region(rho=Interval(0, HALF, hi_open=True)), Region(rho=(HALF, 1))]) == [Region()]
    # integers: 1..3 and 4..6 are 1..6; 1..3 and 5..6 are not adjacent
    assert merged([Region(D=(1, 3)), Region(D=(4, 6))]) == [Region(D=(1, 6))]
    assert len(merged([Region(D=(1, 3)), Region(D=(5, 6))])) == 2
    # a named box (a family) is kept as it is
    named = Region(D=(4, 6), text="the family")
    assert named in merged([Region(D=(1, 3)), named])


def test_merged_random_tilings_keep_their_union():
    rng = random.Random(27)
    q = Fraction(1, 8)
    for _ in range(20):
        cells = [Region(rho=(i * q, (i + 1) * q), x=(j * q, (j + 1) * q), kappa=(k, k + 1))
                 for i in range(4) for j in range(3) for k in range(2) if rng.random() < 0.6]
        out = merged(cells)
        assert len(out) <= len(cells) and _same_union(out, cells)
        for i, a in enumerate(out):           # the merged boxes are disjoint up to their faces
            for b in out[i + 1:]:
                m = a.meet(b)
                assert m.empty() or any(iv.lo == iv.hi for _, iv in m.bounds)


def test_a_scope_of_cells_reads_as_the_box_they_tile():
    cells = tuple(Region(rho=(i * Fraction(1, 32), (i + 1) * Fraction(1, 32)), x=(1, 2)) for i in range(4))
    assert Scope(dims=cells).dims_label() == "checked at dimensions {rho in [0, 1/8], x in [1, 2]}"


def test_integer_intervals_are_closed_and_labelled():
    assert Interval(Fraction(1, 2), Fraction(7, 2), integer=True) == Interval(1, 3, integer=True)
    assert Interval(2, 5, integer=True, lo_open=True, hi_open=True) == Interval(3, 4, integer=True)
    assert Region(D=(8, 512)).label() == "D = 8..512"
    assert Region(D=Interval(16)).label() == "D >= 16"
    assert Region(eta=(Fraction(1, 16), Fraction(1, 8))).label() == "eta in [1/16, 1/8]"
    assert Region(D=(1, None)) == Region()                                # D >= 1 is D's whole domain


def test_horizons_every_t_and_from_some_T():
    eventually = Scope(horizon=From())           # "for every T >= T*" with T* existential
    assert Scope(horizon=ALL).covers(eventually) and Scope(horizon=From(40)).covers(eventually)
    assert not Scope(horizon=150).covers(eventually)          # a finite prefix says nothing of late T
    assert not Scope(horizon=From(40)).covers(Scope())        # t >= 40 is not every t
    assert Scope(horizon=From(40)).covers(Scope(horizon=From(50)))
    assert not Scope(horizon=From(50)).covers(Scope(horizon=From(40)))
    assert uncovered([Scope(horizon=150)], Scope()) == ["all t"]


def test_scopes_with_regions_round_trip():
    sc = Scope(dims=(Region(D=(8, 512), K=4, text="sts K=4 D=8..512"), "M=1 d=1 D=8 N=1 K=2"), horizon=From(7))
    assert Scope.from_dict(sc.as_dict()) == sc
    assert "sts K=4 D=8..512" in sc.label() and "t >= 7" in sc.label()


def test_a_region_reads_as_its_name_in_text_never_as_its_repr():
    """A finding's f-string and a saved label show the region's name (or its intervals), not the dataclass repr
    (the example report once read "Region(bounds=(('D', Interval(...") where the family's name belonged)."""
    named = Region(D=Interval(8, 9, integer=True), text="sts K=4 D=8..9")
    assert f"the family {named}" == "the family sts K=4 D=8..9"
    assert "Interval(" not in str(Region(D=Interval(16, integer=True))) and "Region(" not in str(Region())


def test_a_folded_scope_counts_boxes_as_regions_and_labels_as_sizes():
    """The short label folds more than two dims into a count, naming what they are: three boxes of (rho, x) read
    "3 regions", three size labels "3 sizes" (it read "163 sizes" for 163 cells of (rho, x, kappa))."""
    boxes = tuple(Region(rho=(Fraction(k, 8), Fraction(k + 1, 8)), x=(1, 2)) for k in range(3))
    assert Scope(dims=boxes, sigma=("identity",)).short_label().startswith("3 regions, identity")
    labels = ("M=1 d=1 D=8 N=1 K=2", "M=1 d=1 D=9 N=1 K=2", "M=1 d=1 D=10 N=1 K=2")
    assert Scope(dims=labels, sigma=("identity",)).short_label().startswith("3 sizes, identity")
    assert Scope(dims=boxes[:2], sigma=("identity",)).short_label().count("rho in") == 2    # two are listed
