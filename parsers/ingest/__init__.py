"""The ingest pipeline: from an uploaded bundle to its parsed, reduced sources on UTC. No Django.

Separate from the per-format parsers (``parsers/<format>.py``, found through ``parsers/registry.py``),
which each read one capture's text; this package moves a bundle's bytes to them and back:

- ``archive``: the safe walk of the container (tar of any compression, zip, one file), member by
  member as streams, with limits on count, size and ratio; links, devices, ``..`` refused.
- ``pieces``: a member cut into pieces of a few MB at its snapshot markers; ``Work`` (parse a piece,
  apply the reducer handed in, compress its text) and the ``Pipeline`` that keeps pieces of
  consecutive members in flight and hands results back in member order.
- ``pool``: parse processes (``python -m parsers.ingest.pool``) that run ``Work`` on pieces.
- ``malloc``: the memory of the processes that read bundles: glibc tunables (``MALLOC_TUNABLES``),
  the mmap threshold (``steady_heap``), ``release_memory`` (``malloc_trim``), ``resident_bytes``.
- ``bundle``: ``read_bundle``, the whole walk (detect each member by content, parse it piece by
  piece, shift local times to UTC).
"""
