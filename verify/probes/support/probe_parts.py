"""The ``probe`` parts of ``verify all``: one per probe of the catalogue (verify.probes.PROBES), run at the
profile and under the run's convention (``verify probe NAME --profile P`` with the convention flags)."""
from __future__ import annotations

from .. import PROBES
from ...model.convention import Convention
from ...run import part


def probe_names() -> list[str]:
    return sorted(PROBES)


@part("probe", args=probe_names, order=30)
def probe_part(name: str, profile: str, convention: dict | None = None) -> dict:
    """One probe's findings, each decided from its evidence, at the profile and under the run's convention
    (make_setting keywords; None: the reference), as ``verify probe NAME`` with the convention flags."""
    conv = Convention.from_options(convention) if convention else None
    return PROBES[name].run(profile, conv).as_dict()
