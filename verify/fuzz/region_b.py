"""Region B of the atlas decided and then searched: Lemma C.2's atlas cell check and the Region B command.

The invariant sets (verify.certify.region_b, verify.certify.positivity_sets: a band, else the ratio set, else the staircase set) decide a
cell; where they leave one open, the
counterexample search (verify.fuzz.positivity: Hypothesis, float64, a hit replayed at 40 digits) looks for a member
with alpha(t) <= 0. Both steps together are the atlas's cell check "positivity" (:data:`POSITIVITY_CHECK`, in the
registry of verify.certify.atlas: CellCheck name, statement, run(cell, knobs), recheck(cell, result), applies(cell))
and the command below; they sit here, above both the certificate layer and the fuzzer, so that neither imports up.

Command: ``python -m verify.fuzz.region_b [--region NAME] [--depth N] [--workers N] [--deadline SECONDS]
[--fuzz N] [--quick] [--save FILE]`` (NAME one of verify.certify.positivity.REGIONS, default B; default file: the
region's in the cache, where Lemma C.2's large-step part reads it; a deadline that passes exits 1, saying how to
finish).
"""
from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path

from ..certify.atlas import CellCheck, phase, register
from ..certify.positivity import NAMES, REGIONS
from ..certify.region_b import (DEPTH, STATEMENT, applies, box_of, cache_file, check_recheck, decide_positivity,
                                initial_cells, run_region_b)
from ..certify.replay import replay_record
from ..run.atomic import write_json_atomic

FUZZ_EXAMPLES = 30      # members a counterexample search draws in a cell the band leaves open (knob "fuzz")
FUZZ_HORIZON = 2000     # ... each iterated this many steps in float64 (verify.fuzz.positivity)
ALPHA_POSITIVE = {"quantity": "alpha", "relation": ">", "bound": "0"}      # the claim a refutation replays


def check_run(cell, knobs: dict | None = None) -> dict:
    """The atlas's run(cell, knobs): status, reason and the stored result as evidence. Where the band leaves the
    cell open, the fuzzer searches it for a member with alpha(t) <= 0 (verify.fuzz.positivity.search; knob "fuzz":
    members drawn, 0: none); one inside the hypotheses whose 40-digit replay fails again is returned as a refutation
    with its replay record (verify.certify.replay), which the atlas replays with Arb balls before marking the cell
    refuted (verify.certify.atlas.replayed)."""
    res = decide_positivity(box_of(cell))
    out = {"status": res["status"], "reason": res["reason"], "evidence": res}
    examples = int((knobs or {}).get("fuzz", FUZZ_EXAMPLES))
    if res["status"] != "open" or examples <= 0:
        return out
    from . import positivity as FP  # heavy: loads hypothesis,mpmath
    phase("counterexample search in the open cell")
    found = FP.search(box_of(cell), examples, FUZZ_HORIZON)
    bad = [f for f in found["counterexamples"] if f["inside_hypotheses"] and not f["replay"]["holds"]]
    if not bad:
        return out | {"reason": f"{res['reason']}; a counterexample search ({found['examples']} members, t <= "
                                f"{FUZZ_HORIZON}, float64) found none"}
    f = bad[0]
    member = tuple(Fraction(f["member"][n]) for n in NAMES)
    return {"status": "refuted", "reason": f"alpha({f['t']}) = {f['alpha']:.6g} <= 0 at the member "
            f"{f['member']} (found by the counterexample search, failing again at 40 digits to t = "
            f"{f['replay']['horizon']})", "evidence": res | {"search": found, "replay": replay_record(
                "positivity", ALPHA_POSITIVE, member, f["t"])}}


# Registered in the atlas's registry of cell checks (verify.certify.atlas.CHECK_MODULES imports this module).
POSITIVITY_CHECK = register(CellCheck("positivity", STATEMENT, check_run, check_recheck, applies))


class _Parser(argparse.ArgumentParser):
    """Bad input in one line naming the flag and its valid range, exit status 2 (the toolkit's rule)."""

    def error(self, message):
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(2)


def main(argv=None) -> int:
    ap = _Parser(prog="python -m verify.fuzz.region_b", description=__doc__.split("\n")[0])
    ap.add_argument("--save", default=None, help="the result file (JSON, written atomically; default: the region's "
                                                 "cache file, .cache/verify/region-b/region-b.json for B, which "
                                                 "Lemma C.2 reads)")
    ap.add_argument("--region", default="B", help=f"the region decided ({', '.join(REGIONS)}; "
                                                  "verify.certify.positivity.REGIONS)")
    ap.add_argument("--depth", type=int, default=DEPTH, help="bisections of an open cell (0..8)")
    ap.add_argument("--workers", type=int, default=None, help="local Dask workers")
    ap.add_argument("--deadline", type=float, default=None, help="seconds; cells not run by then are left open")
    ap.add_argument("--quick", action="store_true", help="two rho slices only (a smoke run)")
    ap.add_argument("--fuzz", type=int, default=50, help="Hypothesis examples per open cell in the counterexample "
                                                         "search (verify.fuzz.positivity; 0: none)")
    a = ap.parse_args(argv)
    if not 0 <= a.depth <= 8:
        ap.error(f"--depth {a.depth}: must be an integer in 0..8")
    if a.deadline is not None and not a.deadline > 0:
        ap.error(f"--deadline {a.deadline}: must be > 0 seconds")
    if a.region not in REGIONS:
        ap.error(f"--region {a.region}: must be one of {', '.join(REGIONS)}")
    cells = initial_cells((0, 11), region=a.region) if a.quick else None
    if a.workers is not None and a.workers < 1:
        ap.error(f"--workers {a.workers}: must be an integer >= 1")
    if a.fuzz < 0:
        ap.error(f"--fuzz {a.fuzz}: must be an integer >= 0")
    save = Path(a.save) if a.save else cache_file(a.region)
    if not save.parent.is_dir() and a.save:
        ap.error(f"--save {a.save}: its folder does not exist")
    out = run_region_b(cells, depth=a.depth, workers=a.workers, deadline=a.deadline, region=a.region)
    if a.fuzz and out["counts"]["open"]:
        from .positivity import search_open  # heavy: loads hypothesis,mpmath
        out["search"] = search_open(out, a.fuzz)
        found = [c for s in out["search"] for c in s["counterexamples"] if c["inside_hypotheses"]
                 and not c["replay"]["holds"]]
        if found:
            print(f"counterexamples (replayed at 10x the horizon): {found}")
    write_json_atomic(save, out)
    a.save = str(save)
    print(f"Region {a.region}: {out['counts']['certified']} cells certified, {out['counts']['open']} open, "
          f"{out['counts']['refuted']} refuted; decided fraction {out['decided_fraction']:.4f} of the volume in "
          f"(rho, x, log2 kappa); {out['seconds']} s; saved {a.save}")
    if not out["complete"]:
        print("the deadline passed before every cell ran: run again with a later --deadline to finish", file=sys.stderr)
        return 1
    return 0


__all__ = ["ALPHA_POSITIVE", "FUZZ_EXAMPLES", "FUZZ_HORIZON", "POSITIVITY_CHECK", "check_run", "main"]


if __name__ == "__main__":
    sys.exit(main())
