"""``verify derive``: print the derived loss, the GD updates (3.3)-(3.4) and the reduced recursion."""
from __future__ import annotations

import json

import click
import sympy as sp

from ..model.sigma import parse_sigma
from .options import handle_errors

GRAM_GRADIENTS = {
    "dL/dW_X[m,:]": "c_L/2 sum_j [ ell_A(m,j) * 2 v ||s_j||^2 w_m + ell_C(m,j) * v <s_j,s*_j> v*_m + ell_mu(m,j) * mu (1.s_j) 1_d ]",
    "dL/dW_P": "c_L/2 * ell_mu @ (P S)^T",
    "dL/dS[:,j]": "c_L/2 sum_m [ ell_A * 2 v ||w_m||^2 s_j + ell_C * v <w_m,v*_m> s*_j + ell_mu * (mu (w_m.1) 1_D + (W_P P)[m,:]^T) ]",
    "dL/dlogits[:,j]": "s_j * (g_j - <s_j, g_j> 1)   (softmax Jacobian; g_j = dL/dS[:,j])",
    "dL/dW_KQ": "P G P^T,  G[:, q(j)] = dL/dlogits[:, j]  (logits of column j are P^T W_KQ p_q(j))",
    "(3.3)": "W_X <- W_X - eta_V dL/dW_X ;  W_P <- W_P - eta_V dL/dW_P",
    "(3.4)": "W_KQ <- W_KQ - eta_KQ dL/dW_KQ",
}


DERIVATION_STAGES = 5     # kernel, parity, matrix form, reduced recursion, reduction proof (progress total)


def derivation(sigma_spec: str, tick=None) -> dict:
    """Everything ``verify derive`` prints, as SymPy expressions or text; ``tick(stage)`` after each of
    the DERIVATION_STAGES stages (progress)."""
    tick = tick or (lambda stage: None)
    from ..derive.kernels import kernel
    from ..derive.loss import matrix_form
    from ..derive.reduced import reduced, reduced_step_exprs
    from ..derive.reduction import parity_obligation
    sig = parse_sigma(sigma_spec)
    k = kernel(sig)
    tick("kernel")
    out = {"sigma": sig.spec(), "kernel": {"ell": k.ell, "dell_dmu_at_zero": k.dmu_at_zero,
                                           "exact_at_nonzero_means": k.with_means}}
    par = parity_obligation(sig)
    out["wp_invariance"] = {"holds": par.holds, "detail": par.detail}
    tick("parity")
    out["gradients"] = dict(GRAM_GRADIENTS)
    if sig.name == "identity":
        mf = matrix_form()
        out["matrix_form"] = {"loss": mf.loss, "dL/dW_X": mf.grad_WX, "dL/dW_P": mf.grad_WP, "dL/dS": mf.grad_S}
    tick("matrix form")
    red = reduced(sig, "interior")
    a_next, inc = reduced_step_exprs(sig, "interior")
    out["reduced"] = {"r_m": red.r, "alpha_next": a_next, "delta_increment_per_row": inc,
                      "support_mass": red.cols["p"]}
    tick("reduced recursion")
    from ..derive.reduction import prove_reduction
    proof = prove_reduction(sig)
    out["reduction_proof"] = {"proved": proof.proved, "explicit_dims": str(proof.dims),
                              **{o.name: f"{o.holds} {o.detail}".strip() for o in proof.obligations}}
    tick("reduction proof")
    return out


def _emit(obj, indent=0):
    """Nested dicts as indented ``key: value`` lines (never a Python dict on the terminal)."""
    for k, v in obj.items():
        if isinstance(v, dict):
            click.echo(" " * indent + f"{k}:")
            _emit(v, indent + 2)
        else:
            click.echo(" " * indent + f"{k}: {v}")


def _render(obj, fmt):
    if isinstance(obj, dict):
        return {k: _render(v, fmt) for k, v in obj.items()}
    if isinstance(obj, (sp.Basic, sp.MatrixBase)):
        return sp.latex(obj) if fmt == "latex" else sp.sstr(obj)
    return obj


@click.command("derive")
@click.option("--sigma", default="identity", show_default=True, help="identity | relu | erf | poly:c0,c1,...")
@click.option("--format", "fmt", type=click.Choice(["text", "latex", "json"]), default="text", show_default=True)
@click.option("--asymptotics", is_flag=True, help="leading terms of Theorem 3.1's quantities (sigma = identity)")
@click.option("--json", "as_json", is_flag=True, help="same as --format json")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def derive_cmd(sigma, fmt, asymptotics, as_json, quiet):
    """Print the derivation: kernel, loss, gradients (3.3)-(3.4), reduced recursion."""
    from .progress import progress
    if as_json:
        fmt = "json"
    if asymptotics:
        from ..derive.asymptotics import claimed_terms, leading_terms, slow_manifold
        lt = leading_terms()
        data = {k: sp.sstr(lt[k]) for k in ("loss", "s_err", "w_err")}
        data["convention"] = {"sigma": "identity", "loss": "sum", "law_var": "1", "p_lambda": "1",
                              "eta_v": "eta", "eta_kq": "eta", "vnorm": "||V*||_F", "regime": "0 < K < D"}
        data["off_support_mass"] = sp.sstr(lt["u"])
        data["cubic_coefficient_c"] = sp.sstr(slow_manifold()["c"])
        data["claimed"] = {k: sp.sstr(v) for k, v in claimed_terms().items()}
        from ..derive.asymptotics import leading_terms_general
        data["general_convention"] = {k: sp.sstr(v) for k, v in leading_terms_general().items()} | {
            "symbols": "c_L = 1 (sum) or 1/(M N) (mean); v = entry variance; lambda: P^T P = lambda I; eta_KQ"}
        if fmt == "json":
            click.echo(json.dumps(data, indent=1))
        else:
            _emit(data)
        return
    parse_sigma(sigma)                   # a bad --sigma is reported before any derivation
    with progress("verify derive", DERIVATION_STAGES, quiet) as bar:
        d = _render(derivation(sigma, tick=lambda stage: bar.advance(description=f"derive: {stage}")), fmt)
    if fmt == "json":
        click.echo(json.dumps(d, indent=1, default=str))
        return
    _emit(d)
