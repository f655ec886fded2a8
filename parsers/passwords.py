"""Passwords in a capture's text, masked (``mask_secrets``): a password is never shown, anywhere.

A bundle holds passwords where its captures quote command lines and statements: ``ps`` with
arguments, pt-stalk's ``-output`` and ``-trigger``, SHOW PROCESSLIST's ``Info``, the InnoDB monitor's
statements, option files and SHOW VARIABLES. The analysis masks its findings, verdict and culprits
with it (analyzer/engine.py ``conclude``), so no stored finding holds one; the web masks what it serves
of a case with it (``masked``: the case page and its JSON, the report, exports, the API, every share
link, redacted or not). The raw chunks stay as captured; every read of them for a reader goes
through the mask.

The forms masked (``***`` replaces the password, the rest of the text stays as it was):

- **Command lines**: ``--password=***`` and ``--password ***`` (any long option ending in ``pass``,
  ``passwd`` or ``password``: ``--mysql-password``, ``--ssl-key-password``, ``--password2``,
  ``--dbpassword``); ``-p***`` (also quoted: ``-p'***'``) after a MySQL or MariaDB program
  (``mysql``, ``mysqldump``, ``mysqladmin``, ``mysqlsh``, ``mysqlpump``, ``mysqlrouter``,
  ``mariadb-dump`` ...), a pt-tool, mydumper, myloader, xtrabackup, mariabackup or innobackupex
  (``-P3306`` is a port and stays); ``-p ***`` only for the tools whose ``-p`` takes the next word
  (Percona Toolkit, mydumper, myloader, sshpass: for ``mysql -p shop`` the next word is the database,
  and ``mysql -p`` alone prompts); ``p=***`` in a pt-tool DSN (``h=db1,u=root,p=***``);
  ``MYSQL_PWD=***`` and other ``*_PASSWORD=`` variables of an environment (``MYSQL_ROOT_PASSWORD``).
- **Connection strings**: ``user:***@host`` in a URI (``mysql://``, ``mysqlx://``, any scheme) and
  without a scheme, as MySQL Shell and MySQL Router take them (``\\connect root:***@db1:3306``,
  ``mysqlsh root:***@db1``, ``mysqlrouter --bootstrap root:***@db1:3306``,
  ``dba.configureInstance('admin:***@db2')``; MySQL 8.4 Reference Manual 6.2.5, "Connecting to the
  Server Using URI-Like Strings": ``[scheme://][user[:password]@]host[:port][/schema]``, a ``:``
  or ``@`` of the password percent-encoded); a key-value pair's ``password: '***'``
  (``{user: 'root', password: '***'}``, JSON ``"password": "***"``); ``password=***`` between
  ``key=value`` pairs (``host=db1 user=app password=***``, ``Pwd=***;``).
- **Statements**: the string after ``IDENTIFIED BY`` / ``IDENTIFIED WITH plugin BY|AS`` (and
  ``BY PASSWORD``, ``REPLACE 'current'``), MariaDB's ``IDENTIFIED VIA|WITH plugin USING|AS '...'``
  and ``OR plugin USING '...'``, ``PASSWORD('x')`` (``IDENTIFIED VIA ed25519 USING PASSWORD('x')``),
  ``SET PASSWORD [FOR user] = 'x'``, ``PASSWORD = 'x'`` (``MASTER_PASSWORD``, ``SOURCE_PASSWORD``,
  ``START REPLICA ... PASSWORD``, ``START GROUP_REPLICATION ... PASSWORD``, ``CREATE SERVER ...
  PASSWORD 'x'``) and ``authentication_string = 'x'`` becomes ``'***'``, also in a statement cut
  short inside its password (SHOW PROCESSLIST keeps 100 characters of ``Info``).
- **Settings**: a Galera node's ``wsrep_sst_auth`` ``user:***`` (SHOW VARIABLES, option files); an
  option file's (or ``my_print_defaults``') ``password = ***`` line, whatever the option's prefix
  (``report_password``, ``loose-group_replication_recovery_password``); a SHOW VARIABLES row of a
  variable ending in ``password`` (``report_password	***``, ``| report_password | *** |``;
  ``ON`` and ``OFF`` stay: ``disconnect_on_expired_password	ON``).

What is not a password stays: ``-P3306``, ``mysql -p shop``, ``logger -p daemon.err``, ``-pf``
of another program, ``user@host`` and e-mail addresses (no ``:``), times (``12:30:45@``: a user
begins with a letter), ``(using password: YES)``, ``--password-history=5``,
``default_password_lifetime = 0``, a placeholder (``authentication_string = ?``).

Pure Python: no Django.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import TypeVar

#: The mask of a password.
MASK = "***"
_T = TypeVar("_T")
#: ``user:password@host`` without a scheme: a ``:`` and an ``@`` in that order, something between.
_BARE_HINT = re.compile(r":[^\s:@/]+@")
#: A quoted SQL string (backslash escapes and doubled quotes inside), or what is left of one at the
#: end of a text cut to a length.
_SQL_STRING = r"""(?:'(?:[^'\\]|\\.|'')*(?:'|\Z)|"(?:[^"\\]|\\.|"")*(?:"|\Z))"""
#: A name in a statement (a plugin, an account's user or host part): quoted or bare.
_SQL_NAME = r"""(?:'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`[^`]*`|[\w$.%-]+(?:\(\))?)"""
#: What introduces a password in a statement (group ``lead``), then the quoted password.
_SQL_SECRET = re.compile(
    r"(?P<lead>(?i:\bIDENTIFIED\s+(?:WITH\s+" + _SQL_NAME + r"\s+)?(?:BY|AS)(?:\s+PASSWORD)?"
    r"|\b(?:IDENTIFIED\s+(?:VIA|WITH)|OR)\s+" + _SQL_NAME + r"\s+(?:USING|AS)"
    r"|\b(?:OLD_)?PASSWORD\s*\("
    r"|\b(?:MASTER_|SOURCE_)?PASSWORD(?:\s+FOR\s+" + _SQL_NAME + "(?:@" + _SQL_NAME + r")?)?(?:\s*=|(?=\s))"
    r"|\bAUTHENTICATION_STRING\s*=)\s*)" + _SQL_STRING
)
#: ``ALTER USER ... IDENTIFIED BY '***' REPLACE 'current'``: the current password too.
_SQL_REPLACE = re.compile(r"(?P<lead>'\*\*\*'\s+(?i:REPLACE)\s+)" + _SQL_STRING)
#: A long option naming a password, its value after ``=`` or after blanks (not another option).
_OPT_SECRET = re.compile(
    r"(?P<lead>(?<![\w-])--(?:[\w-]*-|db)?pass(?:word|wd)?\d?(?:=|[ \t]+(?=[^\s-])))"
    r"""(?:"[^"]*"|'[^']*'|[^\s"']\S*)"""
)
#: Programs whose ``-p`` is the password: MySQL and MariaDB clients and servers, Percona Toolkit,
#: mydumper/myloader, the backup tools; the group ``next`` names those whose ``-p`` also takes the
#: next word (for the mysql clients it is then the database: ``mysql -p shop`` prompts).
_CLIENT = re.compile(
    r"(?:(?<=[\s/'\"=])|^)(?:(?P<next>pt-[\w-]+|mydumper|myloader|sshpass)"
    r"|mysql[\w-]*|mariadb[\w-]*|mariabackup|xtrabackup|innobackupex)(?=[\s'\"]|\Z)"
)
_COMMAND_END = re.compile(r"[;|&\n]")
_SHORT_P = re.compile(r"""(?<![\w-])-p(?:'[^'\n]*'|"[^"\n]*"|(?=[^\s])\S+)""")
_SHORT_P_NEXT = re.compile(r"(?<![\w-])-p[ \t]+(?=[^\s-])\S+")
#: A pt-tool DSN (``h=db1,u=root,p=secret``): keys of one letter, two or more pairs.
_DSN = re.compile(r"(?<![\w=,])[A-Za-z]=[^\s,]*(?:,[A-Za-z]=[^\s,]*)+")
_DSN_P = re.compile(r"(?:(?<=,)|\A)p=[^,]*")
#: ``scheme://user:password@host``.
_URI_SECRET = re.compile(r"(?P<lead>\b[A-Za-z][\w+.-]*://[^\s:/@]+:)[^\s@/]+(?=@)")
#: ``user:password@host`` without a scheme (MySQL Shell, MySQL Router): a token of its own (after a
#: blank, a quote, ``=``, ``(`` or ``,``) whose user begins with a letter (``12:30:45@`` is a time)
#: and whose password holds no ``:``, ``@`` or ``/`` (percent-encoded there); ``mailto:`` is no user.
_BARE_URI_SECRET = re.compile(
    r"""(?P<lead>(?:(?<=[\s'"=(,])|^)(?!mailto:)[A-Za-z_][\w.$%-]*:)[^\s:@/'"]+(?=@[\w\[])"""
)
#: An environment's password variable: ``MYSQL_PWD=``, ``MYSQL_ROOT_PASSWORD=``, ``PGPASSWORD=``.
_ENV_SECRET = re.compile(r"(?P<lead>(?<![\w])(?:MYSQL_PWD|[A-Z][A-Z0-9_]*PASSWORD)=)(?!['\"])\S+")
#: A Galera node's SST account, ``wsrep_sst_auth`` ``user:password`` (SHOW VARIABLES, a my.cnf line).
_SST_AUTH = re.compile(r"(?P<lead>\bwsrep[-_]sst[-_]auth\b[\s|:=]+[^\s|:]*:)[^\s|]+")
#: An option file's line ``password = x`` (any prefix: ``report_password``, ``loose-...``), the
#: value to the end of the line; a SHOW VARIABLES row (tab or ``|`` separated) of such a variable.
_OPTION_LINE = re.compile(
    r"(?im)^(?P<lead>[ \t]*(?:[a-z][\w.-]*[-_.])?pass(?:word|wd)?\d?[ \t]*=[ \t]*)(?=\S)[^\n]*?(?=[ \t]*$)"
)
_VARIABLE_ROW = re.compile(
    r"(?im)^(?P<lead>[ \t|]*(?:[a-z][\w.-]*[-_.])?password\d?(?:[ \t]*\|[ \t]*|\t[ \t]*))"
    r"(?!(?:ON|OFF)\b)[^\s|]+"
)
#: A key-value pair's password: ``password: 'x'`` (MySQL Shell), ``"password": "x"`` (JSON).
_KEY_VALUE_SECRET = re.compile(
    r"""(?P<lead>(?i:["']?\b(?:[\w-]*[-_])?pass(?:word|wd)["']?)[ \t]*:[ \t]*)""" + _SQL_STRING
)
#: ``password=x`` among ``key=value`` pairs (a libpq or ODBC connection string), unquoted.
_PAIR_SECRET = re.compile(
    r"(?P<lead>(?<=[\s;,])(?i:password|passwd|pwd)=)(?![\s'\"(*])(?!(?i:password)\()[^\s;,'\"]+"
)


def _masked(match: re.Match[str]) -> str:
    return match["lead"] + MASK


def _masked_string(match: re.Match[str]) -> str:
    return f"{match['lead']}'{MASK}'"


def _masked_quoted(match: re.Match[str]) -> str:
    """The password in the quotes it had (a JSON string stays one)."""
    quote = match.group(0)[len(match["lead"])]
    return f"{match['lead']}{quote}{MASK}{quote}"


def _has_words(low: str) -> bool:
    """Whether ``low`` (a lower-cased text) holds a word without which no statement, option or
    setting pattern can match: a password there comes with ``pass`` (``PASSWORD``), ``pwd``,
    ``identified``, ``using`` or ``authentication_string``. Patterns are searched only in a text
    that holds their words (``str`` finds a word at C speed, where a regular expression tried at
    every position cost microseconds a line)."""
    return (
        "pass" in low
        or "pwd" in low
        or "identified" in low
        or "using" in low
        or "authentication_string" in low
    )


def _short_p(text: str) -> bool:
    """Whether ``text`` holds ``-p`` as an option (after a blank or a quote, or first), not inside a
    name (pt-stalk's members end in ``-ps`` and ``-processlist``)."""
    return " -p" in text or "\t-p" in text or "'-p" in text or '"-p' in text or text.startswith("-p")


def may_hold_secrets(text: str) -> bool:
    """False when ``mask_secrets`` surely leaves ``text`` as it is (a few quick searches: a long text,
    such as a stored JSON answer, can be served as it is then)."""
    low = text.lower()
    return (
        _has_words(low)
        or "://" in text
        or _short_p(text)
        or "p=" in text
        or "sst" in low
        or ("@" in text and _BARE_HINT.search(text) is not None)
    )


def mask_secrets(text: str) -> str:
    """``text`` with every password on a command line, in a connection string, a statement or a
    setting masked (see the module docstring for the forms). Masking twice changes nothing more.

    >>> mask_secrets("root 7 1 0 16:51 pts/0 00:00:00 mysql -uroot -pS3cr3t -P3306 -h db1 shop")
    'root 7 1 0 16:51 pts/0 00:00:00 mysql -uroot -p*** -P3306 -h db1 shop'
    >>> mask_secrets("pt-stalk --password hunter2 -- -p x; mysql -p shop; logger -p daemon.err")
    'pt-stalk --password *** -- -p ***; mysql -p shop; logger -p daemon.err'
    >>> mask_secrets("CREATE USER 'a'@'%' IDENTIFIED BY 'it''s' PASSWORD EXPIRE")
    "CREATE USER 'a'@'%' IDENTIFIED BY '***' PASSWORD EXPIRE"
    >>> mask_secrets("| wsrep_sst_auth | sst:S3cret |")
    '| wsrep_sst_auth | sst:*** |'
    >>> mask_secrets(r"\\connect clusteradmin:S3cret@db1:3306")
    '\\\\connect clusteradmin:***@db1:3306'
    >>> mask_secrets("CREATE USER u IDENTIFIED VIA ed25519 USING PASSWORD('S3cret') OR unix_socket")
    "CREATE USER u IDENTIFIED VIA ed25519 USING PASSWORD('***') OR unix_socket"
    >>> mask_secrets("report_password = S3cret")
    'report_password = ***'
    >>> mask_secrets("at 12:30:45@db1 root@db1 (using password: YES) ann@example.com")
    'at 12:30:45@db1 root@db1 (using password: YES) ann@example.com'
    """
    low = text.lower()
    if _has_words(low):
        text = _SQL_SECRET.sub(_masked_string, text)
        text = _SQL_REPLACE.sub(_masked_string, text)
        text = _KEY_VALUE_SECRET.sub(_masked_quoted, text)
        text = _OPT_SECRET.sub(_masked, text)
        text = _ENV_SECRET.sub(_masked, text)
        text = _OPTION_LINE.sub(_masked, text)
        text = _VARIABLE_ROW.sub(_masked, text)
        text = _PAIR_SECRET.sub(_masked, text)
    if "://" in text:
        text = _URI_SECRET.sub(_masked, text)
    if "@" in text and _BARE_HINT.search(text):
        text = _BARE_URI_SECRET.sub(_masked, text)
    if "sst" in low:
        text = _SST_AUTH.sub(_masked, text)
    if "p=" in text:
        text = _DSN.sub(lambda m: _DSN_P.sub("p=" + MASK, m.group(0)), text)
    if not _short_p(text):
        return text
    clients = list(_CLIENT.finditer(text))
    if not clients:
        return text
    out = [text[: clients[0].end()]]
    for i, m in enumerate(clients):  # each program's arguments: up to the next program or ; | & newline
        end = clients[i + 1].start() if i + 1 < len(clients) else len(text)
        stop = _COMMAND_END.search(text, m.end(), end)
        args, rest = text[m.end() : stop.start() if stop else end], text[stop.start() if stop else end : end]
        if m["next"]:
            args = _SHORT_P_NEXT.sub("-p " + MASK, args)
        out += [_SHORT_P.sub("-p" + MASK, args), rest]
        if i + 1 < len(clients):
            out.append(text[end : clients[i + 1].end()])
    masked_text = "".join(out)
    return text if masked_text == text else masked_text


def masked(value: _T) -> _T:
    """``value`` with every string in it through ``mask_secrets``: a str, or lists, tuples and dicts
    (keys too: a report keys evidence by its label) and dataclass instances (a ``Finding``, a
    ``Verdict``, the engine's ``Outcome``) holding them, at any depth. Anything else (numbers, None,
    times, enum members such as ``Severity``) is returned as it is, and so is a container in which
    nothing changed (the same object: no copy of a clean finding or of a row of numbers). A dataclass
    instance met twice becomes one masked instance (a verdict's root cause stays one of the findings).

    >>> masked({"rows": [{"info": "SET PASSWORD = 'x'", "time_s": 3}], "t": [1.0, 2.0]})
    {'rows': [{'info': "SET PASSWORD = '***'", 'time_s': 3}], 't': [1.0, 2.0]}
    """
    return _masked_value(value, {})


#: Values that hold no password and nothing that could (a row's numbers, flags, None).
_PLAIN = (int, float, bool, type(None))


def _masked_value(value: _T, seen: dict[int, object]) -> _T:
    """``masked``; ``seen``: id of a dataclass instance -> its masked instance. The strings of one list
    or one dict are tried together first (``may_hold_secrets`` over them joined): a moment's thousand
    rows and lines hold none, most of the time, and are then passed as they are."""
    kind = type(value)
    if kind is str:
        return mask_secrets(value)  # type: ignore[return-value]
    if kind in _PLAIN:
        return value
    if isinstance(value, list | tuple):
        if not value:
            return value
        if all(type(v) is str for v in value):  # raw lines, caveats, sources
            if not may_hold_secrets("\n".join(value)):  # type: ignore[arg-type]
                return value
            items = [mask_secrets(v) for v in value]  # type: ignore[arg-type]
        elif all(type(v) in _PLAIN for v in value):  # a row of numbers (chart points)
            return value
        else:
            items = [_masked_value(v, seen) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else type(value)(items)  # type: ignore[return-value]
    if isinstance(value, dict):
        texts = [k for k in value if type(k) is str] + [v for v in value.values() if type(v) is str]
        clean = not may_hold_secrets("\n".join(texts))
        if clean and all(type(v) is str or type(v) in _PLAIN for v in value.values()):
            return value  # a row of strings and numbers, none of which may hold a password
        pairs = [
            (
                k if clean else _masked_value(k, seen),
                v if (clean and type(v) is str) or type(v) in _PLAIN else _masked_value(v, seen),
            )
            for k, v in value.items()
        ]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)  # type: ignore[return-value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type | enum.Enum):
        if id(value) in seen:
            return seen[id(value)]  # type: ignore[return-value]
        changes = {}
        for f in dataclasses.fields(value):
            old = getattr(value, f.name)
            new = _masked_value(old, seen)
            if new is not old:
                changes[f.name] = new
        seen[id(value)] = out = dataclasses.replace(value, **changes) if changes else value
        return out
    return value
