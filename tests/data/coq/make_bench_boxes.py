"""Regenerate tests/data/coq/bench_boxes.json: the bench regime's certificate file, trimmed, for tests/test_coq.py.

    PYTHONPATH=. python tests/data/coq/make_bench_boxes.py            # certifies the bench regime (about a minute)
    PYTHONPATH=. python tests/data/coq/make_bench_boxes.py FILE       # or trims a saved `verify certify --save FILE`

The file keeps what the trapping-region group reads (verify.coq.trapping): format, kind, invariants, the region
(u0, C, C_runs, shells, ratio) and the slow-manifold formulas G, R, Q, eps_next, c; of the cover's boxes it keeps a
few (KEEP: the first box of the core, where u_lo = 0, one of the first annulus and the outermost box, which the
negative control moves past the edge). Re-run it when verify.certify.formulas' printed formulas change.
"""
from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

OUT = Path(__file__).parent / "bench_boxes.json"
FORMULAS = ("G", "R", "Q", "eps_next", "c")


def trimmed(cert: dict) -> dict:
    boxes = cert["region"]["boxes"]
    core = next(b for b in boxes if b[0] == "0")
    outer = max(boxes, key=lambda b: (Fraction(b[1]), Fraction(b[3])))
    keep = [core, boxes[0], outer]
    return {"format": cert["format"], "version": cert["version"], "kind": cert["kind"],
            "note": "trimmed by tests/data/coq/make_bench_boxes.py: 3 of the cover's boxes",
            "regime": cert["regime"], "invariants": cert["invariants"],
            "map": {"coordinates": {k: cert["map"]["coordinates"][k] for k in FORMULAS}},
            "region": {k: v for k, v in cert["region"].items() if k != "boxes"} | {"boxes": keep}}


def main(argv: list[str]) -> None:
    if argv:
        cert = json.loads(Path(argv[0]).read_text())
    else:
        from verify.certify import certify
        from verify.certify.files import certificate_file
        from verify.model import make_setting
        from verify.model.regimes import BENCHMARK_REGIME
        cert = json.loads(json.dumps(certificate_file(certify(make_setting(**BENCHMARK_REGIME)), [])))
    OUT.write_text(json.dumps(trimmed(cert), indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
