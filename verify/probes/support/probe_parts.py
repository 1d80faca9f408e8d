"""The ``probe`` parts of ``verify all``: one per probe of the catalogue (verify.probes.PROBES), run at the
profile and under the run's convention (``verify probe NAME --profile P`` with the convention flags)."""
from __future__ import annotations

from .. import PROBES
from ...run import part


@part("probe", args=lambda: sorted(PROBES), order=30)
def probe_part(name: str, profile: str, convention: dict | None = None) -> dict:
    """One probe's findings, each decided from its evidence, as ``verify probe NAME`` (verify.checks.Catalogue)."""
    return PROBES.part_result(name, profile, convention)
