"""The probe registry and what every probe shares: runs, series, classification and the result record.

A probe answers one reviewer question of docs/paper.md in chosen regimes. It registers with
:func:`probe` and returns a :class:`ProbeResult`, whose ``as_dict`` is what ``verify probe NAME --json``
prints: the question (quoted), the regimes run (every option of each), what it finds, one or more
:class:`Statement` s, each with its evidence records and the verdict :func:`verify.evidence.decide`
derives from them (the first statement is the probe's headline), the classification of loss / s_err /
w_err, the arrays behind its figure, and the replay command. No probe writes a verdict.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..engines import iterate
from ..engines.trajectory import checkpoint_steps
from ..errors import InvalidParameter
from ..evidence import Scope, Statement, dims_of, headline
from ..jsonable import jsonable
from .classify import classify, to_float

# The reviewer questions, quoted from docs/paper.md ("What reviewers asked").
QUESTIONS = {
    1: "Why is the rate Θ(1/T) although the loss is not strongly convex / PL? What regularity gives it?",
    2: "Lemma C.2: is it true, and what do C_1, C_2, C_3 mean?",
    3: "The proofs seem to break when D = K (S* is plain average pooling over all tokens, e.g. the subset "
       "g = [D] in the sparse-token example). What happens there?",
    4: "They also seem to break when K = 0 (S* identically zero), which looks like the easiest case.",
    5: "Theorem 3.1 depends on 1/‖V*‖² in-distribution but on ‖V*‖² out-of-distribution: why?",
    6: "What are the fitted slopes of the convergence curves' tails? Will code be released?",
    7: "The calculations lean on Gaussian data: what if the data are t-distributed or Gumbel?",
    8: "Can S* have non-uniform non-zero entries (not all 1/K)?",
    9: "T* grows like D²: is that real, and does it make long sequences impractical?",
    10: "Finite samples: what would a sample-complexity (online SGD) version look like?",
    11: "Position-only attention makes S independent of the input; prior work (Wang et al. 2024) learns "
        "input-dependent selection. How much does the simplification matter?",
    12: "Learned / sinusoidal positional encodings versus a fixed orthogonal P.",
}

# Relative precision floor of each arithmetic for classify(): float64 keeps ~16 digits; 1e-12 leaves
# four for the cancellation in L - L_opt (a difference of O(1) terms).
FLOAT64_EPS_REL = 1e-12
QUANTITIES = ("loss", "s_err", "w_err")


@dataclass(frozen=True)
class ProbeSpec:
    name: str
    questions: tuple[int, ...]
    summary: str
    func: object


PROBES: dict[str, ProbeSpec] = {}


def probe(name: str, questions: tuple[int, ...], summary: str):
    """Register a probe function under ``name`` (answers reviewer ``questions``)."""
    def deco(f):
        if name in PROBES:
            raise AssertionError(f"probe {name} registered twice")
        PROBES[name] = ProbeSpec(name, tuple(questions), summary, f)
        f.probe_name = name
        return f
    return deco


@dataclass
class ProbeResult:
    """Everything one probe reports (see the module docstring). ``statements[0]`` is the headline."""

    probe: str
    question: str
    regimes: list
    findings: list
    classification: dict
    statements: list
    data: dict = field(default_factory=dict)
    fits: dict = field(default_factory=dict)
    numbers: dict = field(default_factory=dict)
    replay: str = ""

    def __post_init__(self):
        if not self.statements or not all(isinstance(x, Statement) for x in self.statements):
            raise AssertionError("a probe reports at least one Statement")
        if set(self.classification) != set(QUANTITIES):
            raise AssertionError(f"classification must cover {QUANTITIES}")
        if not self.replay:
            self.replay = f"verify probe {self.probe} --json"

    @property
    def verdict(self) -> str:
        """The headline (first) statement's derived verdict."""
        return self.statements[0].decided()["verdict"]

    @property
    def statement(self) -> str:
        return self.statements[0].text

    def as_dict(self) -> dict:
        return jsonable({
            "probe": self.probe, "question": self.question, "regimes": self.regimes, "findings": self.findings,
            "classification": self.classification, "fits": self.fits, "numbers": self.numbers, "data": self.data,
            "replay": self.replay} | headline(self.statements))


def scope_of(*runs) -> Scope:
    """The scope a set of runs covers: each ``(setting, steps)`` adds its dimensions, sigma and
    conventions (lemmas.support.records' labels); the horizon is the longest run."""
    from ..model.setting import conventions_of
    dims, sig, conv = [], [], []
    for s, _ in runs:
        for lst, v in ((dims, dims_of(s)), (sig, s.sigma.spec()), (conv, conventions_of(s))):
            if v not in lst:
                lst.append(v)
    return Scope(dims=tuple(dims), sigma=tuple(sig), conventions=tuple(conv), horizon=max(int(t) for _, t in runs))


def question_text(*numbers: int) -> str:
    return " | ".join(f"Q{n}: {QUESTIONS[n]}" for n in numbers)


def dense_checkpoints(steps: int, points: int = 160) -> list[int]:
    """Every step up to 20, then ``points`` log-spaced and ``points`` evenly spaced steps: tails of
    both power laws (log-spaced) and exponentials (evenly spaced) are sampled."""
    cps = set(checkpoint_steps(steps, every=max(1, steps // points), log_points=points))
    cps.update(range(0, min(steps, 20) + 1))
    return sorted(cps)


def run_series(setting, steps: int, engine: str = "reduced", arithmetic: str = "float64", dps=None,
               checkpoints=None) -> dict:
    """Run GD and return the recorded quantities as float arrays (lists) keyed by name."""
    tr = iterate(setting, steps, engine, arithmetic, dps, checkpoints or dense_checkpoints(steps))
    recs = tr.records
    return {
        "step": [r.step for r in recs],
        "loss": [to_float(r.excess_loss) for r in recs],      # L - L_opt
        "s_err": [to_float(r.s_err) for r in recs],
        "w_err": [to_float(r.w_err) for r in recs],
        "offspan": [max(to_float(x) for x in r.offspan) for r in recs],
        "wp_norm": [to_float(r.wp_norm) for r in recs],
        "alpha": [to_float(r.alpha[0]) for r in recs],
        "support_mass": [to_float(r.support_mass[0]) for r in recs],
    }


def regime(setting, steps: int, engine: str, arithmetic: str = "float64", label: str = "") -> dict:
    """One regime's record: every option of the setting plus how it was run."""
    return {"label": label, "config": setting.config(), "steps": steps, "engine": engine, "arithmetic": arithmetic}


def classify_series(series: dict, eps_rel: float = FLOAT64_EPS_REL) -> dict:
    """Classification objects of loss, s_err and w_err of one run (limits: L_opt, S*, V*, i.e. 0 distance)."""
    return {q: classify(series["step"], series[q], 0.0, eps_rel) for q in QUANTITIES}


def labels(fits: dict) -> dict:
    return {q: fits[q].label for q in QUANTITIES}


def fits_json(fits: dict) -> dict:
    return {q: f.as_dict() for q, f in fits.items()}


def get(name: str) -> ProbeSpec:
    if name not in PROBES:
        raise InvalidParameter("probe", name, f"must be one of {', '.join(sorted(PROBES))}")
    return PROBES[name]


def run_probe(name: str) -> ProbeResult:
    """Run the probe ``name`` with its default regimes."""
    return get(name).func()
