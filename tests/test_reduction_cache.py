"""verify.derive.reduction_proof.prove_reduction is kept on disk per code version (verify.run.cache): what a process reads
back is what the derivation computes (the same obligations, statuses and scopes), and a second process asks
the disk, not SymPy."""
from __future__ import annotations

from verify.derive import reduction_proof
from verify.model.sigmas import parse_sigma


def summary(rep):
    return (rep.sigma, rep.dims, [(o.name, o.role, o.holds, o.method, o.detail, repr(o.scope), o.counterexample)
                                  for o in rep.obligations])


def test_the_kept_proof_is_the_computed_one(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIFY_CACHE_DIR", str(tmp_path))
    sigma = parse_sigma("relu")
    fresh = reduction_proof._prove_reduction.uncached(sigma, 1, 1, 3, ((0, 1),))     # computed here, no cache
    first = reduction_proof._prove_reduction(sigma, 1, 1, 3, ((0, 1),))              # computed, then written
    assert list(tmp_path.rglob("reduction-proof-*.pickle"))
    calls = []
    monkeypatch.setattr(reduction_proof, "prove_reduction_symbolic",
                        lambda: calls.append(1) or reduction_proof.prove_reduction_symbolic())
    again = reduction_proof._prove_reduction(sigma, 1, 1, 3, ((0, 1),))              # read back from the file
    assert calls == []
    assert summary(again) == summary(first) == summary(fresh)
    assert fresh.proved is again.proved and len(fresh.obligations) > 3
