"""The SymPy symbols every derivation shares, named as in the paper and docs/setting.md."""
import sympy as sp

# Per-entry second moments of the pre-activations u = (W_X X S + W_P P S)_{mj}, z = (V* X S*)_{mj}:
# A = Var u, C = Cov(u, z), B = Var z; mu_u, mu_z their means.
A, B = sp.symbols("A B", nonnegative=True)
C = sp.Symbol("C", real=True)
mu_u, mu_z = sp.symbols("mu_u mu_z", real=True)

# Reduced coordinates: alpha (row multiple, W_X row = alpha v*_m), delta (on/off-support logit gap).
alpha = sp.Symbol("alpha", positive=True)
delta = sp.Symbol("delta", real=True)
vn = sp.Symbol("vn", positive=True)            # ||v*_m||^2 of one row
D, K, N, M = sp.symbols("D K N M", positive=True, integer=True)
eta, eta_v, eta_kq, T = sp.symbols("eta eta_V eta_KQ T", positive=True)
var, lam = sp.symbols("v lambda", positive=True)  # entry variance; P^T P = lambda I
beta = sp.Symbol("beta", positive=True)          # logit temperature: logits beta P^T W_KQ p_q
c_loss = sp.Symbol("c_L", positive=True)          # 1 (sum) or 1/(M N) (mean)
vnorm = sp.Symbol("vnorm", positive=True)        # ||V*||_F


def values_at(setting) -> dict:
    """Each convention symbol at one setting's exact values (SymPy numbers), for substituting into the
    derived expressions: D, K, N, c_L, v, lambda, beta, eta_V, eta_KQ, ||V*||_F, and eta = eta_V (the one step
    size of the reference convention's leading terms, which hold when eta_V = eta_KQ)."""
    R = lambda x: sp.Rational(x.numerator, x.denominator)  # noqa: E731
    p = setting.parameters()
    return {D: setting.D, K: setting.K, N: setting.N, c_loss: R(p["c_L"]), var: R(p["v"]), lam: R(p["lambda"]),
            beta: R(p["beta"]), eta_v: R(p["eta_V"]), eta_kq: R(p["eta_KQ"]), eta: R(p["eta_V"]),
            vnorm: sp.sqrt(R(p["V2"]))}
