"""Regenerate tests/data/figures/*.json: real part results, trimmed, for tests/test_figures.py.

    PYTHONPATH=. python tests/data/make_figure_fixtures.py            # runs the parts (ci profile)
    PYTHONPATH=. python tests/data/make_figure_fixtures.py /tmp/figures   # or reads saved results NAME.json
    PYTHONPATH=. python tests/data/make_figure_fixtures.py - d-eq-k rates # only these (runs them)

Each result is what ``verify probe NAME --profile ci --json`` prints (or what the convergence /
attention parts of verify.engines.trajectory_parts return), with every step-indexed array cut to about ``POINTS`` log-spaced steps (the
first steps and the last one kept) and numbers rounded to 7 significant digits, so the fixtures stay
small while keeping the features the figures show (exactly coinciding curves stay coinciding, zeros stay
zeros, the float64 floor of d-eq-k stays).
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

POINTS = 28
OUT = Path(__file__).parent / "figures"
BUILTIN = ("convergence", "attention")


def keep_indices(steps: list, points: int = POINTS) -> list[int]:
    """Indices of about ``points`` steps, log-spaced in the step value, plus the first and the last."""
    n = len(steps)
    if n <= points:
        return list(range(n))
    top = max(float(s) for s in steps)
    keep = {0, 1, 2, n - 1}
    for k in range(points):
        target = top ** (k / (points - 1)) if top > 1 else 0
        keep.add(min(range(n), key=lambda i: abs(float(steps[i]) - target)))
    return sorted(keep)


def cut(obj, n: int, idx: list[int]):
    """Every list of length ``n`` inside ``obj`` (the step axis) restricted to ``idx``."""
    if isinstance(obj, list) and len(obj) == n:
        return [obj[i] for i in idx]
    if isinstance(obj, dict):
        return {k: cut(v, n, idx) for k, v in obj.items()}
    return obj


def trim(obj):
    """Find dicts with a step axis ("step" or "steps") and cut everything under them along it."""
    if isinstance(obj, dict):
        xkey = next((k for k in ("step", "steps") if isinstance(obj.get(k), list) and len(obj[k]) > POINTS), None)
        if xkey:
            n = len(obj[xkey])
            return cut(obj, n, keep_indices(obj[xkey]))
        return {k: trim(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [trim(v) for v in obj]
    return obj


def without_proof_steps(obj):
    """The result without the steps inside proof records (the figures never read evidence; a proof's steps are
    its longest part)."""
    if isinstance(obj, dict):
        return {k: without_proof_steps(v) for k, v in obj.items() if k != "steps" or not isinstance(v, list)
                or not v or not isinstance(v[0], dict) or "route" not in v[0]}
    if isinstance(obj, list):
        return [without_proof_steps(v) for v in obj]
    return obj


def rounded(obj):
    if isinstance(obj, float) and math.isfinite(obj):
        return float(f"{obj:.7g}")
    if isinstance(obj, dict):
        return {k: rounded(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rounded(v) for v in obj]
    return obj


def results(src: str | None, only=()) -> dict:
    from verify.run.parts import discover, spec
    from verify.pipeline.child import json_ready
    from verify.probes import PROBES
    discover()
    names = list(only) or list(BUILTIN) + sorted(PROBES)
    out = {}
    for name in names:
        if src:
            out[name] = json.loads((Path(src) / f"{name}.json").read_text())
        elif name in BUILTIN:
            out[name] = json_ready(spec(name).run("", "ci"))
        else:
            out[name] = json_ready(spec("probe").run(name, "ci"))
    return out


def main(argv: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    src = argv[1] if len(argv) > 1 and argv[1] != "-" else None
    for name, res in results(src, argv[2:]).items():
        (OUT / f"{name}.json").write_text(json.dumps(rounded(trim(without_proof_steps(res))), ensure_ascii=False, separators=(",", ":")))
        print(name, (OUT / f"{name}.json").stat().st_size, "bytes")


if __name__ == "__main__":
    main(sys.argv)
