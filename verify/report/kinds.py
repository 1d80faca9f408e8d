"""The report's part kinds: one registered object per kind of part (claim, probe, derive, certify, ...).

A saved part record carries its kind (verify.run.parts registers it); the report asks that kind's object here how
to read the record, never compares kind strings: which statements the part saved and in which role, how its
headline decision and one-line finding read, which section of results.json it fills, what a part that did not
finish would have judged, which reviewer questions it answers through another part, and the figures drawn from
it. A consumer loops over :data:`REPORT_KINDS` or asks :func:`kind_of`; a kind no object describes reads as
:class:`PartKind` does (its statements decided again, its headline first, no section of its own).

A new kind registers one subclass with :func:`report_kind`, anywhere that is imported before the report is
written (a plug-in named in $VERIFY_PLUGINS, say)::

    @report_kind
    class Scan(PartKind):
        kind = "scan"
        section = "scan"                      # the results.json key it fills (the schema must allow it)

        def entry(self, rec, statements, head):
            return {"verdict": head["verdict"], "points": rec["result"]["points"]}
"""
from __future__ import annotations

from typing import ClassVar

from ..checks import weakest
from ..run.parts import Part
from .sections import certify_blocks, derivation_blocks, reconcile_blocks, slopes_blocks
from .statements import FUZZ_SCOPE, NO_SCOPE, NOT_CHECKED, fuzz_items, fuzz_statement, normalised, redecide

CHECK_FIELDS = ("id", "kind", "title", "source", "questions", "profile", "convention", "numbers", "replay")
PROBE_FIELDS = ("question", "regimes", "findings", "classification", "fits")
BRIEF = ("id", "text", "role", "about", "relation", "hypotheses", "verdict", "scope_label", "short_scope", "reason",
         "why", "corrected", "saved_verdict", "extent")

REPORT_KINDS: dict[str, "PartKind"] = {}


def report_kind(cls: type["PartKind"]) -> type["PartKind"]:
    """Class decorator: the report reads parts of kind ``cls.kind`` through an instance of ``cls``."""
    name = cls.kind
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__qualname__}.kind must name a part kind, not {name!r}")
    old = REPORT_KINDS.get(name)
    if old is not None and type(old).__qualname__ != cls.__qualname__:
        raise TypeError(f"the report kind {name!r} is already registered by {type(old).__module__}")
    REPORT_KINDS[name] = cls()
    return cls


def unregister(name: str) -> None:
    """Forget the report kind ``name`` (a test's clean-up after registering its own)."""
    REPORT_KINDS.pop(name, None)


def kind_of(rec: dict) -> "PartKind":
    """The object describing the kind of the saved part ``rec`` (:class:`PartKind` for a kind none describes)."""
    return REPORT_KINDS.get(rec.get("kind"), GENERIC)


def kind_named(part: str) -> "PartKind":
    """The object describing the kind of the part named ``part`` ("kind" or "kind:arg", verify.run.parts.Part)."""
    return REPORT_KINDS.get(part.partition(":")[0], GENERIC)


def report_rank(rec: dict) -> int:
    """Where a part's kind comes in the report (smaller first); an undescribed kind after every described one."""
    return kind_of(rec).order


def brief(st: dict) -> dict:
    """A statement without its records (the parts list; the records are in claims/probes and parts/)."""
    return {k: st[k] for k in BRIEF if k in st}


class PartKind:
    """How the report reads one kind of part. The defaults fit a part whose result saves its statements (or one
    statement at its top level) and fills no section of its own."""

    kind: ClassVar[str] = ""
    order: ClassVar[int] = 1000             # report order of the kinds, smaller first
    section: ClassVar[str | None] = None    # the results.json key this kind fills (None: no section)
    collection: ClassVar[bool] = False      # the section is a list, one entry per part of the kind
    render_rank: ClassVar[int] = 1000       # where its section's blocks come in the report's body, smaller first
    notes_on_claims: ClassVar[bool] = False  # its statements are notes on the claim each is ``about`` (fuzzing)

    # ---- statements ----
    def saved_statements(self, rec: dict) -> list[dict]:
        """The statements a finished part saved, in its order (the first is its headline), as saved."""
        res = rec.get("result") or {}
        sts = res.get("statements")
        if isinstance(sts, list) and sts:
            return [st for st in sts if isinstance(st, dict)]
        if "evidence" in res:          # a result that is one statement (its records at the top level)
            return [{"id": res.get("id"), "text": res.get("statement"), "scope": res.get("scope"),
                     "evidence": res.get("evidence"), "verdict": res.get("verdict")}]
        return []

    def default_role(self, rec: dict) -> str:
        """The role of a saved statement that states none (verify.checks.ROLES)."""
        return "finding"

    def check_id(self, rec: dict) -> str | None:
        """The check (claim or probe id) the part's statements belong to; None for a built-in part."""
        return None

    def statements(self, rec: dict) -> list[dict]:
        """Every statement of a finished part in the report's shape, decided again; [] for a part that did not
        finish or states nothing."""
        if rec["status"] != "ok":
            return []
        return [normalised(st, rec["part"], self.check_id(rec), self.default_role(rec))
                for st in self.saved_statements(rec)]

    def declared_statements(self, rec: dict) -> list[dict]:
        """The statements a part that did not finish would have judged ("not checked"); [] when unknown."""
        return []

    # ---- the part's row ----
    def decision(self, rec: dict, statements: list[dict]) -> dict:
        """{verdict, scope_label, reason} of a finished part: its headline (first) statement's."""
        if not statements:
            return {"verdict": "inconclusive", "scope_label": NO_SCOPE,
                    "reason": "no evidence records: the report derives every verdict from records"}
        return {k: statements[0][k] for k in ("verdict", "scope_label", "reason")}

    def finding(self, rec: dict, statements: list[dict]) -> str:
        """One line saying what a finished part found: its own "finding" when it saved one, else its headline's
        why."""
        res = rec.get("result") or {}
        if isinstance(res.get("finding"), str) and res["finding"]:
            return " ".join(res["finding"].split())
        if statements:
            return f"{statements[0]['verdict']}: {statements[0]['why']}"
        return ""

    # ---- its section of results.json ----
    def entry(self, rec: dict, statements: list[dict], head: dict):
        """The part's entry in :attr:`section` (``head``: its row in the parts list)."""
        return None

    def merge(self, old, new):
        """The section after a second part of this kind added ``new`` (the last one wins by default)."""
        return new

    def blocks(self, section) -> list:
        """Its section of results.json as blocks of verify.report.render (none by default: claims and probes are
        rendered in the report's tables)."""
        return []

    # ---- reviewer questions and figures ----
    def answers_as(self, rec: dict, saved: dict) -> tuple[str, dict | None]:
        """(part name, saved result) through which this part answers the reviewer questions (``saved``: part name
        -> its saved result, for every part of the run)."""
        return rec["part"], rec.get("result")

    def figures(self, rec: dict) -> list[tuple]:
        """Figure jobs (path under the report, function of the saved result, the result, the part) of a finished
        part (verify.report.figure_jobs)."""
        return []


GENERIC = PartKind()


class Check(PartKind):
    """A claim or a probe: a check of a catalogue, its declaration and statements kept in its entry."""

    collection = True
    fields: ClassVar[tuple[str, ...]] = ()     # the result's fields kept beside CHECK_FIELDS

    def check_id(self, rec):
        res = rec.get("result") or {}
        return res.get("id") or rec.get("arg") or None

    def catalogue(self) -> dict:
        raise NotImplementedError

    def declared_statements(self, rec):
        try:
            check = self.catalogue()[rec["arg"]]
        except Exception:  # noqa: BLE001 - an unknown or unimportable check leaves the part's own row only
            return []
        why = f"the part did not finish ({rec['status']})"
        return [{"id": st.id, "part": rec["part"], "check": rec["arg"], "text": st.text, "role": st.role,
                 "about": st.about, "relation": st.relation, "hypotheses": [h.text for h in st.hypotheses],
                 "scope": st.scope.as_dict(), "evidence": None, "verdict": NOT_CHECKED, "scope_label": NO_SCOPE,
                 "short_scope": NO_SCOPE, "extent": "", "reason": why, "why": why, "corrected": None}
                for st in getattr(check, "statements", ())]

    def entry(self, rec, statements, head):
        """A claim or probe: its declaration, its statements decided again (with their records), its numbers."""
        res = rec.get("result") or {}
        out = {k: res[k] for k in CHECK_FIELDS if k in res} | {"id": res.get("id") or res.get("probe") or rec["arg"],
                                                                "kind": rec["kind"], "part": rec["part"]}
        out |= {k: res[k] for k in self.fields if k in res}
        out.setdefault("numbers", {})
        dec = self.decision(rec, statements) if statements else {"verdict": "inconclusive", "scope_label": NO_SCOPE,
                                                                 "reason": ""}
        return out | {"statements": statements, "verdict": dec["verdict"], "scope_label": dec["scope_label"],
                      "reason": dec["reason"]}

    def merge(self, old, new):
        return (old or []) + [new]


@report_kind
class Claim(Check):
    """A claim of the paper (lemmas/): judged part by part, as established as its weakest part."""

    kind = "claim"
    order = 50
    section = "claims"

    def catalogue(self):
        from lemmas import CLAIMS  # heavy: loads sympy,flint (every claim module; only for a part that failed)
        return CLAIMS

    def default_role(self, rec):
        # a claim saved in the one-statement shape of verify.evidence.headline
        res = rec.get("result") or {}
        return "control" if (res.get("convention") or {}).get("negative_control") else "claim"

    def decision(self, rec, statements):
        judged = [st for st in statements if st["role"] != "finding"]
        if len(judged) > 1:
            # a claim judged part by part is as established as its weakest part, never its first or strongest
            w = next(st for st in judged if st["verdict"] == weakest(x["verdict"] for x in judged))
            return {"verdict": w["verdict"], "scope_label": w["scope_label"],
                    "reason": "every part: " + ", ".join(f"{st['id']} {st['verdict']}" for st in judged)
                              + f"; the weakest, {w['id']}: {w['reason']}"}
        return super().decision(rec, statements)


@report_kind
class ProbeKind(Check):
    """A probe (verify/probes/): the toolkit's own findings, with its regimes, fits and figure."""

    kind = "probe"
    order = 60
    section = "probes"
    fields = PROBE_FIELDS

    def catalogue(self):
        from ..probes import PROBES  # heavy: loads sympy,flint (every probe module; only for an unfinished probe)
        return PROBES

    def figures(self, rec):
        from . import figures as fg  # heavy: loads sympy,flint (the probes; matplotlib when drawing)
        safe = Part(rec["kind"], rec["arg"]).filename[:-5]
        return [(f"figures/{safe}.png", lambda res, n=rec["arg"]: fg.probe_figure(n, res), rec.get("result"),
                 rec["part"])]


@report_kind
class Derive(PartKind):
    """verify derive: the reduction proof per sigma and the leading terms."""

    kind = "derive"
    order = 0
    section = "derivation"

    render_rank = 40

    def blocks(self, section):
        return derivation_blocks(section)

    def entry(self, rec, statements, head):
        """Asymptotics, the per-sigma proofs and each sigma's verdict, keyed by the sigma spec the statement's own
        scope names (never by its text)."""
        res = rec.get("result") or {}
        sigmas = {}
        for st in statements:
            sig = (st.get("scope") or {}).get("sigma")
            if isinstance(sig, list) and len(sig) == 1:
                sigmas[sig[0]] = st["verdict"]
        first = statements[0] if statements else {"verdict": "inconclusive", "scope_label": NO_SCOPE}
        return {k: res[k] for k in ("asymptotics", "reduction", "convention", "replay") if k in res} | {
            "sigmas": sigmas, "verdict": first["verdict"], "scope_label": first["scope_label"]}


@report_kind
class Convergence(PartKind):
    """The convergence run of the reference regime: slopes, and the convergence and alpha figures."""

    kind = "convergence"
    order = 10
    section = "convergence"

    render_rank = 10

    def blocks(self, section):
        return slopes_blocks(section)

    def entry(self, rec, statements, head):
        res = rec.get("result") or {}
        return {"verdict": head["verdict"], "scope_label": head["scope_label"], "regime": res.get("regime"),
                "quantities": {q: {k: v for k, v in d.items() if k != "leading_term_values"}
                               for q, d in res.get("quantities", {}).items()}, "replay": res.get("replay")}

    def figures(self, rec):
        from . import figures as fg  # heavy: loads sympy,flint (the probes; matplotlib when drawing)
        res = rec.get("result")
        return [("figures/convergence.png", fg.convergence, res, rec["part"]),
                ("figures/alpha.png", fg.alpha_trajectories, res, rec["part"])]


@report_kind
class Fuzz(PartKind):
    """The fuzzer's parts: one per fuzzed claim, each a statement "no counterexample inside its hypotheses"."""

    kind = "fuzz"
    order = 70
    section = "fuzz"
    notes_on_claims = True

    def saved_statements(self, rec):
        return [fuzz_statement(i) for i in fuzz_items(rec.get("result") or {})]

    def decision(self, rec, statements):
        if len(statements) > 1:
            # a bundle of fuzzed claims: one decision over all their records
            ev = [e for st in statements for e in (st["evidence"] or [])]
            d = redecide({"evidence": ev, "scope": FUZZ_SCOPE.as_dict()})
            return {k: d[k] for k in ("verdict", "scope_label", "reason")}
        return super().decision(rec, statements)

    def finding(self, rec, statements):
        bad = [st["about"] for st in statements if st["verdict"] == "refuted"]
        return (f"counterexamples: {', '.join(bad)}" if bad else "no counterexample") + f" ({len(statements)} claims fuzzed)"

    def entry(self, rec, statements, head):
        return {"claims": [{k: v for k, v in i.items() if k != "evidence"} for i in fuzz_items(rec.get("result") or {})]}

    def merge(self, old, new):
        return {"claims": (old or {"claims": []})["claims"] + new["claims"]}

    def answers_as(self, rec, saved):
        # a fuzz part answers what the claim it fuzzes answers
        name = f"{Claim.kind}:{rec.get('arg')}"
        return name, saved.get(name)


@report_kind
class Bench(PartKind):
    """verify bench: timings, no claim."""

    kind = "bench"
    order = 80
    section = "bench"

    def decision(self, rec, statements):
        return {"verdict": "n/a", "scope_label": NO_SCOPE, "reason": "a benchmark makes no claim"}

    def entry(self, rec, statements, head):
        return rec.get("result") or {}


@report_kind
class Attention(PartKind):
    """The full-attention run: its figure."""

    kind = "attention"
    order = 20

    def figures(self, rec):
        from . import figures as fg  # heavy: loads sympy,flint (the probes; matplotlib when drawing)
        return [("figures/attention.png", fg.attention, rec.get("result"), rec["part"])]


@report_kind
class Certify(PartKind):
    """The all-time certificate of the base regime and the profile's family."""

    kind = "certify"
    order = 30
    section = "certify"

    render_rank = 20

    def blocks(self, section):
        return certify_blocks(section)

    def entry(self, rec, statements, head):
        res = rec.get("result") or {}
        cert = res.get("certificate") or {}
        return {k: res.get(k) for k in ("statement", "finding", "bounds", "relative_width_at_1e12", "replay")} | {
            "verdict": head["verdict"], "scope_label": head["scope_label"], "regime": res.get("regime"),
            "T0": cert.get("T0"), "constants": cert.get("constants"), "asymptotic": cert.get("asymptotic"),
            "region": {k: (cert.get("region") or {}).get(k) for k in ("definition", "u0", "C")},
            "a": cert.get("a"), "b": cert.get("b"), "cubic_coefficient_c": cert.get("cubic_coefficient_c"),
            "shells": len(cert.get("shells") or []), "obligations": len(cert.get("obligations") or []),
            "recheck": cert.get("recheck"),
            "exact_cases": {lab: {"note": ((e.get("certificate") or {}).get("rate") or {}).get("note"),
                                  "replay": e.get("replay")} for lab, e in (res.get("exact_cases") or {}).items()},
            "family": {k: v for k, v in (res.get("family") or {}).items() if k != "records"}}

    def figures(self, rec):
        from .figures import certify_band  # heavy: loads sympy,flint (the probes; matplotlib when drawing)
        return [("figures/certify.png", certify_band, rec.get("result"), rec["part"])]


@report_kind
class Reconcile(PartKind):
    """verify reconcile: the family of conventions, each reading's systems, its statements."""

    kind = "reconcile"
    order = 40
    section = "reconcile"

    render_rank = 30

    def blocks(self, section):
        return reconcile_blocks(section)

    def entry(self, rec, statements, head):
        """The widened family, each reading's systems, the representative and the reference fits, and its
        statements with their verdicts (derived again here), keyed as the part keyed them."""
        res = rec.get("result") or {}
        der = res.get("derivation") or {}
        return {k: res.get(k) for k in ("family", "readings", "representative", "reference", "claims", "finding",
                                        "replay")} | {
            "verdict": head["verdict"], "scope_label": head["scope_label"], "statements": [brief(st) for st in statements],
            "verdicts": {k: {"verdict": st["verdict"], "scope_label": st["scope_label"]}
                         for k, st in zip(res.get("verdicts") or {}, statements)},
            "leading_terms": der.get("leading_terms"), "d_exponents": der.get("d_exponents"),
            "tstar_definition": der.get("tstar_definition")}

    def figures(self, rec):
        from .figures import convention_figure  # heavy: loads sympy,flint (the probes; matplotlib when drawing)
        return [("figures/convention.png", convention_figure, rec.get("result"), rec["part"])]


@report_kind
class Discovery(PartKind):
    """A module that could not be imported or could not list its parts (verify.pipeline.runner): a failed part."""

    kind = "discovery"
    order = 90


def statements_of(rec: dict) -> list[dict]:
    """Every statement of a saved part in the report's shape; [] for a part that did not finish or states nothing."""
    return kind_of(rec).statements(rec)


def declared_statements(rec: dict) -> list[dict]:
    """The statements a part that did not finish would have judged ("not checked"), so a failed part leaves
    visible rows, never a gap; [] for a finished part or when its kind does not know them."""
    return [] if rec["status"] == "ok" else kind_of(rec).declared_statements(rec)


def report_statements(records: list[dict]) -> list[dict]:
    """Every statement of the report, in part order: the finished parts' (decided again) and the declared
    statements of the claims and probes that did not finish ("not checked")."""
    return [st for r in records for st in (statements_of(r) or declared_statements(r))]


def section_blocks(results: dict) -> list:
    """The blocks of every registered kind's section of ``results``, in render order."""
    kinds = sorted((k for k in REPORT_KINDS.values() if k.section), key=lambda k: k.render_rank)
    return [b for k in kinds for b in k.blocks(results.get(k.section))]


def check_entries(results: dict) -> list[dict]:
    """The entries of every check section of ``results`` (claims, then probes: the kinds whose section is a list
    of checks), in registry order."""
    return [e for k in REPORT_KINDS.values() if isinstance(k, Check) for e in results.get(k.section) or []]


def empty_sections() -> dict:
    """Every registered kind's section of results.json, empty."""
    return {k.section: ([] if k.collection else None) for k in REPORT_KINDS.values() if k.section}


__all__ = ["PartKind", "Check", "REPORT_KINDS", "report_kind", "unregister", "kind_of", "kind_named", "report_rank", "brief",
           "statements_of", "declared_statements", "report_statements", "empty_sections", "section_blocks", "check_entries", "CHECK_FIELDS",
           "PROBE_FIELDS", "BRIEF"]
