"""What each encode task of a distributed segment or ZipNum index writes, decided in a task on a
worker once every key range is merged (so that the encode tasks wait in Dask, not for a round
trip through the client).

The parts, in key order, are one sequence of lines (``parts_table``: each
part's first line number and count; for ZipNum, counting only the lines it
keeps). A segment's encode task k writes the blocks that start in part k
(warchive.distributed.blocks.block_spans says where one machine's writer
closes them); a ZipNum encode task k the blocks of ``lines_per_block`` lines
that start in part k. Each piece carries the key of its task: a digest of
the plan, its lines and the keys of the parts it reads, so that a rerun
reuses it (warchive.distributed.manifest). This module decides; it must not
read or write lines.
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, List, Optional, Sequence

from ..index.segment import DEFAULT_BLOCK_BYTES
from . import manifest
from .blocks import block_spans
from .shards import lengths_name, part_name

__all__ = ["parts_table", "segment_pieces", "zipnum_pieces"]


def parts_table(merged: Sequence[Dict[str, Any]], directory: str, kept: bool) -> List[Dict[str, Any]]:
    """For each key range (merged: the merge manifests in key order), its part as {"path", "first":
    the number of its first line, "lines", "key": its manifest's key, "lengths": its lengths
    file}; with `kept`, lines counted as ZipNum keeps them (no ' CDX ' headers)."""
    table, first = [], 0
    for k, m in enumerate(merged):
        n = m["lines"] - (m["headers"] if kept else 0)
        table.append({"path": os.path.join(directory, part_name(k)), "first": first, "lines": n, "key": m["key"],
                      "lengths": os.path.join(directory, lengths_name(k))})
        first += n
    return table


def _piece(plan_id: str, kind: str, k: int, span: List[int], table: List[Dict[str, Any]], *more: Any) -> Dict[str, Any]:
    inputs = [t["key"] for t in table if t["first"] < span[1] and t["first"] + t["lines"] > span[0]]
    return {"span": span, "parts": table, "key": manifest.digest(plan_id, kind, k, span, inputs, *more)}


def segment_pieces(plan_id: str, directory: str, options: Dict[str, Any],
                   *merged: Dict[str, Any]) -> List[Optional[Dict[str, Any]]]:
    """For each key range, the piece of the segment its encode task writes ({"span": [first, end)
    line numbers, "parts": the parts table, "key"}), or None when no block starts in it."""
    table = parts_table(merged, directory, kept=False)
    spans = block_spans(table, int(options.get("block_lines", 0)),
                        int(options.get("block_bytes", DEFAULT_BLOCK_BYTES)))
    return [None if span is None else _piece(plan_id, "segment", k, span, table, options)
            for k, span in enumerate(spans)]


def zipnum_pieces(plan_id: str, directory: str, lines_per_block: int, compressor: str, level: Any,
                  *merged: Dict[str, Any]) -> Dict[str, Any]:
    """{"pieces": for each key range, the piece of the cluster its encode task writes (the kept
    lines of the blocks that start in it) or None, "bytes": the size of the sorted CDXJ, by which
    write_zipnum cuts its parts}."""
    n = lines_per_block
    table = parts_table(merged, directory, kept=True)
    total = table[-1]["first"] + table[-1]["lines"] if table else 0
    pieces: List[Optional[Dict[str, Any]]] = []
    for k, t in enumerate(table):
        a = math.ceil(t["first"] / n) * n
        if a >= t["first"] + t["lines"]:
            pieces.append(None)   # no block starts in this range
            continue
        b = min(math.ceil((t["first"] + t["lines"]) / n) * n, total)
        pieces.append(_piece(plan_id, "zipnum", k, [a, b], table, n, compressor, level))
    return {"pieces": pieces, "bytes": sum(m["bytes"] for m in merged)}
