// warchive: the client script of a replayed page, inserted by the server right after <head>
// (warchive.replay.client), before any of the page's own scripts run.
//
// The server rewrites the URLs it can see (attributes, CSS, headers) and points the page's
// scripts' `location`, `top`, `parent` and `import()` at the objects defined here
// (warchive.replay.js). This script routes the rest through the archive at run time: fetch,
// XMLHttpRequest, navigations (the location proxy, window.open, links and forms the server did
// not rewrite), history.pushState/replaceState, URL-bearing properties and attributes set by
// scripts, markup inserted by innerHTML/insertAdjacentHTML/document.write, workers, beacons,
// EventSource; it blocks WebSocket (the archive has none), keeps cookies and storage in memory
// where the page's origin forbids them (a sandboxed frame's origin is opaque), rewrites
// postMessage target origins and document.domain, and tells the banner (the frame's parent)
// where the frame is. Whatever escapes it still fails closed: every replayed response carries
// a Content-Security-Policy that only allows the replay origin.
//
// URLs are rewritten exactly as warchive.replay.urls.UrlRewriter.rewrite rewrites them (the
// `UrlRewriter` below is a port of it; tests/e2e compares the two on generated URLs).
(function () {
  "use strict";
  var infoEl = document.getElementById("wa-replay-info");
  if (!infoEl || window.__wa_client) return;
  var info = JSON.parse(infoEl.textContent);
  var realLoc = window.location;
  var W = window, D = document;
  var baseOf = Object.getOwnPropertyDescriptor(Node.prototype, "baseURI").get;   // before it is patched

  // ------------------------------------------------------------------ strings as Python has them
  var NO_REWRITE = ["#", "javascript:", "data:", "mailto:", "about:", "file:", "{", "blob:", "tel:"];
  var PROTOCOLS = ["http:", "https:", "ftp:", "mms:", "rtsp:", "wais:"];
  var REL_SCHEME = ["//", "\\/\\/", "\\\\/\\\\/"];
  var USES_RELATIVE = ["", "ftp", "http", "gopher", "nntp", "imap", "wais", "file", "https", "shttp", "mms",
                       "prospero", "rtsp", "rtspu", "sftp", "svn", "svn+ssh", "ws", "wss"];
  var USES_NETLOC = ["", "ftp", "http", "gopher", "nntp", "telnet", "imap", "wais", "file", "mms", "https", "shttp",
                     "snews", "prospero", "rtsp", "rtspu", "rsync", "svn", "svn+ssh", "sftp", "nfs", "git", "git+ssh",
                     "ws", "wss"];
  var USES_PARAMS = ["", "ftp", "hdl", "prospero", "http", "imap", "https", "shttp", "rtsp", "rtspu", "sip", "sips",
                     "mms", "sftp", "tel"];
  var DOTDOT_SLASH = /(?:^|[\/\\])(?:\.|%2e){2}[\/\\]/i;
  var DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;
  var DOTDOT_SEGMENT = /(?:^|\/)(?:\.|%2e){2}(?:\/|$)/i;
  var AUTHORITY = /^(?:[A-Za-z][A-Za-z0-9+.\-]*:)?(?:\/\/[^\/?#]*)?/;
  var PATH_START = /(?:^|(?<=[^:\/]))[\/?](?!\/)/;
  var NON_ASCII = /[^\x00-\x7f]+/g;
  var CONTROL = /[\x00-\x1f\x7f]+/g;
  var EDGES = /^[\x00-\x20]+|[\x00-\x20]+$/g;
  var TAB_NL = /[\t\n\r]/g;
  var ALWAYS_SAFE = /[A-Za-z0-9_.\-~]/;

  function startsAny(s, list) {
    for (var i = 0; i < list.length; i++) if (s.lastIndexOf(list[i], 0) === 0) return true;
    return false;
  }
  function has(list, x) { return list.indexOf(x) >= 0; }
  function isAscii(s) { return !/[^\x00-\x7f]/.test(s); }
  function hasLoneSurrogate(s) { return /[\ud800-\udbff](?![\udc00-\udfff])|(?:^|[^\ud800-\udbff])[\udc00-\udfff]/.test(s); }

  function utf8(s) { return new TextEncoder().encode(s); }
  function pctBytes(bytes, safe) {
    var out = "";
    for (var i = 0; i < bytes.length; i++) {
      var c = String.fromCharCode(bytes[i]);
      out += (bytes[i] < 128 && (ALWAYS_SAFE.test(c) || safe.indexOf(c) >= 0)) ? c
        : "%" + (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16).toUpperCase();
    }
    return out;
  }
  // Python's quote(s, safe): UTF-8, lone surrogates as U+FFFD (TextEncoder's way)
  function quote(s, safe) { return pctBytes(utf8(s), safe === undefined ? "/" : safe); }
  function pctAll(s) { return quote(s, ""); }
  function safeUrl(u) { return u.replace(CONTROL, pctAll); }

  // Python's unquote_plus: '+' is a space, runs of %XX are UTF-8 (errors replaced)
  function unquotePlus(s) {
    s = s.replace(/\+/g, " ");
    if (s.indexOf("%") < 0) return s;
    return s.replace(/(?:%[0-9A-Fa-f]{2})+/g, function (run) {
      var b = new Uint8Array(run.length / 3);
      for (var i = 0; i < b.length; i++) b[i] = parseInt(run.substr(i * 3 + 1, 2), 16);
      return new TextDecoder("utf-8").decode(b);
    });
  }

  // ------------------------------------------------------------------ IDNA (labels, punycode)
  var PUNY = {base: 36, tmin: 1, tmax: 26, skew: 38, damp: 700, bias: 72, n: 128};
  function adapt(delta, num, first) {
    delta = first ? Math.floor(delta / PUNY.damp) : delta >> 1;
    delta += Math.floor(delta / num);
    var k = 0;
    for (; delta > 455; k += PUNY.base) delta = Math.floor(delta / 35);
    return k + Math.floor(36 * delta / (delta + PUNY.skew));
  }
  function digit(d) { return String.fromCharCode(d + 22 + 75 * (d < 26)); }
  function punyEncode(input) {
    var cps = Array.from(input, function (c) { return c.codePointAt(0); });
    var n = PUNY.n, delta = 0, bias = PUNY.bias, out = "";
    cps.forEach(function (c) { if (c < 128) out += String.fromCharCode(c); });
    var b = out.length, h = b;
    if (b) out += "-";
    while (h < cps.length) {
      var m = Infinity;
      cps.forEach(function (c) { if (c >= n && c < m) m = c; });
      delta += (m - n) * (h + 1);
      n = m;
      for (var j = 0; j < cps.length; j++) {
        var c = cps[j];
        if (c < n) delta++;
        if (c === n) {
          var q = delta;
          for (var k = PUNY.base; ; k += PUNY.base) {
            var t = k <= bias ? PUNY.tmin : (k >= bias + PUNY.tmax ? PUNY.tmax : k - bias);
            if (q < t) break;
            out += digit(t + (q - t) % (PUNY.base - t));
            q = Math.floor((q - t) / (PUNY.base - t));
          }
          out += digit(q);
          bias = adapt(delta, h + 1, h === b);
          delta = 0;
          h++;
        }
      }
      delta++; n++;
    }
    return out;
  }
  function punyDecode(input) {
    var out = [], i = 0, n = PUNY.n, bias = PUNY.bias;
    var basic = input.lastIndexOf("-");
    if (basic < 0) basic = 0;
    for (var j = 0; j < basic; j++) out.push(input.charCodeAt(j));
    for (var idx = basic > 0 ? basic + 1 : 0; idx < input.length;) {
      var oldi = i, w = 1;
      for (var k = PUNY.base; ; k += PUNY.base) {
        if (idx >= input.length) throw new Error("punycode");
        var cp = input.charCodeAt(idx++);
        var d = cp - 48 < 10 ? cp - 22 : cp - 65 < 26 ? cp - 65 : cp - 97 < 26 ? cp - 97 : PUNY.base;
        if (d >= PUNY.base) throw new Error("punycode");
        i += d * w;
        var t = k <= bias ? PUNY.tmin : (k >= bias + PUNY.tmax ? PUNY.tmax : k - bias);
        if (d < t) break;
        w *= PUNY.base - t;
      }
      bias = adapt(i - oldi, out.length + 1, oldi === 0);
      n += Math.floor(i / (out.length + 1));
      i %= out.length + 1;
      out.splice(i++, 0, n);
    }
    return String.fromCodePoint.apply(null, out);
  }
  var IDN_DOTS = /[.\u3002\uff0e\uff61]/;
  // Python's IDNA 2003 codec, nameprep approximated by NFKC and lower case; null: not a host name
  function idnaEncode(name) {
    var labels = name.split(IDN_DOTS), out = [];
    for (var i = 0; i < labels.length; i++) {
      var label = labels[i];
      if (!isAscii(label)) label = "xn--" + punyEncode(label.normalize("NFKC").toLowerCase());
      if (label.length > 63 || (label === "" && i < labels.length - 1)) return null;
      out.push(label);
    }
    return out.join(".");
  }
  function idnaDecode(host) {
    var labels = host.split("."), out = [];
    for (var i = 0; i < labels.length; i++) {
      var label = labels[i];
      if (label.lastIndexOf("xn--", 0) === 0) {
        var u = punyDecode(label.slice(4));
        if (idnaEncode(u) !== label.toLowerCase()) throw new Error("idna round trip");
        label = u;
      }
      out.push(label);
    }
    return out.join(".");
  }
  function splitPort(hostport) {
    var colon = hostport.lastIndexOf(":");
    return colon > hostport.lastIndexOf("]") ? [hostport.slice(0, colon), hostport.slice(colon)] : [hostport, ""];
  }
  function rpartition(s, sep) {
    var i = s.lastIndexOf(sep);
    return i < 0 ? ["", "", s] : [s.slice(0, i), sep, s.slice(i + sep.length)];
  }
  function hostToAscii(domain) {
    if (isAscii(domain)) return domain;
    var up = rpartition(domain, "@"), hp = splitPort(up[2]), host = hp[0], port = hp[1];
    if (up[1] || (port && !isAscii(rpartition(host, ".")[2]))) {
      var asciiHost = idnaEncode(host);
      if (asciiHost !== null) {
        if (!isAscii(port)) {
          port = port.normalize("NFKC");
          if (!isAscii(port)) port = port.replace(NON_ASCII, pctAll);
        }
        return (isAscii(up[0]) ? up[0] : up[0].replace(NON_ASCII, pctAll)) + up[1] + asciiHost + port;
      }
    }
    var whole = idnaEncode(domain);
    return whole === null ? domain : whole;
  }
  function toUri(url) {
    var m = PATH_START.exec(url), head = url, sep = "", rest = "";
    if (m) { head = url.slice(0, m.index); sep = m[0]; rest = url.slice(m.index + 1); }
    var parts = rpartition(unquotePlus(head), "/");
    return parts[0] + parts[1] + hostToAscii(parts[2]) + sep + (isAscii(rest) ? rest : rest.replace(NON_ASCII, pctAll));
  }

  // ------------------------------------------------------------------ urllib.parse, as Python 3.11
  function urlsplit(url, scheme) {
    url = url.replace(/^[\x00-\x20]+/, "").replace(TAB_NL, "");
    var netloc = "", query = "", fragment = "";
    var i = url.indexOf(":");
    if (i > 0 && /[A-Za-z]/.test(url[0]) && /^[A-Za-z0-9+\-.]+$/.test(url.slice(0, i))) {
      scheme = url.slice(0, i).toLowerCase();
      url = url.slice(i + 1);
    }
    if (url.slice(0, 2) === "//") {
      var delim = url.length;
      for (var c of "/?#") { var w = url.indexOf(c, 2); if (w >= 0) delim = Math.min(delim, w); }
      netloc = url.slice(2, delim);
      url = url.slice(delim);
      if ((netloc.indexOf("[") >= 0) !== (netloc.indexOf("]") >= 0)) throw new Error("Invalid IPv6 URL");
    }
    var h = url.indexOf("#");
    if (h >= 0) { fragment = url.slice(h + 1); url = url.slice(0, h); }
    var q = url.indexOf("?");
    if (q >= 0) { query = url.slice(q + 1); url = url.slice(0, q); }
    return [scheme, netloc, url, query, fragment];
  }
  function urlunsplit(p) {
    var scheme = p[0], netloc = p[1], url = p[2], query = p[3], fragment = p[4];
    if (netloc || (scheme && has(USES_NETLOC, scheme) && url.slice(0, 2) !== "//")) {
      if (url && url[0] !== "/") url = "/" + url;
      url = "//" + netloc + url;
    }
    if (scheme) url = scheme + ":" + url;
    if (query) url += "?" + query;
    if (fragment) url += "#" + fragment;
    return url;
  }
  function urlparse(url, scheme) {
    var p = urlsplit(url, scheme), path = p[2], params = "";
    if (has(USES_PARAMS, p[0]) && path.indexOf(";") >= 0) {
      var i = path.indexOf("/") >= 0 ? path.indexOf(";", path.lastIndexOf("/")) : path.indexOf(";");
      if (i >= 0) { params = path.slice(i + 1); path = path.slice(0, i); }
    }
    return [p[0], p[1], path, params, p[3], p[4]];
  }
  function urlunparse(p) {
    return urlunsplit([p[0], p[1], p[3] ? p[2] + ";" + p[3] : p[2], p[4], p[5]]);
  }
  function urljoin(base, url) {
    if (!base) return url;
    if (!url) return base;
    var b = urlparse(base, ""), r = urlparse(url, b[0]);
    var scheme = r[0], netloc = r[1], path = r[2], params = r[3], query = r[4], fragment = r[5];
    if (scheme !== b[0] || !has(USES_RELATIVE, scheme)) return url;
    if (has(USES_NETLOC, scheme)) {
      if (netloc) return urlunparse([scheme, netloc, path, params, query, fragment]);
      netloc = b[1];
    }
    if (!path && !params) {
      path = b[2]; params = b[3];
      if (!query) query = b[4];
      return urlunparse([scheme, netloc, path, params, query, fragment]);
    }
    var baseParts = b[2].split("/"), segments;
    if (baseParts[baseParts.length - 1] !== "") baseParts.pop();
    if (path[0] === "/") segments = path.split("/");
    else {
      segments = baseParts.concat(path.split("/"));
      segments = [segments[0]].concat(segments.slice(1, -1).filter(Boolean), segments.length > 1 ? [segments[segments.length - 1]] : []);
    }
    var resolved = [];
    segments.forEach(function (seg) {
      if (seg === "..") resolved.pop();
      else if (seg !== ".") resolved.push(seg);
    });
    var lastSeg = segments[segments.length - 1];
    if (lastSeg === "." || lastSeg === "..") resolved.push("");
    return urlunparse([scheme, netloc, resolved.join("/") || "/", params, query, fragment]);
  }

  // ------------------------------------------------------------------ warchive.replay.urls
  function pathEnd(url, start) {
    var end = url.length;
    for (var c of "?#") { var i = url.indexOf(c, start || 0); if (i >= 0 && i < end) end = i; }
    return end;
  }
  function browserPath(ref) {
    if (ref.indexOf("\\") < 0 && ref.indexOf("%") < 0) return ref;
    var end = pathEnd(ref), path = ref.slice(0, end).replace(/\\/g, "/");
    if (path.indexOf("%") >= 0) {
      path = path.split("/").map(function (seg) { return DOT_SEGMENT.test(seg) ? seg.replace(/%2e/gi, ".") : seg; }).join("/");
    }
    return path + ref.slice(end);
  }
  function resolveDots(url) {
    var start = AUTHORITY.exec(url)[0].length, end = pathEnd(url, start), path = url.slice(start, end);
    if (!DOTDOT_SEGMENT.test(path)) return url;
    var segments = path.split("/"), out = [];
    segments.forEach(function (seg, i) {
      var dots = DOT_SEGMENT.test(seg) ? seg.replace(/%2e/gi, ".") : seg, last = i === segments.length - 1;
      if (dots === "..") {
        if (out.length && !(out.length === 1 && out[0] === "")) out.pop();
        if (last) out.push("");
      } else if (dots === ".") {
        if (last) out.push("");
      } else out.push(seg);
    });
    if (path[0] === "/" && out[0] !== "") out.unshift("");
    return url.slice(0, start) + out.join("/") + url.slice(end);
  }
  function join(base, ref) {
    var joined = urljoin(base, ref);
    if (joined.indexOf("../") < 0) return joined;
    var p = urlsplit(joined, ""), segments = p[2].split("/"), kept = [];
    segments.slice(0, -1).forEach(function (seg) {
      if (seg !== "..") kept.push(seg);
      else if (kept.length) kept.pop();
    });
    kept.push(segments[segments.length - 1]);
    p[2] = kept.length === 1 && kept[0] === "" ? "/" : kept.join("/");
    return urlunsplit(p);
  }
  function displayUrl(url) {
    if (url.indexOf("xn--") < 0) return safeUrl(url);
    var p;
    try { p = urlsplit(url, ""); } catch (e) { return safeUrl(url); }
    var up = rpartition(p[1], "@"), hp = splitPort(up[2]), host = hp[0];
    try { host = idnaDecode(host); } catch (e) { /* kept */ }
    var netloc = up[0] + up[1] + host + hp[1];
    if (hasLoneSurrogate(netloc)) return safeUrl(url);
    p[1] = quote(netloc, "/");
    return safeUrl(urlunsplit(p));
  }

  // UrlRewriter(page, prefix).rewrite(url, mod): page = {url, timestamp, mod}
  function UrlRewriter(page, prefix) {
    this.page = page;
    this.prefix = prefix;
    this.prefixAbs = startsAny(prefix, PROTOCOLS);
  }
  UrlRewriter.prototype.rewrite = function (url, mod, forceAbs) {
    var ref = url;
    if (ref === "" || ref[0] <= " " || ref[ref.length - 1] <= " " || /[\t\n\r]/.test(ref)) {
      ref = ref.replace(EDGES, "").replace(TAB_NL, "");
    }
    var low = ref.slice(0, 12).toLowerCase(), prefix = this.prefix;
    if (startsAny(low, NO_REWRITE)) return url;
    if (prefix && prefix !== "/" && ref.lastIndexOf(prefix, 0) === 0) return url;
    var isAbs = startsAny(low, PROTOCOLS), schemeRel = false;
    if (startsAny(ref, REL_SCHEME)) {
      isAbs = schemeRel = true;
    } else if (ref[0] === "\\" || ref.slice(0, 2) === "/\\") {
      if (ref[1] === "/" || ref[1] === "\\") {
        ref = "//" + ref.replace(/^[\/\\]+/, "");
        isAbs = schemeRel = true;
      } else {
        ref = "/" + ref.slice(1);
      }
    } else if (!forceAbs && !isAbs && ref[0] !== "/" && ref.indexOf("../") < 0 &&
               !DOTDOT_SLASH.test(ref.slice(0, pathEnd(ref)))) {
      return url;
    }
    if (mod === undefined || mod === null) mod = this.page.mod;
    var target;
    if (isAbs) target = resolveDots(ref);
    else {
      try { target = resolveDots(join(this.page.url, browserPath(ref))); } catch (e) { target = ref; }
    }
    var tsmod = (this.page.timestamp || "") + mod, shown = displayUrl(toUri(target));
    var fin = prefix + (tsmod ? tsmod + "/" + shown : shown);
    if (!isAbs && this.prefixAbs) {
      var k = -1;
      for (var n = 0; n < 3 && (k = fin.indexOf("/", k + 1)) >= 0; n++) { /* the third '/' */ }
      return k >= 0 ? "/" + fin.slice(k + 1) : "/";
    }
    if (schemeRel && this.prefixAbs) return fin.slice(fin.indexOf(":") + 1);
    return fin;
  };

  // ------------------------------------------------------------------ this page's rewriting
  var prefix = info.prefix;                                 // http://host:port/[app/]coll/
  var origin = prefix.replace(/^([a-z]+:\/\/[^\/]+).*$/i, "$1");
  var relPrefix = prefix.slice(origin.length);              // /[app/]coll/
  var staticPrefix = info.static || "";
  var pageMod = info.mod || "";
  var rewriters = {};

  function unrewrite(u) {
    if (typeof u !== "string") return u;
    var rest = null;
    if (u.lastIndexOf(prefix, 0) === 0) rest = u.slice(prefix.length);
    else if (u.lastIndexOf(relPrefix, 0) === 0 && relPrefix !== "/") rest = u.slice(relPrefix.length);
    else if (u.lastIndexOf("//" + hostPort + relPrefix, 0) === 0) rest = u.slice(hostPort.length + 2 + relPrefix.length);
    if (rest === null) return u;
    var m = /^([0-9]*)([a-z]+_|\$[a-z0-9:.\-]+)?\/{1,3}([\s\S]+)$/.exec(rest);
    if (!m || rest.indexOf("*") >= 0 && !m[1]) return u;
    var t = m[3];
    if (/^[a-z][a-z0-9+.\-]*:\/\//i.test(t)) return t;
    if (/^(https?|ftp):\/(?!\/)/i.test(t)) return t.replace(":/", "://");
    if (t.slice(0, 2) === "//") return "http:" + t;
    return "http://" + t;
  }
  var hostPort = origin.split("//")[1];
  function originalBase() {
    var b = unrewrite(baseOf.call(D) || realLoc.href);
    return b.lastIndexOf(origin, 0) === 0 ? info.url : b;
  }
  function current() {
    var base = originalBase();
    return rewriters[base] || (rewriters[base] = new UrlRewriter({url: base, timestamp: info.timestamp, mod: pageMod}, prefix));
  }
  function inArchive(u) {
    return u.lastIndexOf(prefix, 0) === 0 || (!!staticPrefix && u.lastIndexOf(staticPrefix, 0) === 0);
  }
  // A URL a page's script hands to the browser, as it must be to load from the archive.
  function rw(url, mod, forceAbs) {
    if (url === null || url === undefined) return url;
    url = String(url);
    if (inArchive(url) || url.lastIndexOf("//" + hostPort + relPrefix, 0) === 0 ||
        (relPrefix !== "/" && url.lastIndexOf(relPrefix, 0) === 0)) return url;   // an archival URL already
    if (url.lastIndexOf(origin + "/", 0) === 0) url = url.slice(origin.length);   // resolved against an archival URL
    // relative URLs resolve in the archive as they are, unless a <base> the server did not
    // rewrite points the document at the live web
    var out = current().rewrite(url, mod, forceAbs || !inArchive(baseOf.call(D) || ""));
    // absolute, as a live <base> would take a root-relative URL out of the archive
    return out[0] === "/" ? (out[1] === "/" ? realLoc.protocol : origin) + out : out;
  }
  function resolveOriginal(url) {
    try { return new URL(String(url), originalBase()).href; } catch (e) { return String(url); }
  }
  function navMod() { return pageMod; }

  // ------------------------------------------------------------------ frames and the banner
  function archiveTop() {
    if (!info.framed) return W.top;
    var w = W;
    try { while (w !== w.top && w.parent !== w.top) w = w.parent; } catch (e) { return W; }
    return w;
  }
  function archiveParent() {
    if (info.framed && W.parent === W.top) return W;
    return W.parent;
  }
  function tell() {
    if (W.parent === W) return;
    try {
      W.parent.postMessage({wa: "location", url: unrewrite(realLoc.href), timestamp: info.timestamp,
                            title: D.title || ""}, "*");
    } catch (e) { /* nothing to tell */ }
  }

  // ------------------------------------------------------------------ the location proxy
  function navigate(url, replace) {
    var abs = resolveOriginal(url);
    var cur = unrewrite(realLoc.href);
    if (abs.split("#")[0] === cur.split("#")[0] && abs.indexOf("#") >= 0) {
      realLoc.hash = abs.slice(abs.indexOf("#"));
      return;
    }
    var target = rw(abs, navMod());
    if (replace) realLoc.replace(target); else realLoc.assign(target);
  }
  var locProxy = Object.create(null);
  ["href", "protocol", "host", "hostname", "port", "pathname", "search", "hash", "origin"].forEach(function (k) {
    Object.defineProperty(locProxy, k, {
      enumerable: true,
      get: function () {
        var u = new URL(unrewrite(realLoc.href));
        return u[k];
      },
      set: function (v) {
        if (k === "origin") return;
        if (k === "href") { navigate(v, false); return; }
        var u = new URL(unrewrite(realLoc.href));
        u[k] = v;
        navigate(u.href, false);
      }
    });
  });
  locProxy.assign = function (u) { navigate(u, false); };
  locProxy.replace = function (u) { navigate(u, true); };
  locProxy.reload = function () { realLoc.reload(); };
  locProxy.toString = function () { return locProxy.href; };
  locProxy.valueOf = function () { return locProxy; };
  locProxy[Symbol.toPrimitive] = function () { return locProxy.href; };
  Object.defineProperty(locProxy, "ancestorOrigins", {get: function () { return realLoc.ancestorOrigins; }});

  // The names warchive.replay.js renames references to: on a window, a document, or an element
  // (an inline handler's scope) they are the archive's; on any other object, its own property.
  function ours(o, name) {
    return o === W || o === D || (o instanceof Node && !(name in o));
  }
  function defineName(name, get, set) {
    Object.defineProperty(Object.prototype, "__wa_" + name, {configurable: true, enumerable: false, get: get, set: set});
  }
  defineName("location",
    function () { return ours(this, "location") ? locProxy : this.location; },
    function (v) { if (ours(this, "location")) navigate(v, false); else this.location = v; });
  defineName("top",
    function () { return ours(this, "top") ? archiveTop() : this.top; },
    function (v) { if (!ours(this, "top")) this.top = v; });
  defineName("parent",
    function () { return ours(this, "parent") ? archiveParent() : this.parent; },
    function (v) { if (!ours(this, "parent")) this.parent = v; });

  // import(spec) in a rewritten script: __wa_import(scriptUrl)(spec)
  var dynImport = null;
  function nativeImport(u, opts) {
    if (!dynImport) {
      try { dynImport = new Function("u", "o", "return o === undefined ? import(u) : import(u, o)"); }
      catch (e) { dynImport = new Function("u", "return import(u)"); }
    }
    return dynImport(u, opts);
  }
  W.__wa_import = function (base) {
    return function (spec, opts) {
      var s = String(spec), abs;
      if (!/^(\.{0,2}\/|[a-z][a-z0-9+.\-]*:)/i.test(s)) return nativeImport(s, opts);   // a bare specifier
      try { abs = new URL(s, base ? unrewrite(String(base)) : originalBase()).href; } catch (e) { abs = s; }
      return nativeImport(rw(abs, "js_"), opts);
    };
  };

  // ------------------------------------------------------------------ patching helpers
  function patch(obj, name, make) {
    try {
      var orig = obj[name];
      if (typeof orig !== "function") return;
      var f = make(orig);
      f.toString = function () { return orig.toString(); };
      obj[name] = f;
    } catch (e) { /* not here */ }
  }
  function descriptor(proto, name) {
    for (var p = proto; p; p = Object.getPrototypeOf(p)) {
      var d = Object.getOwnPropertyDescriptor(p, name);
      if (d) return d;
    }
    return null;
  }
  function accessor(proto, name, get, set) {
    try {
      var d = descriptor(proto, name);
      if (!d || !d.set) return null;
      Object.defineProperty(proto, name, {
        configurable: true, enumerable: d.enumerable,
        get: get ? function () { return get.call(this, d.get.call(this)); } : d.get,
        set: function (v) { d.set.call(this, set.call(this, v)); }
      });
      return d;
    } catch (e) { return null; }
  }

  // ------------------------------------------------------------------ fetch, XHR and friends
  var sandboxed = (function () { try { return W.origin === "null"; } catch (e) { return true; } })();
  var NativeRequest = W.Request;
  patch(W, "fetch", function (orig) {
    return function (input, init) {
      try {
        if (NativeRequest && input instanceof NativeRequest) {
          if (!inArchive(input.url)) input = new NativeRequest(rw(input.url), input);
        } else if (input !== undefined && input !== null) {
          input = rw(String(input));
        }
        if (sandboxed && init && init.credentials === "include") init = Object.assign({}, init, {credentials: "same-origin"});
      } catch (e) { /* sent as given: the Content-Security-Policy stops what leaves the archive */ }
      return orig.call(this, input, init);
    };
  });
  if (W.XMLHttpRequest) {
    var XP = W.XMLHttpRequest.prototype;
    patch(XP, "open", function (orig) {
      return function (method, url) {
        var args = Array.prototype.slice.call(arguments);
        try { args[1] = rw(url); } catch (e) { /* as given */ }
        return orig.apply(this, args);
      };
    });
    if (sandboxed) accessor(XP, "withCredentials", null, function () { return false; });
  }
  if (W.navigator && W.Navigator) {
    patch(W.Navigator.prototype, "sendBeacon", function (orig) {
      return function (url, data) { return orig.call(this, rw(url), data); };
    });
  }
  function wrapCtor(name, mod, fallback) {
    var Native = W[name];
    if (typeof Native !== "function") return;
    var Wrapped = function (url, opts) {
      if (!new.target) return Native.apply(this, arguments);
      var u = rw(url, mod, true);   // relative too: a worker's script must come with its modifier
      try { return arguments.length > 1 ? new Native(u, opts) : new Native(u); }
      catch (e) { if (fallback && e && e.name === "SecurityError") return fallback(Native, u, opts); throw e; }
    };
    Wrapped.prototype = Native.prototype;
    Object.setPrototypeOf(Wrapped, Native);
    try { Object.defineProperty(Wrapped, "name", {value: name}); } catch (e) { /* kept */ }
    W[name] = Wrapped;
  }
  // an opaque origin may not start a worker from a URL: from a blob: that loads it
  function blobWorker(Native, u, opts) {
    var abs = new URL(u, realLoc.href).href;
    var module = opts && opts.type === "module";
    var src = module ? "import " + JSON.stringify(abs) + ";" : "importScripts(" + JSON.stringify(abs) + ");";
    var blob = URL.createObjectURL(new Blob([src], {type: "text/javascript"}));
    return opts !== undefined ? new Native(blob, opts) : new Native(blob);
  }
  wrapCtor("Worker", "wkr_", blobWorker);
  wrapCtor("SharedWorker", "wkr_", blobWorker);
  wrapCtor("EventSource", pageMod, null);
  try {
    var SWC = W.ServiceWorkerContainer && W.ServiceWorkerContainer.prototype;
    if (SWC) patch(SWC, "register", function (orig) {
      return function (url, opts) {
        var o = opts ? Object.assign({}, opts) : {};
        if (o.scope) o.scope = rw(o.scope, "mp_");
        return orig.call(this, rw(url, "sw_"), o);
      };
    });
  } catch (e) { /* no service workers here */ }
  // WebSocket: the archive has none; a socket that fails at once, never a connection
  (function () {
    var NativeWS = W.WebSocket;
    function ArchivedSocket(url) {
      var t = new EventTarget();
      Object.setPrototypeOf(t, ArchivedSocket.prototype);
      t.url = String(url);
      t.readyState = 3;
      t.protocol = ""; t.extensions = ""; t.bufferedAmount = 0; t.binaryType = "blob";
      t.onopen = t.onmessage = t.onerror = t.onclose = null;
      setTimeout(function () {
        var err = new Event("error");
        if (typeof t.onerror === "function") t.onerror(err);
        t.dispatchEvent(err);
        var close = new CloseEvent("close", {code: 1006, reason: "not in the archive", wasClean: false});
        if (typeof t.onclose === "function") t.onclose(close);
        t.dispatchEvent(close);
      }, 0);
      return t;
    }
    ArchivedSocket.prototype = Object.create(EventTarget.prototype);
    ArchivedSocket.prototype.send = function () { throw new DOMException("WebSocket is closed", "InvalidStateError"); };
    ArchivedSocket.prototype.close = function () {};
    ["CONNECTING", "OPEN", "CLOSING", "CLOSED"].forEach(function (k, i) { ArchivedSocket[k] = i; ArchivedSocket.prototype[k] = i; });
    if (NativeWS) W.WebSocket = ArchivedSocket;
  })();
  patch(W, "open", function (orig) {
    return function (url) {
      var args = Array.prototype.slice.call(arguments);
      if (url !== undefined && url !== null && String(url) !== "") args[0] = rw(resolveOriginal(url), info.framed ? "" : pageMod);
      return orig.apply(this, args);
    };
  });

  // ------------------------------------------------------------------ history
  ["pushState", "replaceState"].forEach(function (name) {
    patch(W.History.prototype, name, function (orig) {
      return function (state, title, url) {
        var args = Array.prototype.slice.call(arguments);
        if (url !== undefined && url !== null) args[2] = rw(resolveOriginal(url), pageMod);
        var r = orig.apply(this, args);
        tell();
        return r;
      };
    });
  });
  W.addEventListener("popstate", tell);
  W.addEventListener("hashchange", tell);

  // ------------------------------------------------------------------ elements: properties and attributes
  function linkMod(el) {
    var rel = (el.getAttribute("rel") || "").toLowerCase().split(/\s+/), as = (el.getAttribute("as") || "").toLowerCase();
    if (rel.indexOf("stylesheet") >= 0) return "cs_";
    if (rel.indexOf("preload") >= 0) {
      return {script: "js_", worker: "js_", style: "cs_", image: "im_", document: "if_", fetch: "mp_", font: "oe_",
              audio: "oe_", video: "oe_", embed: "oe_", object: "oe_", track: "oe_"}[as] || "oe_";
    }
    if (rel.indexOf("modulepreload") >= 0) return "js_";
    if (rel.indexOf("import") >= 0 || rel.indexOf("alternate") >= 0) return "mp_";
    return "oe_";
  }
  // tag -> attribute -> modifier (pywb's HTML rewriter's table; "" is the page's modifier)
  var ATTRS = {
    a: {href: ""}, area: {href: ""}, base: {href: ""}, form: {action: ""}, button: {formaction: ""},
    input: {src: "im_", formaction: ""}, img: {src: "im_", srcset: "im_"}, image: {href: "im_", "xlink:href": "im_"},
    script: {src: "js_", href: "js_", "xlink:href": "js_"}, link: {href: null}, iframe: {src: "if_"}, frame: {src: "fr_"},
    source: {src: "oe_", srcset: "oe_"}, video: {src: "oe_", poster: "im_"}, audio: {src: "oe_"}, track: {src: "oe_"},
    embed: {src: "oe_"}, object: {data: "oe_", codebase: "oe_"}, body: {background: "im_"}, table: {background: "im_"},
    td: {background: "im_"}
  };
  function attrMod(tag, attr, el) {
    var t = ATTRS[tag];
    if (!t || !(attr in t)) return undefined;
    var m = t[attr];
    if (m === null) return el ? linkMod(el) : "oe_";
    return m === "" ? pageMod : m;
  }
  function rwSrcset(value, mod) {
    var out = [], s = String(value), i = 0;
    while (i < s.length) {
      var lead = /^[\s,]*/.exec(s.slice(i))[0];
      i += lead.length;
      if (i >= s.length) break;
      var url = /^\S+/.exec(s.slice(i))[0];
      i += url.length;
      var desc = "";
      if (/,+$/.test(url)) url = url.replace(/,+$/, "");
      else {
        var d = /^[^,(]*(?:\([^)]*\)[^,(]*)*/.exec(s.slice(i))[0];
        i += d.length;
        desc = d.trim();
      }
      out.push(rw(url, mod) + (desc ? " " + desc : ""));
    }
    return out.join(", ");
  }
  function rwAttr(tag, attr, value, el) {
    var mod = attrMod(tag, attr, el);
    if (mod === undefined || value === null || value === undefined) return value;
    if (attr === "srcset") return rwSrcset(value, mod);
    return rw(String(value), mod);
  }
  function isUrlAttr(tag, attr) { return !!ATTRS[tag] && attr in ATTRS[tag] && attr !== "srcset"; }

  var PROPS = [
    ["HTMLAnchorElement", "href", "a"], ["HTMLAreaElement", "href", "area"], ["HTMLBaseElement", "href", "base"],
    ["HTMLFormElement", "action", "form"], ["HTMLButtonElement", "formAction", "button", "formaction"],
    ["HTMLInputElement", "formAction", "input", "formaction"], ["HTMLInputElement", "src", "input"],
    ["HTMLImageElement", "src", "img"], ["HTMLImageElement", "srcset", "img"], ["HTMLScriptElement", "src", "script"],
    ["HTMLLinkElement", "href", "link"], ["HTMLIFrameElement", "src", "iframe"], ["HTMLFrameElement", "src", "frame"],
    ["HTMLSourceElement", "src", "source"], ["HTMLSourceElement", "srcset", "source"], ["HTMLMediaElement", "src", "video"],
    ["HTMLVideoElement", "poster", "video"], ["HTMLTrackElement", "src", "track"], ["HTMLEmbedElement", "src", "embed"],
    ["HTMLObjectElement", "data", "object"]
  ];
  var nativeGet = {};
  PROPS.forEach(function (p) {
    var C = W[p[0]];
    if (!C) return;
    var attr = p[3] || p[1];
    var d = accessor(C.prototype, p[1],
      attr === "srcset" ? null : function (v) { return unrewrite(v); },
      function (v) { return rwAttr(this.localName === "audio" ? "audio" : p[2], attr, v, this); });
    if (d) nativeGet[p[0] + "." + p[1]] = d.get;
  });
  var EP = W.Element.prototype;
  var nativeSetAttribute = EP.setAttribute, nativeGetAttribute = EP.getAttribute;
  patch(EP, "setAttribute", function (orig) {
    return function (name, value) {
      var attr = String(name).toLowerCase();
      return orig.call(this, name, rwAttr(this.localName, attr, value, this));
    };
  });
  patch(EP, "setAttributeNS", function (orig) {
    return function (ns, name, value) {
      var attr = String(name).toLowerCase();
      return orig.call(this, ns, name, rwAttr(this.localName, attr, value, this));
    };
  });
  patch(EP, "getAttribute", function (orig) {
    return function (name) {
      var v = orig.call(this, name);
      return typeof v === "string" && isUrlAttr(this.localName, String(name).toLowerCase()) ? unrewrite(v) : v;
    };
  });
  // document.URL and friends say the original URL
  [["Document", "URL"], ["Document", "documentURI"], ["Document", "referrer"], ["Node", "baseURI"]].forEach(function (p) {
    try {
      var d = descriptor(W[p[0]].prototype, p[1]);
      if (d && d.get) Object.defineProperty(W[p[0]].prototype, p[1], {configurable: true, enumerable: d.enumerable,
        get: function () { return unrewrite(d.get.call(this)); }});
    } catch (e) { /* kept */ }
  });

  // ------------------------------------------------------------------ markup inserted by scripts
  var TAG = /<([a-zA-Z][^\s\/>]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g;
  var ATTR = /([^\s"'>\/=]+)(\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g;
  var CSS_URL = /url\(\s*(['"]?)([^'")]+)\1\s*\)/gi;
  function unescapeHtml(s) {
    return s.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|quot|apos|lt|gt);?/gi, function (m, e) {
      var l = e.toLowerCase();
      if (l[0] === "#") {
        var cp = l[1] === "x" ? parseInt(l.slice(2), 16) : parseInt(l.slice(1), 10);
        return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
      }
      return {amp: "&", quot: "\"", apos: "'", lt: "<", gt: ">"}[l];
    });
  }
  function rewriteHtml(markup) {
    if (typeof markup !== "string" || markup.indexOf("<") < 0) return markup;
    return markup.replace(TAG, function (whole, tag, attrs) {
      var t = tag.toLowerCase(), rel = /\brel\s*=\s*["']?([^"'\s>]+)/i.exec(attrs), as = /\bas\s*=\s*["']?([^"'\s>]+)/i.exec(attrs);
      var fake = {getAttribute: function (n) { var m = n === "rel" ? rel : as; return m ? m[1] : null; }};
      var changed = attrs.replace(ATTR, function (a, name, eq, dq, sq, bare) {
        var n = name.toLowerCase(), raw = dq !== undefined ? dq : sq !== undefined ? sq : bare, value;
        if (n === "style" && /url\(/i.test(raw)) {
          value = unescapeHtml(raw).replace(CSS_URL, function (m, q, u) { return "url(" + q + rw(u, "oe_") + q + ")"; });
        } else if (attrMod(t, n, fake) !== undefined) {
          value = rwAttr(t, n, unescapeHtml(raw), fake);
        } else return a;
        if (value === unescapeHtml(raw)) return a;
        var q = sq !== undefined ? "'" : "\"";
        return name + eq + q + value.replace(/&/g, "&amp;").replace(q === "\"" ? /"/g : /'/g, q === "\"" ? "&quot;" : "&#39;") + q;
      });
      return changed === attrs ? whole : "<" + tag + changed + ">";
    });
  }
  function markupSetter(proto, name) {
    accessor(proto, name, null, function (v) {
      var tag = this.localName;
      return tag === "script" || tag === "style" || tag === "textarea" || tag === "title" ? v : rewriteHtml(v);
    });
  }
  markupSetter(EP, "innerHTML");
  markupSetter(EP, "outerHTML");
  if (W.ShadowRoot) markupSetter(W.ShadowRoot.prototype, "innerHTML");
  if (W.HTMLIFrameElement) accessor(W.HTMLIFrameElement.prototype, "srcdoc", null, rewriteHtml);
  patch(EP, "insertAdjacentHTML", function (orig) {
    return function (where, html) { return orig.call(this, where, rewriteHtml(html)); };
  });
  if (W.Range) patch(W.Range.prototype, "createContextualFragment", function (orig) {
    return function (html) { return orig.call(this, rewriteHtml(html)); };
  });
  ["write", "writeln"].forEach(function (name) {
    patch(W.Document.prototype, name, function (orig) {
      return function () {
        var text = Array.prototype.map.call(arguments, String).join("");
        return orig.call(this, rewriteHtml(text));
      };
    });
  });

  // ------------------------------------------------------------------ what the opaque origin forbids
  (function cookies() {
    var d = descriptor(W.Document.prototype, "cookie");
    if (!d) return;
    var jar = {};
    function path() { try { return new URL(unrewrite(realLoc.href)).pathname; } catch (e) { return "/"; } }
    function read() {
      var now = Date.now(), p = path(), out = [];
      Object.keys(jar).forEach(function (k) {
        var c = jar[k];
        if (c.expires !== null && c.expires <= now) { delete jar[k]; return; }
        if (p.lastIndexOf(c.path, 0) === 0) out.push(c.name ? c.name + "=" + c.value : c.value);
      });
      return out.join("; ");
    }
    function write(v) {
      var parts = String(v).split(";"), first = parts.shift(), eq = first.indexOf("=");
      var name = (eq < 0 ? "" : first.slice(0, eq)).trim(), value = (eq < 0 ? first : first.slice(eq + 1)).trim();
      var c = {name: name, value: value, path: "/", expires: null};
      parts.forEach(function (a) {
        var i = a.indexOf("="), k = (i < 0 ? a : a.slice(0, i)).trim().toLowerCase(), val = i < 0 ? "" : a.slice(i + 1).trim();
        if (k === "path" && val[0] === "/") c.path = val;
        else if (k === "max-age" && /^-?\d+$/.test(val)) c.expires = Date.now() + 1000 * parseInt(val, 10);
        else if (k === "expires" && c.expires === null && !isNaN(Date.parse(val))) c.expires = Date.parse(val);
      });
      jar[name + "\n" + c.path] = c;
    }
    Object.defineProperty(W.Document.prototype, "cookie", {
      configurable: true, enumerable: d.enumerable,
      get: function () { try { return d.get.call(this); } catch (e) { return read(); } },
      set: function (v) { try { d.set.call(this, v); } catch (e) { write(v); } }
    });
  })();
  function MemoryStorage() { this._items = new Map(); }
  MemoryStorage.prototype = {
    get length() { return this._items.size; },
    key: function (i) { return Array.from(this._items.keys())[i] === undefined ? null : Array.from(this._items.keys())[i]; },
    getItem: function (k) { k = String(k); return this._items.has(k) ? this._items.get(k) : null; },
    setItem: function (k, v) { this._items.set(String(k), String(v)); },
    removeItem: function (k) { this._items.delete(String(k)); },
    clear: function () { this._items.clear(); }
  };
  function storageProxy(s) {
    return new Proxy(s, {
      get: function (t, k) { return k in MemoryStorage.prototype || typeof k === "symbol" ? (typeof t[k] === "function" ? t[k].bind(t) : t[k]) : t.getItem(k); },
      set: function (t, k, v) { t.setItem(k, v); return true; },
      has: function (t, k) { return t._items.has(String(k)); },
      deleteProperty: function (t, k) { t.removeItem(k); return true; },
      ownKeys: function (t) { return Array.from(t._items.keys()); },
      getOwnPropertyDescriptor: function (t, k) {
        return t._items.has(String(k)) ? {value: t._items.get(String(k)), writable: true, enumerable: true, configurable: true} : undefined;
      }
    });
  }
  ["localStorage", "sessionStorage"].forEach(function (name) {
    try { void W[name]; return; } catch (e) { /* forbidden here: kept in memory */ }
    var store = storageProxy(new MemoryStorage());
    try { Object.defineProperty(W, name, {configurable: true, enumerable: true, get: function () { return store; }}); }
    catch (e) { /* cannot be replaced */ }
  });
  (function domain() {
    var d = descriptor(W.Document.prototype, "domain");
    if (!d) return;
    var shown = null;
    Object.defineProperty(W.Document.prototype, "domain", {
      configurable: true, enumerable: d.enumerable,
      get: function () { try { return shown || new URL(unrewrite(realLoc.href)).hostname; } catch (e) { return ""; } },
      set: function (v) { shown = String(v); }
    });
  })();
  // postMessage: the archived origin is not this page's (opaque, or the replay host)
  patch(W, "postMessage", function (orig) {
    return function (message, target, transfer) {
      var args = Array.prototype.slice.call(arguments);
      if (typeof target === "string" && target !== "*" && target !== "/") args[1] = "*";
      else if (target && typeof target === "object" && target.targetOrigin && target.targetOrigin !== "*") {
        args[1] = Object.assign({}, target, {targetOrigin: "*"});
      }
      return orig.apply(this, args);
    };
  });
  (function messageOrigin() {
    var d = W.MessageEvent && descriptor(W.MessageEvent.prototype, "origin");
    if (!d || !d.get) return;
    var archived = "";
    try { archived = new URL(info.url).origin; } catch (e) { /* none */ }
    Object.defineProperty(W.MessageEvent.prototype, "origin", {configurable: true, enumerable: d.enumerable,
      get: function () { var o = d.get.call(this); return (o === "null" || o === origin) && archived ? archived : o; }});
  })();

  // ------------------------------------------------------------------ what the server did not rewrite
  // Links, forms and navigations to the live web (or to the replay host's root) go to the archive.
  var aHref = nativeGet["HTMLAnchorElement.href"], areaHref = nativeGet["HTMLAreaElement.href"];
  var formAction = nativeGet["HTMLFormElement.action"];
  function liveToArchive(u) {
    return /^(https?|ftp):/i.test(u) && !inArchive(u) ? rw(u, pageMod) : null;
  }
  D.addEventListener("click", function (e) {
    var a = e.target && e.target.closest ? e.target.closest("a[href], area[href]") : null;
    if (!a) return;
    var get = a.localName === "a" ? aHref : areaHref;
    var fixed = get ? liveToArchive(get.call(a)) : null;
    if (fixed) nativeSetAttribute.call(a, "href", fixed);
  }, true);
  function fixForm(f, submitter) {
    if (submitter && submitter.hasAttribute && submitter.hasAttribute("formaction")) {
      var g = nativeGet[submitter.localName === "button" ? "HTMLButtonElement.formAction" : "HTMLInputElement.formAction"];
      var fx = g ? liveToArchive(g.call(submitter)) : null;
      if (fx) nativeSetAttribute.call(submitter, "formaction", fx);
      return;
    }
    var fixed = formAction ? liveToArchive(formAction.call(f)) : null;
    if (fixed) nativeSetAttribute.call(f, "action", fixed);
  }
  D.addEventListener("submit", function (e) { fixForm(e.target, e.submitter); }, true);
  patch(W.HTMLFormElement.prototype, "submit", function (orig) {
    return function () { fixForm(this, null); return orig.apply(this, arguments); };
  });
  if (W.navigation && W.navigation.addEventListener) {
    W.navigation.addEventListener("navigate", function (e) {
      var dest = e.destination && e.destination.url;
      if (!dest || !e.cancelable || e.formData) return;
      var fixed = liveToArchive(dest);
      if (!fixed) return;
      e.preventDefault();
      if (e.navigationType === "replace") realLoc.replace(fixed); else realLoc.assign(fixed);
    });
  }

  // ------------------------------------------------------------------ for the page and the tests
  W.__wa_client = Object.freeze({
    info: info,
    UrlRewriter: UrlRewriter,
    rewrite: rw,
    unrewrite: unrewrite,
    rewriteHtml: rewriteHtml,
    location: locProxy
  });
  if (D.readyState === "loading") D.addEventListener("DOMContentLoaded", tell);
  else tell();
  W.addEventListener("load", tell);
})();
