"""``verify derive``: the derived loss, the GD updates (3.3)-(3.4), the reduced recursion, and every
proof obligation with its method, scope and status (text, JSON or a standalone LaTeX document)."""
from __future__ import annotations

import json

import click

from ..errors import InvalidParameter
from ..model.paper import theorem_3_1_orders
from ..model.sigmas import parse_sigma
from .options import SIGMA_HELP, handle_errors
from .progress import progress

FORMATS = ("text", "latex", "json")

# The conventions every derivation keeps symbolic or assumes: recorded in every output.
CONVENTIONS = {
    "loss": "c_L symbolic: 1 = summed loss (reference), 1/(M N) = mean",
    "law": "entry mean mu and variance v symbolic in the loss and gradients; the reduction assumes mu = 0",
    "P": "P^T P = lambda I (lambda symbolic; reference lambda = 1); distinct query positions q(j)",
    "step sizes": "eta_V for W_X, W_P; eta_KQ for W_KQ (reference: both eta)",
    "initialisation": "zero (W_X = 0, W_P = 0, W_KQ = 0)",
    "S*": "each column uniform 1/K on a support of size K",
    "logits": "P^T W_KQ p_q(j) (no temperature)",
}


def _obligation_groups(sig) -> dict:
    """Every obligation the derivation rests on, grouped, as JSON-ready dicts."""
    from ..derive.gradients import gradient_obligations  # heavy: loads flint,mpmath,sympy
    from ..derive.reduction_proof import (explicit_routes, parity_obligation, prove_identity_general,  # heavy: loads flint,mpmath,sympy
                                    prove_reduction_symbolic, reduced_recursion_obligations)
    from ..derive.stability import positivity_obligations  # heavy: loads flint,mpmath,sympy
    groups = {
        "reduction, any kernel, symbolic dimensions (block method)": prove_reduction_symbolic().obligations,
        f"reduction for sigma = {sig.spec()}": [parity_obligation(sig), *reduced_recursion_obligations(sig)],
        "(3.4): softmax, W_KQ, logit step": gradient_obligations(),
        "reduction, explicit dimensions (second route)": [o for r in explicit_routes() for o in r.obligations],
    }
    if sig.is_identity:
        groups["reduction for sigma = identity, matrix calculus"] = prove_identity_general().obligations
    groups["Lemma C.2 (sigma = identity): induction"] = positivity_obligations().obligations
    seen, out = set(), {}
    for k, v in groups.items():          # each obligation once, in the first group that cites it
        out[k] = [o.as_dict() for o in v if not (o.name in seen or seen.add(o.name))]
    return out


def derivation(sigma_spec: str) -> dict:
    """Everything ``verify derive`` prints, as SymPy expressions, text and obligation dicts."""
    from ..derive.gradients import LEGEND, gradient_formulas, loss_formula, update_formulas  # heavy: loads flint,mpmath,sympy
    from ..derive.loss import matrix_form  # heavy: loads flint,mpmath,sympy
    from ..derive.reduced_map import reduced, reduced_step_exprs  # heavy: loads flint,mpmath,sympy
    from ..derive.reduction_proof import delta_step_factor, prove_reduction  # heavy: loads flint,mpmath,sympy
    from ..derive.tidy import tidy  # heavy: loads flint,mpmath,sympy
    sig = parse_sigma(sigma_spec)
    k = sig.kernel
    out = {"sigma": sig.spec(), "conventions": dict(CONVENTIONS, sigma=sig.spec()),
           "kernel": {"ell": tidy(k.ell, interior=False), "dell_dmu_at_zero": tidy(k.dmu_at_zero, interior=False),
                      "exact_at_nonzero_means": k.with_means},
           "loss": {"L": loss_formula(), "legend": dict(LEGEND)}}
    proof = prove_reduction(sig)
    par = next(o for o in proof.obligations if o.name.startswith("W_P gradient vanishes"))
    out["wp_invariance"] = {"holds": par.holds, "detail": par.detail}
    out["gradients"] = {**gradient_formulas(), **update_formulas()}
    if sig.is_identity:
        mf = matrix_form()
        out["matrix_form"] = {"loss": mf.loss, "dL/dW_X": mf.grad_WX, "dL/dW_P": mf.grad_WP, "dL/dS": mf.grad_S}
    red = reduced(sig, "interior")
    a_next, inc = reduced_step_exprs(sig, "interior")
    out["reduced"] = {"r_m": tidy(red.r), "alpha_next": tidy(a_next), "delta_increment_per_row": tidy(inc),
                      "delta_factor": delta_step_factor("interior"), "support_mass": tidy(red.cols["p"]),
                      "regime": "0 < K < D (K = 0 and K = D: delta frozen, see the obligations)"}
    out["reduction_proof"] = {"proved": proof.proved, "seconds": round(proof.seconds, 2),
                              "covers": "all dimensions (symbolic M, d, D, N, K) for any kernel; sigma's parity lemma "
                                        "and reduced recursion; explicit dimensions as a second route"}
    out["obligations"] = _obligation_groups(sig)
    return out


def asymptotics(sigma_spec: str) -> dict:
    """Leading terms of Theorem 3.1's quantities; derived for sigma = identity only (else an error)."""
    sig = parse_sigma(sigma_spec)
    if not sig.is_identity:
        raise InvalidParameter("sigma", sigma_spec, "must be identity with --asymptotics (the leading terms are "
                                                    "derived for sigma = identity only)")
    from ..derive.asymptotics import leading_terms, leading_terms_general, slow_manifold  # heavy: loads flint,mpmath,sympy
    from ..derive.tidy import tidy  # heavy: loads flint,mpmath,sympy
    lt = leading_terms()
    data = {k: tidy(lt[k]) for k in ("excess_loss", "s_err", "w_err")}
    data["convention"] = {"sigma": "identity", "loss": "sum", "law_var": "1", "p_lambda": "1",
                          "eta_v": "eta", "eta_kq": "eta", "vnorm": "||V*||_F", "regime": "0 < K < D"}
    data["off_support_mass"] = tidy(lt["u"])
    data["cubic_coefficient_c"] = tidy(slow_manifold()["c"])
    data["claimed"] = theorem_3_1_orders()
    data["general_convention"] = {k: tidy(v) for k, v in leading_terms_general().items()} | {
        "symbols": "c_L = 1 (sum) or 1/(M N) (mean); v = entry variance; lambda: P^T P = lambda I; eta_KQ"}
    return data


def _render(obj, fmt):
    """SymPy values as text (str) or LaTeX strings; dicts and lists recursively; the rest unchanged."""
    if isinstance(obj, dict):
        return {k: _render(v, fmt) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_render(v, fmt) for v in obj]
    import sympy as sp  # heavy: sympy
    if isinstance(obj, (sp.Basic, sp.MatrixBase)):
        return sp.latex(obj) if fmt == "latex" else sp.sstr(obj)
    return obj


def _emit_text(obj, indent=0):
    for k, v in obj.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) and "status" in x for x in v):
            click.echo(" " * indent + f"{k}:")
            for o in v:
                tag = " (negative control, outside the hypotheses)" if o["role"] == "outside" else ""
                click.echo(" " * (indent + 2) + f"[{o['status']}] {o['name']}{tag}")
                click.echo(" " * (indent + 6) + f"{o['method']}; {o['scope']['label']}; {o['seconds']:.2f} s"
                           + (f"; {o['detail']}" if o["detail"] else "")
                           + (f"; counterexample {o['counterexample']}" if o["counterexample"] else ""))
        elif isinstance(v, dict):
            click.echo(" " * indent + f"{k}:")
            _emit_text(v, indent + 2)
        else:
            click.echo(" " * indent + f"{k}: {v}")


@click.command("derive")
@click.option("--sigma", default="identity", show_default=True, help=SIGMA_HELP)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="text (default), json, or latex (a standalone LaTeX document)")
@click.option("--asymptotics", "asymptotics_", is_flag=True,
              help="leading terms of Theorem 3.1's quantities (sigma = identity only)")
@click.option("--json", "as_json", is_flag=True, help="same as --format json")
@click.option("--quiet", is_flag=True, help="no progress display on stderr")
@handle_errors
def derive_cmd(sigma, fmt, asymptotics_, as_json, quiet):
    """Print the derivation: kernel, loss, gradients (3.3)-(3.4), reduced recursion, proof obligations."""
    if as_json and fmt not in (None, "json"):
        raise click.UsageError(f"--json and --format {fmt} conflict: give one of them (--json is --format json)")
    fmt = "json" if as_json else (fmt or "text")
    sig = parse_sigma(sigma)                   # a bad --sigma is reported before any derivation
    with progress("verify derive", 1, quiet) as bar:
        bar.update(description=f"derive: {'leading terms' if asymptotics_ else 'sigma = ' + sig.spec()}")
        if asymptotics_:
            data, title = asymptotics(sigma), "Theorem 3.1: derived leading terms (sigma = identity)"
        else:
            data, title = derivation(sigma), f"Derivation for sigma = {sig.spec()}"
        bar.advance()
    if fmt == "json":
        click.echo(json.dumps(_render(data, "text"), indent=1, default=str))
    elif fmt == "latex":
        from ..derive.latex import document  # heavy: loads flint,mpmath,sympy
        click.echo(document(_latex_sections(data, asymptotics_), title), nl=False)
    else:
        _emit_text(_render(data, "text"))


def _latex_sections(data: dict, asym: bool) -> dict:
    if asym:
        return {"Leading terms": {k: data[k] for k in ("excess_loss", "s_err", "w_err", "off_support_mass",
                                                        "cubic_coefficient_c")},
                "Convention": data["convention"], "Claimed orders": data["claimed"],
                "Every named convention symbolic": data["general_convention"]}
    names = {"conventions": "Conventions", "kernel": "Kernel", "loss": "Population loss",
             "wp_invariance": "W_P invariance", "gradients": "Gradients and the GD updates (3.3)-(3.4)",
             "matrix_form": "Matrix form (sigma = identity)", "reduced": "Reduced recursion",
             "reduction_proof": "Reduction", "obligations": "Proof obligations"}
    return {names.get(k, k): v for k, v in data.items() if k != "sigma"}
