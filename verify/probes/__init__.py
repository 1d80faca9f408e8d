"""Probes: one reviewer question of docs/paper.md each, answered in chosen regimes (``verify probe NAME``).

Every probe reports one or more statements, each with evidence records and the verdict the one rule
(verify.evidence.decide) derives from them; the first statement is the probe's headline.

Each module registers one probe with :func:`verify.probes.base.probe`; importing this package imports
them all and checks that the registry and the modules agree.
"""
from importlib import import_module

from .base import PROBES, QUESTIONS, ProbeResult, Statement, get, run_probe
from .classify import Classification, classify

MODULES = {"d-eq-k": "d_eq_k", "k-zero": "k_zero", "k-one": "k_one", "k-near-d": "k_near_d",
           "nonuniform-s": "nonuniform_s", "non-gaussian": "non_gaussian", "large-eta": "large_eta",
           "nonzero-init": "nonzero_init", "p-scale": "p_scale", "tstar": "tstar", "rates": "rates",
           "finite-sample": "finite_sample", "full-attention": "full_attention"}

for _name, _mod in MODULES.items():
    _m = import_module(f"{__name__}.{_mod}")
    if getattr(_m.run, "probe_name", None) != _name:
        raise AssertionError(f"module {_mod} must register probe {_name}")
if set(PROBES) != set(MODULES):
    raise AssertionError(f"registry {sorted(PROBES)} and modules {sorted(MODULES)} disagree")

__all__ = ["PROBES", "QUESTIONS", "ProbeResult", "Statement", "Classification", "classify", "get", "run_probe", "MODULES"]
