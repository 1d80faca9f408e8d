"""The ``probe`` parts of ``verify all``: one per probe of the catalogue (verify.probes.PROBES), run at the
profile (``verify probe NAME --profile P``)."""
from __future__ import annotations

from ...run import part


def probe_names() -> list[str]:
    from .. import PROBES
    return sorted(PROBES)


@part("probe", args=probe_names, order=30,
      convention_why="each probe builds its regimes in the conventions its question names (make_setting with its "
      "own options), not in the run's")
def probe_part(name: str, profile: str) -> dict:
    """One probe's findings, each decided from its evidence, at the profile (``verify probe NAME``)."""
    from .. import PROBES
    return PROBES[name].run(profile).as_dict()
