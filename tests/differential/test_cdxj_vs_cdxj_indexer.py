"""``warchive index`` against ``cdxj-indexer`` 1.5.0: byte-identical output.

Both tools get the same inputs and options; warchive runs as
``python -m warchive index INPUTS -o OUT OPTIONS`` in a subprocess,
cdxj-indexer through its own CLI entry point (in-process, cached). Every
valid archive is indexed on its own in each mode of MODES; then a directory
of several archives (walked as cdxj-indexer walks it, with and without
--dir-root), several files in one call, and warchive's ``-j`` (which must
not change a byte).

Where cdxj-indexer itself crashes on a valid file, the case is listed in
PEER_CRASHES (the test fails if the list and reality disagree, so nothing is
skipped silently) and warchive's output is checked against an oracle built
from cdxj-indexer's own fields: the one crash is --cdx11 on a revisit
without WARC-Payload-Digest, where warchive writes "-" in the digest column
(docs/format.md, "Where we differ from cdxj-indexer").
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from warcio.archiveiterator import ArchiveIterator

import warcgen

MODES = {
    "cdxj": [],
    "cdx11": ["--cdx11"],
    "records-all": ["--records", "all"],
    "records-response-revisit": ["--records", "response,revisit"],
    "post-append": ["-p"],
    "sort": ["--sort"],
}

# cdxj-indexer 1.5.0 crashes on these valid files. --cdx11 (CDXLegacyIndexer.get_field)
# does value.split(":") on the payload digest, which is None for a revisit without
# WARC-Payload-Digest (legal, e.g. server-not-modified). warcgen puts those revisits
# last in their files, so the partial output before the crash covers the rest.
_REVISIT_NO_DIGEST = ("AttributeError", "revisit record without WARC-Payload-Digest in --cdx11 mode")
PEER_CRASHES = {
    (fid, "cdx11"): _REVISIT_NO_DIGEST
    for fid in ("revisits.warc.gz", "revisits.warc", "kitchen_sink.warc.gz", "kitchen_sink.warc",
                "kitchen_sink_sl.warc.gz", "kitchen_sink_sl_stale.warc.gz")
}


def _index(warchive_cli, inputs, args, out):
    return warchive_cli(["index", *inputs, "-o", out, *args])


def _first_revisit_without_digest(path) -> int:
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh, arc2warc=True)
        for rec in it:
            if rec.rec_type == "revisit" and not rec.rec_headers.get_header("WARC-Payload-Digest"):
                return it.get_record_offset()
    raise AssertionError(f"{path} has no revisit without WARC-Payload-Digest")


def assert_same_output(peer, res, out, label, output_diff):
    assert res.returncode == 0, f"{label}: warchive exit {res.returncode}\n{res.stderr.decode(errors='replace')}"
    got = out.read_bytes()
    assert got == peer.output, output_diff(peer.output, got, label)


@pytest.mark.parametrize("mode", list(MODES))
def test_single_file(valid_archive, mode, tmp_path, cdxj_indexer, warchive_cli, output_diff):
    path, args = valid_archive.path, MODES[mode]
    label = f"{valid_archive.id} [{mode}]"
    peer = cdxj_indexer([path], args)
    crash = PEER_CRASHES.get((valid_archive.id, mode))
    if peer.error is not None:
        assert crash is not None, (f"{label}: cdxj-indexer crashed ({type(peer.error).__name__}: {peer.error}); "
                                   f"decide what warchive must do and list it in PEER_CRASHES")
        assert type(peer.error).__name__ == crash[0], f"{label}: cdxj-indexer now fails differently: {peer.error!r}"
        _check_peer_crash(path, args, label, peer, tmp_path, warchive_cli, output_diff, cdxj_indexer)
        return
    assert crash is None, f"{label}: cdxj-indexer no longer crashes here; remove it from PEER_CRASHES"
    if "-p" in args:
        peer = _post_append_oracle(peer, cdxj_indexer([path], [a for a in args if a != "-p"]))
    out = tmp_path / "warchive.cdxj"
    assert_same_output(peer, _index(warchive_cli, [path], args, out), out, label, output_diff)


EMPTY_SHA1 = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"


def _post_append_oracle(peer_p, peer_plain):
    """cdxj-indexer -p hashes an already-consumed payload for records without WARC-Payload-Digest
    (every such digest is the SHA-1 of nothing); warchive hashes the payload as cdxj-indexer does
    without -p. Expected: the -p output with those digests taken from the run without -p."""
    assert peer_plain.error is None
    digests = {}
    for line in peer_plain.output.splitlines():
        f = json.loads(line.split(b" ", 2)[2])
        digests[(f["filename"], f["offset"])] = f.get("digest")
    fixed = []
    for line in peer_p.output.splitlines(keepends=True):
        key, ts, js = line.split(b" ", 2)
        f = json.loads(js)
        real = digests.get((f["filename"], f["offset"]))
        if f.get("digest") == EMPTY_SHA1 and real is not None and real != EMPTY_SHA1:
            f["digest"] = real
            line = key + b" " + ts + b" " + json.dumps(f).encode() + b"\n"
        fixed.append(line)
    return type(peer_p)(b"".join(fixed), peer_p.error, peer_p.stderr)


def _cdx11_from_cdxj(cdxj: bytes) -> bytes:
    """cdxj-indexer's CDXJ lines rendered as CDX-11 lines ("-" where a field is missing)."""
    out = [b" CDX N b a m s k r M S V g\n"]
    for line in cdxj.splitlines():
        key, ts, js = line.decode("utf-8").split(" ", 2)
        f = json.loads(js)
        digest = f.get("digest")
        cols = [key, ts, f.get("url", "-"), f.get("mime", "-"), f.get("status", "-"),
                digest.split(":")[-1] if digest is not None else "-", "-", "-",
                f["length"], f["offset"], f["filename"]]
        out.append((" ".join(cols) + "\n").encode("utf-8"))
    return b"".join(out)


def _check_peer_crash(path, args, label, peer, tmp_path, warchive_cli, output_diff, cdxj_indexer):
    """cdxj-indexer --cdx11 crashed on a revisit without digest: warchive writes every line,
    with '-' for that digest; the expected bytes come from cdxj-indexer's CDXJ output (which
    does not crash) and must begin with what cdxj-indexer --cdx11 wrote before crashing."""
    assert args == ["--cdx11"]
    _first_revisit_without_digest(path)  # the reason for the crash is really there
    cdxj = cdxj_indexer([path], [])
    assert cdxj.error is None
    expected = _cdx11_from_cdxj(cdxj.output)
    assert expected.startswith(peer.output), "oracle disagrees with cdxj-indexer's own partial --cdx11 output"
    out = tmp_path / "warchive.cdx"
    assert_same_output(type(peer)(expected, None, ""), _index(warchive_cli, [path], args, out), out, label,
                       output_diff)


# --------------------------------------------------------------------------- several files / directories

@pytest.fixture(scope="module")
def collection(tmp_path_factory, valid_archives):
    """root/coll/ with archives at three depths, plus files the walk must ignore."""
    root = tmp_path_factory.mktemp("collection")
    coll = root / "coll"
    layout = {
        "get_pairs.warc.gz": "get_pairs.warc.gz",
        "post_put.warc": "post_put.warc",
        "example.arc.gz": "example.arc.gz",
        "sub/unicode_urls.warc.gz": "unicode_urls.warc.gz",
        "sub/example.arc": "example.arc",
        "sub/deeper/versions.warc": "versions.warc",
        "sub/deeper/non_http.warc.gz": "non_http.warc.gz",
        # not indexed by cdxj-indexer: extension not in .arc/.arc.gz/.warc/.warc.gz (case-sensitive)
        "UPPER.WARC.GZ": "chunked.warc.gz",
        "sub/copy.warc.gz.bak": "chunked.warc.gz",
    }
    for dst, src in layout.items():
        (coll / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(valid_archives[src].path, coll / dst)
    (coll / "README.txt").write_text("not an archive\n")
    (coll / "index.cdxj").write_text("com,example)/ 20240102030405 {}\n")
    return root, coll


DIR_CASES = {
    "plain": ([], []),
    "dir-root=coll": (["--dir-root", "{coll}"], ["--dir-root", "{coll}"]),
    "dir-root=parent": (["--dir-root", "{root}"], ["--dir-root", "{root}"]),
    "sort": (["--sort"], ["--sort"]),
    "sort+dir-root": (["--sort", "--dir-root", "{coll}"], ["--sort", "--dir-root", "{coll}"]),
    "post-append+dir-root": (["-p", "--dir-root", "{coll}"], ["-p", "--dir-root", "{coll}"]),
    "cdx11": (["--cdx11"], ["--cdx11"]),
    "records-all": (["--records", "all"], ["--records", "all"]),
    "j2": ([], ["-j", "2"]),
    "j2+sort+dir-root": (["--sort", "--dir-root", "{coll}"], ["-j", "2", "--sort", "--dir-root", "{coll}"]),
}


def _fmt(args, **kw):
    return [a.format(**kw) for a in args]


@pytest.mark.parametrize("case", list(DIR_CASES))
def test_directory(case, collection, tmp_path, cdxj_indexer, warchive_cli, output_diff):
    """A directory argument: cdxj-indexer walks it with os.walk and keeps .arc/.arc.gz/.warc/.warc.gz
    (case-sensitive) in walk order; warchive must produce the same bytes."""
    root, coll = collection
    peer_args, our_args = (_fmt(a, root=root, coll=coll) for a in DIR_CASES[case])
    peer = cdxj_indexer([coll], peer_args)
    assert peer.error is None, f"cdxj-indexer crashed: {peer.error!r}"
    assert peer.output.count(b"\n") > 20
    if "-p" in peer_args:
        peer = _post_append_oracle(peer, cdxj_indexer([coll], [a for a in peer_args if a != "-p"]))
    out = tmp_path / "warchive.out"
    assert_same_output(peer, _index(warchive_cli, [coll], our_args, out), out, f"dir [{case}]", output_diff)


MULTI_CASES = {
    "three": (["get_pairs.warc.gz", "example.arc", "post_put.warc.gz"], [], []),
    "three-post-append": (["get_pairs.warc.gz", "example.arc", "post_put.warc.gz"], ["-p"], ["-p"]),
    "three-sort": (["get_pairs.warc.gz", "example.arc", "post_put.warc.gz"], ["--sort"], ["--sort"]),
    "three-records-all": (["get_pairs.warc.gz", "example.arc", "post_put.warc.gz"],
                          ["--records", "all"], ["--records", "all"]),
    "three-j2": (["get_pairs.warc.gz", "example.arc", "post_put.warc.gz"], [], ["-j", "2"]),
    "many-j3-sort": (["kitchen_sink.warc.gz", "kitchen_sink.warc", "example.arc.gz", "revisits.warc",
                      "wget/docs-python-3.11-recrawl.warc.gz"], ["--sort"], ["-j", "3", "--sort"]),
    # the same file twice: twice the lines, and --sort drops exact duplicates (SortingWriter)
    "same-twice": (["get_pairs.warc.gz", "get_pairs.warc.gz"], [], []),
    "same-twice-sort": (["get_pairs.warc.gz", "get_pairs.warc.gz"], ["--sort"], ["--sort"]),
    "dir-root-files": (["get_pairs.warc.gz", "example.arc"], ["--dir-root", "{root}"], ["--dir-root", "{root}"]),
}


@pytest.mark.parametrize("case", list(MULTI_CASES))
def test_multiple_files(case, valid_archives, corpus, tmp_path, cdxj_indexer, warchive_cli, output_diff):
    ids, peer_args, our_args = MULTI_CASES[case]
    root = corpus.root
    inputs = [valid_archives[i].path for i in ids]
    peer = cdxj_indexer(inputs, _fmt(peer_args, root=root))
    assert peer.error is None, f"cdxj-indexer crashed: {peer.error!r}"
    if "-p" in peer_args:
        peer = _post_append_oracle(peer, cdxj_indexer(inputs, [a for a in _fmt(peer_args, root=root) if a != "-p"]))
    out = tmp_path / "warchive.out"
    res = _index(warchive_cli, inputs, _fmt(our_args, root=root), out)
    assert_same_output(peer, res, out, f"files [{case}]", output_diff)


def test_file_and_directory_mixed(collection, valid_archives, tmp_path, cdxj_indexer, warchive_cli, output_diff):
    root, coll = collection
    inputs = [coll / "sub", valid_archives["odd_status.warc"].path]
    peer = cdxj_indexer(inputs, ["--dir-root", str(root)])
    assert peer.error is None
    out = tmp_path / "warchive.out"
    res = _index(warchive_cli, inputs, ["--dir-root", root], out)
    assert_same_output(peer, res, out, "dir+file", output_diff)


# --------------------------------------------------------------------------- folded head values

FOLD_MODES = {"cdxj": [], "cdx11": ["--cdx11"], "records-all": ["--records", "all"], "post-append": ["-p"]}


def _folded_files(tmp_path, gz: bool):
    """warcgen.folded_records() as a file (folded/NAME), and the same records with each folded value on
    its field's own line (one-line/NAME, as long); and the gzip members' [(offset, length)] of each."""
    name = "folded.warc.gz" if gz else "folded.warc"
    out, spans = [], []
    for how, d in ((warcgen.FOLD, "folded"), (warcgen.ONE_LINE, "one-line")):
        recs = warcgen.folded_records(how)
        chunks = [warcgen.gzip_member(r) if gz else r for r in recs]
        (tmp_path / d).mkdir()
        offs = warcgen._write(tmp_path / d / name, chunks)
        out.append(tmp_path / d / name)
        spans.append(list(zip(offs, [b - a for a, b in zip(offs, offs[1:])])))
    return out, spans


def _moved(lines: bytes, spans_from: list, spans_to: list, cdx11: bool) -> bytes:
    """Index lines of records at spans_from given the offsets and lengths of spans_to, record by record."""
    at = {off: k for k, (off, _) in enumerate(spans_from)}
    out = []
    for line in lines.splitlines(keepends=True):
        if line.startswith(b" CDX"):
            out.append(line)
            continue
        if cdx11:
            cols = line.rstrip(b"\n").split(b" ")
            off, n = spans_to[at[int(cols[-2])]]
            cols[-3:-1] = [str(n).encode(), str(off).encode()]
            out.append(b" ".join(cols) + b"\n")
        else:
            key, ts, js = line.split(b" ", 2)
            f = json.loads(js)
            off, n = spans_to[at[int(f["offset"])]]
            f["offset"], f["length"] = str(off), str(n)
            out.append(key + b" " + ts + b" " + json.dumps(f).encode() + b"\n")
    return b"".join(out)


@pytest.mark.parametrize("mode", list(FOLD_MODES))
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_folded_values_index_as_written_on_one_line(gz, mode, tmp_path, cdxj_indexer, warchive_cli, output_diff):
    """Head values folded onto a continuation line from an empty first line (``WARC-Type:`` CRLF TAB
    ``metadata``, in the WARC head and the HTTP head) are indexed as cdxj-indexer indexes the same
    records with each value on its field's own line: white space around a value is not part of it
    (the WARC grammar). A plain file of those is as long, every offset the same; in a gzip file the
    lines carry the folded file's members."""
    (folded, one_line), (spans, spans_one) = _folded_files(tmp_path, gz)
    args = FOLD_MODES[mode]
    peer = cdxj_indexer([one_line], args)
    assert peer.error is None, peer.error
    if "-p" in args:
        peer = _post_append_oracle(peer, cdxj_indexer([one_line], [a for a in args if a != "-p"]))
    expected = peer.output if not gz else _moved(peer.output, spans_one, spans, "--cdx11" in args)
    assert expected.count(b"\n") >= 3
    out = tmp_path / "warchive.out"
    assert_same_output(type(peer)(expected, None, ""), _index(warchive_cli, [folded], args, out), out,
                       f"folded [{mode}]", output_diff)


def test_folded_values_are_where_cdxj_indexer_differs(tmp_path, cdxj_indexer):
    """What docs/format.md ("Where we differ") says of folded values: warcio keeps the fold's TAB in
    the value, so cdxj-indexer reads the record types as '\\tresponse', ..., indexes none of them by
    default, and with --records all stops at the first WARC-Date ('\\t2024-...')."""
    (folded, _), _ = _folded_files(tmp_path, False)
    with open(folded, "rb") as fh:
        types = [r.rec_type for r in ArchiveIterator(fh)]
    assert types == ["\tresponse", "\trequest", "\tresponse", "\tmetadata", "\tresource"], types
    assert cdxj_indexer([folded], []).output == b""
    assert isinstance(cdxj_indexer([folded], ["--records", "all"]).error, ValueError)
