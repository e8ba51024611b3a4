"""``warchive index --surt-options LIST`` against cdxj-indexer 1.5.0 keyed by ``surt.surt(url, **options)``.

The oracle is cdxj-indexer's own run (in-process) with its one key function,
``CDXJIndexer.get_url_key`` (``surt.surt(url)``, the URL itself when that
raises), made to call ``surt.surt(url, **options)`` of the package, without
DNS (tests/surt_oracle.py; warchive never does DNS, docs/format.md, SURT
deviation 1). Everything else in the expected lines (the fields, the record
selection, the -p suffix built before the key) is cdxj-indexer's. warchive
runs as a subprocess and must write the same bytes.

Inputs: every valid archive of the corpus (tests/warcgen.py and the Wget
files of tests/data/wget, which are ../shared/fixtures) in one call, and
warcgen's surt_urls.warc.gz, a response per URL that some option keys
differently (ARC, IDN hosts and odd records go to the Python reference, the
rest through the kernel, so both paths are covered). Option sets: Heritrix's
form, every option true, every option false, each IA option turned off alone
within one set, ``surt=false``; the Heritrix set also with --cdx11, --records
all, -p, --sort and -j 2. Unknown names and values: exit 2, one line.
"""

from __future__ import annotations

import contextlib
import io

import pytest
import surt as surt_pkg
from cdxj_indexer.main import CDXJIndexer
from cdxj_indexer.main import main as cdxj_indexer_main

import warcgen
from surt_oracle import no_dns
from test_cdxj_vs_cdxj_indexer import PEER_CRASHES, _post_append_oracle, assert_same_output
from warchive.surt import OPTIONS, parse_options

EFFECTIVE = [n for n in OPTIONS if n not in ("public_suffix", "auth_strip_user", "auth_strip_pass", "hash_strip")]
OPTION_SETS = {
    "heritrix": "with_scheme,trailing_comma,host_massage=false",
    "scheme+comma": "trailing_comma,with_scheme",
    "all-true": ",".join(EFFECTIVE),
    "all-false": ",".join(f"{n}=false" for n in OPTIONS),
    "ia-steps-off": ",".join(f"{n}=no" for n in ("host_lowercase", "port_strip_default", "path_lowercase",
                                                  "path_strip_session_id", "path_strip_trailing_slash_unless_empty",
                                                  "query_lowercase", "query_strip_session_id", "query_strip_empty",
                                                  "query_alpha_reorder")),
    "no-surt": "surt=false, path_strip_empty",
    "reverse-ipaddr-off": "reverse_ipaddr=0,with_scheme",
}
HERITRIX_MODES = {
    "cdx11": ["--cdx11"],
    "records-all": ["--records", "all"],
    "post-append": ["-p"],
    "sort": ["--sort"],
    "j2": ["-j", "2"],
}


def peer_with_options(inputs, args, options, out):
    """cdxj-indexer ARGS INPUTS -o OUT with every key surt.surt(url, **options) (the URL when that raises)."""
    def get_url_key(self, url):
        try:
            return surt_pkg.surt(url, **options)
        except Exception:  # as cdxj-indexer's own get_url_key
            return url

    real = CDXJIndexer.get_url_key
    CDXJIndexer.get_url_key = get_url_key  # type: ignore[method-assign]
    try:
        with no_dns(), contextlib.redirect_stderr(io.StringIO()):
            cdxj_indexer_main([*args, *map(str, inputs), "-o", str(out)])
    finally:
        CDXJIndexer.get_url_key = real  # type: ignore[method-assign]
    return out.read_bytes()


class Peer:
    """What assert_same_output and _post_append_oracle read of a peer's run (conftest.PeerRun)."""

    def __init__(self, output: bytes, error: object = None, stderr: str = "") -> None:
        self.output, self.error, self.stderr = output, error, stderr


@pytest.fixture(scope="module")
def inputs(valid_archives, tmp_path_factory):
    d = tmp_path_factory.mktemp("surt-urls")
    extra = [warcgen.write_surt_urls(d, gz=True).path, warcgen.write_surt_urls(d, gz=False).path]
    return [fx.path for fx in valid_archives.values()] + extra


def _expected(inputs, args, options, tmp_path, name="peer"):
    peer = Peer(peer_with_options(inputs, args, options, tmp_path / f"{name}.out"))
    if "-p" in args:
        plain = Peer(peer_with_options(inputs, [a for a in args if a != "-p"], options, tmp_path / f"{name}-plain.out"))
        peer = _post_append_oracle(peer, plain)
    if "--sort" in args:   # cdxj-indexer does not sort: warchive's --sort is a bytewise sort dropping repeats
        peer.output = b"".join(sorted(set(peer.output.splitlines(keepends=True))))
    return peer


@pytest.mark.parametrize("name", list(OPTION_SETS))
def test_keys_with_options(name, inputs, tmp_path, warchive_cli, output_diff):
    options = parse_options(OPTION_SETS[name])
    peer = _expected(inputs, [], options, tmp_path)
    default = _expected(inputs, [], {}, tmp_path, "default")
    assert peer.output != default.output, f"{name}: the options change no key of the inputs"
    out = tmp_path / "warchive.cdxj"
    res = warchive_cli(["index", *inputs, "-o", out, "--surt-options", OPTION_SETS[name]])
    assert_same_output(peer, res, out, f"--surt-options {OPTION_SETS[name]}", output_diff)


@pytest.mark.parametrize("mode", list(HERITRIX_MODES))
def test_heritrix_keys_in_every_mode(mode, inputs, valid_archives, tmp_path, warchive_cli, output_diff):
    args = HERITRIX_MODES[mode]
    if mode == "cdx11":   # cdxj-indexer --cdx11 crashes on these (test_cdxj_vs_cdxj_indexer.py)
        crashing = {valid_archives[fid].path for fid, m in PEER_CRASHES if m == "cdx11"}
        inputs = [p for p in inputs if p not in crashing]
    peer_args = [a for a in args if a not in ("-j", "2")]
    peer = _expected(inputs, peer_args, parse_options(OPTION_SETS["heritrix"]), tmp_path)
    assert b"http://(" in peer.output
    out = tmp_path / "warchive.out"
    res = warchive_cli(["index", *inputs, "-o", out, *args, "--surt-options", OPTION_SETS["heritrix"]])
    assert_same_output(peer, res, out, f"heritrix [{mode}]", output_diff)


def test_default_options_spelled_out_are_the_default(inputs, tmp_path, warchive_cli):
    plain, spelled = tmp_path / "plain.cdxj", tmp_path / "spelled.cdxj"
    assert warchive_cli(["index", *inputs, "-o", plain]).returncode == 0
    text = ",".join(f"{n}={'true' if v else 'false'}" for n, v in OPTIONS.items())
    assert warchive_cli(["index", *inputs, "-o", spelled, "--surt-options", text]).returncode == 0
    assert spelled.read_bytes() == plain.read_bytes()


@pytest.mark.parametrize("text, named", [
    ("trailing_comma,with_schema", "'with_schema'"),
    ("Trailing_Comma", "'Trailing_Comma'"),
    ("surt=maybe", "'maybe'"),
    ("public_suffix", "public_suffix"),
])
def test_bad_option_is_a_usage_error(text, named, inputs, tmp_path, warchive_cli):
    out = tmp_path / "never.cdxj"
    res = warchive_cli(["index", inputs[0], "-o", out, "--surt-options", text])
    err = res.stderr.decode()
    assert res.returncode == 2, err
    assert err.count("\n") == 1 and named in err and "--surt-options" in err, err
    assert res.stdout == b"" and not out.exists()
