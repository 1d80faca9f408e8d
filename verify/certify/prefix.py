"""The certified prefix: the reduced map (alpha, delta) in Arb from zero initialisation, for one regime or a box.

The map is the invariant form of verify.derive.invariants (it sees a regime only through (s, x, y), s = 1/r); one
row stands for all M rows (they share alpha; the obligations of verify.derive.invariants say why).

One regime (a point p): the mean-value form of verify.engines.mean_value (the step the reduced engine uses too): a
centre c_t (exact dyadics) and radii r_t with B_{t+1} = F(c_t) + J(B_t) [-r_t, r_t], re-centred every step.

A box of regimes P = p_c + [-h, h] (a cell of a family): a first-order Taylor model in the parameters.
Besides the centre trajectory m_t = x(t, p_c) (enclosed as above) we keep an interval matrix
S_t containing dx(t, p)/dp for every p in P, so that by the mean-value theorem

    x(t, p) in m_t + S_t (p - p_c)           for every p in P,
    S_{t+1} = J_x(B_t, P) S_t + J_p(B_t, P),   B_t = m_t + S_t [-h, h],   S_0 = 0

(the variational equation, enclosed over the box). The spread across the cell is carried by S_t
exactly to first order; what interval arithmetic adds is second order in h, so the box of states stays
as thin as the family itself. A quantity g(x, p) (the region's u and eps) is enclosed over every member
the same way: g(m_c, p_c) + grad_x g (m_t - m_c) + sum_k (grad_x g . S_k + dg/dp_k) (p_k - p_c,k), with
the gradients over B_t x P, which keeps the cancellation between the state's and the parameters' share.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from flint import arb

from ..engines.mean_value import box, finite, mean_value_step, spread
from ..errors import InvalidParameter
from .arbfun import exact, to_fraction
from .coordinates import PARAM_NAMES
from .formulas import compile_formulas, file_map

SNAPSHOT_EVERY = 256     # states kept every this many steps: bounds at T <= T0 re-step at most this


@dataclass(frozen=True)
class PrefixFunctions:
    """Generated Arb code of the map, its Jacobians and the region's coordinates as functions of the state,
    all in (alpha, E = e^delta, s, x, y) (verify.certify.formulas: the re-checker evaluates the same formulas)."""

    step: object      # -> (alpha' - alpha, delta' - delta)
    jac: object       # -> the increments' d/d alpha, d/d delta: (da_alpha, da_delta, dd_alpha, dd_delta)
    jac_p: object     # -> the increments' d/d(s, x, y): (da_s, da_x, da_y, dd_s, dd_x, dd_y)
    u: object         # -> u(delta; r)
    u_grad: object    # -> (du/d alpha, du/d delta, du/dr, du/dx, du/dy)
    eps: object       # -> eps(alpha, delta; r) = (alpha - alpha*(u))/u^3
    eps_grad: object  # -> (d eps/d alpha, d eps/d delta, d eps/dr, d eps/dx, d eps/dy)
    loss: object      # -> (L - L_opt)/pre_L
    s_err2: object    # -> ||S - S*||_F^2 / pre_S^2


@lru_cache(maxsize=None)
def prefix_functions() -> PrefixFunctions:
    fm = file_map()
    m, j, st = fm["reduced_map"], fm["jacobian"], fm["state"]
    names = PARAM_NAMES
    f = lambda group, *keys: compile_formulas([group[k] for k in keys], ("alpha", "E") + names)  # noqa: E731
    grad = lambda g: [f"{g}_{v}" for v in ("alpha", "delta") + names]  # noqa: E731
    one = lambda group, key: (lambda *a, _f=f(group, key): _f(*a)[0])  # noqa: E731
    return PrefixFunctions(
        step=f(m, "alpha_increment", "delta_increment"), jac=f(j, "da_alpha", "da_delta", "dd_alpha", "dd_delta"),
        jac_p=f(j, *[f"d{b}_{p}" for b in "ad" for p in names]), u=one(st, "u"), u_grad=f(st, *grad("u")),
        eps=one(st, "eps"), eps_grad=f(st, *grad("eps")), loss=one(m, "loss"), s_err2=one(m, "s_err2"))


def _jacobian(d):
    """The map's Jacobian from its increments' derivatives: the identity plus them (each entry formed as one ball,
    so that a contracting 1 + da_alpha < 1 stays below 1)."""
    return 1 + d[0], d[1], d[2], 1 + d[3]


def centre_and_radius(P: tuple) -> tuple[tuple, tuple]:
    """Exact centres and half-widths of invariants given as Fractions (points) or intervals (lo, hi)."""
    cs, hs = [], []
    for p in P:
        lo, hi = (Fraction(p[0]), Fraction(p[1])) if isinstance(p, tuple) else (Fraction(p), Fraction(p))
        if hi < lo:
            raise InvalidParameter("family", f"[{lo}, {hi}]", "must be an interval lo <= hi")
        cs.append((lo + hi) / 2)
        hs.append((hi - lo) / 2)
    return tuple(cs), tuple(hs)


class PrefixState:
    """The prefix over the invariants ``P`` (module docstring); call its methods inside an Arb precision."""

    def __init__(self, P: tuple):
        self.Pc, self.H = centre_and_radius(P)
        self.is_box = any(h != 0 for h in self.H)
        self.fn = prefix_functions()
        self.a, self.d, self.ra, self.rd = arb(0), arb(0), arb(0), arb(0)
        self.S = [[arb(0)] * len(PARAM_NAMES) for _ in range(2)]
        self.step_count = 0

    def balls(self):
        """(Pc balls, the whole parameter box as balls, [-h, h] balls)."""
        pc = tuple(exact(p) for p in self.Pc)
        dp = tuple(spread(exact(h)) for h in self.H)
        return pc, tuple(c + e for c, e in zip(pc, dp)), dp

    def centre_box(self):
        return box(self.a, self.ra), box(self.d, self.rd)

    def member_box(self, dp):
        """B_t: a box containing x(t, p) for every p in P."""
        A, Dl = self.centre_box()
        if not self.is_box:
            return A, Dl
        return (A + sum((s * e for s, e in zip(self.S[0], dp)), 0 * A),
                Dl + sum((s * e for s, e in zip(self.S[1], dp)), 0 * Dl))

    def step(self, pc, pb, dp) -> None:
        """One step of the centre (the mean-value form, verify.engines.mean_value) and, for a box, of the
        sensitivities S (module docstring)."""
        c, r = mean_value_step((self.a, self.d), (self.ra, self.rd), lambda B: self._terms(B, pc), self._unbounded)
        if self.is_box:
            Ba, Bd = self.member_box(dp)
            Be = Bd.exp()
            jaa, jad, jda, jdd = _jacobian(self.fn.jac(Ba, Be, *pb))
            jp = self.fn.jac_p(Ba, Be, *pb)
            n = len(PARAM_NAMES)
            S = [[jaa * self.S[0][k] + jad * self.S[1][k] + jp[k] for k in range(n)],
                 [jda * self.S[0][k] + jdd * self.S[1][k] + jp[n + k] for k in range(n)]]
            if not all(finite(row) for row in S):
                raise self._unbounded()
            self.S = S
        (self.a, self.d), (self.ra, self.rd) = c, r
        self.step_count += 1

    def _terms(self, boxes, pc) -> list:
        """The summands of the centre's image over ``boxes`` (verify.engines.mean_value.image):
        alpha' = alpha + a_inc + J_aa [-r_alpha, r_alpha] + J_ad [-r_delta, r_delta], delta' likewise."""
        a_inc, inc = self.fn.step(self.a, self.d.exp(), *pc)
        if self.ra == 0 and self.rd == 0:
            return [[self.a, a_inc], [self.d, inc]]
        A, Dl = boxes
        jaa, jad, jda, jdd = _jacobian(self.fn.jac(A, Dl.exp(), *pc))
        return [[self.a, a_inc, (jaa, 0), (jad, 1)], [self.d, inc, (jda, 0), (jdd, 1)]]

    def _unbounded(self) -> ArithmeticError:
        return ArithmeticError(f"the prefix enclosure became unbounded at step {self.step_count + 1}")

    def enclose(self, value, grad, pc, pb, dp):
        """An enclosure of g(x(t, p), p) over every p in P from g = ``value`` and its gradient ``grad`` over
        (alpha, delta, s, x, y) (module docstring), intersected with the direct evaluation on B_t x P."""
        Ba, Bd = self.member_box(dp)
        Be = Bd.exp()
        g = grad(Ba, Be, *pb)
        out = value(self.a, self.d.exp(), *pc) + g[0] * spread(self.ra) + g[1] * spread(self.rd)
        if self.is_box:
            for k in range(len(PARAM_NAMES)):
                out = out + (g[0] * self.S[0][k] + g[1] * self.S[1][k] + g[2 + k]) * dp[k]
        direct = value(Ba, Be, *pb)
        return out.intersection(direct) if out.is_finite() and direct.is_finite() else (out if out.is_finite() else
                                                                                         direct)

    def region_coordinates(self):
        """(u, eps) balls containing every member's coordinates now."""
        pc, pb, dp = self.balls()
        return (self.enclose(self.fn.u, self.fn.u_grad, pc, pb, dp),
                self.enclose(self.fn.eps, self.fn.eps_grad, pc, pb, dp))

    def inherit(self, parent: "PrefixState") -> None:
        """Whatever else a half of ``parent``'s box carries from it at a split point, besides the centre and S that
        verify.certify.prefix_split.split_state sets (nothing here; verify.certify.prefix_monotone's capped state
        keeps its monotone box)."""

    def snapshot(self) -> dict:
        return {"step": self.step_count, "alpha": to_fraction(self.a), "delta": to_fraction(self.d),
                "r_alpha": to_fraction(self.ra), "r_delta": to_fraction(self.rd)}

    @classmethod
    def restore(cls, P: tuple, snap: dict) -> "PrefixState":
        """A point prefix at a saved state (for bounds at T <= T0 of one regime)."""
        st = cls(P)
        st.a, st.d = exact(snap["alpha"]), exact(snap["delta"])
        st.ra, st.rd = exact(snap["r_alpha"]), exact(snap["r_delta"])
        st.step_count = snap["step"]
        return st

    def observables(self, pre: dict) -> dict:
        """Balls of the three quantities for the point prefix: pre_q = the exact squared prefactors."""
        pc, _, _ = self.balls()
        A, Dl = self.centre_box()
        Ee = Dl.exp()
        return {"excess_loss": exact(pre["excess_loss"]) * self.fn.loss(A, Ee, *pc),
                "s_err": (exact(pre["s_err2"]) * self.fn.s_err2(A, Ee, *pc)).sqrt(),
                "w_err": exact(pre["w_err2"]).sqrt() * abs(A - 1)}


__all__ = ["PrefixFunctions", "PrefixState", "SNAPSHOT_EVERY", "centre_and_radius", "prefix_functions"]
