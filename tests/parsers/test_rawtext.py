"""Compressed member text: chunks read back from several threads at once (the web's request threads)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from parsers.rawtext import chunks_of, text_of

THREADS = 8


def _text(seed: int) -> bytes:
    return b"".join(b"%d line %d of text %s\n" % (seed, i, b"x" * (i % 97)) for i in range(40_000))


def test_chunks_are_made_and_read_back_by_several_threads_at_once() -> None:
    texts = [_text(seed) for seed in range(THREADS)]

    def round_trip(text: bytes) -> list[str]:
        got = []
        for _ in range(5):
            chunks = chunks_of(text, 1, chunk_bytes=256 << 10)
            got.append("".join(text_of(c.data) for c in chunks))
        return got

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        results = list(pool.map(round_trip, texts))
    for text, got in zip(texts, results, strict=True):
        assert got == [text.decode()] * 5
