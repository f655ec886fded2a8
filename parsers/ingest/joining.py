"""The pieces of a member parsed apart, joined into one source (``join``), holding the member once.

A member cut in pieces (parsers/ingest/pieces.py) comes back as one ``ParsedSource`` per piece, each
with its frames; the worker joins them once the member's last piece is in. The joined frames are
the member's rows in order, column by column, each part's column released as soon as it is joined,
so that what the worker holds while joining is the member once, plus one part and one column (a
300 MB ``vmstat -t`` member: 611 MiB of frames, 692 MiB at most while joined; 1,044 MiB when the
parts' two-dimensional blocks lived on until their last column was joined).

Plain Python and pandas: parse processes import it without Django.
"""

from __future__ import annotations

import dataclasses
import itertools

import pandas as pd
from pandas.api.types import union_categoricals

from parsers.base import ParsedSource
from parsers.ingest.malloc import release_memory


def join(pieces: list[ParsedSource]) -> ParsedSource:
    """The pieces of a member as one source: frames one under the other, warnings in order. The
    pieces give their frames up (each column is released as soon as it is joined)."""
    if len(pieces) == 1:
        return pieces[0]
    first = pieces[0]
    names = list(dict.fromkeys(name for p in pieces for name in p.frames))
    frames = {}
    for name in names:
        parts = [p.frames.pop(name) for p in pieces if name in p.frames]
        empty = parts[0]
        parts = [f for f in parts if len(f)]
        frames[name] = _stacked(parts) if parts else empty
        del empty
    warnings = list(itertools.chain.from_iterable(p.warnings for p in pieces))
    return dataclasses.replace(first, frames=frames, warnings=warnings)


def _stacked(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """``parts`` one under the other, column by column, dropping each column from the parts (in
    place: the caller hands the list over) once it is joined: a one-hour member's frame is never
    held twice. A category column whose categories
    differ between parts is joined to the sorted categories of its values (a few IRQ names,
    states, users repeated millions of times)."""
    columns = list(parts[0].columns)
    if any(list(p.columns) != columns for p in parts):
        joined = pd.concat(parts, ignore_index=True)  # different columns: aligned, missing as NaN
        for column, dtype in parts[0].dtypes.items():
            if isinstance(dtype, pd.CategoricalDtype) and not isinstance(
                joined[column].dtype, pd.CategoricalDtype
            ):
                joined[column] = joined[column].astype("category")
        return joined
    held = _by_column(parts, columns)
    out: dict[str, object] = {}
    for column in columns:
        values = [p.pop(column) for p in held]  # the part's own copy: freed once joined
        if all(isinstance(v.dtype, pd.CategoricalDtype) for v in values) and any(
            not v.cat.categories.equals(values[0].cat.categories) for v in values
        ):
            kinds = {v.cat.categories.dtype for v in values}
            if len(kinds) > 1:  # a damaged piece read numbers where the others read text, or the reverse
                values = [v.astype(object) for v in values]
                out[column] = pd.concat(values, ignore_index=True).astype("category")
            else:
                out[column] = pd.Series(union_categoricals([v.array for v in values], sort_categories=True))
        else:
            out[column] = pd.concat(values, ignore_index=True)
        del values
        release_memory()  # the column's parts, freed, go back before the next column is joined
    return pd.DataFrame(out, copy=False)  # not consolidated: a copy of the member in one block


def _by_column(parts: list[pd.DataFrame], columns: list[str]) -> list[dict[str, pd.Series]]:
    """Each of ``parts`` as its columns, each column its own array (a copy), the part itself
    released from the list (in place) as soon as it is copied. A parsed frame holds its numeric
    columns in one two-dimensional block, and a column taken out of it is a view that keeps the
    whole block alive: joined column by column, every part's block would stay until its last
    column is joined, and the join would hold the member twice (a 300 MB ``vmstat -t`` member:
    611 MiB of frames peaked at 1,044 MiB). Copied part by part, the join holds the member once,
    plus one part and one joined column."""
    held = []
    for i, part in enumerate(parts):
        held.append({column: part[column].copy(deep=True) for column in columns})
        parts[i] = None  # type: ignore[call-overload]  # the part's blocks go with it
        del part
        release_memory()  # and back to the OS before the next part is copied
    return held
