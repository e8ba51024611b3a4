"""``scrub --auto``: repair what a scrub found, a few files at a time, and raise an alert instead of
repairing when the damage looks like a failing disk rather than a few bad sectors.

``plan(report, max_repairs)`` returns a ``Plan``: the files to repair (repairable damage only: never
a file whose records fail at ingest, never one beyond repair), or an alert naming the reason and the
volume when the damage is a burst: a volume unavailable, more than ``max_repairs`` files damaged, or
(two damaged files or more) most of the damage on one volume. A burst is a job for whoever replaces
the disk; repairing file after file from it would read the whole store while the disk dies.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import List, Optional

from .scrub import DAMAGE, ScrubReport

DEFAULT_MAX_REPAIRS = 10


@dataclass
class Plan:
    repair: List[str] = field(default_factory=list)
    alert: str = ""                  # non-empty: nothing is repaired
    volume: Optional[int] = None     # the volume the alert is about


def plan(report: ScrubReport, max_repairs: int = DEFAULT_MAX_REPAIRS) -> Plan:
    damaged = [f for f in report.files if f.status == DAMAGE]
    if not damaged:
        return Plan()
    unavailable = sorted({x.volume for f in damaged for x in f.findings
                          if x.kind == "volume-unavailable" and x.volume is not None})
    if unavailable:
        return Plan(alert=f"volume {unavailable[0]} is unavailable ({len(damaged)} files affected): replace or "
                          "remount it, then run `warchive store repair`", volume=unavailable[0])
    if len(damaged) > max_repairs:
        per = Counter(x.volume for f in damaged for x in f.findings if x.level == DAMAGE and x.volume is not None)
        vol = per.most_common(1)[0][0] if per else None
        where = f", most on volume {vol}" if vol is not None else ""
        return Plan(alert=f"{len(damaged)} files damaged (more than --max-repairs {max_repairs}){where}: a burst, "
                          "not repaired; check the disk, then run `warchive store repair`", volume=vol)
    if len(damaged) >= 2:
        files_on = Counter(v for f in damaged for v in {x.volume for x in f.findings
                                                         if x.level == DAMAGE and x.volume is not None})
        if files_on:
            vol, n = files_on.most_common(1)[0]
            if n == len(damaged) and len(files_on) == 1:
                return Plan(alert=f"all {n} damaged files are damaged on volume {vol} alone: a failing disk? not "
                                  "repaired; check it, then run `warchive store repair`", volume=vol)
    return Plan(repair=[f.name for f in damaged])
