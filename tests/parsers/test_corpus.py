"""Every real capture under ../shared/samples, read through the path users hit: ``read_bundle``.

``CORPUS`` is the one table of expectations: ``path -> (format, samples, first ts, last ts)`` for a
capture of a supported format, ``path -> (None, reason substring)`` for a file the project does not
parse (it must be listed as not used, with that reason). The values were read from the files
themselves (reports counted with grep/awk, first and last timestamps as the file prints them), not
from the parsers' output. Where a parser disagrees with the file the row is an ``xfail(strict=True)``
naming the bug, so the row turns into a failure the day the bug is fixed and the mark is forgotten.

Timestamps are UTC as the bundle reports them:
- a full ``YYYY-MM-DD HH:MM:SS[.fffffffff]``: what the file says (a ``TS`` epoch, a per-line or
  header date and time), or, for pt-stalk members with no time inside, the start its file-name
  prefix gives plus 1 s per report (``parsers.layout``). Wall-clock times of a loose file stay as
  printed: one file alone does not give the server's UTC offset, so the bundle keeps them as if UTC;
- ``HH:MM:SS``: the file prints a time of day and no date (``top -b`` outside a pt-stalk directory);
  only the time of day is compared;
- ``None``: the file holds no time at all (``vmstat 1 5``, a single /proc/interrupts): the bundle
  must say its times are inferred.

Each file is read alone (a one-member bundle), and each pt-stalk collection directory is read once
more tarred into a temporary .tar.gz, where every member must come out the same.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pandas as pd
import pytest
from _pytest.mark.structures import ParameterSet

from parsers.base import Clock, ParsedSource
from parsers.ingest.bundle import Bundle, NotUsed, read_bundle

pytestmark = pytest.mark.samples

#: The reason bundle.py gives for a member no sniffer claims.
NOT_RECOGNISED = (None, "format not recognised")

EX1 = "My-gather/pt-stalk/example1/"
EX2 = "My-gather/pt-stalk/example2/"
PSC = "percona-toolkit/pt-secure-collect/"
A = "2026_04_21_16_43_19-"  # example1, first collection
B = "2026_04_21_16_43_49-"  # example1, second collection
C = "2026_04_21_16_51_41-"  # example2
PT = "percona-toolkit/"

# fmt: off
CORPUS: list[tuple[str, tuple] | ParameterSet] = [
    # --- vmstat 1 with a repeated header every 21 rows and a TAB after every row: 901 reports
    ("201701-meltdown-OLTP-ro/vmstat/thr128-vmstat.out", ("vmstat", 901, None, None)),

    # --- My-gather example1, collection 1 (TS epochs equal the wall clock: the host runs in UTC)
    (EX1 + A + "df", ("df", 30, "2026-04-21 16:43:21.009025316", "2026-04-21 16:43:50.009015615")),
    (EX1 + A + "disk-space", ("df", 1, None, None)),
    (EX1 + A + "diskstats", ("diskstats", 30, "2026-04-21 16:43:21.009025316", ("2026-04-21 "
                                                                                "16:43:50.009015615"))),
    (EX1 + A + "hostname", ("hostname", 0, None, None)),
    (EX1 + A + "innodbstatus1", ("innodb_status", 1, "2026-04-21 16:43:20", "2026-04-21 16:43:20")),  # the monitor header's time
    (EX1 + A + "innodbstatus2", ("innodb_status", 1, "2026-04-21 16:43:50", "2026-04-21 16:43:50")),
    # 30 `Device` reports, no times: the prefix 16:43:19 + 1 s each (banner date 13.03.2026 is spliced)
    (EX1 + A + "iostat", ("iostat", 30, "2026-04-21 16:43:19", "2026-04-21 16:43:48")),
    (EX1 + A + "log_error", ("mysqld_errorlog", 2, "2026-04-21 16:02:21.037854", ("2026-04-21 "
                                                                                  "16:02:21.342170"))),
    (EX1 + A + "meminfo", ("meminfo", 30, "2026-04-21 16:43:21.009025316", "2026-04-21 16:43:50.009015615")),
    (EX1 + A + "netstat", ("netstat", 30, "2026-04-21 16:43:21.009025316", "2026-04-21 16:43:50.009015615")),
    (EX1 + A + "netstat_s", ("netstat_s", 30, "2026-04-21 16:43:21.009025316", ("2026-04-21 "
                                                                                "16:43:50.009015615"))),
    (EX1 + A + "numastat", ("numastat", 30, "2026-04-21 16:43:21.009025316", "2026-04-21 16:43:50.009015615")),
    (EX1 + A + "opentables1", ("opentables", 0, None, None)),
    (EX1 + A + "opentables2", ("opentables", 0, None, None)),
    (EX1 + A + "output", ("ptstalk_output", 0, None, None)),
    (EX1 + A + "processlist", ("processlist", 30, "2026-04-21 16:43:21.009025316", ("2026-04-21 "
                                                                                    "16:43:50.009015615"))),
    (EX1 + A + "procstat", ("procstat", 0, None, None)),
    (EX1 + A + "procvmstat", ("procvmstat", 30, "2026-04-21 16:43:21.009025316", ("2026-04-21 "
                                                                                  "16:43:50.009015615"))),
    (EX1 + A + "ps", ("ps", 1, "2026-04-21 16:43:19", "2026-04-21 16:43:19")),
    (EX1 + A + "ps-locks-transactions", ("ps_locks", 30, "2026-04-21 16:43:19", "2026-04-21 16:43:48")),  # 30 echoed metadata_locks queries, no TS: prefix + 1 s
    (EX1 + A + "slabinfo", ("slabinfo", 30, "2026-04-21 16:43:21.009025316", "2026-04-21 16:43:50.009015615")),
    (EX1 + A + "slave-status", ("slave_status", 0, None, None)),  # not a replica: the echoed statements only
    (EX1 + A + "sysctl", ("sysctl", 1, None, None)),
    (EX1 + A + "threads", ("threads", 30, "2026-04-21 16:43:21.009025316", "2026-04-21 16:43:50.009015615")),
    # 20 `top - HH:MM:SS` headers, every 3 s; the date comes from the prefix
    (EX1 + A + "top", ("top", 20, "2026-04-21 16:43:20", "2026-04-21 16:44:17")),
    (EX1 + A + "trigger", ("ptstalk_trigger", 0, None, None)),
    (EX1 + A + "variables", ("variables", 0, None, None)),
    (EX1 + A + "vmstat", ("vmstat", 30, "2026-04-21 16:43:19", "2026-04-21 16:43:48")),
    # `vmstat 30 2`: the since-boot line, then one 30 s average
    (EX1 + A + "vmstat-overall", ("vmstat", 2, "2026-04-21 16:43:19", "2026-04-21 16:43:49")),

    # --- My-gather example1, collection 2 (no -iostat in the source repository)
    (EX1 + B + "df", ("df", 30, "2026-04-21 16:43:51.008861390", "2026-04-21 16:44:20.009323180")),
    (EX1 + B + "disk-space", ("df", 1, None, None)),
    (EX1 + B + "diskstats", ("diskstats", 30, "2026-04-21 16:43:51.008861390", ("2026-04-21 "
                                                                                "16:44:20.009323180"))),
    (EX1 + B + "hostname", ("hostname", 0, None, None)),
    (EX1 + B + "innodbstatus1", ("innodb_status", 1, "2026-04-21 16:43:50", "2026-04-21 16:43:50")),  # the monitor header's time
    (EX1 + B + "innodbstatus2", ("innodb_status", 1, "2026-04-21 16:44:20", "2026-04-21 16:44:20")),
    (EX1 + B + "log_error", ("mysqld_errorlog", 2, "2026-04-21 16:02:21.037854", ("2026-04-21 "
                                                                                  "16:02:21.342170"))),
    (EX1 + B + "meminfo", ("meminfo", 30, "2026-04-21 16:43:51.008861390", "2026-04-21 16:44:20.009323180")),
    (EX1 + B + "netstat", ("netstat", 30, "2026-04-21 16:43:51.008861390", "2026-04-21 16:44:20.009323180")),
    (EX1 + B + "netstat_s", ("netstat_s", 30, "2026-04-21 16:43:51.008861390", ("2026-04-21 "
                                                                                "16:44:20.009323180"))),
    (EX1 + B + "numastat", ("numastat", 30, "2026-04-21 16:43:51.008861390", "2026-04-21 16:44:20.009323180")),
    (EX1 + B + "opentables1", ("opentables", 0, None, None)),
    (EX1 + B + "opentables2", ("opentables", 0, None, None)),
    (EX1 + B + "output", ("ptstalk_output", 0, None, None)),
    (EX1 + B + "processlist", ("processlist", 30, "2026-04-21 16:43:51.008861390", ("2026-04-21 "
                                                                                    "16:44:20.009323180"))),
    (EX1 + B + "procstat", ("procstat", 0, None, None)),
    (EX1 + B + "procvmstat", ("procvmstat", 30, "2026-04-21 16:43:51.008861390", ("2026-04-21 "
                                                                                  "16:44:20.009323180"))),
    (EX1 + B + "ps", ("ps", 1, "2026-04-21 16:43:49", "2026-04-21 16:43:49")),
    (EX1 + B + "ps-locks-transactions", ("ps_locks", 30, "2026-04-21 16:43:49", "2026-04-21 16:44:18")),  # 30 echoed metadata_locks queries, no TS: prefix + 1 s
    (EX1 + B + "slabinfo", ("slabinfo", 30, "2026-04-21 16:43:51.008861390", "2026-04-21 16:44:20.009323180")),
    (EX1 + B + "slave-status", ("slave_status", 0, None, None)),  # not a replica: the echoed statements only
    (EX1 + B + "sysctl", ("sysctl", 1, None, None)),
    (EX1 + B + "threads", ("threads", 30, "2026-04-21 16:43:51.008861390", "2026-04-21 16:44:20.009323180")),
    (EX1 + B + "top", ("top", 20, "2026-04-21 16:43:50", "2026-04-21 16:44:47")),
    (EX1 + B + "trigger", ("ptstalk_trigger", 0, None, None)),
    (EX1 + B + "variables", ("variables", 0, None, None)),
    (EX1 + B + "vmstat", ("vmstat", 30, "2026-04-21 16:43:49", "2026-04-21 16:44:18")),
    (EX1 + B + "vmstat-overall", ("vmstat", 2, "2026-04-21 16:43:49", "2026-04-21 16:44:19")),

    # --- My-gather example2 (sysbench load) plus the processlist of its second collection
    (EX2 + C + "df", ("df", 30, "2026-04-21 16:51:43.009325313", "2026-04-21 16:52:12.009088559")),
    (EX2 + C + "disk-space", ("df", 1, None, None)),
    (EX2 + C + "diskstats", ("diskstats", 30, "2026-04-21 16:51:43.009325313", ("2026-04-21 "
                                                                                "16:52:12.009088559"))),
    (EX2 + C + "hostname", ("hostname", 0, None, None)),
    (EX2 + C + "innodbstatus1", ("innodb_status", 1, "2026-04-21 16:51:42", "2026-04-21 16:51:42")),  # the monitor header's time
    (EX2 + C + "innodbstatus2", ("innodb_status", 1, "2026-04-21 16:52:12", "2026-04-21 16:52:12")),
    (EX2 + C + "iostat", ("iostat", 30, "2026-04-21 16:51:41", "2026-04-21 16:52:10")),
    (EX2 + C + "log_error", ("mysqld_errorlog", 1, "2026-04-21 16:02:21.342170", ("2026-04-21 "
                                                                                  "16:02:21.342170"))),
    (EX2 + C + "meminfo", ("meminfo", 30, "2026-04-21 16:51:43.009325313", "2026-04-21 16:52:12.009088559")),
    (EX2 + C + "mutex-status1", ("mutex_status", 0, None, None)),
    (EX2 + C + "mutex-status2", ("mutex_status", 0, None, None)),
    (EX2 + C + "netstat", ("netstat", 30, "2026-04-21 16:51:43.009325313", "2026-04-21 16:52:12.009088559")),
    (EX2 + C + "netstat_s", ("netstat_s", 30, "2026-04-21 16:51:43.009325313", ("2026-04-21 "
                                                                                "16:52:12.009088559"))),
    (EX2 + C + "numastat", ("numastat", 30, "2026-04-21 16:51:43.009325313", "2026-04-21 16:52:12.009088559")),
    (EX2 + C + "opentables1", ("opentables", 0, None, None)),
    (EX2 + C + "opentables2", ("opentables", 0, None, None)),
    (EX2 + C + "output", ("ptstalk_output", 0, None, None)),
    (EX2 + C + "processlist", ("processlist", 30, "2026-04-21 16:51:43.009325313", ("2026-04-21 "
                                                                                    "16:52:12.009088559"))),
    (EX2 + C + "procstat", ("procstat", 0, None, None)),
    (EX2 + C + "procvmstat", ("procvmstat", 30, "2026-04-21 16:51:43.009325313", ("2026-04-21 "
                                                                                  "16:52:12.009088559"))),
    (EX2 + C + "ps", ("ps", 1, "2026-04-21 16:51:41", "2026-04-21 16:51:41")),
    (EX2 + C + "ps-locks-transactions", ("ps_locks", 30, "2026-04-21 16:51:41", "2026-04-21 16:52:10")),  # 30 echoed metadata_locks queries, no TS: prefix + 1 s
    (EX2 + C + "slabinfo", ("slabinfo", 30, "2026-04-21 16:51:43.009325313", "2026-04-21 16:52:12.009088559")),
    (EX2 + C + "slave-status", ("slave_status", 0, None, None)),  # not a replica: the echoed statements only
    (EX2 + C + "sysctl", ("sysctl", 1, None, None)),
    (EX2 + C + "threads", ("threads", 30, "2026-04-21 16:51:43.009325313", "2026-04-21 16:52:12.009088559")),
    (EX2 + C + "top", ("top", 20, "2026-04-21 16:51:42", "2026-04-21 16:52:39")),
    (EX2 + C + "transactions", ("innodb_trx", 30, "2026-04-21 16:51:43.009325313", ("2026-04-21 "
                                                                                    "16:52:12.009088559"))),  # information_schema.innodb_trx \G after TS lines
    (EX2 + C + "trigger", ("ptstalk_trigger", 0, None, None)),
    (EX2 + C + "variables", ("variables", 0, None, None)),
    (EX2 + C + "vmstat", ("vmstat", 30, "2026-04-21 16:51:41", "2026-04-21 16:52:10")),
    (EX2 + C + "vmstat-overall", ("vmstat", 2, "2026-04-21 16:51:41", "2026-04-21 16:52:11")),
    (EX2 + "2026_04_21_16_52_11-processlist", ("processlist", 30, "2026-04-21 16:52:13.008962516", "2026-04-21 16:52:42.009596483")),

    # --- sosreport of an RHCOS node: one snapshot each, no capture time
    ("coreos-sosreport-master1/interrupts/interrupts", ("interrupts", 1, None, None)),
    ("coreos-sosreport-master1/ps/ps_-elfL", ("ps", 1, None, None)),
    ("coreos-sosreport-master1/ps/ps_alxwww", ("ps", 1, None, None)),
    # `ps auxm`: processes carry STAT `-`, their thread rows no id: refused on purpose (ps.py)
    ("coreos-sosreport-master1/ps/ps_auxwwwm", (None, "carry no thread id")),
    # lstart (`Wed Oct  2 02:19:25 2019`) is when each process started, not when ps ran
    ("coreos-sosreport-master1/ps/ps_axo_flags_state_uid_pid_ppid_pgid_sid_cls_pri_addr_sz_wchan_lstart_tty_time_cmd",
     ("ps", 1, None, None)),
    ("coreos-sosreport-master1/uname_-a", NOT_RECOGNISED),

    # --- mpstat -P ALL with decimal commas and an ISO header date: one report
    ("csd_project/mpstat/mpstat.log", ("mpstat", 1, "2016-12-10 17:06:05", "2016-12-10 17:06:05")),
    # --- iostat -x, sysstat 11.5-12.0 columns: 160 reports, a header date but no time
    ("hustjieke-sysbench/iostat/iostat.txt", ("iostat", 160, None, None)),
    ("i5_info/interrupts/proc-interrupts", ("interrupts", 1, None, None)),
    ("intersched/interrupts/interrupts.txt", ("interrupts", 1, None, None)),

    # --- iostat -xmt, `MM/DD/YYYY HH:MM:SS AM` before each report
    ("iostatplot/iostat/iostat.out",
                 ("iostat", 180, "2016-03-15 09:34:00", "2016-03-15 09:36:59")),
    # pdsh output of 4 hosts interleaved: the first host (object3) is kept, the others dropped with a
    # warning (documented in iostat.py); object3 has 4 reports, 08:12:48 PM to 08:13:03 PM
    ("iostatplot/iostat/iostat2.out", ("iostat", 4, "2016-03-15 20:12:48", "2016-03-15 20:13:03")),
    ("iostatplot/iostat/iostat3.out",
                 ("iostat", 4, "2016-03-15 20:54:35", "2016-03-15 20:54:50")),

    # --- jc's fixtures
    ("jc/interrupts/linux-proc/interrupts", ("interrupts", 1, None, None)),
    ("jc/iostat/centos-7.7/iostat-1.out", ("iostat", 3, None, None)),
    ("jc/iostat/centos-7.7/iostat-mx.out", ("iostat", 1, None, None)),
    ("jc/iostat/centos-7.7/iostat-x.out", ("iostat", 1, None, None)),
    ("jc/iostat/centos-7.7/iostat.out", ("iostat", 1, None, None)),
    ("jc/iostat/ubuntu-18.04/iostat-mx.out", ("iostat", 1, None, None)),
    ("jc/iostat/ubuntu-18.04/iostat-x.out", ("iostat", 1, None, None)),
    ("jc/iostat/ubuntu-20.10/iostat-mx.out", ("iostat", 1, None, None)),
    ("jc/iostat/ubuntu-20.10/iostat-x.out", ("iostat", 1, None, None)),
    # mpstat -A 2 5: five reports at 03:16:17 PM .. 03:16:25 PM (03:16:15 PM is only in the headers)
    ("jc/mpstat/centos-7.7/mpstat-A-2-5.out", ("mpstat", 5, "2022-03-11 15:16:17", "2022-03-11 15:16:25")),
    ("jc/mpstat/centos-7.7/mpstat-A.out", ("mpstat", 1, "2022-03-11 15:15:06", "2022-03-11 15:15:06")),
    ("jc/mpstat/centos-7.7/mpstat.out", ("mpstat", 1, "2022-03-11 15:14:20", "2022-03-11 15:14:20")),
    ("jc/mpstat/ubuntu-18.04/mpstat-A.out", ("mpstat", 1, "2022-03-14 08:50:55", "2022-03-14 08:50:55")),
    ("jc/ps/centos-7.7/ps-axu.out", ("ps", 1, None, None)),
    ("jc/ps/centos-7.7/ps-ef.out", ("ps", 1, None, None)),
    ("jc/ps/ubuntu-18.04/ps-ef.out", ("ps", 1, None, None)),
    ("jc/top/centos-7.7/top-b-n3.out", ("top", 3, "11:24:50", "11:24:56")),
    ("jc/vmstat/centos-7.7/vmstat-a.out", ("vmstat", 1, None, None)),
    # -t: times printed in PDT; one file alone gives no offset, so they stay as printed
    ("jc/vmstat/centos-7.7/vmstat-at-5-10.out", ("vmstat", 4, "2021-09-16 20:33:13", "2021-09-16 20:33:28")),
    ("jc/vmstat/centos-7.7/vmstat-awt.out", ("vmstat", 1, "2021-09-16 20:31:30", "2021-09-16 20:31:30")),
    ("jc/vmstat/centos-7.7/vmstat-dt.out", ("diskstats", 1, "2021-09-16 20:32:28", "2021-09-16 20:32:28")),  # vmstat -d -t: the disk counters
    ("jc/vmstat/centos-7.7/vmstat-w.out", ("vmstat", 1, None, None)),
    ("jc/vmstat/centos-7.7/vmstat.out", ("vmstat", 1, None, None)),
    ("jc/vmstat/generic/vmstat-extra-wide.out", ("vmstat", 1, None, None)),
    ("jc/vmstat/ubuntu-18.04/vmstat-1-long.out", ("vmstat", 37, None, None)),
    ("kernel-measure/interrupts/interrupts.txt", ("interrupts", 1, None, None)),
    ("node_exporter/interrupts/interrupts", ("interrupts", 1, None, None)),
    ("node_exporter/interrupts/interrupts_aarch64", ("interrupts", 1, None, None)),

    # --- percona-toolkit test samples: SHOW PROCESSLIST in every client layout, one snapshot each
    (PT + "processlist/recset001.txt", ("processlist", 1, None, None)),
    (PT + "processlist/recset002.txt", ("processlist", 1, None, None)),
    (PT + "processlist/recset003.txt", ("processlist", 1, None, None)),
    (PT + "processlist/recset004.txt", ("processlist", 1, None, None)),
    (PT + "processlist/recset005.txt", ("processlist", 1, None, None)),  # starts at row 2
    (PT + "processlist/recset006.txt", ("processlist", 1, None, None)),
    (PT + "processlist/recset007.txt", ("processlist", 1, None, None)),
    (PT + "processlist/recset008.txt", ("processlist", 1, None, None)),
    (PT + "processlist/recset009.txt", ("processlist", 1, None, None)),
    (PT + "processlist/recset010.txt", ("processlist", 1, None, None)),
    (PT + "processlist/recset011.txt", ("processlist", 1, None, None)),
    (PT + "pt-align/002-raw.txt", ("vmstat", 5, None, None)),
    (PT + "pt-diskstats/bug-1035311.txt", ("diskstats", 30, "2012-08-10 01:23:10.012145298", ("2012-08-10 "
                                                                                              "01:23:39.012016528"))),  # /proc/diskstats after TS lines
    (PT + "pt-diskstats/diskstats-001.txt", ("diskstats", 5, "2010-08-09 15:25:19", "2010-08-09 15:25:26")),
    (PT + "pt-diskstats/diskstats-002.txt", ("diskstats", 102, "2010-09-07 19:44:46.311660", ("2010-09-07 "
                                                                                              "19:46:27.623034"))),
    (PT + "pt-diskstats/diskstats-004.txt", ("diskstats", 6, "2011-02-19 15:40:03.073935", ("2011-02-19 "
                                                                                            "15:40:08.145277"))),
    (PT + "pt-diskstats/diskstats-005.txt", ("diskstats", 6, "2011-02-19 15:40:03.073935", ("2011-02-19 "
                                                                                            "15:40:08.145277"))),
    (PT + "pt-diskstats/small.txt", ("diskstats", 11, "2012-01-25 16:49:37.628000", ("2012-01-25 "
                                                                                     "16:49:46.999984"))),
    (PT + "pt-diskstats/switch_to_sample.txt", ("diskstats", 15, "2012-01-17 13:16:25.740921", ("2012-01-17 "
                                                                                                "13:16:39.782176"))),
    # mysqladmin ext -i: one `Variable_name | Value` table per sample (4 and 30 `Uptime` rows)
    (PT + "pt-mext/mext-001.txt", ("mysqladmin", 4, None, None)),
    (PT + "pt-mext/pt-130-in.txt", ("mysqladmin", 30, None, None)),
    (PT + "pt-mysql-summary/processlist-001.txt", ("processlist", 1, None, None)),
    (PT + "pt-mysql-summary/ps-mysqld-001.txt", NOT_RECOGNISED),  # ps -ef rows without the header
    (PT + "pt-mysql-summary/ps-mysqld-002.txt", NOT_RECOGNISED),
    (PT + "pt-mysql-summary/ps-mysqld-003.txt", NOT_RECOGNISED),
    (PT + "pt-mysql-summary/ps-mysqld-004.txt", NOT_RECOGNISED),
    (PT + "pt-mysql-summary/ps-mysqld-005.txt", ("ps", 1, None, None)),  # `PID TTY STAT TIME COMMAND`
    (PT + "pt-mysql-summary/ps-mysqld-006.txt", ("ps", 1, None, None)),
    (PT + "pt-mysql-summary/temp002/mysql-processlist", ("processlist", 1, None, None)),
    (PT + "pt-mysql-summary/temp005/mysql-processlist", ("processlist", 1, None, None)),
    (PT + "pt-mysql-summary/temp006/mysql-processlist", ("processlist", 1, None, None)),
    (PT + "pt-mysql-summary/temp_enc008/mysql-processlist", ("processlist", 1, None, None)),
    (PT + "pt-mysql-summary/temp_enc009/mysql-processlist", ("processlist", 1, None, None)),
    (PSC + "2018_03_05_13_24_55-innodbstatus1", ("innodb_status", 1, "2018-03-05 13:24:56", ("2018-03-05 "
                                                                                             "13:24:56"))),  # YYMMDD header
    (PSC + "2018_03_05_13_24_55-innodbstatus2", ("innodb_status", 1, "2018-03-05 13:25:26", ("2018-03-05 "
                                                                                             "13:25:26"))),
    (PSC + "2018_03_05_13_24_55-processlist", ("processlist", 30, "2018-03-05 13:24:57.002113337", "2018-03-05 13:25:26.003924709")),
    (PSC + "2018_03_05_13_29_55-innodbstatus1", ("innodb_status", 1, "2018-03-05 13:29:56", ("2018-03-05 "
                                                                                             "13:29:56"))),  # YYMMDD header
    (PSC + "2018_03_05_13_29_55-innodbstatus2", ("innodb_status", 1, "2018-03-05 13:30:26", ("2018-03-05 "
                                                                                             "13:30:26"))),
    (PSC + "2018_03_05_13_34_55-innodbstatus1", ("innodb_status", 1, "2018-03-05 13:34:56", ("2018-03-05 "
                                                                                             "13:34:56"))),  # YYMMDD header
    (PSC + "2018_03_05_13_34_55-innodbstatus2", ("innodb_status", 1, "2018-03-05 13:35:26", ("2018-03-05 "
                                                                                             "13:35:26"))),
    (PT + "pt-summary/BSD/freebsd_001/vmstat", NOT_RECOGNISED),  # BSD columns (r b w, avm fre, flt ...)
    (PT + "pt-summary/BSD/netbsd_001/vmstat", NOT_RECOGNISED),
    (PT + "pt-summary/BSD/openbsd_001/vmstat", NOT_RECOGNISED),
    (PT + "pt-summary/Linux/001/processes", NOT_RECOGNISED),  # top's process table without its summary
    (PT + "pt-summary/Linux/001/vmstat", ("vmstat", 5, None, None)),  # no st column
    (PT + "pt-summary/Linux/002/vmstat", ("vmstat", 5, None, None)),
    (PT + "pt-summary/Linux/005/processes", NOT_RECOGNISED),
    (PT + "pt-summary/Linux/005/vmstat", ("vmstat", 5, None, None)),
    (PT + "pt-summary/Linux/006/processes", NOT_RECOGNISED),
    (PT + "pt-summary/Linux/007/processes", NOT_RECOGNISED),

    # --- OSWatcher oswiostat (iostat -xt, sysstat 7), bzip2: 720 `Time:` reports under one zzz line,
    # server wall clock (EST), kept as printed
    ("plot-oswatcher/oswatcher-iostat/dm02cel01.aim.com_iostat_12.02.29.1100.dat.bz2",
                 ("iostat", 720, "2012-02-29 11:01:52", "2012-02-29 12:01:47")),

    # --- sysstat's own test suite (real tools, synthetic /proc)
    ("sysstat/interrupts/root1-proc-interrupts", ("interrupts", 1, None, None)),
    ("sysstat/interrupts/root3-proc-interrupts", ("interrupts", 1, None, None)),
    ("sysstat/iostat/expected.iostat", ("iostat", 3, None, None)),
    # iostat -c -t: CPU only, `06/01/20 12:53:20` before each of the 2 reports
    ("sysstat/iostat/expected.iostat-ct",
                 ("iostat", 2, "2020-06-01 12:53:20", "2020-06-01 12:53:21")),
    ("sysstat/iostat/expected.iostat-dec", ("iostat", 2, None, None)),
    ("sysstat/iostat/expected.iostat-h", ("iostat", 1, None, None)),
    ("sysstat/iostat/expected.iostat-mz", ("iostat", 2, None, None)),
    ("sysstat/iostat/expected.iostat-x", ("iostat", 2, None, None)),
    ("sysstat/iostat/expected.iostat-x-ALL", ("iostat", 2, None, None)),
    ("sysstat/iostat/expected.iostat-xs", ("iostat", 3, None, None)),
    ("sysstat/mpstat/expected.mpstat", ("mpstat", 1, "2020-06-01 12:53:20", "2020-06-01 12:53:20")),
    ("sysstat/mpstat/expected.mpstat-A", ("mpstat", 4, "2020-06-01 12:53:21", "2020-06-01 12:53:24")),
    ("sysstat/mpstat/expected.mpstat-APN", ("mpstat", 1, "2020-06-01 12:53:21", "2020-06-01 12:53:21")),
    ("sysstat/mpstat/expected.mpstat-I", ("mpstat", 1, "2020-06-01 12:53:20", "2020-06-01 12:53:20")),
    ("sysstat/mpstat/expected.mpstat-T", ("mpstat", 2, "2020-06-01 12:53:21", "2020-06-01 12:53:22")),
    # -U-style epochs 1591016001 and 1591016002
    ("sysstat/mpstat/expected.mpstat-U", ("mpstat", 2, "2020-06-01 12:53:21", "2020-06-01 12:53:22")),
    ("sysstat/mpstat/expected.mpstat-dec", ("mpstat", 1, "2020-06-01 12:53:20", "2020-06-01 12:53:20")),
]
# fmt: on

#: The pt-stalk collection directories, each also read as one tarred bundle.
COLLECTIONS = (
    "My-gather/pt-stalk/example1",
    "My-gather/pt-stalk/example2",
    "percona-toolkit/pt-secure-collect",
)


def _row(entry: tuple[str, tuple] | ParameterSet) -> tuple[str, tuple, bool]:
    """(path, expectation, marked xfail) of a CORPUS entry."""
    if isinstance(entry, ParameterSet):
        path, want = entry.values
        return path, want, any(m.name == "xfail" for m in entry.marks)  # type: ignore[return-value]
    return entry[0], entry[1], False


def _params() -> list[ParameterSet]:
    out = []
    for entry in CORPUS:
        path, want, _ = _row(entry)
        marks = entry.marks if isinstance(entry, ParameterSet) else ()
        out.append(pytest.param(path, want, marks=marks, id=path))
    return out


def _only(bundle: Bundle, member: str) -> ParsedSource | NotUsed:
    found: list[ParsedSource | NotUsed] = [s for s in bundle.sources if s.member == member]
    found += [n for n in bundle.not_used if n.member == member]
    assert len(found) == 1, f"{member}: {found}"
    return found[0]


def _check_time(got: pd.Timestamp | None, want: str | None, what: str) -> None:
    if len(want) == len("HH:MM:SS"):  # the file prints a time of day and no date
        assert got.strftime("%H:%M:%S") == want, what
    else:
        assert got == pd.Timestamp(want, tz="UTC"), what


def _check(got: ParsedSource | NotUsed, want: tuple) -> None:
    if want[0] is None:
        assert isinstance(got, NotUsed), f"expected not used, got a {got.format} source"
        assert want[1] in got.reason
        return
    assert isinstance(got, ParsedSource), f"not used: {got.reason}"
    fmt, samples, first, last = want
    assert (got.format, got.samples) == (fmt, samples)
    if samples == 0:
        assert (got.start, got.end) == (None, None)
    elif first is None:  # no time in the file: whatever times the parser made up must say so
        assert got.clock == Clock.INFERRED
    else:
        _check_time(got.start, first, "first ts")
        _check_time(got.end, last, "last ts")


@pytest.mark.parametrize(("path", "want"), _params())
def test_each_capture_read_alone(samples: Path, path: str, want: tuple) -> None:
    bundle = read_bundle(samples / path)
    assert bundle.members_seen == 1
    _check(_only(bundle, Path(path).name), want)


def _tarred(directory: Path, tmp_path: Path) -> Path:
    """``directory`` packed as ``<name>/<file>`` into a temporary .tar.gz (the samples stay in place)."""
    tgz = tmp_path / f"{directory.name}.tar.gz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(directory, arcname=directory.name)
    return tgz


@pytest.mark.parametrize("directory", COLLECTIONS)
def test_each_collection_tarred_reads_member_by_member(samples: Path, tmp_path: Path, directory: str) -> None:
    src = samples / directory
    bundle = read_bundle(_tarred(src, tmp_path))
    rows = {
        path: (want, xfail) for path, want, xfail in map(_row, CORPUS) if path.startswith(directory + "/")
    }
    members = {s.member for s in bundle.sources} | {n.member for n in bundle.not_used}
    assert members == {f"{src.name}/{Path(p).name}" for p in rows}
    for path, (want, xfail) in rows.items():
        if not xfail:  # a known bug is asserted by the per-file row only
            _check(_only(bundle, f"{src.name}/{Path(path).name}"), want)


@pytest.mark.parametrize("directory", COLLECTIONS)
def test_collection_offset_comes_from_ts_markers(samples: Path, tmp_path: Path, directory: str) -> None:
    # `TS 1776789801.009025316 2026-04-21 16:43:21`: epoch and wall clock agree, the host runs in UTC.
    bundle = read_bundle(_tarred(samples / directory, tmp_path))
    assert (bundle.utc_offset_s, bundle.utc_offset_origin) == (0, "TS markers (epoch vs wall clock)")
    assert bundle.layout == "pt-stalk"


def test_the_table_covers_every_sample_file(samples: Path) -> None:
    on_disk = {p.relative_to(samples).as_posix() for p in samples.rglob("*") if p.is_file()} - {"README.md"}
    in_table = [_row(e)[0] for e in CORPUS]
    assert len(in_table) == len(set(in_table))
    assert set(in_table) == on_disk


def test_no_sample_crashes_a_parser(samples: Path) -> None:
    failed = []
    for path, _, _ in map(_row, CORPUS):
        bundle = read_bundle(samples / path)
        failed += [f"{path}: {n.reason}" for n in bundle.not_used if "parser failed" in n.reason]
    assert failed == []
