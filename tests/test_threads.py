"""Lazy SMP (`Threads` > 1): the shared hash table, the helper searches, and the runner's helpers.

The runner tests start real worker processes. That a stop (or the main search's own end)
reaches the helpers is shown by what a helper can only do once its search has ended: it
answers the next request (`new_game`'s acknowledgement) only after its search loop returns.
"""

from __future__ import annotations

import time
from multiprocessing import shared_memory

import anyio
import chess
import pytest

from cb_async.lazy_smp_helpers import HelperPool, shared_table_bytes
from cb_async.limits import Limits
from cb_async.results import SearchInfo
from cb_async.runner import ProcessRunner, library_context
from cb_async.search import Searcher, StopToken
from cb_async.search.scores import INFINITY, MATE
from cb_async.search.settings import SearchSettings
from cb_async.search.sources import MoveSources
from cb_async.search.tt import EXACT, LOWER, UPPER, Entry, SharedSlots, TranspositionTable

MATE_IN_THREE = "r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1"
MIDDLEGAME = "r1bq1rk1/2p1bppp/p1np1n2/1p2p3/4P3/1BP2N2/PP1P1PPP/RNBQR1K1 w - - 1 9"


def slots(count: int = 1024) -> SharedSlots:
    return SharedSlots(memoryview(bytearray(count * 16)))


def test_a_shared_slot_reads_back_every_kind_of_entry() -> None:
    table = slots()
    entries: list[Entry] = [
        (-(1 << 63), 1, EXACT, 0, None),
        ((1 << 63) - 1, 200, LOWER, MATE - 3, chess.Move.from_uci("e1g1")),
        (123456789, 7, UPPER, -INFINITY, chess.Move.from_uci("a7a8n")),
        (-987654321, 3, LOWER, INFINITY, chess.Move.from_uci("h2h1q")),
        (42, 12, EXACT, -35, chess.Move.from_uci("a1h8")),
    ]
    for slot, entry in enumerate(entries):
        table[slot] = entry
    assert [table[slot] for slot in range(len(entries))] == entries
    assert table[len(entries)] is None
    assert len(table) == 1024


def test_a_slot_written_by_two_processes_at_once_reads_as_a_miss() -> None:
    table, other = slots(), slots()
    table[5] = (111, 4, EXACT, 10, None)
    other[5] = (222, 9, LOWER, -50, chess.Move.from_uci("e2e4"))
    # A torn write: the entry word of the second write beside the key word of the first.
    table._words[11] = other._words[11]
    entry = table[5]
    assert entry is not None and entry[0] not in (111, 222)


def test_clearing_a_shared_table_empties_every_slot() -> None:
    table = slots(1 << 17)  # more than one chunk of the clear
    for slot in (0, 1 << 16, (1 << 17) - 1):
        table[slot] = (slot + 1, 1, EXACT, 0, None)
    table.clear()
    assert all(table[slot] is None for slot in (0, 1 << 16, (1 << 17) - 1))


def test_the_search_on_a_shared_table_finds_the_mate_and_fills_it() -> None:
    searcher = Searcher()
    table = slots(1 << 14)
    searcher.share_table(table)
    result = searcher.search(chess.Board(MATE_IN_THREE), (), Limits(depth=7), StopToken())
    assert result.best_move == chess.Move.from_uci("f6a6")
    assert result.score.mate == 3
    assert searcher.hashfull() > 0
    searcher.new_game()
    assert searcher.hashfull() == 0


def test_a_helper_searches_to_the_depth_limit_and_an_odd_helper_a_ply_ahead() -> None:
    infos: list[SearchInfo] = []
    Searcher().search(chess.Board(MIDDLEGAME), (), Limits(depth=4), StopToken(), infos.append, helper=1)
    assert [info.depth for info in infos] == [2, 3, 4, 4]


def test_a_helper_whose_search_is_already_stopped_returns_at_once() -> None:
    stop = StopToken()
    stop.set()
    result = Searcher().search(chess.Board(MIDDLEGAME), (), Limits(infinite=True), stop, helper=1)
    assert result.depth == 0 and result.nodes == 0


def test_the_pool_makes_one_table_per_hash_size_and_frees_the_ones_it_drops() -> None:
    pool = HelperPool(library_context(), None, lambda function, argument: False)
    first = pool.table_for(2, 1)
    assert first is not None and pool.table_for(2, 1) == first
    assert shared_memory.SharedMemory(name=first).size >= shared_table_bytes(1)
    second = pool.table_for(3, 2)
    assert second is not None and second != first
    with pytest.raises(FileNotFoundError):
        shared_memory.SharedMemory(name=first)
    assert pool.table_for(1, 2) is None
    with pytest.raises(FileNotFoundError):
        shared_memory.SharedMemory(name=second)
    third = pool.table_for(2, 2)
    pool.close()
    with pytest.raises(FileNotFoundError):
        shared_memory.SharedMemory(name=third or "")


def test_the_table_of_a_size_has_a_power_of_two_of_slots() -> None:
    for megabytes in (1, 3, 16, 100):
        size = shared_table_bytes(megabytes)
        assert size <= max(megabytes * 1024 * 1024, 1024 * 16)
        assert (size // 16) & (size // 16 - 1) == 0
    private = TranspositionTable(1)
    private.share(slots(2048))
    assert private.mask == 2047


async def _runner_with_a_helper() -> ProcessRunner:
    runner = ProcessRunner(library_context())
    await runner.attach()
    await runner.wait_ready()
    first = runner.begin(chess.Board(), Limits(depth=1), hash_mb=4, settings=SearchSettings(threads=2),
                         deadlines=None, on_info=lambda info: None, on_end=lambda search_id: None)
    with anyio.fail_after(30):
        await first.result()
        assert await runner.wait_helpers() == 1
    return runner


def test_one_stop_ends_the_main_search_and_its_helper() -> None:
    async def scenario() -> None:
        runner = await _runner_with_a_helper()
        try:
            deep = anyio.Event()

            def on_info(info: SearchInfo) -> None:
                if info.depth >= 3:
                    deep.set()

            search = runner.begin(chess.Board(MIDDLEGAME), Limits(infinite=True), hash_mb=4,
                                  settings=SearchSettings(threads=2), deadlines=None, on_info=on_info,
                                  on_end=lambda search_id: None)
            with anyio.fail_after(30):
                await deep.wait()
            search.stop()
            with anyio.fail_after(5):
                result = await search.result()
                await runner.new_game()  # the helper acknowledges only after its search ended
            assert result.best_move is not None and chess.Board(MIDDLEGAME).is_legal(result.best_move)
        finally:
            runner.close()

    anyio.run(scenario)


def test_the_helpers_stop_when_the_main_search_answers_by_itself() -> None:
    async def scenario() -> None:
        runner = await _runner_with_a_helper()
        try:
            now = time.monotonic()
            # The main search paces itself to the soft deadline; a helper does not pace, and
            # would search on to the hard one a minute later if the runner did not stop it.
            search = runner.begin(chess.Board(MIDDLEGAME), Limits(), hash_mb=4, settings=SearchSettings(threads=2),
                                  deadlines=(now + 0.2, now + 60), on_info=lambda info: None,
                                  on_end=lambda search_id: None)
            with anyio.fail_after(10):
                result = await search.result()
                await runner.new_game()
            assert result.best_move is not None
            assert time.monotonic() - now < 10
        finally:
            runner.close()

    anyio.run(scenario)


def test_a_strength_level_gets_no_help() -> None:
    """Levels were calibrated on one search: a helper filling its table would lift a level
    above its label, so a level's helper searches nothing (a full-strength one does)."""
    sources = MoveSources(Searcher())
    sources.searcher.share_table(slots(1 << 12))
    board = chess.Board(MIDDLEGAME)
    sources.help(board, (), Limits(depth=3), SearchSettings(limit_strength=True, elo=1400), StopToken(), 1)
    assert sources.searcher.hashfull() == 0
    sources.help(board, (), Limits(depth=3), SearchSettings(), StopToken(), 1)
    assert sources.searcher.hashfull() > 0
