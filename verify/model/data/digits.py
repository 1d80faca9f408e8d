"""sklearn's 8 x 8 handwritten digits (1,797 images, the UCI optdigits data, bundled in scikit-learn's wheel):
a stand-in for MNIST, which cannot be downloaded here.

Each image is one X in R^{8 x 8}: its D = 8 columns are the tokens and the d = 8 pixels of a column are the
token's features (X_ab = the pixel in row a, column b). Pixels are integers 0..16, so every moment of the
centred images is an exact rational, and so is the second-moment tensor after the global scaling (its square
is rational). Besides the data themselves, three Gaussian models with their second moments: the full tensor,
and its two isotropic parts (across tokens, across pixels), which say which assumption a claim needs.
"""
from __future__ import annotations

import gzip
import importlib.util
from pathlib import Path

import numpy as np

from . import register
from .base import GaussianModel, ImageSet

STAND_IN = "a stand-in for MNIST: sklearn's 8×8 digits"


def load() -> np.ndarray:
    """The 1,797 digit images as integers, shape (1797, 8, 8): read from the file scikit-learn's wheel ships
    (``sklearn/datasets/data/digits.csv.gz``, the file ``sklearn.datasets.load_digits`` reads, parsed as it
    parses it: 64 pixels and the label per line), found without importing scikit-learn, whose import costs about
    1.3 s of CPU in the part that needs the digits; through ``load_digits`` where that file is not found."""
    spec = importlib.util.find_spec("sklearn")
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(root) / "datasets" / "data" / "digits.csv.gz"
        if path.is_file():
            with gzip.open(path, mode="rt", encoding="utf-8") as f:
                flat = np.loadtxt(f, delimiter=",")[:, :-1]
            return np.rint(flat.reshape(-1, 8, 8)).astype(np.int64)
    from sklearn.datasets import load_digits  # heavy: sklearn
    return np.rint(load_digits().images).astype(np.int64)


DIGITS = register(ImageSet("digits", load, f"{STAND_IN} (1,797 images of the UCI optdigits data); an image is X "
                           "in R^(8x8) with its 8 columns as the D = 8 tokens of d = 8 pixels each", (8, 8)))
register(GaussianModel("gaussian:digits", DIGITS, "the digits' second-moment tensor E[vec X vec X^T] (64 x 64)"))
register(GaussianModel("gaussian:digits-pixels", DIGITS, "the digits' pixel covariance (the average over tokens), "
                       "tokens uncorrelated: Sigma_pix (x) I_D, isotropic across tokens", part="pixel"))
register(GaussianModel("gaussian:digits-tokens", DIGITS, "the digits' token covariance (the average over pixels), "
                       "pixels uncorrelated with equal variance: I_d (x) Sigma_tok, isotropic across pixels",
                       part="token"))
