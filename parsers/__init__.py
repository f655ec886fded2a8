"""Parsers for the captures in a diagnostic bundle: plain Python + pandas, no Django.

Each module ``parsers/<format>.py`` reads one format (see ``parsers/base.py`` for the contract and
the shared stream, chunk, marker and clock helpers, ``parsers/_sysstat.py`` and
``parsers/_sysstat_time.py`` for what mpstat and iostat share, ``parsers/_vertical.py`` for the one
reader of ``\\G`` output, and ``parsers/registry.py`` for detection order). ``parsers/ingest/bundle.py`` walks
an archive safely (``parsers/ingest/archive.py``), detects each member by content, parses it and puts every
source on UTC.

Every frame has ``ts`` datetime64[ns, UTC] and ``line_no`` int64 (1-based line where the row starts).
Text columns that repeat (names, states, IRQs) are pandas ``category``; counts that may be NULL are
the nullable ``Int64``. Every parser also puts in ``meta["variant"]`` a short string of the version
and locale clues it saw (``sysstat 12 -x (r_await, aqu-sz, d/s, f/s)``, ``ps -eLo with wchan``,
``mpstat -I SUM -P ALL, decimal comma``), shown per member on the case page.

vmstat -> ``vmstat``: ``since_boot`` bool (the first report of a run averages since boot: keep it,
    leave it out of rates); ``r``, ``b`` (processes runnable / in uninterruptible sleep);
    ``swpd_kib free_kib buff_kib cache_kib`` or, with ``-a``, ``inact_kib active_kib`` (KiB; int64 as
    printed, float64 when ``parse(..., unit="k"|"m"|"M")`` converts a ``-S`` capture); ``si so``
    (KiB/s swapped in/out); ``bi bo`` (blocks/s); ``in cs`` (interrupts, context switches per
    second); ``us sy id wa st gu`` (percent of CPU time); ``ts_source`` (``line``, ``marker`` or
    ``inferred``). All int64. Absent columns are absent, not zero; an unknown one is kept under its
    snake_case name.
mpstat -> ``mpstat_cpu``: ``since_boot`` bool, ``cpu`` int64 (-1 for ``all``), ``usr nice sys
    iowait irq soft steal guest gnice idle`` float64 (percent; the columns the capture has);
    ``mpstat_intr``: ``since_boot``, ``cpu``, ``intr_per_s`` (-I SUM, or sysstat 7-9's trailing
    column); ``mpstat_irq``: ``since_boot``, ``cpu``, ``irq`` category (the column name, e.g.
    ``LOC`` or ``NET_RX``), ``kind`` category (``hard``/``soft``), ``per_s`` float64. The first
    non-empty frame comes first.
iostat -> ``iostat``: ``since_boot`` bool, ``device`` str; per second: ``r_per_s w_per_s d_per_s
    f_per_s tps rrqm_per_s wrqm_per_s drqm_per_s rqm_per_s``; bytes/s whatever -k/-m/-h or sectors
    said: ``r_bytes_per_s w_bytes_per_s d_bytes_per_s bytes_per_s``; bytes since the previous report
    (default report): ``r_bytes w_bytes d_bytes``; ms: ``r_await w_await d_await f_await await
    svctm``; ``aqu_sz`` (requests); KiB: ``rareq_sz_kib wareq_sz_kib dareq_sz_kib areq_sz_kib``;
    percent: ``rrqm_pct wrqm_pct drqm_pct util_pct`` (float64, the columns the capture has);
    ``iostat_cpu``: ``since_boot``, ``user nice system iowait steal idle`` (percent).
ps -> ``ps_threads``: ``snapshot`` int64, ``pid`` int64, ``tid`` int64 (= pid when the listing has
    no threads), ``ppid`` Int64, ``user`` category, ``stat`` category (full STAT), ``state``
    category (its first letter: R, S, D, Z, T, I), ``pcpu`` float64 (percent), ``comm`` category,
    ``wchan`` category (``-`` kept as empty string; NA when the listing has no WCHAN).
interrupts -> ``interrupts``: ``snapshot`` int64, ``irq`` category (``LOC``, ``RES``, ``24``...),
    ``cpu`` int64 (-1 for the ERR/MIS totals), ``count`` int64 (raw counter), ``per_s`` float64
    (rate since the previous snapshot; NaN for the first, wrap/reset handled);
    ``interrupts_desc``: ``irq`` category, ``chip``, ``hwirq``, ``type``, ``devices`` (str).
processlist -> ``processlist``: ``line_end`` int64, ``snapshot`` int64, ``id`` Int64, ``user``,
    ``host``, ``db``, ``command`` string, ``time_s`` Int64, ``state``, ``info`` string (NULL ->
    missing), plus any of ``time_ms`` float64, ``rows_sent rows_examined rows_read`` Int64,
    ``progress`` float64 present in the capture; ``ts_source`` (``marker`` or ``inferred``).
mysqladmin -> ``mysqladmin``: ``variable`` category, ``value`` float64 (absolute), ``per_s``
    float64 (rate; NaN first and for gauges).
threads -> ``pfs_threads``: ``line_end`` int64, ``snapshot`` int64, ``thread_id`` Int64, ``name``,
    ``type``, ``processlist_id`` Int64, ``processlist_user``, ``processlist_host``,
    ``processlist_db``, ``processlist_command``, ``processlist_time_s`` Int64,
    ``processlist_state``, ``processlist_info`` (str, NULL -> missing), ``thread_os_id`` Int64
    (performance_schema.threads as pt-stalk writes it).
meminfo -> ``meminfo``: ``field`` category, ``kib`` float64 (page counts for ``HugePages_*``).
top -> ``top_load``: ``load1 load5 load15`` float64, ``tasks running sleeping`` Int64.
Context-only formats (variables, pt-stalk -output) return an empty main frame (``ts``,
``line_no``) and put what they read in ``meta`` (``variables``: dict, ``loop_starts``: list ...).
"""
