"""Files a user hands the toolkit (a regime, a convention, V* and supports tables, certificates, saved results):
read with a size limit, parsed with one clear error naming the option.

Every reader of such a file goes through :func:`read_text` (and :func:`read_json` for JSON), so a symlink to
/dev/zero, a 100 MB regime file or JSON nested 100,000 deep fails at once with one line that names the option, the
file and the limit, and never echoes the file's content. A JSON object that gives a key twice is refused (Python's
reader would keep the later value silently).
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from .errors import InvalidParameter

MB = 2**20
# The largest file each kind of input may be. Option files hold a handful of keys; the bench's family certificate
# (150 cells) is 34.5 MB, so certificates and saved results get room for families ~30 times larger.
LIMITS = {"options": 1 * MB, "data": 1024 * MB}


def _size(n: int) -> str:
    return f"{n / MB:.1f} MB" if n >= MB / 10 else f"{n:,} bytes"


def check_input(path, name: str, limit: int = LIMITS["data"], what: str = "file") -> Path:
    """``path`` as a Path if it is a regular file of at most ``limit`` bytes, else InvalidParameter naming
    ``name``: a device (/dev/zero), a FIFO or a folder is refused before anything is read."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        raise InvalidParameter(name, str(path), f"must be an existing {what} ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a folder" if stat.S_ISDIR(st.st_mode) else "a character device" if stat.S_ISCHR(st.st_mode) else
                "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else
                "a block device" if stat.S_ISBLK(st.st_mode) else "not a regular file")
        raise InvalidParameter(name, str(path), f"must be a regular {what}, not {kind}")
    if st.st_size > limit:
        raise InvalidParameter(name, str(path), f"is {_size(st.st_size)}, more than the {_size(limit)} a {what} may "
                               "hold here")
    return p


def read_text(path, name: str, limit: int = LIMITS["data"], what: str = "file") -> str:
    """The UTF-8 text of ``path``, at most ``limit`` bytes (a file that grows while it is read, or a /proc file
    whose size says 0, is still cut at the limit), or InvalidParameter naming ``name``."""
    p = check_input(path, name, limit, what)
    try:
        with open(p, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise InvalidParameter(name, str(path), f"must be a readable {what} ({exc.strerror})") from None
    if len(data) > limit:
        raise InvalidParameter(name, str(path), f"holds more than the {_size(limit)} a {what} may hold here")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameter(name, str(path), f"must be UTF-8 text (byte {exc.start} is not)") from None


def _unique(name: str, path):
    """An ``object_pairs_hook`` that refuses a key given twice in one JSON object."""
    def pairs(items):
        out = {}
        for k, v in items:
            if k in out:
                raise InvalidParameter(name, str(path), f'gives the key "{k[:60]}" twice in one object (JSON readers '
                                       "keep one of them silently): give it once")
            out[k] = v
        return out
    return pairs


def parse_json(text: str, name: str, path, what: str = "JSON file", **kw):
    """``text`` parsed as JSON (``kw`` as for json.loads: parse_float, ...), keys unique in every object, or
    InvalidParameter naming ``name``: the parser's message without the text, or the nesting that is too deep."""
    try:
        return json.loads(text, object_pairs_hook=_unique(name, path), **kw)
    except json.JSONDecodeError as exc:
        raise InvalidParameter(name, str(path), f"must be a valid {what} ({exc.msg} at line {exc.lineno} column "
                               f"{exc.colno})") from None
    except RecursionError:
        raise InvalidParameter(name, str(path), f"must be a valid {what}: its lists or objects nest more deeply "
                               "than a JSON reader follows (about 1,000 levels)") from None


def read_json(path, name: str, limit: int = LIMITS["data"], what: str = "JSON file", **kw):
    """The JSON value of ``path`` read with :func:`read_text` and parsed with :func:`parse_json`."""
    return parse_json(read_text(path, name, limit, what), name, path, what, **kw)


__all__ = ["LIMITS", "check_input", "read_text", "read_json", "parse_json"]
