"""Parsers for the captures in a diagnostic bundle: plain Python + pandas, no Django.

Each module ``parsers/<format>.py`` reads one format (see ``parsers/base.py`` for the contract and
``parsers/registry.py`` for detection order). ``parsers/bundle.py`` walks an archive safely
(``parsers/archive.py``), detects each member by content, parses it and puts every source on UTC.

The frames each format produces (every frame also has ``ts`` datetime64[ns, UTC] and ``line_no``):

vmstat -> ``vmstat``: ``since_boot`` bool (the first report of a run averages since boot: keep it,
    leave it out of rates); ``r``, ``b`` (processes runnable / in uninterruptible sleep);
    ``swpd_kib free_kib buff_kib cache_kib inact_kib active_kib`` (KiB); ``si so`` (KiB/s swapped
    in/out); ``bi bo`` (blocks/s); ``in cs`` (interrupts, context switches per second);
    ``us sy id wa st gu`` (percent of CPU time). Absent columns are absent, not zero.
mpstat -> ``mpstat_cpu``: ``cpu`` (int, -1 for ``all``), ``usr nice sys iowait irq soft steal guest
    gnice idle`` (percent); ``mpstat_intr``: ``cpu``, ``intr_per_s`` (-I SUM); ``mpstat_irq``:
    ``cpu``, ``irq`` (the column name, e.g. ``LOC`` or ``NET_RX``), ``kind`` (``hard``/``soft``),
    ``per_s``.
iostat -> ``iostat``: ``device``, ``r_per_s w_per_s d_per_s f_per_s rrqm_per_s wrqm_per_s``,
    ``r_bytes_per_s w_bytes_per_s d_bytes_per_s`` (bytes/s whatever -k/-m/-h said),
    ``r_await w_await d_await f_await await svctm`` (ms), ``aqu_sz`` (requests), ``rareq_sz_kib
    wareq_sz_kib`` (KiB), ``util_pct``; ``iostat_cpu``: ``user nice system iowait steal idle``.
ps -> ``ps_threads``: ``snapshot`` (int), ``pid``, ``tid`` (= pid when the listing has no threads),
    ``ppid``, ``user``, ``stat`` (full STAT), ``state`` (its first letter: R, S, D, Z, T, I),
    ``pcpu`` (percent), ``comm``, ``wchan`` (``-`` kept as empty string).
interrupts -> ``interrupts``: ``irq`` (``LOC``, ``RES``, ``24``...), ``cpu`` (int), ``count``
    (raw counter), ``per_s`` (rate since the previous snapshot; NaN for the first, wrap/reset
    handled); ``interrupts_desc``: ``irq``, ``chip``, ``hwirq``, ``type``, ``devices``.
processlist -> ``processlist``: ``snapshot``, ``line_end``, ``id``, ``user``, ``host``, ``db``,
    ``command``, ``time_s``, ``state``, ``info`` (NULL -> missing), plus any of ``time_ms``,
    ``rows_sent``, ``rows_examined``, ``rows_read``, ``progress`` present in the capture.
mysqladmin -> ``mysqladmin``: ``variable``, ``value`` (absolute), ``per_s`` (rate; NaN first).
threads -> ``pfs_threads``: ``thread_id``, ``name``, ``type``, ``processlist_id``,
    ``processlist_user``, ``processlist_command``, ``processlist_state``, ``processlist_info``,
    ``thread_os_id`` (performance_schema.threads as pt-stalk writes it).
meminfo -> ``meminfo``: ``field``, ``kib``.
top -> ``top_load``: ``load1 load5 load15``, ``tasks``, ``running``, ``sleeping``.
Context-only formats (variables, hostname, pt-stalk -output) return an empty main frame and put
what they read in ``meta`` (``variables``: dict, ``host``: str, ``loop_starts``: list).
"""
