"""The replay server against pywb 2.10's on the same collection (tests/replaysite.py): the status,
Memento headers, TimeGate answers, redirects and TimeMaps a client gets for the same requests.

pywb answers through its FrontEndApp (tests/pywb_oracle.py's pywb_load, in .venv-pywb, one
subprocess for all requests) with the WARC and the index ``warchive index -p`` writes (byte for
byte cdxj-indexer's, as wb-manager add makes it); warchive through create_app on a collection of
the same WARC. Both see the host 127.0.0.1:8080. Where we add to pywb (first/prev/next/last
memento links, TimeMap ``until``), the comparison is of pywb's part: ours must begin with
exactly what pywb sends.
"""

from __future__ import annotations

import base64
import re
import subprocess
import sys

import pytest
from starlette.testclient import TestClient

from pywb_oracle import pywb_available, pywb_load
from replaysite import TS1, TS2, TS3, write_site
from warchive.collection import Collection
from warchive.replay.app import create_app

pytestmark = pytest.mark.skipif(not pywb_available(), reason="pywb 2.10 is not installed in .venv-pywb")

HOST = "127.0.0.1:8080"
DATES = ["Mon, 01 Jun 2021 00:00:00 GMT", "Wed, 01 Jan 2019 00:00:00 GMT", "Sun, 01 Jan 2040 00:00:00 GMT"]
PATHS = [f"{TS2}mp_/http://example.com/", f"{TS1}mp_/http://example.com/", f"{TS3}id_/http://example.com/",
         "2021mp_/http://example.com/", "mp_/http://example.com/", f"{TS1}mp_/http://example.com/logo.png",
         f"{TS1}id_/http://example.com/logo.png", f"{TS1}mp_/http://example.com/old",
         "2020mp_/http://example.com/never", "timemap/link/http://example.com/",
         "timemap/json/http://example.com/", "timemap/cdxj/http://example.com/",
         "timemap/link/http://example.com/never", f"{TS2}/http://example.com/", "http://example.com/",
         f"{TS2}mp_/http://example.com", f"{TS1}mp_/http://example.com/form/", f"{TS1}mp_/http://example.com/old/",
         f"{TS1}mp_/http://example.com/docs", f"{TS1}mp_/http://example.com/docs?x=1"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    d = tmp_path_factory.mktemp("replay-diff")
    warc = write_site(d)
    cdxj = d / "index.cdxj"
    subprocess.run([sys.executable, "-m", "warchive", "index", "-p", "--sort", "-o", str(cdxj), str(warc)], check=True)
    Collection.init(str(d / "colls" / "coll")).add([str(warc)])
    return d, warc, cdxj


def _requests():
    reqs = [{"replay": p} for p in PATHS]
    reqs += [{"replay": "mp_/http://example.com/", "accept_datetime": d} for d in DATES]
    reqs += [{"replay": "http://example.com/", "accept_datetime": DATES[0]}]
    return reqs


def _ours(site, config, reqs):
    d, _, _ = site
    client = TestClient(create_app(str(d / "colls"), **config), base_url=f"http://{HOST}")
    out = []
    for r in reqs:
        h = {"Accept-Datetime": r["accept_datetime"]} if r.get("accept_datetime") else {}
        resp = client.get(f"/coll/{r['replay']}", headers=h, follow_redirects=False)
        out.append(resp)
    return out


def _theirs(site, config, reqs):
    _, warc, cdxj = site
    return pywb_load([warc], [cdxj], reqs, config=config)


def _h(headers, name):
    name = name.lower()
    vals = [v for k, v in headers if k.lower() == name]
    return vals[0] if vals else None


@pytest.mark.parametrize("config", [{"framed_replay": False}, {"framed_replay": True},
                                    {"framed_replay": False, "redirect_to_exact": True},
                                    {"framed_replay": True, "redirect_to_exact": True}],
                         ids=["frameless", "framed", "frameless-exact", "framed-exact"])
def test_memento_heads_are_pywbs(site, config):
    reqs = _requests()
    ours = _ours(site, config, reqs)
    theirs = _theirs(site, config, reqs)
    for r, o, t in zip(reqs, ours, theirs):
        what = f"{r} with {config}"
        tstatus = int(str(t["status"]).split()[0])
        assert o.status_code == tstatus, what
        th = t["headers"]
        oh = list(o.headers.items())
        for name in ("Memento-Datetime", "Vary", "Content-Location", "Location"):
            assert _h(oh, name) == _h(th, name), f"{name} of {what}"
        tl, ol = _h(th, "Link"), _h(oh, "Link")
        if tl is None:
            assert ol is None, what
        else:
            assert ol is not None and (ol == tl or ol.startswith(tl + ", ")), f"Link of {what}:\n{ol}\n{tl}"
        if r["replay"].startswith("timemap/") and tstatus == 200:
            tbody = base64.b64decode(t["body"]).decode()
            obody = o.text
            if "/link/" in r["replay"]:   # ours adds until="..." after from="..."
                obody = re.sub(r'; until="[^"]*"', "", obody, count=1)
            # the index files are named differently (pywb's index.cdxj, our segment)
            obody = re.sub(r'"source": "coll/indexes/[^"]*"', '"source": "-"', obody)
            tbody = re.sub(r'"source": "coll/indexes/[^"]*"', '"source": "-"', tbody)
            obody = re.sub(r'\{"source": "coll/indexes/[^"]*"|coll/indexes/\S+\.seg', "-", obody)
            tbody = re.sub(r'coll/indexes/index\.cdxj', "-", tbody)
            assert obody == tbody, what
            assert _h(oh, "Content-Type") == _h(th, "Content-Type"), what
        if "id_/" in r["replay"] and tstatus == 200:
            assert o.content == base64.b64decode(t["body"]), what
