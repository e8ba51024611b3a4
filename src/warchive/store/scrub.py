"""Scrubbing a store: finding damage before it spreads (light: the files are where the manifests say;
deep: every byte is what the manifests and the WARC records say it is).

``scrub(store, deep=False, ...)`` returns a ``ScrubReport``: a ``FileReport`` per stored file
(its ``Finding``s) and the store-wide findings (orphans). Per file:

light   every copy of the manifest on an available volume parses and is byte-identical to the
        others (``manifest_state``: a torn copy, one that disagrees, one missing from a volume are
        each named with the volume); every chunk is on its volume with the size the manifest says.
deep    the light checks, then one pass over every chunk file, stripe by stripe: each fragment
        against its BLAKE3 hash, each chunk file against its sha256, the file's bytes (the data
        fragments', or decoded from k good fragments) against the file's sha256; then the records
        read again from those bytes (warchive's reader over ``StoreFile``, every gzip member
        inflated and its CRC checked) and their listing against the manifest's ``listing_sha256``,
        each record's WARC-Block-Digest verified (authoritative) and its WARC-Payload-Digest
        (advisory: producers digest chunked bodies differently, warchive.warc.verify names them).

Levels of a finding: ``damage`` (chunks or manifest copies not as stored: ``repair`` rebuilds
them when no stripe lost more than m fragments), ``beyond`` (a stripe with fewer than k good
fragments, or no good manifest copy: not repairable), ``records`` (the stored bytes are those that
were put — the file's sha256 matches — but records fail their digests or their listing: bad at
ingest, flagged and never "repaired"), ``advisory`` (payload digests, producer defects), ``orphan``
(chunk and temporary files no manifest accounts for, store-wide).

Deep scrubs are rate-limited (``rate`` bytes/s of chunk bytes read), incremental (``since``: only
files whose last deep check is older, oldest first, as Ceph's deep-scrub interval) and resumable:
STORE/scrub-state.json (docs/format.md "Scrub state") records when each file was last deep-checked
and the run in progress, and is rewritten (temp file, fsync, rename) after every file, so a scrub
that is killed goes on, when run again, with the files it had not reached. One scrub at a time
(STORE/scrub.lock).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple, cast

from ..durable import AtomicOutput
from ..errors import ArchiveError, StoreError
from ..warc.digest import DigestError
from ..warc.reader import Record
from ..warc.verify import DEFECT, DEFECTS, PROBLEM, verify_digests
from .catalog import Store
from .codec import fragment_digest
from .jsonfile import canonical, parse, read_capped
from .layout import CHUNKS, MANIFEST_SUFFIX, MANIFESTS, TMP_SUFFIX, manifest_path
from .manifest import MANIFEST_CAP, Manifest
from .records import listing_digest, read_records
from .storefile import StoreFile

DAMAGE, BEYOND, RECORDS, ADVISORY, ORPHAN = "damage", "beyond", "records", "advisory", "orphan"
STATE_FILE = "scrub-state.json"
SCRUB_LOCK = "scrub.lock"
STATE_FORMAT = "warchive-store-scrub-state"
STATE_VERSION = 1
STATE_CAP = 1 << 28
MAX_LISTED = 20          # records named one by one in a finding; the rest are counted


@dataclass(frozen=True)
class Finding:
    kind: str                    # e.g. "chunk-missing", "fragment-hash", "block-digest", "orphan-chunk"
    level: str                   # DAMAGE, BEYOND, RECORDS, ADVISORY, ORPHAN
    detail: str
    volume: Optional[int] = None
    path: Optional[str] = None
    chunk: Optional[int] = None
    stripes: Tuple[int, ...] = ()

    def to_json(self) -> Dict[str, Any]:
        return {"kind": self.kind, "level": self.level, "detail": self.detail, "volume": self.volume,
                "path": self.path, "chunk": self.chunk, "stripes": list(self.stripes)}


@dataclass
class FileReport:
    name: str
    deep: bool = False           # deep-checked in this run (else light only, or skipped)
    skipped: str = ""            # why a deep check was not made (checked recently)
    findings: List[Finding] = field(default_factory=list)
    bytes_read: int = 0

    def levels(self) -> Set[str]:
        return {f.level for f in self.findings}

    @property
    def status(self) -> str:
        lv = self.levels()
        for level in (BEYOND, DAMAGE, RECORDS):
            if level in lv:
                return level
        return "ok"

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "status": self.status, "deep": self.deep, "skipped": self.skipped,
                "bytes_read": self.bytes_read, "findings": [f.to_json() for f in self.findings]}


@dataclass
class ScrubReport:
    deep: bool
    files: List[FileReport] = field(default_factory=list)
    store: List[Finding] = field(default_factory=list)    # orphans, state-file problems
    seconds: float = 0.0
    resumed: bool = False

    @property
    def bytes_read(self) -> int:
        return sum(f.bytes_read for f in self.files)

    def damaged(self) -> List[FileReport]:
        """Files with damage (repairable or not) or records that fail."""
        return [f for f in self.files if f.status != "ok"]

    @property
    def clean(self) -> bool:
        return not self.damaged()

    def to_json(self) -> Dict[str, Any]:
        return {"deep": self.deep, "seconds": round(self.seconds, 3), "bytes_read": self.bytes_read,
                "resumed": self.resumed, "clean": self.clean,
                "files": [f.to_json() for f in self.files], "store": [f.to_json() for f in self.store]}


# --------------------------------------------------------------------------- manifests

@dataclass
class ManifestState:
    """The copies of one name's manifest: the good one (None when none is, or copies that parse
    disagree with no majority), its bytes, and what is wrong with the others."""
    name: str
    manifest: Optional[Manifest]
    data: bytes
    findings: List[Finding]
    bad_volumes: List[int]       # available volumes whose copy is missing, damaged or disagrees


def manifest_state(store: Store, name: str) -> ManifestState:
    """Read every copy of ``name``'s manifest on an available volume (see the module docstring)."""
    findings: List[Finding] = []
    groups: Dict[bytes, List[int]] = {}
    parsed: Dict[bytes, Manifest] = {}
    bad: List[int] = []
    for i in store.available():
        p = manifest_path(store.volumes[i], name)
        try:
            data = read_capped(p, MANIFEST_CAP, "manifest")
        except FileNotFoundError:
            findings.append(Finding("manifest-missing", DAMAGE, f"no copy of the manifest on volume {i}", i, p))
            bad.append(i)
            continue
        except (OSError, StoreError) as e:
            findings.append(Finding("manifest-damaged", DAMAGE, f"the copy on volume {i} cannot be read: {e}", i, p))
            bad.append(i)
            continue
        if data not in parsed:
            try:
                parsed[data] = store.read_manifest(p, name)
            except StoreError as e:
                findings.append(Finding("manifest-damaged", DAMAGE, f"the copy on volume {i} is damaged (torn or "
                                        f"changed): {e.problem if hasattr(e, 'problem') else e}", i, p))
                bad.append(i)
                continue
        groups.setdefault(data, []).append(i)
    man: Optional[Manifest] = None
    good = b""
    if groups:
        ranked = sorted(groups.items(), key=lambda kv: -len(kv[1]))
        if len(ranked) > 1 and len(ranked[0][1]) == len(ranked[1][1]):
            sides = "; ".join(f"volumes {', '.join(map(str, v))}" for _, v in ranked)
            findings.append(Finding("manifest-conflict", BEYOND, f"copies that are each intact disagree with no "
                                    f"majority ({sides}): resolve by hand, keep the copy whose chunks match"))
        else:
            good, gvols = ranked[0]
            man = parsed[good]
            for _, others in ranked[1:]:
                for i in others:
                    findings.append(Finding("manifest-disagrees", DAMAGE, f"the copy on volume {i} is intact but "
                                            f"disagrees with the copies on volumes {', '.join(map(str, gvols))}",
                                            i, manifest_path(store.volumes[i], name)))
                    bad.append(i)
    elif not findings:
        raise StoreError(store.root, None, f"no file {name!r} in the store", "see `warchive store ls`")
    else:
        findings.append(Finding("manifest-lost", BEYOND, "no copy of the manifest is intact"))
    for i in range(len(store.volumes)):
        if store.volume_problem(i):
            findings.append(Finding("volume-unavailable", DAMAGE, store.volume_problem(i), i, store.volumes[i]))
    return ManifestState(name, man, good, findings, sorted(bad))


def chunk_findings(store: Store, man: Manifest) -> List[Finding]:
    """Light checks of ``man``'s chunk files: on an available volume, present, of the right size."""
    out = []
    for c in man.chunks:
        p = store.chunk_path(man, c.index)
        if store.volume_problem(c.volume):
            out.append(Finding("chunk-unavailable", DAMAGE, f"chunk {c.index}: its volume is unavailable",
                               c.volume, p, c.index))
            continue
        try:
            size = os.path.getsize(p)
        except FileNotFoundError:
            out.append(Finding("chunk-missing", DAMAGE, f"chunk {c.index} is missing", c.volume, p, c.index))
            continue
        except OSError as e:
            out.append(Finding("chunk-missing", DAMAGE, f"chunk {c.index}: {e.strerror or e}", c.volume, p, c.index))
            continue
        if size != c.size:
            out.append(Finding("chunk-size", DAMAGE, f"chunk {c.index} is {size} bytes, the manifest says {c.size}",
                               c.volume, p, c.index))
    return out


# --------------------------------------------------------------------------- the stripe pass

class Limiter:
    """At most ``rate`` bytes a second on average (None: no limit)."""

    def __init__(self, rate: Optional[float], sleep: Callable[[float], None] = time.sleep) -> None:
        self.rate = rate
        self.used = 0
        self.start = time.monotonic()
        self._sleep = sleep

    def take(self, n: int) -> None:
        self.used += n
        if self.rate:
            ahead = self.used / self.rate - (time.monotonic() - self.start)
            if ahead > 0:
                self._sleep(ahead)


@dataclass
class StripeScan:
    """What one pass over every fragment of a file found."""
    bad: Dict[int, Dict[int, str]]      # stripe -> {chunk index: problem}
    chunk_sha_ok: Dict[int, bool]       # chunk index -> its sha256 matched (chunks read whole)
    file_sha_ok: Optional[bool]         # None: some stripe could not be decoded
    bytes_read: int


def scan_fragments(store: Store, man: Manifest, limiter: Optional[Limiter] = None,
                   hash_chunks: bool = True) -> StripeScan:
    """Read every fragment of ``man`` once: check each against its hash, each chunk file against its
    sha256 (``hash_chunks``) and the file's bytes against the file's sha256."""
    n, k = man.n, man.k
    fds: Dict[int, int] = {}
    unreadable: Dict[int, str] = {}
    for c in man.chunks:
        if store.volume_problem(c.volume):
            unreadable[c.index] = "volume unavailable"
            continue
        try:
            fds[c.index] = os.open(store.chunk_path(man, c.index), os.O_RDONLY)
        except FileNotFoundError:
            unreadable[c.index] = "missing"
        except OSError as e:
            unreadable[c.index] = e.strerror or str(e)
    hashes = {i: hashlib.sha256() for i in fds} if hash_chunks else {}
    whole = hashlib.sha256()
    bad: Dict[int, Dict[int, str]] = {}
    decodable = True
    total = 0
    try:
        for s in range(man.stripe_count):
            want = man.fragment_length(s)
            good: Dict[int, bytes] = {}
            for i in range(n):
                if i in unreadable:
                    bad.setdefault(s, {})[i] = unreadable[i]
                    continue
                try:
                    data = os.pread(fds[i], want, man.fragment_offset(s))
                except OSError as e:
                    bad.setdefault(s, {})[i] = e.strerror or str(e)
                    continue
                total += len(data)
                if i in hashes:
                    hashes[i].update(data)
                if len(data) != want:
                    bad.setdefault(s, {})[i] = f"truncated ({len(data)} of {want} bytes)"
                elif fragment_digest(data) != man.stripes[s][i]:
                    bad.setdefault(s, {})[i] = "hash mismatch"
                else:
                    good[i] = data
            if limiter is not None:
                limiter.take(want * n)
            if not decodable:
                continue
            if all(j in good for j in range(k)):
                hs, p, size = man.header_size, man.payload_size(s), man.stripe_size(s)
                for j in range(k):
                    whole.update(memoryview(good[j])[hs: hs + min(p, size - j * p)] if size > j * p else b"")
            elif len(good) >= k:
                whole.update(store.codec.decode(good, man.stripe_size(s)) if _same_codec(store, man)
                             else type(store.codec)(man.codec, man.k, man.m).decode(good, man.stripe_size(s)))
            else:
                decodable = False
        chunk_ok: Dict[int, bool] = {}
        for i, hasher in hashes.items():
            extra = os.fstat(fds[i]).st_size != man.chunks[i].size
            chunk_ok[i] = not extra and hasher.hexdigest() == man.chunks[i].sha256
    finally:
        for fd in fds.values():
            os.close(fd)
    return StripeScan(bad, chunk_ok, (whole.hexdigest() == man.sha256) if decodable else None, total)


def _same_codec(store: Store, man: Manifest) -> bool:
    c = store.codec
    return (c.name, c.k, c.m, c.header_size) == (man.codec, man.k, man.m, man.header_size)


def fragment_findings(store: Store, man: Manifest, scan: StripeScan) -> List[Finding]:
    out: List[Finding] = []
    per_chunk: Dict[int, List[int]] = {}
    for s, chunks in sorted(scan.bad.items()):
        for i in chunks:
            per_chunk.setdefault(i, []).append(s)
    for i, stripes in sorted(per_chunk.items()):
        c = man.chunks[i]
        problems = sorted({scan.bad[s][i] for s in stripes})
        if problems == ["volume unavailable"] or problems == ["missing"]:
            continue   # the light checks said so
        out.append(Finding("fragment-hash", DAMAGE, f"chunk {i}: {len(stripes)} of {man.stripe_count} fragments bad "
                           f"({'; '.join(problems)})", c.volume, store.chunk_path(man, i), i, tuple(stripes)))
    for i, ok in sorted(scan.chunk_sha_ok.items()):
        if not ok and i not in per_chunk:
            c = man.chunks[i]
            out.append(Finding("chunk-hash", DAMAGE, f"chunk {i}: its sha256 is not the manifest's though every "
                               "fragment is (bytes past its end?)", c.volume, store.chunk_path(man, i), i))
    beyond = [s for s, chunks in sorted(scan.bad.items()) if len(chunks) > man.m]
    if beyond:
        out.append(Finding("stripe-lost", BEYOND, f"{len(beyond)} stripes with more than m={man.m} bad fragments "
                           f"(first: stripe {beyond[0]}, chunks {sorted(scan.bad[beyond[0]])}): beyond repair",
                           stripes=tuple(beyond[:MAX_LISTED])))
    elif scan.file_sha_ok is False:
        out.append(Finding("file-sha256", BEYOND, "the file's bytes, decoded from good fragments, do not match its "
                           "sha256 (the manifest is wrong?)"))
    return out


# --------------------------------------------------------------------------- the records pass

def record_findings(store: Store, man: Manifest, limiter: Optional[Limiter] = None) -> List[Finding]:
    """Read the records of the stored file again (see the module docstring); its bytes are known
    good (the file's sha256 matched), so what fails here failed at ingest."""
    out: List[Finding] = []
    block_bad: List[str] = []
    payload_bad: List[str] = []
    defects: Dict[str, int] = {}
    software: List[str] = []

    def each(rec: Record) -> None:
        sink = None
        if rec.type == "warcinfo" and not software:
            parts: List[bytes] = []
            sink = parts.append
        try:
            notes = verify_digests(rec, sink)
        except DigestError as e:
            notes = []
            block_bad.append(f"byte {rec.offset}: {e}")
        if sink is not None:
            for line in b"".join(parts).decode("utf-8", "replace").splitlines():
                if line.lower().startswith("software:"):
                    software.append(line.split(":", 1)[1].strip())
                    break
        for note in notes:
            if note.level == DEFECT and note.defect:
                defects[note.defect] = defects.get(note.defect, 0) + 1
            elif note.level == PROBLEM and note.message.startswith("WARC-Block-Digest"):
                block_bad.append(f"byte {rec.offset} ({rec.record_id}): {note.message}")
            elif note.level == PROBLEM:
                payload_bad.append(f"byte {rec.offset} ({rec.record_id}): {note.message}")
        if limiter is not None and rec.length:
            limiter.take(rec.length)

    try:
        with StoreFile(store, man.name) as f:
            records, _ = read_records(cast(BinaryIO, f), verify=True, name=f.name, each=each)
    except ArchiveError as e:
        return [Finding("records-unreadable", RECORDS, f"the stored bytes (those put) are no readable archive: {e}")]
    if len(records) != len(man.records) or any(r.span != s for r, s in zip(records, man.records)) \
            or listing_digest(records) != man.listing_sha256:
        out.append(Finding("listing", RECORDS, f"the records read again ({len(records)}) are not those listed at "
                           f"put ({len(man.records)}): their offsets, ids or digests differ"))
    if block_bad:
        out.append(Finding("block-digest", RECORDS, f"{len(block_bad)} records fail their WARC-Block-Digest, and the "
                           "bytes are those put (bad at ingest): " + "; ".join(block_bad[:MAX_LISTED])))
    producer = f" (producer: {software[0]})" if software else ""
    if payload_bad:
        out.append(Finding("payload-digest", ADVISORY, f"{len(payload_bad)} records whose WARC-Payload-Digest does "
                           f"not match{producer}; advisory: " + "; ".join(payload_bad[:MAX_LISTED])))
    for name, count in sorted(defects.items()):
        d = DEFECTS[name]
        out.append(Finding("producer-defect", ADVISORY, f"{count} records with the producer defect {name}{producer}: "
                           f"{d.what} (seen in {d.seen})"))
    return out


# --------------------------------------------------------------------------- orphans

def orphan_findings(store: Store, names: Sequence[str]) -> List[Finding]:
    """Chunk files no manifest accounts for, temporary files, and files of no known kind."""
    known = set(names)
    out: List[Finding] = []
    placed: Dict[Tuple[int, str], Set[int]] = {}
    for name in known:
        try:
            man = store.manifest(name)
        except StoreError:
            continue
        for c in man.chunks:
            placed.setdefault((c.volume, name), set()).add(c.index)
    for v in store.available():
        for sub in (MANIFESTS, CHUNKS):
            d = os.path.join(store.volumes[v], sub)
            try:
                entries = sorted(os.listdir(d))
            except OSError:
                continue
            for e in entries:
                p = os.path.join(d, e)
                if e.endswith(TMP_SUFFIX):
                    out.append(Finding("temp-file", ORPHAN, "a temporary file (a writer was killed, or is writing)",
                                       v, p))
                elif sub == MANIFESTS:
                    if not e.endswith(MANIFEST_SUFFIX):
                        out.append(Finding("unknown-file", ORPHAN, "not a manifest", v, p))
                else:
                    name, _, idx = e.rpartition(".")
                    if not idx.isdigit() or not name:
                        out.append(Finding("unknown-file", ORPHAN, "not a chunk file", v, p))
                    elif int(idx) not in placed.get((v, name), ()):
                        why = "no manifest of it" if name not in known else "its manifest places no such chunk here"
                        out.append(Finding("orphan-chunk", ORPHAN, f"a chunk of {name!r}: {why}", v, p))
    return out


# --------------------------------------------------------------------------- state

@dataclass
class ScrubState:
    files: Dict[str, Dict[str, Any]] = field(default_factory=dict)   # name -> {"deep", "manifest", "status"}
    run: Optional[Dict[str, Any]] = None                             # {"started"} while a deep scrub runs

    def to_json(self) -> bytes:
        return canonical({"files": self.files, "format": STATE_FORMAT, "run": self.run, "version": STATE_VERSION})


def load_state(store: Store) -> Tuple[ScrubState, Optional[str]]:
    """The scrub state (empty when there is none); and what was wrong with a damaged one."""
    path = os.path.join(store.root, STATE_FILE)
    try:
        data = read_capped(path, STATE_CAP, "scrub state")
    except FileNotFoundError:
        return ScrubState(), None
    try:
        obj = parse(data, path, "scrub state")
        if obj.get("format") != STATE_FORMAT or obj.get("version") != STATE_VERSION or set(obj) != \
                {"files", "format", "run", "version"}:
            raise StoreError(path, None, "scrub state: not a state file of this version")
        files = obj["files"]
        if not isinstance(files, dict) or not all(
                isinstance(v, dict) and isinstance(v.get("deep"), int) and isinstance(v.get("manifest"), str)
                and isinstance(v.get("status"), str) for v in files.values()):
            raise StoreError(path, None, "scrub state: files must map names to {deep, manifest, status}")
        run = obj["run"]
        if run is not None and not (isinstance(run, dict) and isinstance(run.get("started"), int)):
            raise StoreError(path, None, "scrub state: run must be null or {started}")
        return ScrubState(files, run), None
    except StoreError as e:
        return ScrubState(), str(e)


def save_state(store: Store, state: ScrubState) -> None:
    with AtomicOutput(os.path.join(store.root, STATE_FILE)) as out:
        out.write(state.to_json())


@contextmanager
def scrub_lock(store: Store) -> Iterator[None]:
    fd = os.open(os.path.join(store.root, SCRUB_LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(store.root, None, "another scrub of this store is running") from None
        yield
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- the scrub

def check_file(store: Store, name: str, deep: bool, limiter: Optional[Limiter] = None) -> FileReport:
    """The light (and with ``deep`` the deep) checks of stored file ``name``."""
    rep = FileReport(name, deep)
    ms = manifest_state(store, name)
    rep.findings.extend(ms.findings)
    man = ms.manifest
    if man is None:
        return rep
    rep.findings.extend(chunk_findings(store, man))
    if not deep:
        return rep
    scan = scan_fragments(store, man, limiter)
    rep.bytes_read = scan.bytes_read
    rep.findings.extend(fragment_findings(store, man, scan))
    if scan.file_sha_ok:
        rep.findings.extend(record_findings(store, man, limiter))
    return rep


def scrub(store: Store, deep: bool = False, names: Optional[Sequence[str]] = None, rate: Optional[float] = None,
          since: Optional[float] = None, restart: bool = False, now: Optional[float] = None,
          progress: Optional[Callable[[FileReport], None]] = None) -> ScrubReport:
    """Scrub ``names`` (default: every stored name); see the module docstring. ``rate`` in bytes/s,
    ``since`` in seconds (deep: skip files deep-checked more recently)."""
    t0 = time.monotonic()
    all_names = store.names()
    todo = list(names) if names else all_names
    report = ScrubReport(deep)
    if not deep:
        for name in todo:
            report.files.append(check_file(store, name, False))
            if progress:
                progress(report.files[-1])
        if not names:
            with store.lock():
                report.store.extend(orphan_findings(store, store.names()))
        report.seconds = time.monotonic() - t0
        return report
    with scrub_lock(store):
        state, problem = load_state(store)
        if problem:
            report.store.append(Finding("scrub-state", ADVISORY, f"{problem}: started afresh",
                                        path=os.path.join(store.root, STATE_FILE)))
        clock = int(now if now is not None else time.time())
        if state.run is not None and not restart:
            report.resumed = True
            started = int(state.run["started"])
        else:
            started = clock
            state.run = {"started": started}
            save_state(store, state)

        def last(name: str) -> int:
            ent = state.files.get(name)
            return -1 if ent is None else int(ent["deep"])
        limiter = Limiter(rate)
        order = sorted(todo, key=lambda n: (last(n), n))
        for name in order:
            ent = state.files.get(name)
            checked = last(name)
            if ent is not None:
                try:
                    same = store.manifest(name).sha256 == ent["manifest"]
                except StoreError:
                    same = True
                if not same:
                    checked = -1
            if checked >= 0 and report.resumed and checked >= started:
                rep = FileReport(name, False, "checked by the interrupted run this one resumes")
            elif checked >= 0 and since is not None and clock - checked < since:
                rep = FileReport(name, False, f"deep-checked {clock - checked} s ago")
            else:
                rep = check_file(store, name, True, limiter)
                try:
                    sha = store.manifest(name).sha256
                except StoreError:
                    sha = ""
                state.files[name] = {"deep": int(now if now is not None else time.time()), "manifest": sha,
                                     "status": rep.status}
                save_state(store, state)
            if rep.skipped:
                rep.findings.extend(check_file(store, name, False).findings)
            report.files.append(rep)
            if progress:
                progress(rep)
        for gone in [n for n in state.files if n not in set(all_names)]:
            del state.files[gone]
        state.run = None
        save_state(store, state)
    if not names:
        with store.lock():
            report.store.extend(orphan_findings(store, store.names()))
    report.files.sort(key=lambda f: f.name)
    report.seconds = time.monotonic() - t0
    return report
