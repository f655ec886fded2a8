"""The cross-host part: the rules over every host's timeline (``rules``, ``nodes``, their words in
``texts``), who replicates from whom (``topology``), why a replica is behind (``replica_causes``),
Galera nodes' states (``galera_states``), clock offsets between hosts (``offsets``)."""
