"""Replays of an atlas cell's refutation: one member, one step, one claim about alpha, checked with Arb balls.

A check of the atlas (verify.certify.atlas, CellCheck) refutes a cell by naming a member (rho, x, kappa) of it,
inside the hypotheses (0 < rho < 1, 0 < x < 2, kappa > 0), a step t and the claim of its statement that fails
there, e.g. {"quantity": "alpha", "relation": ">", "bound": "0"} for Lemma C.2's "alpha(t) > 0 for every t >= 1".
The replay iterates that member's reduced map from (0, 0) for t steps (the representative regime of the point:
K = N = v = c_L = lambda = beta = ||V*||^2 = 1, D = 1/rho, eta_V = x, eta_KQ = kappa x, whose invariants are
s = rho/(1 - rho), x, y = kappa x) with Arb balls, and the refutation stands only when the ball of alpha(t) lies
wholly on the failing side of the bound: a certified contradiction, not a float that looks like one.

The atlas replays every refutation a check reports before it marks a cell refuted (run_cell), and the independent
re-checker (recheck.atlas) replays it again with its own statement of the map.

Command: ``python -m verify.certify.replay '<replay JSON>'`` (the "replay" record of a refuted cell, which also
carries this command): exit 0 when the counterexample is reproduced, 1 when it is not, 2 on a malformed record.
"""
from __future__ import annotations

import json
import operator
import shlex
import sys
from fractions import Fraction

from ..model.numbers import frac_str

RELATIONS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
QUANTITIES = ("alpha",)
BITS = 256


def member_of(rec: dict) -> tuple:
    """(rho, x, kappa) of a replay record, exactly."""
    return tuple(Fraction(rec["member"][n]) for n in ("rho", "x", "kappa"))


def outside_hypotheses(member: tuple) -> str | None:
    """None when the member satisfies 0 < rho < 1 (0 < K < D), 0 < x < 2 and kappa > 0; else the broken one."""
    rho, x, kappa = member
    if not 0 < rho < 1:
        return f"rho = {frac_str(rho)} is outside (0, 1) (0 < K < D)"
    if not 0 < x < 2:
        return f"x = {frac_str(x)} is outside (0, 2) (the step-size hypothesis x < 2)"
    if not kappa > 0:
        return f"kappa = {frac_str(kappa)} is not > 0"
    return None


def replay_record(statement: str, claim: dict, member: tuple, step: int) -> dict:
    """The record a refuting check stores: the statement's name, the claim, the member, the step, the
    representative regime, and the command that replays it."""
    rho, x, kappa = member
    rec = {"statement": statement, "claim": dict(claim), "member": {n: frac_str(v) for n, v in
                                                                     zip(("rho", "x", "kappa"), member)},
           "step": int(step), "regime": {"D": frac_str(1 / rho) if rho else "inf", "K": "1", "N": "1", "v": "1",
                                         "c_L": "1", "lambda": "1", "beta": "1", "V2": "1", "eta_V": frac_str(x),
                                         "eta_KQ": frac_str(kappa * x)},
           "arithmetic": f"Arb balls, {BITS} bits"}
    return rec | {"command": "python -m verify.certify.replay " + shlex.quote(json.dumps(rec, sort_keys=True))}


def replay(rec: dict) -> dict:
    """Re-run a replay record with the toolkit's prefix (verify.certify.prefix, Arb): {"reproduced": bool, "alpha":
    [lo, hi] at the step, "detail"}. A malformed record raises ValueError naming the field."""
    from ..model.precision import arb_precision  # heavy: loads flint
    from .arbfun import hi_frac, lo_frac  # heavy: loads flint
    from .prefix import PrefixState  # heavy: loads flint,mpmath,numpy,sympy
    claim = rec.get("claim", {})
    if claim.get("quantity") not in QUANTITIES or claim.get("relation") not in RELATIONS:
        raise ValueError(f"replay: the claim {claim} is not one of {QUANTITIES} with a relation in {list(RELATIONS)}")
    bound, step = Fraction(claim["bound"]), int(rec["step"])
    if step < 1:
        raise ValueError(f"replay: step {step} must be >= 1")
    rho, x, kappa = member = member_of(rec)
    why = outside_hypotheses(member)
    if why is not None:
        return {"reproduced": False, "detail": f"the member is outside the hypotheses: {why}"}
    P = (rho / (1 - rho), x, kappa * x)
    with arb_precision(BITS):
        st = PrefixState(P)
        pc, pb, dp = st.balls()
        while st.step_count < step:
            st.step(pc, pb, dp)
        a = st.centre_box()[0]
        lo, hi = lo_frac(a), hi_frac(a)
    holds = RELATIONS[claim["relation"]]
    # the claim fails at the step for certain when it fails at every point of the ball
    failed = not holds(lo, bound) and not holds(hi, bound)
    return {"reproduced": failed, "alpha": [str(lo), str(hi)],
            "detail": f"alpha({step}) in [{float(lo):.6g}, {float(hi):.6g}]: the claim alpha {claim['relation']} "
                      f"{frac_str(bound)} {'fails' if failed else 'is not contradicted'}"}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        rec = json.loads(argv[0]) if len(argv) == 1 else None
        if not isinstance(rec, dict):
            raise ValueError("usage: python -m verify.certify.replay '<replay JSON>'")
        out = replay(rec)
    except (ValueError, KeyError, TypeError) as exc:
        print(f"malformed replay: {exc}", file=sys.stderr)
        return 2
    print(("reproduced: " if out["reproduced"] else "NOT reproduced: ") + out["detail"])
    return 0 if out["reproduced"] else 1


if __name__ == "__main__":
    sys.exit(main())
