"""verify: symbolic-numeric checks of 'Transformers Trained via Gradient Descent Can Provably Learn a
Class of Teacher Models' (Zhang, Zhao, Gu, Cao; arXiv:2603.22801) under the setting of SETTING.md.

Public API (everything else is internal):

>>> from verify import make_setting, iterate
>>> s = make_setting(D=8, K=2, M=1, d=2, preset="cnn", vstar_norm="1", eta="1/10")
>>> r = iterate(s, 100, engine="reduced", arithmetic="mpmath", dps=30).final
>>> r.step
100
"""
from .engines import Trajectory, iterate
from .errors import InvalidParameter, PrecisionError, UnsupportedRegime, VerificationError
from .model import Setting, make_setting

__all__ = ["make_setting", "Setting", "iterate", "Trajectory", "VerificationError", "InvalidParameter",
           "PrecisionError", "UnsupportedRegime"]
