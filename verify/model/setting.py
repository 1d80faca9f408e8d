"""The reference setting of docs/setting.md as one validated, immutable object.

Every option the paper might choose differently is a named field; :meth:`Setting.config` records
them all, and every result the toolkit prints carries that record.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from decimal import Context, Decimal
from fractions import Fraction

import numpy as np

from ..errors import InvalidParameter
from .data import MODELS, Data, IidEntries, parse_data
from .laws import Law, parse_law
from .numbers import exact, frac_str, load_json_exact
from .presets import preset_supports
from .sigmas import FAMILIES, Sigma, parse_sigma, sigma_families
from .sigmas.identity import Identity
from .spec import BY_NAME, FIELDS, MAX_DIM
from .spec import DEFAULTS as FIELD_DEFAULTS
from .validation import FLOAT64_MAX, FLOAT64_MIN, Problems, check_choice, check_int

# The choices of the choice fields (verify.model.spec); an explicit P (p_matrix) is the Python API's own kind.
CHOICES = {f.name: f.choices for f in FIELDS if f.kind == "choice" and f.name != "preset"}
CHOICES["p_kind"] += ("explicit",)
# MAX_DIM (verify.model.spec) is also the largest D a full-matrix computation accepts: it builds D x D arrays (P, S*)
# and a step costs O(D^3). The cap applies where such an array is built (Setting.p_exact, Setting.sstar:
# check_full_dims), not to a setting: the reduced recursion, the invariants and the atlas need no D-sized storage
# and take any D. M and d (the sizes of W_X and V*, stored as M x d) keep it at construction (their fields' range).


@dataclass(frozen=True)
class Setting:
    """One regime: dimensions, teacher (V*, S*), sigma, entry law, conventions, initialisation."""

    d: int
    D: int
    M: int
    N: int
    K: int
    supports: tuple[tuple[int, ...], ...]
    vstar_base: tuple[tuple[Fraction, ...], ...]
    vstar_scale2: Fraction = Fraction(1)
    vstar_source: str = "explicit"
    vstar_norm: Fraction | None = None      # the norm a random V* was rescaled to (None for an explicit V*)
    sstar_weights: tuple[tuple[Fraction, ...], ...] | None = None
    sigma: Sigma = field(default_factory=Identity)
    law: Law = field(default_factory=Law)
    data: Data = field(default_factory=IidEntries)   # what X is drawn from (verify.model.data)
    noise_sd: Fraction = Fraction(0)
    loss: str = "sum"
    p_kind: str = "identity"
    p_structure: str = "orthogonal"
    p_lambda: Fraction = Fraction(1)
    p_matrix: tuple[tuple[Fraction, ...], ...] | None = None
    # Logit temperature: column j of S is softmax of beta * P^T W_KQ p_{q(j)} (1 = docs/setting.md).
    beta: Fraction = Fraction(1)
    eta_v: Fraction = Fraction(1, 10)
    eta_kq: Fraction = Fraction(1, 10)
    query: tuple[int, ...] = ()
    init: str = "zero"
    init_scale: Fraction = Fraction(0)
    seed: int = 0
    relu_at_zero: str = "radial"
    wp_trainable: bool = True
    preset: str | None = None

    # ----- derived exact quantities -------------------------------------------------------
    def row_norm2(self) -> tuple[Fraction, ...]:
        """||v*_m||^2 per row, exactly."""
        return tuple(self.vstar_scale2 * sum(x * x for x in row) for row in self.vstar_base)

    def vstar_norm2(self) -> Fraction:
        """||V*||_F^2, exactly."""
        return sum(self.row_norm2(), Fraction(0))

    def parameters(self) -> dict[str, Fraction]:
        """The exact values the reduced map sees, by the names a certificate's formulas use (verify.certify.files:
        D, K, N, c_L, v, lambda, beta, eta_V, eta_KQ and V2 = ||V*||_F^2); verify.model.symbols.values_at is
        these as SymPy numbers."""
        return {"D": Fraction(self.D), "K": Fraction(self.K), "N": Fraction(self.N), "c_L": self.loss_scale,
                "v": Fraction(self.law.var), "lambda": Fraction(self.p_lambda), "beta": Fraction(self.beta),
                "eta_V": Fraction(self.eta_v), "eta_KQ": Fraction(self.eta_kq), "V2": self.vstar_norm2()}

    def check_full_dims(self) -> None:
        """Refuse, naming D and its range, a D too large for a computation that builds D x D arrays (MAX_DIM)."""
        if self.D > MAX_DIM:
            raise InvalidParameter("D", self.D, f"must satisfy 1 <= D <= {MAX_DIM} for a full-matrix computation (it "
                                   "builds D x D arrays); the reduced engine, `verify atlas --query` and the "
                                   "invariants take any D >= 1")

    def sstar(self) -> list[list[Fraction]]:
        """S* as a D x N list of exact entries (a full-matrix input: D <= MAX_DIM)."""
        self.check_full_dims()
        S = [[Fraction(0)] * self.N for _ in range(self.D)]
        for j, g in enumerate(self.supports):
            w = self.sstar_weights[j] if self.sstar_weights else [Fraction(1, max(self.K, 1))] * len(g)
            for i, wi in zip(g, w):
                S[i][j] = wi
        return S

    @property
    def uniform_sstar(self) -> bool:
        return self.sstar_weights is None

    @property
    def loss_scale(self) -> Fraction:
        """1 for the summed loss, 1/(M N) for the mean convention."""
        return Fraction(1) if self.loss == "sum" else Fraction(1, self.M * self.N)

    def p_numeric(self) -> np.ndarray:
        """P as a float64 array (exact for identity / permutation / dyadic explicit entries)."""
        return np.array([[float(x) for x in row] for row in self.p_exact()], dtype=float)

    def p_exact(self) -> list[list[Fraction]]:
        """P with exact rational entries where the kind has them (sinusoidal: float64 values); D x D, so D <=
        MAX_DIM."""
        self.check_full_dims()
        D = self.D
        if self.p_matrix is not None:
            return [list(r) for r in self.p_matrix]
        if self.p_kind == "sinusoidal":
            # Unnormalised sinusoidal encodings (Vaswani et al.): row 2i is sin, row 2i+1 is cos
            # of pos / 10000^(2i/D), scaled by sqrt(lambda); P^T P is not a multiple of I.
            lam = math.sqrt(float(self.p_lambda))
            rows = []
            for k in range(D):
                i = k // 2
                f = (math.sin if k % 2 == 0 else math.cos)
                rows.append([Fraction(lam * f(pos / 10000 ** (2 * i / D))) for pos in range(D)])
            return rows
        lam = self.p_lambda
        root = Fraction(math.isqrt(lam.numerator), math.isqrt(lam.denominator))
        if root * root != lam:
            raise InvalidParameter("p_lambda", lam, "must be the square of a rational for the identity and permutation "
                                   "P kinds (P = sqrt(lambda) I exactly); `p_kind=sinusoidal` takes any lambda > 0",
                                   also=("p_kind",))
        zero = Fraction(0)      # one object for the D^2 - D zeros (D = 1024: a million of them)
        if self.p_kind == "identity":
            return [[root if i == j else zero for j in range(D)] for i in range(D)]
        perm = [int(x) for x in np.random.default_rng(self.seed).permutation(D)]
        return [[root if perm[j] == i else zero for j in range(D)] for i in range(D)]

    def reducible(self) -> tuple[bool, str]:
        """Whether the exact reduced recursion on (alpha_1..alpha_M, delta) applies, and why not."""
        if not self.data.iid:
            return False, (f"the data are not i.i.d. entries (data = {self.data.spec()}): correlated pixels move the "
                           "rows of W_X off the lines of V*'s rows and correlated tokens make the columns of S "
                           "more than two-valued, so only the full-matrix engine applies")
        if self.sstar_weights is not None:
            return False, "S* has non-uniform weights, so columns of S are not two-valued"
        if self.law.mean != 0:
            return False, "the entry law has non-zero mean, which pushes W_X along the all-ones direction"
        if self.init != "zero":
            return False, "the initialisation is random, not zero"
        if self.p_structure != "orthogonal":
            return False, "P is not a multiple of an orthogonal matrix"
        if self.wp_trainable and not self.sigma.odd:
            return False, (f"sigma = {self.sigma.spec()} is not odd, so W_P leaves 0 "
                           "(freeze W_P with wp_trainable=False to study the W_X/S dynamics)")
        if not self.sigma.odd and self.sigma.at_zero != 0:      # an odd sigma has sigma(0) = -sigma(0) = 0
            return False, "sigma(0) != 0"
        return True, "exact (verify.derive.reduction_proof proves the invariance)"

    def config(self) -> dict:
        """Every option in force, as JSON-ready strings and lists."""
        return {
            "d": self.d, "D": self.D, "M": self.M, "N": self.N, "K": self.K,
            "preset": self.preset,
            "supports": [list(g) for g in self.supports],
            "sstar_weights": None if self.sstar_weights is None else [[frac_str(w) for w in c] for c in self.sstar_weights],
            "vstar_source": self.vstar_source,
            "vstar_norm": None if self.vstar_norm is None else frac_str(self.vstar_norm),
            "vstar_norm2": frac_str(self.vstar_norm2()),
            "vstar": None if self.vstar_source != "explicit" else [[frac_str(x) for x in r] for r in self.vstar_base],
            "sigma": self.sigma.spec(),
            "law": self.law.spec(), "law_mean": frac_str(self.law.mean), "law_var": frac_str(self.law.var),
            "data": self.data.spec(), "data_note": self.data.note(),
            "noise_sd": frac_str(self.noise_sd),
            "loss": self.loss,
            "p_kind": self.p_kind, "p_structure": self.p_structure, "p_lambda": frac_str(self.p_lambda),
            "beta": frac_str(self.beta),
            "eta_v": frac_str(self.eta_v), "eta_kq": frac_str(self.eta_kq),
            "query": list(self.query),
            "init": self.init, "init_scale": frac_str(self.init_scale), "seed": self.seed,
            "relu_at_zero": self.relu_at_zero, "wp_trainable": self.wp_trainable,
        }

    def kwargs(self) -> dict:
        """The :func:`make_setting` keywords that rebuild this setting exactly (the supports through the
        preset when there is one, so that a change of D or K re-derives them and N)."""
        c = self.config()
        kw = {k: v for k, v in c.items() if k in MAKE_KEYWORDS}
        kw["eta"] = self.eta_v
        kw["eta_kq"] = None if self.eta_kq == self.eta_v else self.eta_kq
        kw["sigma"], kw["law"], kw["wp_trainable"] = self.sigma.spec(), self.law.spec(), self.wp_trainable
        # a registered data model by its spec (JSON-ready); a caller's own model as the object
        kw["data"] = self.data.spec() if _registered(self.data) else self.data
        if self.preset is not None:
            kw.pop("supports")
            kw.pop("N")
        if self.vstar_source == "explicit":
            kw["vstar"] = [list(r) for r in self.vstar_base]
            kw.pop("vstar_norm", None)
        else:
            kw.pop("vstar", None)
            kw["vstar_norm"] = self.vstar_norm
        if self.p_matrix is not None:
            kw["p_matrix"] = [list(r) for r in self.p_matrix]
        if list(self.query) == list(range(self.N)):
            kw.pop("query")
        return kw

    def with_(self, **changes) -> "Setting":
        """A new setting with some of :func:`make_setting`'s keywords changed (same names and value types:
        ``with_(D=6)``, ``with_(eta="1/8")``), built and validated again: a preset's supports and N follow D
        and K; a random V* is redrawn at the new M, d with the same seed and norm; eta_KQ stays tied to eta
        unless it was set apart."""
        unknown = sorted(set(changes) - MAKE_KEYWORDS)
        if unknown:
            raise InvalidParameter(unknown[0], changes[unknown[0]],
                                   f"is not a setting keyword; the keywords are {', '.join(sorted(MAKE_KEYWORDS))}")
        kw = self.kwargs()
        if "supports" in changes:
            kw.pop("preset", None)
        if "preset" in changes and "supports" not in changes:
            kw.pop("supports", None)
            kw.pop("N", None)
        if "vstar" in changes:
            kw.pop("vstar_norm", None)
        if "vstar_norm" in changes:
            kw.pop("vstar", None)
        if {"M", "d"} & set(changes) and "vstar" in kw and "vstar" not in changes:
            raise InvalidParameter("vstar", "explicit", "must be given again when M or d change (an explicit V* "
                                   "has the old shape)", also=tuple(sorted({"M", "d"} & set(changes))))
        if ("D" in changes or "K" in changes) and self.preset is None and "supports" not in changes:
            raise InvalidParameter("supports", "explicit", "must be given again when D or K change (explicit "
                                   "supports index the old tokens); or pass `preset`", also=("D", "K"))
        return make_setting(**(kw | changes))


def _registered(data: Data) -> bool:
    """Whether ``data`` is the registered model of its name (so its spec alone rebuilds it)."""
    return MODELS.get(data.spec()) is data


def _sci(q: Fraction) -> str:
    """A rational in 3-digit scientific notation at any magnitude (float() would overflow)."""
    return format(Context(prec=3).divide(Decimal(q.numerator), Decimal(q.denominator)), "E")


def _random_vstar(M: int, d: int, seed: int, norm: Fraction):
    """Seeded Gaussian rows (exact binary rationals) and the exact scale^2 that gives ||V*||_F = norm."""
    G = np.random.default_rng(seed).standard_normal((M, d))
    base = tuple(tuple(Fraction(float(x)) for x in row) for row in G)
    g2 = sum((x * x for row in base for x in row), Fraction(0))
    return base, norm * norm / g2


def _exact_numbers(pr: Problems, values: dict) -> dict:
    """The rational inputs that were given, read exactly and checked against their fields' ranges (verify.model.spec).
    An invalid value is recorded in ``pr`` and left out, so the caller uses its stand-in for the cross-field rules."""
    num = {}
    for name, value in values.items():
        if value is not None:
            with pr.check():
                num[name] = BY_NAME[name].check(value)
    return num


# The user-level defaults, from the field table (verify.model.spec, their one home); API-only keywords (query,
# p_matrix, sstar_weights, wp_trainable) keep theirs in the signature.
_F = FIELD_DEFAULTS


def _query(query, N: int, D: int) -> tuple[int, ...]:
    """The query positions: the first N tokens by default, else N distinct positions in 0..D-1."""
    q = tuple(range(N)) if query is None else tuple(check_int("query entry", i, 0, D - 1) for i in query)
    if len(q) != N or len(set(q)) != N:
        raise InvalidParameter("query", list(q), f"must be {N} distinct positions in 0..{D - 1}")
    return q


def make_setting(*, D, K=None, N=None, M=_F["M"], d=_F["d"], eta=_F["eta"], eta_kq=None, supports=None, preset=None,
                 vstar=None, vstar_norm=None, seed=_F["seed"], sigma=_F["sigma"], law=_F["law"],
                 law_mean=_F["law_mean"], law_var=_F["law_var"], noise_sd=_F["noise_sd"], loss=_F["loss"],
                 p_kind=_F["p_kind"], p_structure=_F["p_structure"], p_lambda=_F["p_lambda"], p_matrix=None,
                 beta=_F["beta"], query=None, init=_F["init"], init_scale=_F["init_scale"],
                 relu_at_zero=_F["relu_at_zero"], wp_trainable=True, sstar_weights=None, data=_F["data"]) -> Setting:
    """Build and validate a :class:`Setting` from user-level inputs (decimals read exactly).

    ``supports`` is a list of 0-based index lists (one per column of S*), a path to such a JSON
    file, or None with ``preset``. ``vstar`` is a list of rows, a JSON path, or None with
    ``vstar_norm`` (seeded Gaussian rescaled to that Frobenius norm). ``data`` names the data model
    (verify.model.data: ``gaussian``, the i.i.d. entries of ``law``; ``digits``; Gaussian models with the
    digits' second moments), or is a :class:`~verify.model.data.Data` object.

    Every invalid input is reported, together, in one :class:`InvalidParameter` (its ``problems``);
    inputs that depend on an invalid one (supports on D, V* on M and d) are checked once it is valid.
    """
    pr = Problems()
    dims = {}
    for name, value in (("D", D), ("M", M), ("d", d), ("seed", seed)):
        with pr.check():
            dims[name] = BY_NAME[name].check(value)
    D, M, d, seed = (dims.get(k) for k in ("D", "M", "d", "seed"))
    sup = None
    if D is not None:
        with pr.check():
            sup, K, N = _supports(supports, preset, D, K, N)
    sw = None
    if sstar_weights is not None and sup is not None:
        with pr.check():
            sw = _sstar_weights(sstar_weights, K, N)
    base = scale2 = source = vnorm = None
    if M is not None and d is not None and seed is not None:
        with pr.check():
            base, scale2, source, vnorm = _vstar(vstar, vstar_norm, M, d, seed)
    num = _exact_numbers(pr, {"eta": eta, "eta_kq": eta_kq, "noise_sd": noise_sd, "p_lambda": p_lambda,
                              "beta": beta, "init_scale": init_scale})
    sig = lw = dat = None
    with pr.check():
        dat = parse_data(data)
    with pr.check():
        sig = parse_sigma(sigma)
    with pr.check():
        lw = parse_law(law, law_mean, law_var)
    P = None
    if p_matrix is not None:
        with pr.check():
            P = tuple(tuple(exact(x, "P entry") for x in r) for r in p_matrix)
    q = None
    if sup is not None:
        with pr.check():
            q = _query(query, N, D)
    if sup is None or base is None:
        pr.raise_all()
    # Inputs that failed alone get a neutral stand-in so that the cross-field rules still run on the
    # rest (and every conflict is reported in the same message); rules naming a failed input are skipped.
    bad = {p.name for p in pr.items}
    bad |= {name for name, failed in (("sigma", sig is None), ("law", lw is None), ("data", dat is None),
                                      ("p_matrix", p_matrix is not None and P is None)) if failed}
    def got(name, stand_in):
        return stand_in if num.get(name) is None else num[name]
    eta_v = got("eta", Fraction(1))
    s = Setting(
        d=d, D=D, M=M, N=N, K=K, supports=tuple(sup), vstar_base=base, vstar_scale2=scale2,
        vstar_source=source, vstar_norm=vnorm, sstar_weights=sw,
        sigma=sig or Identity(), law=lw or Law(), data=dat or IidEntries(),
        noise_sd=got("noise_sd", Fraction(0)), loss=loss, p_kind=p_kind, p_structure=p_structure,
        p_lambda=got("p_lambda", Fraction(1)), beta=got("beta", Fraction(1)), p_matrix=P,
        eta_v=eta_v, eta_kq=got("eta_kq", eta_v), query=q or tuple(range(N)), init=init,
        init_scale=got("init_scale", Fraction(0)),
        seed=seed, relu_at_zero=relu_at_zero, wp_trainable=bool(wp_trainable), preset=preset)
    _cross_field(s, pr, bad)
    pr.raise_all()
    return s


MAKE_KEYWORDS = frozenset(inspect.signature(make_setting).parameters)
# The reference convention of docs/setting.md is make_setting's defaults (from verify.model.spec.FIELDS).
DEFAULTS = {k: p.default for k, p in inspect.signature(make_setting).parameters.items()
            if p.default is not inspect.Parameter.empty}
# The options that make a convention (not a size, teacher or seed), as Setting.config() spells them: the field
# table's convention fields recorded as one value, but sigma, which a scope names on its own (Scope.sigma); the
# W_P switch (no one value) has its own label below.
CONVENTION_KEYS = tuple(f.config for f in FIELDS if f.convention and f.config and f.name != "sigma")
REFERENCE_LABEL = "reference"


def conventions_of(setting) -> str:
    """"reference", or the options in which ``setting`` differs from the reference convention
    (e.g. "loss=mean, law=gumbel, W_P frozen, eta_kq=1/5")."""
    c = setting.config()
    diff = [f"{k}={c[k]}" for k in CONVENTION_KEYS if str(c[k]) != str(DEFAULTS[k])]
    if c["sstar_weights"] is not None:
        diff.append("S* weighted")
    if not c["wp_trainable"]:
        diff.append("W_P frozen")
    if c["eta_kq"] != c["eta_v"]:
        diff.append(f"eta_kq={c['eta_kq']}")
    return ", ".join(diff) if diff else REFERENCE_LABEL


def _supports(supports, preset, D: int, K, N):
    """(column supports, K, N) from a list, a JSON file or a preset, checked against D, K and N."""
    if supports is not None and preset is not None:
        raise InvalidParameter("supports", supports, "must be given alone: pass either `supports` or `preset`, "
                               "not both", also=("preset",))
    if isinstance(supports, str):
        supports = load_json_exact(supports, "supports", integers=True)
    if preset is not None:
        if K is None:
            raise InvalidParameter("preset", preset, "must come with `K` (the support size of each column of S*)",
                                   also=("K",))
        supports = preset_supports(preset, D, BY_NAME["K"].check(K, {"D": D}))
    if supports is None:
        raise InvalidParameter("supports", None,
                               "must be given: `supports` (a JSON file) or `preset` (cnn, gcn, sts, gslp)")
    if not isinstance(supports, (list, tuple)) or not supports:
        raise InvalidParameter("supports", supports, "must be a non-empty list of index lists, one per column of S*")
    sup = []
    for j, g in enumerate(supports):
        if not isinstance(g, (list, tuple)):
            raise InvalidParameter(f"supports[{j}]", g, "must be a list of 0-based token indices")
        idx = [check_int(f"supports[{j}] entry", i, 0, D - 1) for i in g]
        if len(set(idx)) != len(idx):
            raise InvalidParameter(f"supports[{j}]", list(g), "must not repeat an index")
        sup.append(tuple(sorted(idx)))
    sizes = {len(g) for g in sup}
    if len(sizes) != 1:
        raise InvalidParameter("supports", [list(g) for g in sup],
                               "every column must have the same size K (docs/setting.md: |g_j| = K)")
    K_sup = sizes.pop()
    if K is not None:
        K = BY_NAME["K"].check(K, {"D": D})
        if K != K_sup:
            raise InvalidParameter("K", K, f"must equal the size of every support column ({K_sup})", also=("supports",))
    if N is not None:
        N = BY_NAME["N"].check(N, {"D": D})
        if N != len(sup):
            raise InvalidParameter("N", N, f"must equal the number of S* columns given ({len(sup)})",
                                   also=("supports", "preset"))
    return sup, K_sup, BY_NAME["N"].check(len(sup), {"D": D})


def _sstar_weights(sstar_weights, K: int, N: int):
    if K == 0 or len(sstar_weights) != N:
        raise InvalidParameter("sstar_weights", sstar_weights, "must have K >= 1 and one weight list per column")
    sw = []
    for j, w in enumerate(sstar_weights):
        w = tuple(exact(x, f"sstar_weights[{j}]") for x in w)
        if len(w) != K or any(x <= 0 for x in w) or sum(w) != 1:
            raise InvalidParameter(f"sstar_weights[{j}]", list(w), f"must be {K} positive weights summing to 1")
        sw.append(w)
    return tuple(sw)


def _vstar(vstar, vstar_norm, M: int, d: int, seed: int):
    """(base rows, exact scale^2, source) of V*: explicit rows (a list or JSON file) or a seeded random V*."""
    if vstar is not None and vstar_norm is not None:
        raise InvalidParameter("vstar", vstar, "must be given alone: pass either `vstar` or `vstar_norm`",
                               also=("vstar_norm",))
    if isinstance(vstar, str):
        vstar = load_json_exact(vstar, "vstar")
    if vstar is not None:
        if not isinstance(vstar, (list, tuple)) or not vstar or not all(isinstance(r, (list, tuple)) for r in vstar):
            raise InvalidParameter("vstar", vstar, "must be a list of M rows of d numbers")
        if len(vstar) != M or any(len(r) != d for r in vstar):
            raise InvalidParameter("vstar", f"{len(vstar)} rows of lengths {sorted({len(r) for r in vstar})}",
                                   f"must have shape M x d = {M} x {d}", also=("M", "d"))
        base = tuple(tuple(exact(x, "vstar entry") for x in r) for r in vstar)
        return base, Fraction(1), "explicit", None
    norm = BY_NAME["vstar_norm"].check(vstar_norm if vstar_norm is not None else "1")
    base, scale2 = _random_vstar(M, d, seed, norm)
    return base, scale2, f"gaussian(seed={seed}) rescaled to norm {frac_str(norm)}", norm


def validate(s: Setting) -> Setting:
    """Check every field's range (verify.model.spec) and every cross-field rule; returns ``s`` or raises one
    :class:`InvalidParameter` with every problem found (conflicting options are reported together)."""
    pr = Problems()
    cfg = s.config()
    for f in FIELDS:
        key = f.config or f.name
        if f.valid is not None and cfg.get(key) is not None:
            with pr.check():
                f.check(cfg[key], cfg)
    _cross_field(s, pr, {p.name for p in pr.items})
    pr.raise_all()
    return s


def _sigma_rules(s: Setting, pr: Problems, ok) -> None:
    """The requirements sigma's family declares (verify.model.sigmas.base.Sigma), each with its message."""
    sig, law = s.sigma, s.law
    if ok("sigma", "law") and not sig.any_law and not law.gaussian:
        any_law = " or ".join(f"`sigma={name}`" for name in sigma_families() if FAMILIES[name].any_law)
        pr.add("law", law.spec(), f"must be gaussian for sigma = {sig.spec()} (its kernel is derived for Gaussian "
               f"entries; {any_law or 'no registered sigma'} accepts any law)", also=("sigma",))
    if ok("sigma", "law") and sig.needs_centred and law.mean != 0:
        pr.add("law_mean", law.mean, f"must be 0 for sigma = {sig.spec()}", also=("sigma",))
    if ok("sigma") and not sig.wp_gradient_closed_form and s.wp_trainable:
        pr.add("sigma", sig.spec(), f"must come with `wp_trainable=False`: the W_P gradient of sigma = {sig.spec()} "
               "needs its kernel at non-zero offset, which has no closed form (see verify derive)",
               also=("wp_trainable",))
    if ok("sigma") and sig.kink_at_zero and s.relu_at_zero == "error" and s.init == "zero":
        pr.add("relu_at_zero", s.relu_at_zero, f"the loss of sigma = {sig.spec()} is not differentiable at W_X = 0: "
               "with `init=zero` use `relu_at_zero=radial` (the one-sided derivative along V*), or `init=random`",
               also=("init", "sigma"))


def _data_rules(s: Setting, pr: Problems, ok) -> None:
    """A data model that fixes the dimensions fixes d and D; the entry-law options apply to i.i.d. entries only;
    the radial convention at W_X = 0 is the Gaussian kernel's (verify.model.data)."""
    dat = s.data
    if not ok("data") or dat.iid:
        return
    d, D = dat.dims
    for name, value, want in (("D", s.D, D), ("d", s.d, d)):
        if value != want:
            pr.add(name, value, f"must be {want} with data = {dat.spec()} (each X is D = {D} tokens of d = {d} "
                   "features)", also=("data",))
    for name, value in (("law", s.law.spec()), ("law_mean", s.law.mean), ("law_var", s.law.var)):
        default = FIELD_DEFAULTS[name]
        if ok(name) and str(value) != default:
            pr.add(name, value, f"must stay at its default {default} with data = {dat.spec()}: the entries are the "
                   "data's own, not draws of an entry law", also=("data",))
    if ok("sigma") and dat.route(s.sigma) == "images" and s.sigma.kink_at_zero and s.init == "zero":
        pr.add("init", s.init, f"must be random with data = {dat.spec()} and sigma = {s.sigma.spec()}: the radial "
               "convention at W_X = 0 is defined through the Gaussian kernel, and the finite sum over the images has "
               "none", also=("data", "sigma"))


def _cross_field(s: Setting, pr: Problems, bad: set) -> None:
    """Record in ``pr`` every rule ``s`` breaks, skipping rules that involve an input named in ``bad``
    (already reported as invalid on its own)."""
    def ok(*names):
        return not any(n in bad for n in names)
    if s.vstar_norm2() == 0:
        pr.add("vstar", "all zeros", "must have ||V*||_F > 0")
    elif s.vstar_norm2() > FLOAT64_MAX or min(s.row_norm2()) < FLOAT64_MIN and min(s.row_norm2()) != 0:
        pr.add("vstar" if s.vstar_source == "explicit" else "vstar_norm", "||V*||_F^2 = " + _sci(s.vstar_norm2()),
               "must give squared row norms ||v*_m||^2 within the float64 range 2.2e-308 .. 1.8e308")
    for name, choices in CHOICES.items():
        with pr.check():
            check_choice(name, getattr(s, name), choices)
    if ok("init_scale") and s.init == "random" and s.init_scale <= 0:
        pr.add("init_scale", s.init_scale, "must be > 0 with `init=random` (the scale of the random start)",
               also=("init",))
    if ok("init_scale") and s.init == "zero" and s.init_scale != 0:
        pr.add("init_scale", s.init_scale, "must be 0 with `init=zero`; a random start needs `init=random`",
               also=("init",))
    _sigma_rules(s, pr, ok)
    _data_rules(s, pr, ok)
    # P
    if not ok("p_matrix"):
        pass
    elif s.p_kind == "explicit":
        if s.p_matrix is None or len(s.p_matrix) != s.D or any(len(r) != s.D for r in s.p_matrix):
            pr.add("p_matrix", "missing or wrong shape", f"must be D x D = {s.D} x {s.D}")
    elif s.p_matrix is not None:
        pr.add("p_matrix", "given", "must come with `p_kind=explicit`", also=("p_kind",))
    if s.p_kind == "sinusoidal" and s.p_structure == "orthogonal":
        pr.add("p_kind", "sinusoidal", "must come with `p_structure=general`: sinusoidal encodings are not orthogonal "
               "(orthogonal P kinds: identity, permutation, explicit)", also=("p_structure",))
    if s.p_structure == "orthogonal" and s.p_kind == "explicit" and not pr.failed("p_matrix"):
        P = [list(r) for r in s.p_matrix]
        G = [[sum(P[k][i] * P[k][j] for k in range(s.D)) for j in range(s.D)] for i in range(s.D)]
        lam = G[0][0]
        if lam <= 0 or any(G[i][j] != (lam if i == j else 0) for i in range(s.D) for j in range(s.D)):
            pr.add("p_matrix", "P^T P != lambda I", "must have orthogonal columns of equal norm (exactly), or pass "
                   "`p_structure=general`", also=("p_structure",))
        elif lam != s.p_lambda:
            pr.add("p_lambda", s.p_lambda, f"must equal P^T P / I = {frac_str(lam)}", also=("p_matrix",))
