"""The quantities the toolkit measures along GD, each named once: its key (as every record, JSON field and
table column spells it), its plain-text name and its typeset label.

``THEOREM_3_1`` are the three whose rates Theorem 3.1 states, in the paper's order. There is one spelling of
the excess loss, ``excess_loss`` (L - L_opt); ``loss`` is L itself.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Quantity:
    key: str
    text: str       # plain text, as JSON and terminals print it
    label: str      # typeset (figures, Markdown)

    def __str__(self) -> str:
        return self.key


EXCESS_LOSS = Quantity("excess_loss", "L - L_opt", "L − L_opt")
S_ERR = Quantity("s_err", "||S - S*||_F", "‖S − S*‖_F")
W_ERR = Quantity("w_err", "||W_X - V*||_F", "‖W_X − V*‖_F")
LOSS = Quantity("loss", "L", "L")
WP_NORM = Quantity("wp_norm", "||W_P||_F", "‖W_P‖_F")
COS_WV = Quantity("cos_wv", "cos angle(W_X, V*)", "cos ∠(W_X, V*)")
ALPHA = Quantity("alpha", "alpha_i = <w_i, v*_i>/||v*_i||^2", "α_i")
OFFSPAN = Quantity("offspan", "||w_i - alpha_i v*_i||", "‖w_i − α_i v*_i‖")
SUPPORT_MASS = Quantity("support_mass", "attention mass on the support p_j", "p_j")

THEOREM_3_1 = (EXCESS_LOSS, S_ERR, W_ERR)
QUANTITIES = {q.key: q for q in (EXCESS_LOSS, S_ERR, W_ERR, LOSS, WP_NORM, COS_WV, ALPHA, OFFSPAN, SUPPORT_MASS)}
KEYS = tuple(q.key for q in THEOREM_3_1)


def quantity(key: str) -> Quantity:
    if key not in QUANTITIES:
        raise KeyError(f"no quantity {key!r}: the quantities are {', '.join(QUANTITIES)}")
    return QUANTITIES[key]


__all__ = ["Quantity", "QUANTITIES", "THEOREM_3_1", "KEYS", "EXCESS_LOSS", "S_ERR", "W_ERR", "LOSS", "quantity"]
