"""warchive.heap.DaryHeap: pops in heapq's order, for any arity."""

from __future__ import annotations

import heapq

from hypothesis import given, settings, strategies as st

from warchive.heap import DaryHeap


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.tuples(st.just("push"), st.integers(-50, 50)), st.just(("pop", 0)))),
       st.integers(2, 8))
def test_dary_heap_pops_in_heapq_order(ops, d):
    h = DaryHeap(d)
    ref = []
    seq = 0
    for op, v in ops:
        if op == "push":
            seq += 1
            h.push((v, seq))
            heapq.heappush(ref, (v, seq))
        elif ref:
            assert h.pop() == heapq.heappop(ref)
        assert len(h) == len(ref)
    while ref:
        assert h.pop() == heapq.heappop(ref)


def test_dary_heap_heapify():
    items = [(x * 7919) % 101 for x in range(300)]
    h = DaryHeap(5, items)
    assert [h.pop() for _ in range(300)] == sorted(items)
