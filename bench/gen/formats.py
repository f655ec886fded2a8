"""Tool headers and row formats of the generated members, copied from the real output (procps-ng
4.0.2, sysstat 12.6.1, MariaDB 10.11.19 ``mysqladmin``)."""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------
# Tool headers, copied from the real output (procps-ng 4.0.2, sysstat 12.6.1)
# ---------------------------------------------------------------------------------------------
VMSTAT_HEAD = (
    "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----\n"
    " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC\n"
)
VMSTAT_ROW = "%2d %2d %6d %6d %6d %6d %4d %4d %5d %5d %4d %4d %2d %2d %2d %2d %2d %s\n"
#: After the time of day, printed as ``%-11s`` (sysstat mpstat.c).
MPSTAT_HEAD = "  CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle\n"
MPSTAT_INTR_HEAD = "  CPU    intr/s\n"
IOSTAT_HEAD = (
    "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm"
    " w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util\n"
)
PS_HEAD = "  PID   TID  PPID USER     STAT %CPU COMMAND         WCHAN\n"
PL_ROW_SEP = "*************************** %d. row ***************************\n"
MYSQLADMIN_BORDER = "+" + "-" * 50 + "+" + "-" * 50 + "+\n"
MYSQLADMIN_ROW = "| %-48s | %-48s |\n"


def _widths(header: str, first: int) -> list[int]:
    """Right-aligned column widths of a sysstat header after its first ``first`` characters."""
    ends, pos, rest = [], first, header.rstrip("\n")[first:]
    for token in rest.split():
        idx = header.index(token, pos)
        pos = idx + len(token)
        ends.append(pos)
    return [b - a for a, b in zip([first, *ends[:-1]], ends, strict=True)]


IOSTAT_FMT = "%-13s" + "".join(f"%{w}.2f" for w in _widths(IOSTAT_HEAD, 13)) + "\n"
MPSTAT_FMT = "%-11s %4s" + " %7.2f" * 10 + "\n"
