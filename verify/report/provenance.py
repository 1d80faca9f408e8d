"""Where a report comes from: package versions, git commit, Python, platform, and what each part used."""
from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

PACKAGES = ("verify", "sympy", "numpy", "mpmath", "python-flint", "hypothesis", "matplotlib", "gmpy2", "numba",
            "jsonschema", "rich", "click")

# Keys in a part's result or its "convention" that say how it was computed (seeds and precision).
SEED_KEYS = ("seed", "seeds")
PRECISION_KEYS = ("dps", "prec", "precision", "arithmetic", "work_dps", "engine")
# What "the code" is for the commit stamp (everything that can change a result).
SOURCES = ("verify", "lemmas", "pyproject.toml")


def package_versions() -> dict:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def git_commit() -> str:
    """``git rev-parse HEAD`` of the source tree (read only), or "unknown"."""
    root = Path(__file__).resolve().parents[2]
    try:
        r = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        head = r.stdout.strip() if r.returncode == 0 else "unknown"
        if head != "unknown":
            # only the sources count: a report or bench being rewritten under reports/ is output, not code
            d = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", *SOURCES], cwd=root,
                               capture_output=True, text=True, timeout=10)
            if d.returncode == 0 and d.stdout.strip():
                head += " (with uncommitted changes)"
        return head or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _collect(obj, keys, found, depth=0):
    if depth > 3:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in keys and isinstance(v, (str, int, float, list)) and not isinstance(v, bool):
                found.setdefault(k, v)
            elif isinstance(v, dict):
                _collect(v, keys, found, depth + 1)


def provenance(records: list[dict], profile: str) -> dict:
    """Provenance of a report built from the saved part ``records``."""
    conventions, seeds, precisions, run_times = {}, {}, {}, {}
    for rec in records:
        res = rec.get("result") or {}
        name = rec["part"]
        run_times[name] = rec.get("seconds")
        if isinstance(res.get("convention"), dict):
            conventions[name] = res["convention"]
        s, p = {}, {}
        for src in (res.get("convention"), res.get("regime"), res.get("config"), res):
            _collect(src, SEED_KEYS, s)
            _collect(src, PRECISION_KEYS, p)
        if s:
            seeds[name] = s
        if p:
            precisions[name] = p
    return {"packages": package_versions(), "git_commit": git_commit(), "python": sys.version.split()[0],
            "platform": platform.platform(), "profile": profile, "conventions": conventions, "seeds": seeds,
            "precisions": precisions, "run_times": run_times,
            "reference_convention": "docs/setting.md: Gaussian X (mean 0, variance 1), P^T P = I, sigma = identity, "
                                    "summed loss, zero initialisation, eta_V = eta_KQ = eta, sigma_eps = 0"}
