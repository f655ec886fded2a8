"""Work files of a fan-out (plans and part outcomes) in a format that holds data only, never code.

A fan-out's plan and its parts' outcomes (``parsers.ingest.fanout``) cross between workers through a
shared storage (a bucket). Whoever can write there must not be able to run code in the workers, so
these files are not pickles: ``dumps`` writes

- a header line ``casebook-work <VERSION> zstd\\n`` (ASCII), then
- one Zstandard frame holding: the length of a JSON document (8 bytes, little endian), the JSON
  document (UTF-8), then each NumPy array it refers to as ``.npy`` bytes (NumPy's format, version
  1.0-3.0), each after its length (8 bytes, little endian).

The JSON document is the value with tags for what JSON has no type for (one-key objects whose key
starts with ``$``): tuples, dicts with any keys, ``Counter``, bytes (base64), non-finite floats,
``pd.Timestamp``/``NaT``/``Timedelta``, NumPy scalars, the enums and dataclasses this package
exchanges (``_registry``: a closed list, looked up by name, built with their fields as keyword
arguments), ``ParseError``/``RuntimeError`` and pandas ``DataFrame`` s. A frame keeps its columns as
``.npy`` arrays (NumPy dtypes; time zones, categoricals' codes and masked arrays' masks beside them)
or JSON lists (strings, objects); ``loads`` reads arrays with ``allow_pickle=False``.

``loads`` checks everything it reads (header, version, lengths, tags, class names, fields) and
raises ``WorkFileError`` naming the file for anything else: a pickle, a truncated or tampered file.
Nothing in a work file is ever executed or imported.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import functools
import io
import json
import math
import struct
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import zstandard
from pandas.core.arrays.masked import BaseMaskedArray

from parsers.base import Clock, ClockHints, ParsedSource, ParseError, ParseWarning, TsMarker
from parsers.layout import Placement

#: Format version in the header; bumped when the encoding changes (older files are refused, by name).
VERSION = 1
MAGIC = b"casebook-work "
HEADER = MAGIC + f"{VERSION} zstd\n".encode()
#: Zstandard level of work files: they are written once and read once or twice, soon after.
LEVEL = 3
#: Largest work file accepted once decompressed (bytes): a part is ``PART_BYTES`` (64 MiB) of text,
#: its parsed frames a fraction of that; a plan lists pieces. A bigger one is damage, or an attack.
MAX_BYTES = 4 << 30
_LENGTH = struct.Struct("<Q")
#: Kinds of NumPy dtypes stored as ``.npy`` (bool, integers, floats, complex, datetime64, timedelta64).
_NPY_KINDS = frozenset("biufcmM")


class WorkFileError(ValueError):
    """A work file that is not one this version wrote whole: the message names the file (``name``)."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        super().__init__(f"work file {name}: {reason}")


@functools.cache
def _registry() -> dict[str, type]:
    """The dataclasses a work file may hold, by name (imported late: fanout.py imports this module)."""
    from parsers.ingest.bundle import NotUsed
    from parsers.ingest.fanout import Part, PieceRef, Plan
    from parsers.ingest.pieces import Done

    classes = (
        Plan,
        Part,
        PieceRef,
        Done,
        ParsedSource,
        ParseWarning,
        ClockHints,
        Placement,
        TsMarker,
        NotUsed,
    )
    return {cls.__name__: cls for cls in classes}


#: Enums a work file may name.
ENUMS: dict[str, type[enum.Enum]] = {"Clock": Clock}


def dumps(value: Any) -> bytes:
    """``value`` (a ``Plan``, a list of outcomes ...) as work-file bytes. Raises ``TypeError`` for a
    value of a type the format does not hold (a programming error, never the upload's doing)."""
    arrays: list[np.ndarray] = []
    doc = json.dumps(_enc(value, arrays), separators=(",", ":"), allow_nan=False).encode()
    body = io.BytesIO()
    body.write(_LENGTH.pack(len(doc)))
    body.write(doc)
    for array in arrays:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, array, allow_pickle=False)
        body.write(_LENGTH.pack(buf.tell()))
        body.write(buf.getvalue())
    return HEADER + zstandard.ZstdCompressor(level=LEVEL).compress(body.getvalue())


def loads(data: bytes, *, name: str) -> Any:
    """The value ``dumps`` wrote, from the bytes of the work file ``name`` (named in errors).

    Raises ``WorkFileError`` when the file is not a whole work file of this version: another format
    (a pickle), truncated, tampered with, or naming a type outside ``_registry``/``ENUMS``.
    """
    if not data.startswith(MAGIC):
        raise WorkFileError(
            name, "not a Casebook work file (it does not start with 'casebook-work'); refused"
        )
    if not data.startswith(HEADER):
        head = data[: data.find(b"\n", 0, 40) + 1 or 40]
        raise WorkFileError(name, f"header {head!r} is not {HEADER!r} (another version); refused")
    body = _decompress(data[len(HEADER) :], name)
    try:
        view = memoryview(body)
        (size,), at = _length(view, 0), _LENGTH.size
        doc = json.loads(bytes(_take(view, at, size)))
        at += size
        arrays: list[np.ndarray] = []
        while at < len(view):
            (size,) = _length(view, at)
            at += _LENGTH.size
            arrays.append(np.lib.format.read_array(io.BytesIO(_take(view, at, size)), allow_pickle=False))
            at += size
        return _Decoder(arrays, _registry()).dec(doc)
    except WorkFileError:
        raise
    except (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        AttributeError,
        OverflowError,
        RecursionError,
    ) as exc:
        raise WorkFileError(name, f"damaged or truncated ({type(exc).__name__}: {exc})") from None


def _decompress(data: bytes, name: str) -> bytes:
    """The one Zstandard frame of a work file, whole: raises ``WorkFileError`` when it is cut short,
    followed by other bytes, or larger than ``MAX_BYTES``."""
    out = bytearray()
    step = 1 << 16
    try:
        frame = zstandard.ZstdDecompressor().decompressobj()
        for at in range(0, len(data), step):
            out += frame.decompress(data[at : at + step])
            if len(out) > MAX_BYTES:
                raise WorkFileError(name, f"larger than {MAX_BYTES:,} bytes once decompressed")
    except zstandard.ZstdError as exc:
        raise WorkFileError(name, f"damaged compressed data ({exc})") from None
    if not frame.eof:
        raise WorkFileError(name, "truncated: its compressed data ends before the end of its frame")
    if frame.unused_data:
        raise WorkFileError(name, f"{len(frame.unused_data):,} unexpected bytes after its data")
    return bytes(out)


def _length(view: memoryview, at: int) -> tuple[int]:
    return _LENGTH.unpack(_take(view, at, _LENGTH.size))


def _take(view: memoryview, at: int, size: int) -> memoryview:
    if at + size > len(view):
        raise ValueError(f"{size:,} bytes expected at offset {at:,}, the file ends at {len(view):,}")
    return view[at : at + size]


# ------------------------------------------------------------------------------------- encoding


def _enc(v: Any, arrays: list[np.ndarray]) -> Any:  # noqa: PLR0911, PLR0912 - one branch per type
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, enum.Enum):
        name = type(v).__name__
        if ENUMS.get(name) is not type(v):
            raise TypeError(f"enum {name} is not allowed in a work file")
        return {"$enum": [name, v.value]}
    if isinstance(v, int) and not isinstance(v, np.integer):
        return int(v)
    if isinstance(v, float) and not isinstance(v, np.floating):
        return float(v) if math.isfinite(v) else {"$f": repr(v)}
    if isinstance(v, np.generic):
        return {"$np": [v.dtype.str, _enc(v.item(), arrays)]}
    if isinstance(v, Counter):
        return {"$counter": [[_enc(k, arrays), _enc(x, arrays)] for k, x in v.items()]}
    if isinstance(v, dict):
        return {"$d": [[_enc(k, arrays), _enc(x, arrays)] for k, x in v.items()]}
    if isinstance(v, list):
        return [_enc(x, arrays) for x in v]
    if isinstance(v, tuple):
        return {"$t": [_enc(x, arrays) for x in v]}
    if isinstance(v, (bytes, bytearray)):
        return {"$b": base64.b64encode(v).decode()}
    if v is pd.NaT:
        return {"$nat": None}
    if v is pd.NA:
        return {"$na": None}
    if isinstance(v, pd.Timestamp):
        return {"$ts": [int(v.asm8.view("i8")), v.unit, None if v.tz is None else str(v.tz)]}
    if isinstance(v, pd.Timedelta):
        return {"$td": [int(v.asm8.view("i8")), v.unit]}
    if isinstance(v, pd.DataFrame):
        return {"$df": _enc_frame(v, arrays)}
    if isinstance(v, ParseError):
        return {"$exc": ["ParseError", [v.member, v.line_no, v.line, v.reason]]}
    if type(v) is RuntimeError:
        return {"$exc": ["RuntimeError", [str(v)]]}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        name = type(v).__name__
        if _registry().get(name) is not type(v):
            raise TypeError(f"{name} is not allowed in a work file")
        fields = {f.name: _enc(getattr(v, f.name), arrays) for f in dataclasses.fields(v)}
        return {"$obj": [name, fields]}
    raise TypeError(f"a work file cannot hold a {type(v).__module__}.{type(v).__qualname__}")


def _array(values: np.ndarray, arrays: list[np.ndarray]) -> int:
    arrays.append(np.ascontiguousarray(values))
    return len(arrays) - 1


def _enc_values(values: Any, arrays: list[np.ndarray]) -> dict[str, Any]:
    """One column (or an index's values): a pandas/NumPy array of any dtype the parsers make."""
    if type(values) is pd.arrays.NumpyExtensionArray:  # not its subclasses (StringArray)
        values = values.to_numpy()
    dtype = values.dtype
    if isinstance(dtype, np.dtype):
        if dtype.kind in _NPY_KINDS:
            return {"npy": _array(np.asarray(values), arrays)}
        if dtype.kind == "O":
            return {"objects": [_enc(x, arrays) for x in np.asarray(values)]}
    elif isinstance(dtype, pd.DatetimeTZDtype):
        naive = pd.DatetimeIndex(values).tz_convert("UTC").tz_localize(None)
        return {"tz": [str(dtype.tz), _array(naive.to_numpy(), arrays)]}
    elif isinstance(dtype, pd.CategoricalDtype):
        cat = pd.Categorical(values)
        return {
            "categorical": [
                bool(dtype.ordered),
                _enc_values(pd.Index(dtype.categories).array, arrays),
                _array(cat.codes, arrays),
            ]
        }
    elif isinstance(dtype, pd.StringDtype):
        na = "NA" if dtype.na_value is pd.NA else "nan"
        strings = [None if pd.isna(x) else str(x) for x in values]
        return {"strings": [dtype.storage, na, strings]}
    elif isinstance(values, BaseMaskedArray):
        masked = values  # Int64, Int32, boolean, Float64 ...: data and mask, both NumPy arrays
        return {"masked": [dtype.name, _array(masked._data, arrays), _array(masked._mask, arrays)]}  # noqa: SLF001
    raise TypeError(f"a work file cannot hold a column of dtype {dtype}")


def _enc_frame(frame: pd.DataFrame, arrays: list[np.ndarray]) -> dict[str, Any]:
    index = frame.index
    if isinstance(index, pd.RangeIndex):
        idx: Any = {"range": [index.start, index.stop, index.step, _enc(index.name, arrays)]}
    else:
        idx = {"values": _enc_values(index.array, arrays), "name": _enc(index.name, arrays)}
    return {
        "columns": _enc_values(frame.columns.array, arrays),
        "data": [_enc_values(column.array, arrays) for _, column in frame.items()],
        "index": idx,
        "attrs": _enc(dict(frame.attrs), arrays),
    }


# ------------------------------------------------------------------------------------- decoding


class _Decoder:
    def __init__(self, arrays: list[np.ndarray], allowed: dict[str, type]) -> None:
        self.arrays = arrays
        self.allowed = allowed

    def array(self, index: Any) -> np.ndarray:
        if type(index) is not int or not 0 <= index < len(self.arrays):
            raise ValueError(f"array {index!r} is not in the file")
        return self.arrays[index]

    def dec(self, v: Any) -> Any:  # noqa: PLR0911, PLR0912 - one branch per tag
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, list):
            return [self.dec(x) for x in v]
        if not isinstance(v, dict) or len(v) != 1:
            raise ValueError(f"untagged object {str(v)[:80]!r}")
        ((tag, x),) = v.items()
        if tag == "$t":
            return tuple(self.dec(i) for i in _list(x))
        if tag == "$d":
            return {self.dec(k): self.dec(i) for k, i in _pairs(x)}
        if tag == "$counter":
            return Counter({self.dec(k): self.dec(i) for k, i in _pairs(x)})
        if tag == "$b":
            return base64.b64decode(_str(x), validate=True)
        if tag == "$f":
            if x not in ("nan", "inf", "-inf"):
                raise ValueError(f"float {x!r}")
            return float(x)
        if tag == "$np":
            dtype_str, value = _list(x, 2)
            dtype = np.dtype(_str(dtype_str))
            if dtype.kind not in _NPY_KINDS:
                raise ValueError(f"scalar dtype {dtype_str!r}")
            return dtype.type(self.dec(value))
        if tag == "$nat":
            return pd.NaT
        if tag == "$na":
            return pd.NA
        if tag == "$ts":
            value, unit, tz = _list(x, 3)
            stamp = pd.Timestamp(np.datetime64(_int(value), _unit(unit)))
            return stamp if tz is None else stamp.tz_localize("UTC").tz_convert(_str(tz))
        if tag == "$td":
            value, unit = _list(x, 2)
            return pd.Timedelta(np.timedelta64(_int(value), _unit(unit)))
        if tag == "$enum":
            name, value = _list(x, 2)
            if name not in ENUMS:
                raise ValueError(f"enum {name!r} is not allowed")
            return ENUMS[name](value)
        if tag == "$exc":
            name, args = _list(x, 2)
            if name == "ParseError":
                member, line_no, line, reason = _list(args, 4)
                return ParseError(_str(member), _int(line_no), _str(line), _str(reason))
            if name == "RuntimeError":
                (message,) = _list(args, 1)
                return RuntimeError(_str(message))
            raise ValueError(f"exception {name!r} is not allowed")
        if tag == "$obj":
            name, fields = _list(x, 2)
            cls = self.allowed.get(name) if isinstance(name, str) else None
            if cls is None or not isinstance(fields, dict):
                raise ValueError(f"type {name!r} is not allowed")
            known = {f.name for f in dataclasses.fields(cls)}
            if set(fields) - known:
                raise ValueError(f"{name} has no field(s) {sorted(set(fields) - known)}")
            return cls(**{k: self.dec(i) for k, i in fields.items()})
        if tag == "$df":
            return self.frame(x)
        raise ValueError(f"unknown tag {tag!r}")

    def values(self, spec: Any) -> Any:
        """A column's values (an array pandas takes as it is) from ``_enc_values``' description."""
        if not isinstance(spec, dict) or len(spec) != 1:
            raise ValueError(f"column {str(spec)[:80]!r}")
        ((kind, x),) = spec.items()
        if kind == "npy":
            return self.array(x)
        if kind == "objects":
            out = np.empty(len(_list(x)), dtype=object)
            out[:] = [self.dec(i) for i in x]
            return out
        if kind == "tz":
            tz, index = _list(x, 2)
            naive = self.array(index)
            if naive.dtype.kind != "M":
                raise ValueError(f"time zone column of dtype {naive.dtype}")
            return pd.DatetimeIndex(naive).tz_localize("UTC").tz_convert(_str(tz)).array
        if kind == "categorical":
            ordered, categories, codes = _list(x, 3)
            dtype = pd.CategoricalDtype(self.index(categories), ordered=bool(ordered))
            return pd.Categorical.from_codes(self.array(codes), dtype=dtype)
        if kind == "strings":
            storage, na, strings = _list(x, 3)
            if storage != "python" or na not in ("NA", "nan"):
                raise ValueError(f"string column {storage!r}/{na!r}")
            dtype = pd.StringDtype("python", na_value=pd.NA if na == "NA" else np.nan)
            return pd.array([None if s is None else _str(s) for s in _list(strings)], dtype=dtype)
        if kind == "masked":
            name, data, mask = _list(x, 3)
            dtype = pd.api.types.pandas_dtype(_str(name))
            cls = (
                dtype.construct_array_type() if isinstance(dtype, pd.api.extensions.ExtensionDtype) else None
            )
            if cls is None or not issubclass(cls, BaseMaskedArray):
                raise ValueError(f"masked column of dtype {name!r}")
            mask_array = self.array(mask)
            if mask_array.dtype != bool:
                raise ValueError("mask is not boolean")
            return cls(self.array(data), mask_array)
        raise ValueError(f"column kind {kind!r}")

    def index(self, spec: Any, name: Any = None) -> pd.Index:
        """An index of the values ``spec`` describes, of their very dtype (no inference)."""
        values = self.values(spec)
        return pd.Index(values, dtype=values.dtype, name=name)

    def frame(self, x: Any) -> pd.DataFrame:
        if not isinstance(x, dict) or set(x) != {"columns", "data", "index", "attrs"}:
            raise ValueError("frame without its columns, data, index and attrs")
        spec = x["index"]
        if isinstance(spec, dict) and set(spec) == {"range"}:
            start, stop, step, name = _list(spec["range"], 4)
            index: pd.Index = pd.RangeIndex(_int(start), _int(stop), _int(step), name=self.dec(name))
        elif isinstance(spec, dict) and set(spec) == {"values", "name"}:
            index = self.index(spec["values"], name=self.dec(spec["name"]))
        else:
            raise ValueError("frame index")
        columns = self.index(x["columns"])
        data = [self.values(c) for c in _list(x["data"])]
        if len(data) != len(columns) or any(len(d) != len(index) for d in data):
            raise ValueError("frame columns of different lengths")
        frame = pd.DataFrame(
            {i: pd.Series(d, index=index, dtype=d.dtype, copy=False) for i, d in enumerate(data)}, index=index
        )
        frame.columns = columns
        attrs = self.dec(x["attrs"])
        if not isinstance(attrs, dict):
            raise ValueError("frame attrs")
        frame.attrs.update(attrs)
        return frame


def _list(x: Any, n: int | None = None) -> list:
    if not isinstance(x, list) or (n is not None and len(x) != n):
        raise ValueError(f"expected a list of {n or 'any number of'} items, got {str(x)[:80]!r}")
    return x


def _pairs(x: Any) -> list:
    return [_list(p, 2) for p in _list(x)]


def _str(x: Any) -> str:
    if not isinstance(x, str):
        raise ValueError(f"expected a string, got {str(x)[:80]!r}")
    return x


def _unit(x: Any) -> str:
    if x not in ("s", "ms", "us", "ns"):
        raise ValueError(f"time unit {str(x)[:20]!r}")
    return x


def _int(x: Any) -> int:
    if type(x) is not int:
        raise ValueError(f"expected an integer, got {str(x)[:80]!r}")
    return x
