"""analyzer/evidence/consumers.py: who is MySQL, and which state D is a wait for a disk."""

from __future__ import annotations

import pandas as pd

from analyzer.evidence.consumers import io_wait_channel, is_mysqld


def test_only_the_server_is_mysqld_not_its_clients_or_wrappers() -> None:
    names = pd.Series(["mysqld", "mariadbd", "mysqldump", "mysqld_safe", "mariadb-dump", "mariadb+", "fio"])
    assert is_mysqld(names).tolist() == [True, True, False, False, False, True, False]


def test_state_d_counts_as_disk_io_only_on_a_block_io_wait_channel() -> None:
    """Wait channels from the overlap-io and overlap-commit captures (iomap_dio_rw, submit_bio_wait,
    jbd2_log_wait_commit, folio_wait_bit_common), none shown (top has none; ps prints '-'), and
    channels of a D state that is no disk's: an NFS RPC, a directory's rwsem."""
    wchan = pd.Series(
        [
            "iomap_dio_rw",
            "submit_bio_wait",
            "jbd2_log_wait_commit",
            "folio_wait_bit_common",
            "",
            "-",
            "rpc_wait_bit_killable",
            "rwsem_down_write_slowpath",
        ]
    )
    assert io_wait_channel(wchan).tolist() == [True, True, True, True, True, True, False, False]
