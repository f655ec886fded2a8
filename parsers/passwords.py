"""Passwords on command lines and in statements, always masked (``mask_secrets``), whatever a
shared link's choices: a password is never something for a customer's other readers, nor for the
engineer's page to show (web/sharing/redaction/redactor.py applies it to every string a link serves).

The forms masked, on command lines (``ps`` with arguments, pt-stalk's ``-output`` and ``-trigger``)
and in statements, are listed under **Passwords** in web/sharing/redaction/redactor.py's docstring.

Pure Python: no Django.
"""

from __future__ import annotations

import re

#: The mask of a password.
MASK = "***"
#: Cheap test before the password patterns: none of them can match a text without one of these.
_SECRET_HINT = re.compile(r"[Pp](?:[Aa][Ss][Ss]|[Ww][Dd]|=)|[Ii][Dd][Ee][Nn][Tt][Ii]|://|-p|sst_auth")
#: A quoted SQL string (backslash escapes and doubled quotes inside), or what is left of one at the
#: end of a text cut to a length.
_SQL_STRING = r"""(?:'(?:[^'\\]|\\.|'')*(?:'|\Z)|"(?:[^"\\]|\\.|"")*(?:"|\Z))"""
#: A name in a statement (a plugin, an account's user or host part): quoted or bare.
_SQL_NAME = r"""(?:'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`[^`]*`|[\w$.%-]+(?:\(\))?)"""
#: What introduces a password in a statement (group ``lead``), then the quoted password.
_SQL_SECRET = re.compile(
    r"(?P<lead>(?i:\bIDENTIFIED\s+(?:WITH\s+" + _SQL_NAME + r"\s+)?(?:BY|AS)(?:\s+PASSWORD)?"
    r"|\b(?:OLD_)?PASSWORD\s*\("
    r"|\b(?:MASTER_|SOURCE_)?PASSWORD(?:\s+FOR\s+" + _SQL_NAME + "(?:@" + _SQL_NAME + r")?)?\s*=?"
    r"|\bAUTHENTICATION_STRING\s*=)\s*)" + _SQL_STRING
)
#: ``ALTER USER ... IDENTIFIED BY '***' REPLACE 'current'``: the current password too.
_SQL_REPLACE = re.compile(r"(?P<lead>'\*\*\*'\s+(?i:REPLACE)\s+)" + _SQL_STRING)
#: A long option naming a password, its value after ``=`` or after blanks (not another option).
_OPT_SECRET = re.compile(
    r"(?P<lead>(?<![\w-])--(?:[\w-]*-)?pass(?:word|wd)?\d?(?:=|[ \t]+(?=[^\s-])))"
    r"""(?:"[^"]*"|'[^']*'|[^\s"']\S*)"""
)
#: Programs whose ``-p`` is the password: MySQL and MariaDB clients and servers, Percona Toolkit,
#: mydumper/myloader, the backup tools; the group ``next`` names those whose ``-p`` also takes the
#: next word (for the mysql clients it is then the database: ``mysql -p shop`` prompts).
_CLIENT = re.compile(
    r"(?:(?<=[\s/'\"=])|^)(?:(?P<next>pt-[\w-]+|mydumper|myloader)"
    r"|mysql[\w-]*|mariadb[\w-]*|mariabackup|xtrabackup|innobackupex)(?=[\s'\"]|\Z)"
)
_COMMAND_END = re.compile(r"[;|&\n]")
_SHORT_P = re.compile(r"(?<![\w-])-p(?=[^\s])\S+")
_SHORT_P_NEXT = re.compile(r"(?<![\w-])-p[ \t]+(?=[^\s-])\S+")
#: A pt-tool DSN (``h=db1,u=root,p=secret``): keys of one letter, two or more pairs.
_DSN = re.compile(r"(?<![\w=,])[A-Za-z]=[^\s,]*(?:,[A-Za-z]=[^\s,]*)+")
_DSN_P = re.compile(r"(?:(?<=,)|\A)p=[^,]*")
#: ``scheme://user:password@host``.
_URI_SECRET = re.compile(r"(?P<lead>\b[A-Za-z][\w+.-]*://[^\s:/@]+:)[^\s@/]+(?=@)")
_ENV_SECRET = re.compile(r"(?P<lead>(?<![\w])MYSQL_PWD=)\S+")
#: A Galera node's SST account, ``wsrep_sst_auth`` ``user:password`` (SHOW VARIABLES, a my.cnf line).
_SST_AUTH = re.compile(r"(?P<lead>\bwsrep_sst_auth\b[\s|:=]+[^\s|:]*:)[^\s|]+")


def _masked(match: re.Match[str]) -> str:
    return match["lead"] + MASK


def _masked_string(match: re.Match[str]) -> str:
    return f"{match['lead']}'{MASK}'"


def may_hold_secrets(text: str) -> bool:
    """False when ``mask_secrets`` surely leaves ``text`` as it is (one quick search: a long text,
    such as a stored JSON answer, can be served as it is then)."""
    return _SECRET_HINT.search(text) is not None


def mask_secrets(text: str) -> str:
    """``text`` with every password on a command line or in a statement masked (see the module
    docstring for the forms).

    >>> mask_secrets("root 7 1 0 16:51 pts/0 00:00:00 mysql -uroot -pS3cr3t -P3306 -h db1 shop")
    'root 7 1 0 16:51 pts/0 00:00:00 mysql -uroot -p*** -P3306 -h db1 shop'
    >>> mask_secrets("pt-stalk --password hunter2 -- -p x; mysql -p shop; logger -p daemon.err")
    'pt-stalk --password *** -- -p ***; mysql -p shop; logger -p daemon.err'
    >>> mask_secrets("CREATE USER 'a'@'%' IDENTIFIED BY 'it''s' PASSWORD EXPIRE")
    "CREATE USER 'a'@'%' IDENTIFIED BY '***' PASSWORD EXPIRE"
    >>> mask_secrets("| wsrep_sst_auth | sst:S3cret |")
    '| wsrep_sst_auth | sst:*** |'
    """
    if not may_hold_secrets(text):
        return text
    text = _SQL_SECRET.sub(_masked_string, text)
    text = _SQL_REPLACE.sub(_masked_string, text)
    text = _OPT_SECRET.sub(_masked, text)
    text = _URI_SECRET.sub(_masked, text)
    text = _ENV_SECRET.sub(_masked, text)
    text = _SST_AUTH.sub(_masked, text)
    text = _DSN.sub(lambda m: _DSN_P.sub("p=" + MASK, m.group(0)), text)
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
    return "".join(out)
