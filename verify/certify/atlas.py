"""The atlas: a box of (rho = K/D, x, kappa = y/x) cut into cells, each decided once for every regime it holds.

By verify.derive.invariants the reduced map of sigma = identity (centred entries, P^T P = lambda I, zero
initialisation) sees a regime only through r = (D - K)/K, x and y, so a point (rho, x, kappa) of the cube
stands for infinitely many regimes of every preset and convention (rho = 1/(1 + r), kappa = y/x). A cell is a
box of Fractions; its image in the invariants is exact, because each is monotone in each coordinate:

    s = K/(D - K) = rho/(1 - rho)  in [rho_lo/(1 - rho_lo), rho_hi/(1 - rho_hi)],
    x in [x_lo, x_hi],    y = kappa x in [kappa_lo x_lo, kappa_hi x_hi],    y/x = kappa in [kappa_lo, kappa_hi].

Each cell runs every applicable check of the registry CHECKS (a name, a function cell -> {"status", "reason",
"evidence"}, the statement it decides and its cheap re-check); the built-in check "trajectory" is the family
machinery of verify.certify.family on the cell's invariant box (trapping region R, the members' entry through the
tube or the Taylor prefix, slab hulls for the comparison lemma): every member's all-time bounds on L - L_opt,
||S - S*||_F and ||W_X - V*||_F from T0 on, T0 certified for all of them at once. Other modules register their
own checks (CHECK_MODULES: Lemma C.2's alpha > 0 over Region B is one); a cell is

  certified   every applicable check certified it
  refuted     a check found a member, inside the hypotheses, with a counterexample to its statement that was
              replayed with Arb balls before the cell was marked (verify.certify.replay; evidence["replay"] holds
              the member, the step, the claim and the command, and the re-checker replays it again)
  open        otherwise; "reason" names the first check that did not certify and why (where: the cell's box)

Open cells are bisected (the widest relative interval) up to a depth; the leaves are the atlas. A cell holding
rho = 0 (D -> infinity) is open: the trajectory has no bounded limit as D -> infinity (alpha's peak grows like
sqrt(log(D/K)/kappa)), so a chart regular at rho = 0 in (alpha, delta) cannot exist and no entry is built there
(docs/atlas.md); its last phases, from the trapping region in the chart e = eps/s back to the passage, are
checked for every member at once (the registry verify.certify.rho_zero.PHASES), and the open reason says which
closed.

The atlas's cells are stated, for the independent re-checker (recheck.atlas), as the cells of a
family of one representative regime per point: K = N = v = c_L = lambda = beta = ||V*||^2 = 1, D = 1/rho (a
real: the map is a rational function of it), eta_V = x, eta_KQ = kappa x; that family has r = 1/rho - 1, x, y =
kappa x, so it passes through every point of the cube, and by the invariance (proved: verify.derive.invariants)
every regime at the same point has the same trajectory.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import importlib
import itertools
import json
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

from ..errors import Interrupted, InvalidParameter
from ..model.numbers import frac_str
from ..run.atomic import write_bytes_atomic
from ..run.cache import cache_dir
from ..run.execute import Executor, report_progress
from .replay import member_of, outside_hypotheses, replay
from .slabs import check_stored

COORDINATES = ("rho", "x", "kappa")
# The hypothesis: 0 < K < D (0 <= rho < 1, rho = 0 the limit D -> infinity) and 0 < x < 2; kappa > 0.
VALID = {"rho": (Fraction(0), Fraction(1)), "x": (Fraction(0), Fraction(2)), "kappa": (Fraction(0), None)}
DEPTH = 3               # bisections of an open cell, by default
STATUSES = ("certified", "refuted", "open")
# The representative regime of a point (module docstring): each parameter of verify.derive.invariants.PARAMETERS
# as a monomial in (rho, x, kappa), formula text the re-checker parses.
REPRESENTATIVE = {"D": "rho^(-1)", "K": "1", "N": "1", "v": "1", "c_L": "1", "eta_V": "x", "eta_KQ": "kappa*x",
                  "lambda": "1", "beta": "1", "V2": "1"}
# Modules that register further cell checks when imported ("verify.fuzz.region_b": Lemma C.2's alpha > 0 over
# Region B, the band then a counterexample search): imported by :func:`checks` in every process that runs cells.
CHECK_MODULES: tuple = ("verify.fuzz.region_b",)


# ----- the registry of cell checks ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class CellCheck:
    """One check a cell may pass. ``run(cell, knobs)`` -> {"status": certified | refuted | open, "reason": text,
    "evidence": JSON-ready}; ``recheck(cell, result)`` raises ValueError naming what no longer holds (cheap: the
    query runs it on the cells it answers from); ``applies(cell)``: whether the cell is in the check's range."""

    name: str
    statement: str
    run: Callable
    recheck: Callable
    applies: Callable = field(default=lambda cell: True)


CHECKS: dict[str, CellCheck] = {}


def register(check: CellCheck) -> CellCheck:
    """Add a check to the registry (one name, one check)."""
    if check.name in CHECKS and CHECKS[check.name] is not check:
        raise ValueError(f"a cell check named {check.name!r} is already registered")
    CHECKS[check.name] = check
    return check


def checks() -> dict[str, CellCheck]:
    """The registry, with CHECK_MODULES imported (so a Dask worker sees the same checks as the client)."""
    for mod in CHECK_MODULES:
        importlib.import_module(mod)
    return CHECKS


# ----- cells --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AtlasCell:
    """A box {coordinate: (lo, hi)} of (rho, x, kappa), Fractions; ``path`` its place in the bisection tree."""

    box: tuple                  # ((lo, hi) of rho, of x, of kappa)
    path: str = ""
    hint: int = 0               # the C multiple that closed in the parent (tried first)

    @property
    def bounds(self) -> dict:
        return dict(zip(COORDINATES, self.box))

    @property
    def depth(self) -> int:
        return len(self.path.rsplit(":", 1)[-1])

    def contains(self, point: tuple) -> bool:
        return all(lo <= p <= hi for p, (lo, hi) in zip(point, self.box))

    def split(self) -> tuple:
        """Two halves across the widest relative interval ((hi - lo)/hi)."""
        k = max(range(3), key=lambda i: (Fraction(self.box[i][1] - self.box[i][0]) / self.box[i][1], -i))
        lo, hi = self.box[k]
        mid = (lo + hi) / 2
        a, b = list(self.box), list(self.box)
        a[k], b[k] = (lo, mid), (mid, hi)
        return AtlasCell(tuple(a), self.path + "0", self.hint), AtlasCell(tuple(b), self.path + "1", self.hint)

    def invariants(self) -> tuple:
        """The exact (s, x, y) box over the cell (module docstring); s = rho/(1 - rho)."""
        (r_lo, r_hi), (x_lo, x_hi), (k_lo, k_hi) = self.box
        return ((r_lo / (1 - r_lo), r_hi / (1 - r_hi)), (x_lo, x_hi), (k_lo * x_lo, k_hi * x_hi))

    def parameters(self) -> dict:
        """The representative regimes' parameter box (REPRESENTATIVE): D = 1/rho, eta_V = x, eta_KQ = kappa x."""
        (r_lo, r_hi), (x_lo, x_hi), (k_lo, k_hi) = self.box
        one = ["1", "1"]
        return {"D": [frac_str(1 / r_hi), frac_str(1 / r_lo)], "K": one, "N": one, "v": one, "c_L": one,
                "eta_V": [frac_str(x_lo), frac_str(x_hi)], "eta_KQ": [frac_str(k_lo * x_lo), frac_str(k_hi * x_hi)],
                "lambda": one, "beta": one, "V2": one}

    def as_dict(self) -> dict:
        return {"path": self.path, "box": {n: [frac_str(lo), frac_str(hi)] for n, (lo, hi) in zip(COORDINATES,
                                                                                                    self.box)}}

    @classmethod
    def of_record(cls, rec: dict) -> "AtlasCell":
        return cls(tuple((Fraction(rec["box"][n][0]), Fraction(rec["box"][n][1])) for n in COORDINATES),
                   rec["path"], rec.get("C_multiple", 0) if isinstance(rec.get("C_multiple"), int) else 0)


def seed_cells(box: dict, grid: tuple = (1, 1, 1)) -> list:
    """The box cut into grid[k] equal pieces along each coordinate; paths "i.j.k:"."""
    pieces = []
    for n, g in zip(COORDINATES, grid):
        lo, hi = box[n]
        pieces.append([(lo + (hi - lo) * i / g, lo + (hi - lo) * (i + 1) / g) for i in range(g)])
    return [AtlasCell(tuple(p[i] for p, i in zip(pieces, idx)), ".".join(map(str, idx)) + ":")
            for idx in itertools.product(*[range(g) for g in grid])]


def check_box(box: dict) -> None:
    """Refuse a box outside the hypothesis, naming the flag and the valid range (exit status 2)."""
    for n in COORDINATES:
        lo, hi = box[n]
        vlo, vhi = VALID[n]
        if not lo <= hi:
            raise InvalidParameter(n, f"{frac_str(lo)}..{frac_str(hi)}", "must have LO <= HI")
        if n == "rho" and not (0 <= lo and hi < 1):
            raise InvalidParameter("rho", f"{frac_str(lo)}..{frac_str(hi)}", "must lie in [0, 1) (rho = K/D, "
                                   "0 < K < D; rho = 0 is D -> infinity)")
        if n == "rho" and hi == 0:
            raise InvalidParameter("rho", f"{frac_str(lo)}..{frac_str(hi)}", "must reach above 0 (rho = K/D > 0 for "
                                   "every regime: rho = 0 is the end D -> infinity of a range 0..HI, not a regime)")
        if n == "x" and not (0 < lo and hi < 2):
            raise InvalidParameter("x", f"{frac_str(lo)}..{frac_str(hi)}", "must lie in (0, 2) (the stability "
                                   "hypothesis x < 2)")
        if n == "kappa" and not 0 < lo:
            raise InvalidParameter("kappa", f"{frac_str(lo)}..{frac_str(hi)}", "must lie in (0, infinity)")


# ----- the built-in check: every member's trajectory, all time ----------------------------------------------------
def trajectory_run(cell: AtlasCell, knobs: dict) -> dict:
    """verify.certify.family.certify_box on the cell's invariant box: certified when R is invariant, every member
    enters it by T0 and the slab hulls are stated; else open with the failed obligation."""
    from .family import certify_box  # heavy: loads flint
    if cell.box[1][1] >= 2:
        # outside the hypothesis x < 2: alpha' - 1 = (1 - x)(alpha - 1) diverges; nothing to certify
        return {"status": "open", "reason": f"x reaches {frac_str(cell.box[1][1])} >= 2 (outside the stability "
                "hypothesis x < 2)", "evidence": {}}
    if cell.box[0][0] == 0:
        return rho_zero_run(cell, knobs)
    rec = certify_box(cell.invariants(), cell.box[2], cell.hint, knobs, phase=phase)
    if rec["status"] != "certified":
        bad = rec["failed_obligation"]
        # the routes tried before the one whose obligation failed (the tube first), by their reasons
        first = "".join(f" ({name} first: {why})" for name, why in bad.get("routes", {}).items()
                        if why not in bad.get("detail", ""))
        return {"status": "open", "reason": f"{bad.get('name', 'obligation')}: {bad.get('detail', '')}{first}"[:600],
                "evidence": {"invariants": rec["invariants"], "C_multiple": rec["C_multiple"]}}
    ev = {k: v for k, v in rec.items() if k not in ("status", "seconds")}
    return {"status": "certified", "reason": f"R invariant; every member in R by T0 = {rec['T0']} "
            f"({rec['entry']['kind']})", "evidence": ev | {"lows": cell_lows(ev | {"path": cell.path}, cell, knobs.get("bits", 128))}}


def rho_zero_run(cell: AtlasCell, knobs: dict) -> dict:
    """A cell holding rho = 0 (every D >= K/rho_hi): open, since no entry is built there (the passage: the peak of
    alpha grows like sqrt(log(D/K)/kappa), docs/atlas.md); its last phases, from the trapping region R~ back to the
    passage, are checked once for every member by the registry verify.certify.rho_zero.PHASES."""
    from . import rho_zero  # heavy: loads flint
    return rho_zero.run(cell, knobs, phase)


LOWS_MARGIN = Fraction(1, 1024)     # the stored lower ends sit this fraction below the corners' refined ones


def cell_lows(ev: dict, cell: AtlasCell, bits: int = 128) -> list[str]:
    """The comparison lemma's lower end per shell for a query to try first (verify.certify.comparison.schedule's
    ``lows``): the smaller of the refined ends at the cell's two extreme cubic coefficients (c = s(1 + s)y rises with
    s and y: the corners (s_lo, x_lo, y_lo) and (s_hi, x_hi, y_hi)), LOWS_MARGIN below. A hint, not evidence: a
    query checks every shell it builds from them and refines a shell where one does not hold, so the hint
    saves the refinement's passes (most of a query's time) without being trusted."""
    from .arbfun import dyadic_down  # heavy: loads flint
    from .family import cell_shells  # heavy: loads flint
    inv = cell.invariants()
    ends = [[sh.lo for sh in cell_shells(ev, tuple(b[k] for b in inv), bits, "the atlas")]
            for k in (0, 1)]
    return [frac_str(dyadic_down(min(a, b) * (1 - LOWS_MARGIN), 64)) if min(a, b) > 0 else "0"
            for a, b in zip(*ends)]


def trajectory_recheck(cell: dict, result: dict) -> None:
    """Cheap: the stated invariant box holds the cell's exact image, and the slabs have their stated shape."""
    ev = result["evidence"]
    box = AtlasCell.of_record(cell).invariants()
    stated = [(Fraction(lo), Fraction(hi)) for lo, hi in ev["invariants"]]
    if not all(s[0] <= b[0] and b[1] <= s[1] for s, b in zip(stated, box)):
        raise ValueError(f"cell {cell['path']}: its invariant box {ev['invariants']} does not hold the cell's image")
    if not (int(ev["T0"]) >= 1 and Fraction(ev["z_at_T0"][0]) <= Fraction(ev["z_at_T0"][1])):
        raise ValueError(f"cell {cell['path']}: T0 or z(T0) misstated")
    check_stored(ev["slabs"], ev["region"], "the atlas", cell["path"])


register(CellCheck(
    "trajectory", "for every member and every T >= T0 of the cell: certified lower and upper bounds on L - L_opt, "
    "||S - S*||_F and ||W_X - V*||_F (the comparison lemma on the cell's slab hulls with the member's own cubic "
    "coefficient), T0 certified for all members at once, and lim q/leading_q in the cell's normalised limits",
    trajectory_run, trajectory_recheck))


# ----- one cell, many cells -----------------------------------------------------------------------------------------
# Progress within a cell: the topic a running cell reports its phases under (verify.run.execute.report_progress:
# [path, check, phase, seconds since the cell started]); run_atlas subscribes to it. _CURRENT holds the running
# cell's (path, check, start) and, run in process, the function the phases go to directly.
PROGRESS_TOPIC = "verify-atlas-phase"
_CURRENT: contextvars.ContextVar = contextvars.ContextVar("atlas_cell", default=None)
_LOCAL_SINK: contextvars.ContextVar = contextvars.ContextVar("atlas_sink", default=None)


def phase(text: str) -> None:
    """Tell whoever runs the atlas that the running cell's current check entered the phase ``text`` (nothing
    outside a cell). A check calls it at its long steps; run_cell calls it as each check starts."""
    cur = _CURRENT.get()
    if cur is None:
        return
    path, check, start = cur
    msg = [path, check, text, round(time.perf_counter() - start, 1)]
    report_progress(PROGRESS_TOPIC, msg)
    sink = _LOCAL_SINK.get()
    if sink is not None:
        sink(msg)


def run_cell(cell: AtlasCell, knobs: dict) -> dict:
    """Every applicable check on one cell, and its status (module docstring). A Dask task: pure, small in/out; it
    reports each check's phases (:func:`phase`)."""
    t = time.perf_counter()
    results = {}
    for name, chk in checks().items():
        if chk.applies(cell):
            token = _CURRENT.set((cell.path or "root", name, t))
            phase("started")
            try:
                results[name] = chk.run(cell, knobs)
            except Exception as exc:            # noqa: BLE001 - recorded as the cell's open reason, not hidden
                results[name] = {"status": "open", "reason": f"the check raised {type(exc).__name__}: {exc}"[:600],
                                 "evidence": {}}
            finally:
                _CURRENT.reset(token)
    for name, res in results.items():
        if res["status"] == "refuted":
            results[name] = replayed(cell, name, res)
    status, reason = cell_status(results)
    return cell.as_dict() | {"status": status, "reason": reason, "checks": results,
                             "seconds": round(time.perf_counter() - t, 2)}


def replayed(cell: AtlasCell, name: str, res: dict) -> dict:
    """A check's refutation, kept only when its replay (verify.certify.replay: evidence["replay"]) names a member of
    the cell inside the hypotheses and reproduces the failure with Arb balls now; otherwise the cell is open for
    this check, saying why. Nothing outside a statement's hypotheses counts against it."""
    rec = res.get("evidence", {}).get("replay")
    if not isinstance(rec, dict):
        return {"status": "open", "reason": f"a refutation without a replay does not count ({res['reason']})"[:600],
                "evidence": res.get("evidence", {})}
    try:
        member = member_of(rec)
        why = outside_hypotheses(member) or (None if cell.contains(member) else "the member is not in the cell")
        out = None if why else replay(rec)
    except (ValueError, KeyError, TypeError) as exc:
        why, out = f"the replay is malformed ({exc})", None
    if why is not None:
        return {"status": "open", "reason": f"a counterexample that does not count against {name}: {why}"[:600],
                "evidence": res.get("evidence", {})}
    if not out["reproduced"]:
        return {"status": "open", "reason": f"the counterexample did not replay: {out['detail']}"[:600],
                "evidence": res.get("evidence", {})}
    return res | {"reason": f"{res['reason']}; replayed: {out['detail']} (replay: {rec['command']})"[:1200],
                  "evidence": res["evidence"] | {"replayed": out}}


def cell_status(results: dict) -> tuple:
    """(status, reason) of a cell from its checks' results: refuted if one refutes, certified if all certify."""
    for name, r in results.items():
        if r["status"] == "refuted":
            return "refuted", f"{name}: {r['reason']}"
    if results and all(r["status"] == "certified" for r in results.values()):
        return "certified", "; ".join(f"{n}: {r['reason']}" for n, r in results.items())
    bad = next(((n, r) for n, r in results.items() if r["status"] != "certified"), None)
    return "open", (f"{bad[0]}: {bad[1]['reason']}" if bad else "no check applies to this cell")


SPLIT_LEAVES = 512      # an atlas cell whose Taylor prefix blows up may split it into this many pieces at most


def atlas_knobs(knobs: dict | None = None) -> dict:
    """The cell knobs of an atlas run: the family's (verify.certify.family.CELL_KNOBS) with the split prefix on
    (verify.certify.prefix_split: at most SPLIT_LEAVES pieces; each piece's steps are re-run by the re-checker; with
    knob entry = "monotone" on states capped by the monotone enclosure, family.ENTRY_ROUTES) and a failed entry tried
    once more into the widest invariant R of the same u0, then of u0/2 (knob "widen": family.certify_box), then
    ``knobs``."""
    from .family import CELL_KNOBS  # heavy: loads flint
    return CELL_KNOBS | {"split_leaves": SPLIT_LEAVES, "widen": True} | (knobs or {})


class AtlasInterrupted(Interrupted):
    """Ctrl-C during an atlas run: the finished cells and the pending ones were saved (the message says where and
    how to resume)."""


def run_atlas(seeds: list, *, depth: int = DEPTH, knobs: dict | None = None, scheduler=None, workers=None,
              progress=None, done: list | None = None, dask: bool = True, on_interrupt=None,
              deadline: float | None = None, on_phase=None) -> list:
    """Run the cells ``seeds`` on the Dask executor; open cells are bisected while their depth is below ``depth``.
    Returns the leaves' records (``done`` first: cells finished before a resume). ``progress(record, finished,
    pending)`` is called as each cell finishes, ``on_phase([path, check, phase, seconds])`` as a running cell's
    check enters a phase (:func:`phase`); on Ctrl-C ``on_interrupt(done, pending)`` is called (it saves) and the
    KeyboardInterrupt propagates."""
    knobs = atlas_knobs(knobs)
    done = list(done or [])
    pending, by_name = list(seeds), {}
    t0 = time.perf_counter()
    sink = _LOCAL_SINK.set(None if dask else on_phase)
    with (Executor(scheduler=scheduler, workers=workers) if dask else contextlib.nullcontext()) as ex:
        if dask and on_phase is not None:
            ex.subscribe(PROGRESS_TOPIC, on_phase)
        try:
            while pending:
                if deadline is not None and time.perf_counter() - t0 > deadline:
                    done += [not_run(c, deadline) for c in pending]
                    break
                batch, pending = pending, []
                tasks = [(c.path or "root", (c, knobs)) for c in batch]
                by_name = {c.path or "root": c for c in batch}
                runs = ex.stream(run_cell, tasks) if dask else ((n, run_cell(*a)) for n, a in tasks)
                with contextlib.closing(runs):
                    for name, res in runs:
                        if deadline is not None and time.perf_counter() - t0 > deadline:
                            break
                        if isinstance(res, Exception):
                            raise res
                        by_name.pop(name)
                        cell = AtlasCell.of_record(res)
                        if res["status"] == "open" and cell.depth < depth:
                            pending += [AtlasCell(h.box, h.path, _hint(res)) for h in cell.split()]
                        else:
                            done.append(res)
                        if progress is not None:
                            progress(res, len(done), len(pending) + len(by_name))
                pending, by_name = list(by_name.values()) + pending, {}
        except KeyboardInterrupt:
            if on_interrupt is not None:
                on_interrupt(done, list(by_name.values()) + pending)
            raise
        finally:
            _LOCAL_SINK.reset(sink)
    done.sort(key=lambda r: r["path"])
    return done


def not_run(cell: AtlasCell, deadline: float) -> dict:
    """The record of a cell left unrun when the deadline passed: open, saying so."""
    return cell.as_dict() | {"status": "open", "reason": f"not run: the run's deadline ({deadline:.0f} s) passed",
                             "checks": {}, "seconds": 0.0}


def _hint(res: dict) -> int:
    ev = res.get("checks", {}).get("trajectory", {}).get("evidence", {})
    return ev.get("C_multiple", 0) or 0


# ----- files --------------------------------------------------------------------------------------------------------
def cell_digest(rec: dict) -> str:
    """sha256 of a cell record's canonical JSON (its "digest" left out)."""
    body = {k: v for k, v in rec.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def stated(cell: dict, key: str) -> dict | None:
    """What a cell's trajectory check states as closed under ``key`` of its evidence (a phase of
    verify.certify.rho_zero.PHASES), or None."""
    ev = cell.get("checks", {}).get("trajectory", {}).get("evidence", {}).get(key)
    return ev if isinstance(ev, dict) and ev.get("ok") else None



def atlas_file(box: dict, cells: list, *, knobs: dict, depth: int, seconds: float, pending: list = ()) -> dict:
    """The atlas as a verify-certificate file (kind "atlas"): the formulas, the box, the representative regimes'
    ties, each leaf with its status and checks (certified cells also in the family-cell form the re-checker
    reads), and the cells still pending (an interrupted run: resume from it)."""
    from .certificate import TRUSTS  # heavy: loads sympy,flint
    from .files import FORMAT, VERSION, trusts  # heavy: loads sympy,flint
    from .formulas import VARIABLES, file_map  # heavy: loads sympy,flint
    from .rho_zero import map_groups  # heavy: loads sympy,flint
    out_cells = []
    for rec in sorted(cells, key=lambda r: r["path"]):
        rec = {k: v for k, v in rec.items() if k != "digest"}
        if rec["status"] == "certified" and "trajectory" in rec["checks"]:
            rec["parameters"] = AtlasCell.of_record(rec).parameters()
        rec["digest"] = cell_digest(rec)
        out_cells.append(rec)
    counts = {s: sum(c["status"] == s for c in out_cells) for s in STATUSES}
    return {"format": FORMAT, "version": VERSION, "kind": "atlas", "bits": knobs.get("bits", 128),
            "statement": "for every regime of sigma = identity (centred entries, P^T P = lambda I, zero "
                         "initialisation) whose point (rho = K/D, x, kappa = y/x) lies in a certified cell, every "
                         "check of that cell holds (checks: the statements); open cells decide nothing",
            "coordinates": {"rho": "K/D", "x": "eta_V c_L v N/K", "kappa": "y/x = eta_KQ lambda^2 beta^2 "
                            "||V*||^2/(eta_V N K)", "s": "K/(D - K) = rho/(1 - rho)", "y": "kappa x"},
            "trusts": trusts(TRUSTS) + [{"statement": "the reduced map depends on a regime only through (r, x, y)",
                                         "proof": "SymPy identities (verify.derive.invariants)", "scope": "sigma = "
                                         "identity, centred entries, P^T P = lambda I, zero initialisation"}],
            # and the charts of the rho = 0 phases some cell states closed (verify.certify.rho_zero)
            "map": {"variables": VARIABLES, **file_map(), **map_groups(out_cells, stated)},
            "spec": {"options": {"representative": "K = N = v = c_L = lambda = beta = ||V*||^2 = 1"},
                     "ranges": {n: [frac_str(box[n][0]), frac_str(box[n][1])] for n in COORDINATES},
                     "parameters": dict(REPRESENTATIVE)},
            "checks": {n: c.statement for n, c in checks().items()},
            "depth": depth, "knobs": {k: frac_str(v) if isinstance(v, Fraction) else v for k, v in knobs.items()},
            "counts": counts, "cells": out_cells,
            "pending": [c.as_dict() for c in pending], "seconds": round(seconds, 2)}


def save_atlas(data: dict, path) -> str:
    """Write atomically; returns the sha256 of the bytes written (the content hash a report names)."""
    raw = (json.dumps(data, indent=None, separators=(",", ":")) + "\n").encode()
    write_bytes_atomic(path, raw)
    return hashlib.sha256(raw).hexdigest()


def cache_path(data: dict):
    """Where an atlas without --save goes: the gitignored cache, named by its content hash."""
    raw = json.dumps(data, separators=(",", ":")).encode()
    return cache_dir("atlas") / f"atlas-{hashlib.sha256(raw).hexdigest()[:16]}.json"


# ----- evidence -----------------------------------------------------------------------------------------------------
def evidence(data: dict) -> list[dict]:
    """Summary records (verify.evidence.record) of an atlas: what its certified cells cover, stated exactly in the
    record's fields ("covers": the (rho, x, kappa) boxes, "open": the open ones with their reasons), informative
    (role "context"), and the proved change of coordinates (verify.derive.large_d) as a symbolic record. The
    records a claim decides with are verify.certify.atlas_evidence's: Region scopes of the certified boxes."""
    return [coverage_record(data), charts_record()]


def coverage_record(data: dict) -> dict:
    """The atlas's coverage as one informative record (see :func:`evidence`)."""
    from ..evidence import Scope, record  # heavy: loads sympy,numpy
    scope = Scope(dims="all", sigma=("identity",), conventions="all", horizon="all")
    cert = [c for c in data["cells"] if c["status"] == "certified"]
    covers = [c["box"] for c in cert]
    n = data["counts"]
    return record("atlas: cells certified for every regime at their points", "arb", scope,
                  f"{n['certified']} of {len(data['cells'])} cells of the box {data['spec']['ranges']} certified "
                  f"({n['open']} open, {n['refuted']} refuted): for every regime of sigma = identity (centred entries, "
                  "P^T P = lambda I, zero initialisation) whose (rho, x, kappa) lies in a certified cell, all-time "
                  "bounds on L - L_opt, ||S - S*||_F, ||W_X - V*||_F from the cell's T0, and the cell's limit "
                  "constants", None, role="context", covers=covers, checks=sorted(data.get("checks", {})),
                  open=[{"box": c["box"], "reason": c["reason"][:300]} for c in data["cells"] if c["status"] == "open"],
                  coverage="the regimes whose invariants (rho = K/D, x, kappa = y/x) lie in one of the boxes "
                  "'covers' (rho > 0 in every one: no D -> infinity cell is certified); the claims read them as "
                  "Region scopes (verify.certify.atlas_evidence)")


def charts_record() -> dict:
    """The D -> infinity charts' SymPy obligations as one symbolic record."""
    from ..derive.large_d import large_d_obligations  # heavy: loads sympy
    from ..evidence import Scope, record  # heavy: loads sympy,numpy
    scope = Scope(dims="all", sigma=("identity",), conventions="all", horizon="all")
    obs = large_d_obligations()
    return record("atlas: D -> infinity charts (verify.derive.large_d)", "symbolic", scope,
                      f"{sum(o.holds is True for o in obs)}/{len(obs)} SymPy obligations hold: the start chart's "
                      "increments are rho x A, rho y B and the manifold chart's x A_w, y B_w, each regular at rho = 0; at "
                      "rho = 0 the curve alpha = 1 + 1/w is fixed and H = alpha^2 - (2/kappa)(w + log w) a first "
                      "integral",
                      all(o.holds is True for o in obs))


# ----- queries ------------------------------------------------------------------------------------------------------
def point_of(setting) -> tuple:
    """(rho, x, kappa) of a regime, exactly (verify.derive.invariants.invariants_of: r, x, y)."""
    from ..derive.invariants import invariants_of  # heavy: loads sympy
    r, x, y = invariants_of(setting)
    return 1 / (1 + r), x, y / x


def _gap(point: tuple, cell: AtlasCell) -> float:
    """How far a point lies outside a cell: rho in absolute terms, x and kappa relative (log scale)."""
    out = 0.0
    for k, (p, (lo, hi)) in enumerate(zip(point, cell.box)):
        if lo <= p <= hi:
            continue
        edge = lo if p < lo else hi
        out += (float(p - edge)) ** 2 if k == 0 else math.log(float(p) / float(edge)) ** 2 if edge > 0 else 1e9
    return out


def home_cell(data: dict, point: tuple) -> dict:
    """The certified cell holding ``point``, its digest checked; else InvalidParameter naming the nearest open cell."""
    cells = data["cells"]
    home = next((c for c in cells if c["status"] == "certified" and AtlasCell.of_record(c).contains(point)), None)
    where = ", ".join(f"{n} = {float(v):.6g}" for n, v in zip(COORDINATES, point))
    if home is None:
        others = [c for c in cells if c["status"] != "certified"]
        near = min(others, key=lambda c: _gap(point, AtlasCell.of_record(c))) if others else None
        what = (f"; the nearest open cell is {near['path']} {near['box']} ({near['reason'][:200]})" if near else
                f"; the atlas covers {data['spec']['ranges']}")
        raise InvalidParameter("--query", where, f"must lie in a certified cell of the atlas: its point {where} lies in "
                               f"none{what}")
    if cell_digest(home) != home.get("digest"):
        raise InvalidParameter("atlas", data.get("source", "the atlas"), f"cell {home['path']} does not match its "
                               "digest (the file was changed after it was written)")
    return home


def recheck_cell(data: dict, home: dict) -> None:
    """Every check of the cell re-checked by its registered cheap re-check (the other checks' modules imported only
    when the cell names one: CHECK_MODULES)."""
    if not set(home["checks"]) <= set(CHECKS):
        for mod in CHECK_MODULES:
            importlib.import_module(mod)
    for name, res in home["checks"].items():
        if name not in CHECKS:
            raise InvalidParameter("atlas", data.get("source", "the atlas"), f"cell {home['path']} rests on the "
                                   f"check {name!r}, which this program does not have")
        try:
            CHECKS[name].recheck(home, res)
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidParameter("atlas", data.get("source", "the atlas"), f"cell {home['path']}: the "
                                   f"re-check of {name} failed ({exc})") from None


def query(data: dict, setting, Ts, digits: int | None = None) -> dict:
    """A regime's bounds from an atlas (verify.certify.family.cell_bounds, the ``bounds`` format of verify
    certify), after re-checking the cell it answers from (its digest, and every check's cheap re-check; the
    comparison lemma for this member is run afresh). Outside every certified cell: InvalidParameter naming the
    nearest open cell (exit status 2)."""
    from .certificate import check_certifiable  # heavy: loads sympy,flint
    from .family import cell_bounds  # heavy: loads flint
    from .coordinates import param_values  # heavy: loads sympy
    from ..derive.invariants import prefactors_of  # heavy: loads sympy
    check_certifiable(setting)
    point = point_of(setting)
    home = home_cell(data, point)
    recheck_cell(data, home)
    ev = home["checks"]["trajectory"]["evidence"] | {"path": home["path"]}
    P = param_values(setting)
    bounds = cell_bounds(ev, P, prefactors_of(setting), Ts, int(data.get("bits", 128)),
                         data.get("source", "the atlas"), digits)
    return {"status": "certified", "point": {n: frac_str(v) for n, v in zip(COORDINATES, point)},
            "cell": {"path": home["path"], "box": home["box"], "T0": int(ev["T0"]),
                     "checks": sorted(home["checks"])}, "bounds": bounds}


__all__ = ["AtlasCell", "CHECKS", "CHECK_MODULES", "CellCheck", "COORDINATES", "atlas_file", "cell_status",
           "check_box", "checks", "evidence", "phase", "point_of", "PROGRESS_TOPIC", "query", "register",
           "run_atlas", "run_cell", "save_atlas", "seed_cells"]
