"""Who holds, waits or consumes, read from one host's timeline: who holds the lock others wait for
(``blockers``), who takes the CPUs or the disk (``consumers``), OS threads joined to MySQL sessions
(``threads``)."""
