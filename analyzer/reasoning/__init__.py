"""From findings to a root cause: causal links, each shown by a join in the bundle (``links``, the join
functions in ``joins/``), and the verdict (``verdict``)."""
