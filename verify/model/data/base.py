"""What the population loss is an expectation over: the law of X in R^{d x D} (d features of each of D tokens).

Three kinds of data model, each an object the setting holds (``Setting.data``):

- :class:`IidEntries` (``gaussian``, the reference): i.i.d. entries of the setting's entry law; the loss goes
  through sigma's kernel of the Gram quantities (verify.derive.loss).
- :class:`ImageSet`: the empirical distribution of a finite set of integer images, each centred by the
  per-pixel mean over the set and divided by one global factor so that the mean squared entry is 1. The
  population loss is the exact finite sum over the images; its second-moment tensor E[vec X vec X^T] is an
  exact rational tensor (integer images).
- :class:`GaussianModel`: X Gaussian with mean 0 and a given second-moment tensor (exact rationals). Every
  output entry's pair (u, z) = ((W_X X S)_mj, (V* X S*)_mj) is then jointly Gaussian, so sigma's Gaussian
  kernel ell(A, C, B) holds exactly with A, C, B the quadratic forms of the tensor.

A second-moment tensor T is stored as integer numerators over one integer denominator, indexed
T[a, b, c, e] = E[X_ab X_ce] (feature a of token b, feature c of token e).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Callable

import numpy as np

ROUTES = ("iid", "moments", "images")     # how the engines compute the population loss (Data.route)


@dataclass(frozen=True)
class Moments:
    """An exact second-moment tensor T = numerators / denominator, of shape (d, D, d, D)."""

    numerators: np.ndarray        # integers (Python ints in an object array: no overflow)
    denominator: int

    def fractions(self) -> np.ndarray:
        """T as an object array of exact Fractions."""
        q = self.denominator
        return np.vectorize(lambda x: Fraction(int(x), q), otypes=[object])(self.numerators)

    def floats(self) -> np.ndarray:
        """T in float64, each entry correctly rounded (Python's int / int is)."""
        q = self.denominator
        return np.vectorize(lambda x: int(x) / q, otypes=[float])(self.numerators)

    def pixel_part(self) -> "Moments":
        """Sigma_pix (x) I_D with Sigma_pix[a, c] = (1/D) sum_b T[a, b, c, b]: the same within-token feature
        covariance (the average over tokens), tokens uncorrelated (isotropic across tokens)."""
        d, D = self.numerators.shape[:2]
        pix = sum(self.numerators[:, b, :, b] for b in range(D))
        out = np.zeros((d, D, d, D), dtype=object)
        for b in range(D):
            out[:, b, :, b] = pix
        return Moments(out, self.denominator * D)

    def token_part(self) -> "Moments":
        """I_d (x) Sigma_tok with Sigma_tok[b, e] = (1/d) sum_a T[a, b, a, e]: the token covariance (the average
        over features), features uncorrelated and of equal variance (isotropic across features)."""
        d, D = self.numerators.shape[:2]
        tok = sum(self.numerators[a, :, a, :] for a in range(d))
        out = np.zeros((d, D, d, D), dtype=object)
        for a in range(d):
            out[a, :, a, :] = tok
        return Moments(out, self.denominator * d)


@dataclass(frozen=True)
class Images:
    """The centred images as exact numerators over ``n`` times one scale: X_i = (numerators_i / n) sqrt(scale2)."""

    numerators: np.ndarray        # integers n x_i - sum_k x_k, shape (n, d, D)
    n: int
    scale2: Fraction              # the global factor squared: 1 / (mean squared entry of the centred images)

    def floats(self) -> np.ndarray:
        """The images in float64."""
        return self.numerators.astype(float) * (float(self.scale2) ** 0.5 / self.n)


class Data:
    """Base of the data models (module docstring). Equal and hashed by :meth:`spec` (usable as a cache key)."""

    name: str = ""
    iid: bool = False             # i.i.d. entries of the setting's entry law
    empirical: bool = False       # a finite set of images: the population is their empirical distribution
    gaussian: bool = False        # X is Gaussian: sigma's Gaussian kernel holds at the tensor's quadratic forms

    def spec(self) -> str:
        """How the model is written (``--data``) and recorded (``Setting.config()["data"]``)."""
        return self.name

    @property
    def dims(self) -> tuple[int, int] | None:
        """(d, D) the model fixes, or None when any dimensions go."""
        return None

    def moments(self) -> Moments | None:
        """The exact second-moment tensor E[X_ab X_ce] (None for i.i.d. entries: there it is v 1{a=c, b=e})."""
        return None

    def images(self) -> Images | None:
        """The finite set of images (None unless the model is empirical)."""
        return None

    def note(self) -> str:
        """The data and their preprocessing in one sentence (recorded as ``config()["data_note"]``)."""
        raise NotImplementedError

    def routes(self, sigma) -> tuple[str, ...]:
        """The ways of computing the loss exactly (ROUTES), the engines' choice first: "iid" (sigma's kernel of the
        Gram quantities), "moments" (sigma's kernel of the tensor's quadratic forms: exact for Gaussian X, and for
        any X when the kernel holds for any law, i.e. sigma linear), "images" (the finite sum over the images,
        any sigma)."""
        if self.iid:
            return ("iid",)
        if self.empirical:
            return ("moments", "images") if sigma.any_law else ("images",)
        return ("moments",)

    def route(self, sigma) -> str:
        """The route the engines take (the first of :meth:`routes`)."""
        return self.routes(sigma)[0]

    def expectation_terms(self) -> int:
        """How many numbers one entry's expectation sums beyond the Gram sums (precision bookkeeping)."""
        return 0

    def __eq__(self, other) -> bool:
        return isinstance(other, Data) and other.spec() == self.spec()

    def __hash__(self) -> int:
        return hash(("data", self.spec()))

    def __repr__(self) -> str:
        return f"<data {self.spec()}>"


class IidEntries(Data):
    """i.i.d. entries X_ab = mu + sqrt(v) xi_ab of the setting's entry law (docs/setting.md): the reference."""

    name = "gaussian"
    iid = True

    def note(self) -> str:
        return "i.i.d. entries of the entry law (law, law_mean, law_var)"


class ImageSet(Data):
    """The empirical distribution of integer images ``load()`` (shape (n, d, D)): each pixel centred by its
    mean over the set, every entry divided by one global factor so that the mean squared entry is 1."""

    empirical = True

    def __init__(self, name: str, load: Callable[[], np.ndarray], description: str, dims: tuple[int, int]):
        self.name, self._load, self.description, self._dims = name, load, description, dims

    @property
    def dims(self):
        return self._dims

    def raw(self) -> np.ndarray:
        """The integer images, as loaded (cached)."""
        return _raw(self)

    def moments(self) -> Moments:
        return _image_moments(self)

    def images(self) -> Images:
        return _centred_images(self)

    def note(self) -> str:
        return (f"{self.description}; each pixel centred by its mean over the {len(self.raw()):,} images, every entry "
                "divided by one global factor so that the mean squared entry is 1")

    def expectation_terms(self) -> int:
        d, D = self.dims
        return len(self.raw()) + d * D


class GaussianModel(Data):
    """X Gaussian, mean 0, with the second-moment tensor ``moments()`` of another model (``of``), possibly
    reduced to one of its parts (``part``: "pixel" or "token", see :class:`Moments`)."""

    gaussian = True

    def __init__(self, name: str, of: Data, text: str, part: str | None = None):
        self.name, self.of, self.text, self.part = name, of, text, part

    @property
    def dims(self):
        return self.of.dims

    def moments(self) -> Moments:
        return _gaussian_moments(self)

    def note(self) -> str:
        return f"Gaussian X with mean 0 and {self.text}"

    def expectation_terms(self) -> int:
        d, D = self.dims
        return d * d + D * D


@lru_cache(maxsize=None)
def _raw(data: ImageSet) -> np.ndarray:
    x = np.asarray(data._load())
    if x.ndim != 3 or tuple(x.shape[1:]) != tuple(data.dims) or not np.issubdtype(x.dtype, np.integer):
        raise ValueError(f"{data.name}: images must be integers of shape (n, {data.dims[0]}, {data.dims[1]})")
    x = x.astype(np.int64)
    x.setflags(write=False)
    return x


@lru_cache(maxsize=None)
def _centred_images(data: ImageSet) -> Images:
    x = data.raw().astype(object)
    n = len(x)
    num = n * x - x.sum(axis=0)                 # n (x_i - mean): integers
    sq = sum(int(v) * int(v) for v in num.flat)
    # mean squared entry of the centred images = sq / (n^2 n d D); the global factor squared is its inverse
    scale2 = Fraction(n * n * num[0].size * n, sq)
    return Images(num, n, scale2)


@lru_cache(maxsize=None)
def _image_moments(data: ImageSet) -> Moments:
    """E[vec X vec X^T] over the centred, scaled images, exactly: (1/n) sum_i X_i (x) X_i = scale2 / n^3 sum_i
    num_i (x) num_i with num_i = n x_i - sum_k x_k (integers)."""
    im = data.images()
    flat = im.numerators.reshape(im.n, -1)
    big = max(abs(int(v)) for v in flat.flat)
    # int64 sums of products are exact while n max|num|^2 < 2^63 (digits: 1797 * 28752^2 ~ 1.5e12); else Python ints
    gram = (flat.astype(np.int64).T @ flat.astype(np.int64)).astype(object) if im.n * big * big < 2**62 \
        else flat.T.dot(flat)
    t = Fraction(im.scale2, im.n ** 3)
    d, D = data.dims
    return Moments((gram * t.numerator).reshape(d, D, d, D), t.denominator)


@lru_cache(maxsize=None)
def _gaussian_moments(model: GaussianModel) -> Moments:
    m = model.of.moments()
    if model.part is None:
        return m
    return m.pixel_part() if model.part == "pixel" else m.token_part()


__all__ = ["Data", "IidEntries", "ImageSet", "GaussianModel", "Moments", "Images", "ROUTES"]
