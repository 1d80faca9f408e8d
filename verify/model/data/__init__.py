"""The data models X is drawn from (``Setting.data``, ``--data``): the reference i.i.d. entries, sklearn's 8 x 8
digits (a stand-in for MNIST) and Gaussian models with the digits' second moments. verify.model.data.base says
what a model declares; each named model is registered once, here or in the module that defines it.

>>> parse_data("digits").dims, parse_data("gaussian").iid
((8, 8), True)
"""
from __future__ import annotations

from ...errors import InvalidParameter
from .base import ROUTES, Data, GaussianModel, IidEntries, Images, ImageSet, Moments

MODELS: dict[str, Data] = {}


def register(model: Data) -> Data:
    """Make ``model`` known by its spec (``parse_data``, ``--data``)."""
    if MODELS.get(model.spec(), model) is not model:
        raise TypeError(f"the data model {model.spec()!r} is registered twice")
    MODELS[model.spec()] = model
    return model


def data_models() -> list[str]:
    """The registered specs, the reference first."""
    return list(MODELS)


def parse_data(spec) -> Data:
    """The data model ``spec`` names (a :class:`Data` is returned as it is: a test's own model)."""
    if isinstance(spec, Data):
        return spec
    if not isinstance(spec, str) or spec not in MODELS:
        raise InvalidParameter("data", spec, "must be one of " + ", ".join(MODELS))
    return MODELS[spec]


register(IidEntries())
from . import digits  # noqa: E402,F401  (registers the digits and their Gaussian models)

__all__ = ["Data", "IidEntries", "ImageSet", "GaussianModel", "Moments", "Images", "ROUTES", "MODELS", "register",
           "data_models", "parse_data"]
