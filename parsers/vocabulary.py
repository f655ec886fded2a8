"""The words a format prints of its own: what a redacted share link may serve of a raw line.

A redacted link rebuilds every raw line from tokens proven safe (web/sharing/redaction/allowlist.py):
numbers, units and punctuation; the pseudonyms the link assigns; statement fingerprints; and the
words of the line's format, which are

- the words of the parser module's own string constants and of the ``parsers`` modules it imports
  (its labels, column names, markers: what it looks for is what the tool prints), docstrings
  excluded, and
- the word lists its ``SENSITIVE`` declaration names (``Sensitive.words``): ``parsers/words/linux.txt``
  and ``parsers/words/mysql.txt``, written by ``scripts/words.py`` from the real tools (the kernel's
  /proc names, procps' and sysstat's texts, a MariaDB server's variables, status, tables, columns,
  keywords, thread states and messages), never from a capture.

A word is a run of letters, digits and ``_`` (``Innodb_buffer_pool_reads`` is one word, so is a
customer's ``acme_billing``), compared lower-cased. Any other word, whatever field it stands in, is
not served: a value in a shape no parser foresaw is never shown.

Plain Python: no Django.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

#: A word of a line: letters, digits and ``_``.
TOKEN = re.compile(r"[A-Za-z0-9_]+")
#: Numbers with their units and the shapes of times and identifiers made of digits: ``42``,
#: ``0x7f3a``, ``12.5`` (two tokens), ``512K``, ``1.2G``, ``30ms``, ``3rd``, ``1e``, ``2026_04_21``,
#: ISO 8601's ``21T16`` and ``41Z``, a short option's number (``-P3306``: ``P3306``).
NUMBER = re.compile(
    r"(?i)(?:0x[0-9a-f]+|[a-z]\d+|\d+(?:_\d+)*(?:t\d+)?"
    r"(?:[kmgtpe]i?b?|b|kb|s|ms|us|ns|sec|secs|min|h|d|x|z|st|nd|rd|th|e|m|k|g|t|p|w|hz|khz|mhz|ghz|mbps)?"
    r"(?:\d+)?)\Z"
)
#: Hexadecimal digits with at least one digit (a MAC address's or an IPv6 address's groups, a
#: pointer, an InnoDB index id): a number, as ``0x7f3a``.
HEX = re.compile(r"(?i)(?=[a-f]*\d)[0-9a-f]+\Z")
#: A distribution's tag in a kernel or package version: ``el9``, ``el8_10``, ``fc39``, ``deb12u1``,
#: ``amzn2``, ``ubuntu1``.
RELEASE = re.compile(r"(?i)(?:el\d+(?:_\d+)?|fc\d+|deb\d+u?\d*|amzn\d+|ubuntu\d*|ubuntu\d+\.\d+)\Z")
#: Names the kernel gives devices, CPUs and NUMA nodes (Documentation/admin-guide/devices.txt):
#: ``sda1``, ``vdb``, ``nvme0n1p2``, ``nvme0q3``, ``dm-0`` (``dm`` and ``0``), ``loop7``, ``zram0``,
#: ``ttyS0``, ``node1``, ``cpu12``, ``eth0``.
DEVICE = re.compile(
    r"(?i)(?:(?:sd|vd|xvd|hd)[a-z]{1,3}\d*|nvme\d+(?:n\d+(?:p\d+)?|q\d+)?|mmcblk\d+(?:p\d+)?"
    r"|(?:loop|zram|ram|nbd|rbd|sr|md|dm|ttys|tty|node|cpu|eth|bond|virtio|em|eno|ens|enp\d+s)\d+)\Z"
)
#: Words every format may print: units, times, the words of a header banner.
BASE = frozenset(
    """
    am pm utc cest cet gmt est edt pst pdt jan feb mar apr may jun jul aug sep oct nov dec mon tue wed thu fri
    sat sun kb mb gb tb kib mib gib tib bytes sec secs ms us ns null none true false yes no on off linux
    x86_64 aarch64 cpu cpus all ts zzz pts r s d z t i w x k l n
    """.split()
)
WORDS_DIR = Path(__file__).resolve().parent / "words"
#: The word lists a ``Sensitive`` declaration may name.
WORD_LISTS = ("linux", "mysql")


def tokens(text: str) -> list[str]:
    """The words of ``text``.

    >>> tokens("Innodb_rows_read: 42 (acme.orders)")
    ['Innodb_rows_read', '42', 'acme', 'orders']
    """
    return TOKEN.findall(text)


def is_device(token: str) -> bool:
    """Whether ``token`` is a name the kernel gives a device, a CPU or a NUMA node, or a
    distribution's release tag.

    >>> [is_device(t) for t in ("sda1", "nvme0n1p2", "loop7", "ttyS0", "node1", "sdcard_backup")]
    [True, True, True, True, True, False]
    """
    return DEVICE.match(token) is not None or RELEASE.match(token) is not None


def is_number(token: str) -> bool:
    """Whether ``token`` is a number, with its unit, or a time's or a counter's digits.

    >>> [is_number(t) for t in ("42", "0x7f3a", "512K", "30ms", "21T16", "2026_04_21", "fe80", "P3306")]
    [True, True, True, True, True, True, True, True]
    >>> [is_number(t) for t in ("cafe", "gh1", "acme1", "t1x")]
    [False, False, False, False]
    """
    return NUMBER.match(token) is not None or HEX.match(token) is not None


@functools.cache
def word_list(name: str) -> frozenset[str]:
    """The words of ``parsers/words/<name>.txt`` (one lower-cased word a line).

    Raises ``ValueError`` for a name that is not one of ``WORD_LISTS``."""
    if name not in WORD_LISTS:
        raise ValueError(f"{name!r}: a word list is one of {WORD_LISTS}")
    return frozenset((WORDS_DIR / f"{name}.txt").read_text().split())


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


@functools.cache
def source_words(path: Path) -> frozenset[str]:
    """The lower-cased words of the string constants of one Python file, docstrings excluded."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            out.update(t.lower() for t in TOKEN.findall(node.value) if not t[:1].isdigit())
    return frozenset(out)


def _imported(module: ModuleType, package: str) -> Iterable[ModuleType]:
    """``module`` and the modules of ``package`` it imports, transitively."""
    seen: dict[str, ModuleType] = {}
    todo = [module]
    while todo:
        mod = todo.pop()
        if mod.__name__ in seen or not getattr(mod, "__file__", None):
            continue
        seen[mod.__name__] = mod
        tree = ast.parse(Path(mod.__file__).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(package):
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith(package)]
            for name in names:
                found = sys.modules.get(name)
                if found is None:
                    try:
                        found = importlib.import_module(name)
                    except ImportError:
                        continue
                if isinstance(found, ModuleType):
                    todo.append(found)
    return seen.values()


@functools.cache
def own_words(module_name: str) -> frozenset[str]:
    """The words of the string constants of parser module ``module_name`` (``parsers.vmstat``) and
    of the ``parsers`` modules it imports."""
    module = importlib.import_module(module_name)
    out: set[str] = set()
    for mod in _imported(module, "parsers"):
        out |= source_words(Path(mod.__file__))
    return frozenset(out)


def format_words(module: ModuleType) -> frozenset[str]:
    """Every word a raw line of the format that ``module`` parses may show on a redacted link: its
    own words, the word lists its ``SENSITIVE`` names, and ``BASE``."""
    lists = getattr(getattr(module, "SENSITIVE", None), "words", ())
    return _format_words(module.__name__, tuple(lists))


@functools.cache
def _format_words(module_name: str, lists: tuple[str, ...]) -> frozenset[str]:
    return own_words(module_name).union(BASE, *(word_list(n) for n in lists))
