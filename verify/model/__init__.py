"""The setting: validated, immutable descriptions of one regime (docs/setting.md).

Each public name loads its module on first use (verify.lazy), so that a light module of this package (the
profiles, the option spellings) is imported without the rest.
"""
from ..lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("LAW_NAMES", "Law", "parse_law"), ".laws"),
    **dict.fromkeys(("exact", "frac_str", "load_json_exact"), ".numbers"),
    **dict.fromkeys(("PRESETS", "preset_supports"), ".presets"),
    **dict.fromkeys(("Setting", "make_setting", "validate"), ".setting"),
    **dict.fromkeys(("Sigma", "parse_sigma", "sigma_families"), ".sigmas"),
}
__all__ = ["Setting", "make_setting", "validate", "Law", "parse_law", "Sigma", "parse_sigma",
           "exact", "frac_str", "load_json_exact", "PRESETS", "preset_supports", "LAW_NAMES", "sigma_families"]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
