"""The setting: validated, immutable descriptions of one regime (docs/setting.md)."""
from .laws import LAW_NAMES, Law, parse_law
from .numbers import exact, frac_str, load_json_exact
from .presets import PRESETS, preset_supports
from .setting import Setting, make_setting, validate
from .sigmas import Sigma, parse_sigma, sigma_families

__all__ = ["Setting", "make_setting", "validate", "Law", "parse_law", "Sigma", "parse_sigma",
           "exact", "frac_str", "load_json_exact", "PRESETS", "preset_supports", "LAW_NAMES", "sigma_families"]
