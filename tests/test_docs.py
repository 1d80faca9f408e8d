"""The documents the toolkit points to exist, and the documentation says what the code registers.

(a) Every file reference in ``verify --help`` and every subcommand's ``--help``, in a report rendered
    from a few real parts, in README.md and in docs/*.md resolves to a file of the
    repository (a Markdown link to its target and heading; a path or a ``NAME.md`` in the text to a
    file or folder). Paths that git ignores are outputs (``reports/latest``), not references.
(b) docs/claims.md lists every registered claim and probe, docs/setting.md every regime option and
    flag, docs/api.md every public name; the generated pages equal what docs/generate.py writes now.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import shutil
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# File names the toolkit writes (so they appear in help texts as outputs, not as references), each
# checked below against the code that writes it.
OUTPUT_NAMES = {"index.md", "bench.md"}

URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A path: components of word characters, '.', '-' (and a wildcard part such as *.json or <axis>),
# joined by '/'; not preceded by a character that would make it part of a longer token.
PATH = re.compile(r"(?<![\w./~$<{-])((?:\./)?[\w.-]+(?:/[\w.*<>{}-]+)+/?)")
MD_NAME = re.compile(r"(?<![\w./-])([\w-]+(?:\.[\w-]+)*\.md)\b")


def git_ignored(path: Path) -> bool:
    """Whether git ignores ``path`` (an output location such as reports/latest); False without git."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return False
    rel = path.resolve().relative_to(ROOT).as_posix()
    return subprocess.run(["git", "check-ignore", "-q", "--no-index", rel], cwd=ROOT).returncode == 0


def top_level() -> set[str]:
    """The repository's top-level entries a reference may start with (not hidden, not ignored)."""
    return {p.name for p in ROOT.iterdir() if not p.name.startswith(".") and not git_ignored(p)}


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown page."""
    out = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            text = re.sub(r"[`*_]", "", m.group(1)).strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return out


def problems(text: str, *, base: Path, link_base: Path | None = None) -> list[str]:
    """The references in ``text`` that do not resolve. Markdown links resolve against ``link_base``
    (default ``base``); paths and NAME.md in the text against ``base`` (a repository folder)."""
    link_base = link_base or base
    bad = []
    text = URL.sub(" ", text)
    for target in LINK.findall(text):
        if target.startswith(("#", "mailto:")):
            continue
        path, _, frag = target.partition("#")
        p = (link_base / path).resolve()
        if not p.exists() or (ROOT in p.parents and git_ignored(p)):
            bad.append(f"link {target}: no such file in the repository")
        elif frag and p.suffix == ".md" and frag not in anchors(p):
            bad.append(f"link {target}: {path} has no heading with anchor #{frag}")
    plain = LINK.sub("]", text)
    tops = top_level()
    for tok in PATH.findall(plain):
        tok = tok.rstrip("/.")
        first = tok.removeprefix("./").split("/")[0]
        if first not in tops:
            continue                    # not a repository path: OUT/..., 1/10, c0/c1, parts/ of a report
        # a wildcard part (*.json, <axis>, {...}): the folder before it must exist
        fixed = re.split(r"/[^/]*[*<{]", tok)[0]
        p = (ROOT / fixed).resolve()
        if git_ignored(p):
            continue                    # an output location, e.g. reports/latest
        if not p.exists():
            bad.append(f"path {tok}: no such file or folder in the repository")
    for name in MD_NAME.findall(plain):
        if name in OUTPUT_NAMES:
            continue
        if not (base / name).is_file() and not (ROOT / name).is_file():
            bad.append(f"{name}: no such file (documents live in docs/, e.g. docs/setting.md, docs/paper.md)")
    return bad


def help_texts() -> dict[str, str]:
    """``verify --help`` and ``verify CMD --help`` for every registered command, unwrapped."""
    from verify.cli import main
    runner = CliRunner()
    out = {}
    for args in [[]] + [[name] for name in sorted(main.list_commands(None))]:
        res = runner.invoke(main, args + ["--help"], terminal_width=10_000, max_content_width=10_000)
        assert res.exit_code == 0, res.output
        out[" ".join(["verify"] + args + ["--help"])] = res.output
    return out


# --- the reference checker itself --------------------------------------------------------------

def test_checker_finds_broken_references(tmp_path):
    assert problems("see SETTING.md", base=ROOT)
    assert problems("see [the setting](nowhere.md)", base=DOCS)
    assert problems("see `verify/no_such_module.py`", base=ROOT)
    assert problems("[setting](setting.md#no-such-heading)", base=DOCS)
    assert problems("[x](../reports/latest/index.md)", base=DOCS)     # ignored by git: not in the repository
    assert problems("[verdicts](verdicts.md)", base=DOCS) == []
    assert problems("[tutorial](tutorial.md#5-a-figure)", base=DOCS) == []
    assert problems("schema verify/schemas/check.schema.json; output OUT/bench.json, bench.md; "
                    "default reports/latest; eta 1/10; cache .cache/verify/fuzz-db; figures/exponents-vs-<axis>.png; "
                    "verify/schemas/*.json; tcp://HOST:8786", base=ROOT) == []


def test_output_names_are_outputs():
    # The names allowed in help texts without a file are exactly names the code writes.
    from verify.report import REPORT_FILES
    assert "index.md" in REPORT_FILES
    assert '"bench.md"' in (ROOT / "verify" / "bench" / "timings.py").read_text()


# --- (a) every reference resolves -------------------------------------------------------------

def test_help_texts_reference_files_that_exist():
    texts = help_texts()
    assert len(texts) >= 11 and "verify all --help" in texts
    bad = [f"{where}: {p}" for where, text in texts.items() for p in problems(text, base=ROOT)]
    assert not bad, "\n".join(bad)
    assert "docs/setting.md" in texts["verify --help"]


# Cheap parts of `verify all` (about a second each): enough for every section of the report.
TINY_REPORT_PARTS = ("attention", "claim:wp-zero", "claim:neg-alpha-le-1", "claim:neg-loss-monotone-any-eta",
                     "probe:k-zero", "probe:d-eq-k")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return tiny_report(tmp_path_factory.mktemp("tiny") / "report")


def tiny_report(out: Path) -> Path:
    """A report rendered by the current code from a few real parts run in this process."""
    from verify.run.atomic import write_json_atomic
    from verify.run.version import code_version
    from verify.pipeline.child import run_here
    from verify.run.parts import REGISTRY
    from verify.pipeline.runner import part_options, plan
    from verify.report import write_report
    parts, failed = plan("ci", list(TINY_REPORT_PARTS))
    assert not failed and len(parts) == len(TINY_REPORT_PARTS)
    pdir, version = out.parent / "parts", code_version()
    for p in parts:
        rec = run_here({"name": p.name, "kind": p.kind, "arg": p.arg, "module": REGISTRY[p.kind].module,
                        "profile": "ci", "options": part_options(p, "ci"), "code_version": version})
        assert rec["status"] == "ok", rec["error"]
        write_json_atomic(pdir / p.filename, rec)
    write_report(out, pdir)
    return out


@pytest.mark.slow
def test_report_references_files_that_exist(tiny):
    out = tiny
    md = (out / "index.md").read_text(encoding="utf-8")
    assert "docs/paper.md" in md and "docs/setting.md" in md
    bad = problems(md, base=ROOT, link_base=out)
    assert not bad, "\n".join(bad)
    assert any(t.startswith("parts/") for t in LINK.findall(md)), "the report links no part: the link check is empty"


@pytest.mark.slow
def test_real_parts_report_the_paper_claims_apart(tiny):
    """From real parts: the first table holds the claim statements only (wp-zero's), the controls come out
    refuted and are counted as controls, and what the edge probes find (K = 0, K = D: outside Theorem 3.1's
    hypotheses) is the toolkit's findings: the paper's claims show no refutation. Every verdict matches verify.evidence.decide on the
    records the part saved."""
    import json
    from verify.evidence import Scope, decide
    res = json.loads((tiny / "results.json").read_text(encoding="utf-8"))
    roles = res["summary"]["roles"]
    assert "refuted" not in roles["claim"] and sum(roles["claim"].values()) >= 1
    assert roles["control"] == {"refuted": 2}
    edge = [s for s in res["statements"] if s["part"] in ("probe:k-zero", "probe:d-eq-k")]
    assert edge and {s["role"] for s in edge} == {"finding"} and any(s["relation"] == "outside" for s in edge)
    first = (tiny / "index.md").read_text(encoding="utf-8").split("\n## ", 2)[1]
    rows = [r for r in first.splitlines() if r.startswith("| ") and not r.startswith("| result")]
    want = [s["id"] for s in res["statements"] if s["role"] == "claim"]
    assert [re.search(r"`([^`]+)`", r).group(1) for r in rows] == want == ["wp-zero"]
    for part in res["parts"]:
        saved = json.loads((tiny / part["evidence"]).read_text(encoding="utf-8"))["result"]
        for st, mine in zip(saved.get("statements") or [], part["statements"]):
            assert mine["verdict"] == decide(st["evidence"], Scope.from_dict(st["scope"])).verdict


def _markdown_pages():
    pages = [pytest.param(p, id=p.relative_to(ROOT).as_posix()) for p in sorted(DOCS.glob("*.md"))]
    return pages + [pytest.param(ROOT / "README.md", id="README.md")]


@pytest.mark.parametrize("page", _markdown_pages())
def test_markdown_references_resolve(page):
    bad = problems(page.read_text(encoding="utf-8"), base=page.parent)
    assert not bad, "\n".join(bad)


def test_sources_name_no_missing_document():
    # Docstrings, comments and messages name documents too: every document named in the sources as an
    # upper-case NAME.md (README.md) or a docs/ path exists, relative to the repository root. (This
    # file is left out: its checker tests name missing files on purpose.)
    bad = []
    files = [*ROOT.glob("verify/**/*.py"), *ROOT.glob("lemmas/*.py"), *ROOT.glob("tests/*.py"),
             *ROOT.glob("verify/schemas/*.json")]
    for f in sorted(set(files) - {Path(__file__).resolve()}):
        for name in re.findall(r"(?<![\w/.-])(docs/[\w-]+\.md|[A-Z][A-Z0-9_-]*\.md)\b", f.read_text(encoding="utf-8")):
            if name not in OUTPUT_NAMES and not (ROOT / name).is_file():
                bad.append(f"{f.relative_to(ROOT)}: {name}")
    assert not bad, "documents that do not exist (use docs/setting.md, docs/paper.md, ...):\n" + "\n".join(bad)


def test_module_references_in_docs_import():
    # `verify.x.y` / `lemmas.x` written in the docs name modules or attributes that exist.
    bad = []
    for page in sorted(DOCS.glob("*.md")):
        for ref in set(re.findall(r"`((?:verify|lemmas)(?:\.\w+)+)", page.read_text(encoding="utf-8"))):
            parts = ref.split(".")
            for i in range(len(parts), 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                except ImportError:
                    continue
                try:
                    for attr in parts[i:]:
                        obj = getattr(obj, attr)
                except AttributeError:
                    bad.append(f"{page.name}: {ref}")
                break
            else:
                bad.append(f"{page.name}: {ref}")
    assert not bad, "\n".join(bad)


# --- (b) the documentation lists what the code registers -----------------------------------------

def generator():
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_generated_pages_are_current():
    """What a fresh interpreter writes (`python docs/generate.py --check`), not this session's registries, which
    earlier tests may have changed (a toy claim registered and removed, lazily loaded modules)."""
    import sys
    r = subprocess.run([sys.executable, str(DOCS / "generate.py"), "--check"], capture_output=True, text=True,
                       cwd=DOCS.parent)
    assert r.returncode == 0, f"run: python docs/generate.py\n{r.stdout}{r.stderr}"


def test_claims_page_lists_every_claim_and_probe():
    from lemmas import CLAIMS as REGISTRY
    from verify.probes import PROBES
    text = (DOCS / "claims.md").read_text(encoding="utf-8")
    claims_part = text.split("\n## Claims\n", 1)[1].split("\n## Probes\n", 1)[0]
    probes_part = text.split("\n## Probes\n", 1)[1].split("\n## Parts", 1)[0]
    claims = re.findall(r"^### `([^`]+)`$", claims_part, re.M)
    probes = re.findall(r"^### `([^`]+)`$", probes_part, re.M) + re.findall(r"^- `([^`]+)` \(Q", probes_part, re.M)
    assert sorted(claims) == sorted(REGISTRY), "docs/claims.md: claims differ from lemmas.REGISTRY"
    assert sorted(probes) == sorted(PROBES), "docs/claims.md: probes differ from verify.probes.PROBES"
    for cid, c in REGISTRY.items():
        assert generator().md(c.title) in text, f"docs/claims.md: title of {cid} is not the registered one"


def test_claims_page_gives_each_statement_its_role_and_scope():
    from lemmas import CLAIMS
    text = (DOCS / "claims.md").read_text(encoding="utf-8")
    roles = generator().ROLE_TEXT
    for c in CLAIMS.values():
        for st in c.statements:
            line = next(ln for ln in text.splitlines() if ln.startswith(f"  - `{st.id}` ("))
            assert line.startswith(f"  - `{st.id}` ({roles[st.role]}"), line
            assert f"    - scope: {generator().md(st.scope.label())}" in text


def test_paper_page_questions_and_results_come_from_verify_model_paper():
    from verify.model.paper import QUESTIONS, RESULTS
    text = (DOCS / "paper.md").read_text(encoding="utf-8")
    block = text.split("BEGIN GENERATED by docs/generate.py: questions", 1)[1]
    for q in QUESTIONS:
        line = next(ln for ln in block.splitlines() if ln.startswith(f"{q.number}. "))
        assert line == f"{q.number}. {generator().md(q.text)}  "
        assert q.primary in block.split(line, 1)[1].splitlines()[1]
    results = text.split("BEGIN GENERATED by docs/generate.py: results", 1)[1].split("END GENERATED", 1)[0]
    for r in RESULTS:
        row = next(ln for ln in results.splitlines() if ln.startswith(f"| {r.name} |"))
        assert all(f"`{c}`" in row for c in r.claims)


def test_setting_page_documents_every_option():
    from verify.cli.options import setting_options
    from verify.model import make_setting
    text = (DOCS / "setting.md").read_text(encoding="utf-8")
    cmd = click.command()(setting_options(lambda **kw: None))
    flags = [o for p in cmd.params for o in p.opts]
    assert "--beta" in flags and "--D" in flags
    missing = [f for f in flags if f"`{f}" not in text]
    keywords = list(inspect.signature(make_setting).parameters)
    missing += [k for k in keywords if f"`{k}`" not in text]
    assert not missing, f"docs/setting.md does not document: {missing}"


def test_api_page_lists_the_public_api():
    import verify
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    assert re.findall(r"^## `(\w+)`$", text, re.M) == list(verify.__all__)


def test_index_links_every_page():
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = {t.partition("#")[0] for t in LINK.findall(text)}
    assert {p.name for p in DOCS.glob("*.md")} - {"index.md"} <= linked


GLOSSARY_TERMS = ("reduced recursion", "slow manifold", "trapping region", "comparison lemma", "off-support mass",
                  "two-valued columns", "teacher presets", "roles: claim, control, finding", "formal expansion", "scope",
                  "assumptions", "reference convention", "onset t\\*", "leading term", "verdict", "replay", "profile")


def test_the_glossary_defines_every_term_the_report_uses():
    """Each term is a heading of docs/glossary.md (so the report can link to #its-anchor), with a definition
    under it; the presets' entry names all four presets the code registers."""
    from verify.model.presets import PRESETS
    text = (DOCS / "glossary.md").read_text(encoding="utf-8")
    sections = re.split(r"^### ", text, flags=re.M)[1:]
    bodies = {s.split("\n", 1)[0].strip().lower(): s.split("\n", 1)[1].strip() for s in sections}
    for term in GLOSSARY_TERMS:
        assert term in bodies and len(bodies[term]) > 80, f"docs/glossary.md does not define {term!r}"
    assert all(f"**{p}**" in bodies["teacher presets"] for p in PRESETS)
