"""Shared command-line options describing one regime, their translation into a Setting, and the one
place where the toolkit's errors become what the user reads: one line, naming the flag as typed.

Errors from the model name API parameters (``eta_v``, ``wp_trainable``, ``vstar entry``); here each
is mapped to the flag of the running command (``--eta``, ``--freeze-wp``, ``--vstar``) and the value
is echoed from the command line as the user wrote it (``0.5``, not ``1/2``). Several problems found
together are printed together, in one line. Exit status: 2 for invalid input, 3 for numerical
trouble (a valid run that left the float64 range; the message says the step, the quantity and what
to try).
"""
from __future__ import annotations

import functools
import os
import re
import tempfile
from pathlib import Path

import click
from click.core import ParameterSource

from .group import CliError, OneLineGroup, check_tokens  # noqa: F401 - defined with the group, used by every command
from ..model.convention import Convention, FLAG_KEYS, KEYWORDS, read_file
from ..errors import (Interrupted, InvalidParameter, NumericalTrouble, OutputError, VerificationError, refer, show,
    suggest)
from ..model import make_setting
from ..model.spec import API_NAMES, API_ONLY, BY_KEYWORD, BY_NAME, flag_args, with_implied
from .regime import merge
from .sizes import check_build
from .specs import (DATA_HELP, FAMILY_SPECS, REGIME_META, SETTING_SPECS, SIGMA_HELP,  # noqa: F401 - used by commands
                    data_option)

SETTING_OPTIONS = [click.option(flag, name, **kw) for flag, name, kw in SETTING_SPECS]
SETTING_KEYS = tuple(name for _, name, _ in SETTING_SPECS)
# verify certify reads the ranged fields (--D, --eta, ...) as text: one value, a range LO..HI (a family of regimes),
# or absent (--recheck, --family).
FAMILY_OPTIONS = [click.option(flag, name, **kw) for flag, name, kw in FAMILY_SPECS]


def setting_options(f):
    """Decorate a click command with every option that defines a regime."""
    for opt in reversed(SETTING_OPTIONS):
        f = opt(f)
    return f


# ----- the convention of a whole run (verify all, check, probe): verify.model.convention ----------------

def _convention_specs() -> list:
    """(flag, keyword, click keywords) of every convention option (verify.model.convention.KEYWORDS): the regime
    options' own definitions, with no default (a flag left out follows the reference, or the regime's own)."""
    specs = {flag: (name, kw) for flag, name, kw in SETTING_SPECS}
    specs["--eta-kq-ratio"] = ("eta_kq_ratio", {"help": "eta_KQ as a multiple of each regime's eta (read exactly)"})
    out = []
    for flag in KEYWORDS.values():
        name, kw = specs[flag]
        kw = {k: v for k, v in kw.items() if k not in ("default", "show_default")}
        out.append((flag, name, kw if kw.get("is_flag") else kw | {"default": None}))
    return out


CONVENTION_SPECS = _convention_specs()


def convention_options(f):
    """Decorate a command with every convention flag and ``--convention FILE`` (one definition: the regime
    options'); the command reads them with :func:`convention_from_options`."""
    f = click.option("--convention", "convention_file", default=None, metavar="FILE",
                     help="the run's convention as a TOML or JSON file whose keys are the convention flags' names "
                          'without their dashes, e.g. loss = "mean", law-var = "1/4" (docs/commands.md)')(f)
    for flag, name, kw in reversed(CONVENTION_SPECS):
        f = click.option(flag, name, **kw)(f)
    return f


def convention_from_options(kw: dict):
    """Pop the convention flags and ``--convention FILE`` out of ``kw``: the Convention they set, or None when
    none is given (the reference). A key given both in the file and as a flag is an error."""
    given = {name: kw.pop(name) for _, name, _ in CONVENTION_SPECS if name in kw}
    given = {k: v for k, v in given.items() if v is not None and v is not False}
    path = kw.pop("convention_file", None)
    if path is not None:
        table = read_file(path)
        for key in table:
            if key not in FLAG_KEYS:
                near = key.replace("_", "-")
                raise InvalidParameter("convention", str(path), f'has the unknown key "{key}": the keys are the '
                                       f"convention flags' names without their dashes ({', '.join(FLAG_KEYS)})"
                                       + (f" (did you mean {near}?)" if near in FLAG_KEYS else suggest(key, FLAG_KEYS)))
            name = _param_name(FLAG_KEYS[key])
            if name in given:
                raise InvalidParameter("convention", str(path), f"gives {key}, which --{key} gives again on the "
                                       "command line: give it once")
            given[name] = table[key]
        ctx = click.get_current_context(silent=True)
        if ctx is not None:
            keys = {_param_name(FLAG_KEYS[k]): k for k in table}
            ctx.meta[REGIME_META] = {"path": str(path), "keys": keys, "flag": "--convention"}
    if not given:
        return None
    conv = Convention.from_options(given)
    return None if conv.is_reference else conv


def _param_name(keyword: str) -> str:
    """The click parameter of a make_setting keyword (its field's name: ``wp_trainable`` -> ``freeze_wp``)."""
    return BY_KEYWORD[keyword].name if keyword in BY_KEYWORD else keyword


def family_setting_options(f):
    """The regime options with the ranged fields read as text (a value, a range LO..HI, or absent), for ``verify
    certify``."""
    for opt in reversed(FAMILY_OPTIONS):
        f = opt(f)
    return f


regime_option = click.option(
    "--regime", "regime_file", default=None, metavar="FILE",
    help="the regime as a JSON file whose keys are these flags' names without their dashes, e.g. "
         '{"D": 8, "K": 2, "preset": "cnn", "eta": "1/4", "vstar-norm": "1"} (docs/commands.md)')


def make_args(options: dict) -> dict:
    """make_setting's keywords from the regime options (flag names with '_').

    ``--p-structure`` left out means what ``--p-kind`` implies: general for sinusoidal encodings (they
    are not orthogonal), orthogonal otherwise; an explicit ``--p-structure orthogonal`` with
    ``--p-kind sinusoidal`` is an error naming both.
    """
    args = with_implied(flag_args(options))
    if args.get("p_structure") is None:            # not implied: make_setting's default
        args["p_structure"] = BY_NAME["p_structure"].default
    return args


def setting_args(kw: dict, steps: str = "refused") -> tuple[dict, int | None]:
    """Pop the regime options (and ``--regime FILE``, verify.cli.regime) out of ``kw``: (make_setting's keywords,
    the regime file's steps or None). ``steps``: whether the file may give steps ("optional", "refused")."""
    regime_file = kw.pop("regime_file", None)
    n = merge(kw, regime_file, steps) if regime_file is not None else None
    if kw.get("D") is None:
        raise CliError(f"Missing option '{BY_NAME['D'].flag}' (or \"{BY_NAME['D'].key}\" in a --regime file)")
    return make_args({k: kw.pop(k) for k in SETTING_KEYS if k in kw}), n


def setting_kwargs(kw: dict) -> dict:
    """Pop the regime options out of ``kw``: the make_setting keywords they spell, D possibly absent (``verify
    certify --family``); no regime file is read here."""
    return make_args({k: kw.pop(k) for k in SETTING_KEYS if k in kw})


def command_name() -> str:
    """The running command as the user typed it (``verify run``)."""
    ctx = click.get_current_context(silent=True)
    return f"verify {ctx.command.name}" if ctx is not None else "verify"


def setting_from_options(kw: dict, *, yes: bool = False, quiet: bool = False):
    """Pop the regime options out of ``kw`` (:func:`setting_args`) and build the validated Setting; a large V*
    is estimated first (verify.cli.sizes; ``yes`` lets one estimated above an hour be built)."""
    args, _ = setting_args(kw)
    check_build(args, yes=yes, quiet=quiet, command=command_name())
    return make_setting(**args)


# ----- errors: from API names to the flags the user typed ---------------------------------------

# API parameter name (or the root of a name such as "supports[0] entry") -> click parameter name,
# where they differ. Names not listed are looked up as they are (D, eta_kq, sigma, steps, ...).
# The setting's own (eta_v, wp_trainable; the keywords with no flag) come from the field table (verify.model.spec);
# the others are the commands' own options.
PARAM_OF = API_NAMES | dict.fromkeys(API_ONLY) | {"P": None} | {
            "arb": "arb_bits", "claim": "claims", "ID": "ids",
            "regime": "regime_file", "member": "query", "convention": "convention_file",
            "REPORT_A": "report_a", "REPORT_B": "report_b",
            "NAME": "name", "probe": "name", "from": "src", "atlas": "atlas_path"}


def _param(ctx: click.Context | None, name: str):
    """(click parameter, whether ``name`` is a sub-part such as "vstar entry") for an API name, or (None, False)."""
    if ctx is None:
        return None, False
    if (name or "").startswith("-"):          # already a flag (check_writable_dir)
        return next((p for p in ctx.command.params if name in getattr(p, "opts", ())), None), False
    root = re.match(r"[A-Za-z_][A-Za-z0-9_]*", name or "")
    root = root.group(0) if root else name
    pname = PARAM_OF.get(root, root)
    for p in ctx.command.params:
        if pname is not None and p.name == pname:
            return p, name != root
    return None, False


def _flag(p: click.Parameter) -> str:
    if isinstance(p, click.Argument):
        return (p.metavar or p.human_readable_name).strip("[].")
    return max(p.opts, key=len)


def _given(ctx: click.Context, p: click.Parameter) -> bool:
    return ctx.get_parameter_source(p.name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def _typed(ctx: click.Context, p: click.Parameter, value=None) -> str:
    """The parameter as the user typed it (``--eta 0.5``), or its default (``--init zero (the default)``)."""
    v = ctx.params.get(p.name)
    if v is None and not isinstance(p, click.Argument):
        return f"no {_flag(p)}"
    if getattr(p, "is_flag", False):
        return _flag(p) if v else f"no {_flag(p)}"
    if isinstance(v, (tuple, list)):          # multiple / nargs=-1: the offending one
        v = value if value is not None and str(value) in map(str, v) else " ".join(map(str, v))
    if isinstance(p, click.Argument):
        return f"{_flag(p)} {v}" if v not in (None, "") else f"{_flag(p)} (not given)"
    shown = f"{_flag(p)} {_short(str(v))}"
    return shown if _given(ctx, p) else f"{shown} (the default)"


def _short(text: str, n: int = 200) -> str:
    """A typed value as an error echoes it: whole up to ``n`` characters, else its start and end and its length
    (a 6,000-character path is not repeated in full)."""
    return text if len(text) <= n else f"{text[:n - 40]}...{text[-24:]} ({len(text):,} characters)"


def _reference(ctx):
    """Render ```name=value``` references of a message as flags (``--p-structure general``)."""
    keys = ctx.meta.get(REGIME_META, {}).get("keys", {}) if ctx is not None else {}

    def label(name, value):
        p, _ = _param(ctx, name)
        if p is None:
            return name if value is None else f"{name}={value}"
        if p.name in keys:                    # given in the regime file: its key there, not the flag
            return keys[p.name] if value is None else f"{keys[p.name]} = {value}"
        if getattr(p, "is_flag", False) and value in ("False", "false") and p.secondary_opts:
            return p.secondary_opts[0]
        if getattr(p, "is_flag", False) or value is None:
            return _flag(p)
        return f"{_flag(p)} {value}"
    return label


def cli_message(exc, ctx: click.Context | None = None) -> str:
    """One line for an :class:`InvalidParameter` (every problem it carries), in terms of the flags."""
    parts = []
    regime = ctx.meta.get(REGIME_META, {}) if ctx is not None else {}
    for prob in exc.problems:
        p, sub = _param(ctx, prob.name)
        root = re.match(r"[A-Za-z_][A-Za-z0-9_]*", prob.name or "")
        key = regime.get("keys", {}).get(PARAM_OF.get(root.group(0), root.group(0)) if root else None)
        if key is not None:               # the value came from the regime file: name its key there
            head = f"{key} = {show(prob.value)} (in {regime.get('flag', '--regime')} {regime['path']})"
        elif p is None:
            head = f"{prob.name} = {show(prob.value)}"
        elif ctx.params.get(p.name) is None and prob.value is not None:     # not given: the value used
            head = f"{_flag(p)} (not given: {show(prob.value)})"
        else:
            head = _typed(ctx, p, prob.value) + (f" ({prob.name} {show(prob.value)})" if sub else "")
        others = []
        for name in prob.also:
            q, _ = _param(ctx, name)
            if regime.get("keys", {}).get(PARAM_OF.get(name, name)) is not None:
                others.append(f"{regime['keys'][PARAM_OF.get(name, name)]} in the regime file")
            elif q is not None and q is not p and ctx.params.get(q.name) is not None and \
                    (_given(ctx, q) or not getattr(q, "is_flag", False)):
                others.append(_typed(ctx, q))
        msg = f"invalid {head}" + (f" with {', '.join(others)}" if others else "") + \
            f": {refer(prob.valid, _reference(ctx))}"
        parts.append(msg + (f" ({refer(prob.hint, _reference(ctx))})" if prob.hint else ""))
    return ("; ".join(parts) if len(parts) == 1 else f"{len(parts)} problems: " + "; ".join(parts))


# Exit statuses besides 0 and click's own 1 (a failed certificate) and 2 (invalid input); 5: a run that did not
# finish every part (verify all: stderr names them and says how to resume).
EXIT_NUMERICAL, EXIT_OUTPUT, EXIT_INCOMPLETE, EXIT_INTERRUPTED = 3, 4, 5, 130


def handle_errors(f):
    """Turn the toolkit's own errors into one line naming the flags: exit status 2 for invalid input, 3 for
    numerical trouble, 4 when an output could not be written (the line says where the work was kept), 130
    after Ctrl-C (the line says what was saved)."""

    @functools.wraps(f)
    def wrapper(*a, **k):
        try:
            return f(*a, **k)
        except InvalidParameter as exc:
            raise CliError(cli_message(exc, click.get_current_context(silent=True))) from None
        except VerificationError as exc:
            text = refer(getattr(exc, "template", str(exc)), _reference(click.get_current_context(silent=True)))
            code = EXIT_NUMERICAL if isinstance(exc, NumericalTrouble) else EXIT_OUTPUT if isinstance(
                exc, OutputError) else 2
            raise CliError(text, exit_code=code) from None
        except KeyboardInterrupt as exc:
            text = exc.message if isinstance(exc, Interrupted) else "interrupted"
            raise CliError(text, exit_code=EXIT_INTERRUPTED) from None
    return wrapper


# ----- checks made before any work starts -------------------------------------------------------

def check_path_length(flag: str, path) -> None:
    """Refuse a path the system cannot hold (longer than PATH_MAX bytes, or a name longer than NAME_MAX; the
    atomic writes add up to 14 characters to a name: verify.run.atomic), naming ``flag``, before any work."""
    full = os.fsencode(os.path.abspath(os.path.expanduser(str(path))))
    path_max, name_max = os.pathconf("/", "PC_PATH_MAX"), os.pathconf("/", "PC_NAME_MAX")
    shown = _short(str(path))
    if len(full) + 14 >= path_max:
        raise InvalidParameter(flag, shown, f"is {len(full):,} bytes long as an absolute path: paths here hold at "
                               f"most {path_max - 15:,}")
    longest = max(full.split(b"/"), key=len)
    if len(longest) + 14 > name_max:
        raise InvalidParameter(flag, shown, f"has a name of {len(longest):,} bytes: names here hold at most "
                               f"{name_max - 14:,} (with room for a temporary sibling's)")


def check_writable_dir(flag: str, path) -> Path:
    """``path`` as a Path if it is a writable folder or can be created as one; else InvalidParameter
    naming ``flag``. Nothing is left on disk: the nearest existing ancestor is probed with a
    temporary file that is removed at once (so read-only file systems are caught too)."""
    p = Path(os.path.expanduser(str(path)))
    check_path_length(flag, path)
    if p.exists() and not p.is_dir():
        raise InvalidParameter(flag, str(path), "must be a folder, not an existing file")
    anc = p
    while not anc.exists():
        anc = anc.parent
    if not anc.is_dir():
        raise InvalidParameter(flag, str(path), f"must be a folder that can be created ({anc} is a file)")
    try:
        with tempfile.TemporaryFile(dir=anc):
            pass
    except OSError as exc:
        what = "written" if anc == p else f"created ({anc} is not writable)"
        raise InvalidParameter(flag, str(path), f"must be a folder that can be {what}: {exc.strerror}") from None
    return p
