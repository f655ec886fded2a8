"""The sessions a processlist does not keep one row each, counted by account (``processlist_accounts``).

``analyzer.timeline.timeline.prepare`` keeps the active sessions and one idle session per snapshot;
the others are counted here by snapshot and account, so that who holds the connections (an
application's pool of idle connections: analyzer/waits/holders/slots.py) is still known. Pure.
"""

from __future__ import annotations

import pandas as pd

#: The client port MySQL appends to Host (``10.0.0.7:51234``): dropped, the host names the client.
CLIENT_PORT_RE = r":\d+$"


def without_port(host: pd.Series) -> pd.Series:
    """``host`` (processlist Host) without the client port (``CLIENT_PORT_RE``), the pattern run once
    per distinct value."""
    codes, uniques = pd.factorize(host.astype("string"), use_na_sentinel=True)
    stripped = pd.Series(uniques, dtype="string").str.replace(CLIENT_PORT_RE, "", regex=True).array
    return pd.Series(stripped.take(codes, allow_fill=True), index=host.index, name=host.name)


#: Columns of ``processlist_accounts`` (``parsers.processlist.ACCOUNT_COLUMNS``).
ACCOUNT_COLUMNS = ("ts", "user", "client", "command", "sessions", "time_min_s", "time_max_s", "time_sum_s")


def counted(counted: pd.DataFrame | None, dropped: pd.DataFrame) -> pd.DataFrame:
    """The sessions not kept one row each, by snapshot and account: what the parser counted
    (``counted``, ``PARSE_OPTIONS``) and the rows ``_sessions_kept`` drops (``dropped``), summed by
    (``ts``, ``user``, ``client`` the Host without its port, ``command``): who holds the idle
    connections, kept small (a row per account per snapshot)."""
    parts = [counted[list(ACCOUNT_COLUMNS)]] if counted is not None and len(counted) else []
    if len(dropped) and {"user", "host", "command"} <= set(dropped.columns):
        t = pd.to_numeric(dropped["time_s"], errors="coerce").fillna(0.0).astype("float64")
        parts.append(
            pd.DataFrame(
                {
                    "ts": dropped["ts"],
                    "user": dropped["user"].astype("string"),
                    "client": without_port(dropped["host"]).astype("string"),
                    "command": dropped["command"].astype("string"),
                    "sessions": 1,
                    "time_min_s": t,
                    "time_max_s": t,
                    "time_sum_s": t,
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            {
                c: pd.Series([], dtype="datetime64[ns, UTC]" if c == "ts" else "object")
                for c in ACCOUNT_COLUMNS
            }
        )
    both = pd.concat(parts, ignore_index=True).astype(
        {"user": "string", "client": "string", "command": "string"}
    )
    out = both.groupby(["ts", "user", "client", "command"], sort=True, observed=True, dropna=False).agg(
        sessions=("sessions", "sum"),
        time_min_s=("time_min_s", "min"),
        time_max_s=("time_max_s", "max"),
        time_sum_s=("time_sum_s", "sum"),
    )
    return out.reset_index().astype(
        {"sessions": "int32", "user": "category", "client": "category", "command": "category"}
    )
