"""The ``probe`` parts of ``verify all``: one per registered probe (``verify probe NAME``)."""
from __future__ import annotations

import inspect

from ..run import part


def probe_names() -> list[str]:
    from . import PROBES
    return sorted(PROBES)


@part("probe", args=probe_names, order=30)
def probe_part(name: str, profile: str) -> dict:
    """One probe at the profile (when it takes one); the question numbers it registered are added."""
    from . import PROBES, run_probe
    takes_profile = "profile" in inspect.signature(run_probe).parameters
    res = run_probe(name, profile=profile) if takes_profile else run_probe(name)
    res = res.as_dict() if hasattr(res, "as_dict") else dict(res)
    qs = getattr(PROBES.get(name), "questions", None)
    if qs and "questions" not in res:
        res = res | {"questions": [int(q) for q in qs]}
    return res
