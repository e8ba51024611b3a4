// warchive: the banner of framed replay. It follows the frame: the archived page's client
// script (wa_client.js) posts {wa: "location", url, timestamp, title} to this window; the banner
// checks that the message comes from its frame, and shows what the frame shows. Everything it
// writes goes through textContent and attribute setters, never through innerHTML.
(function () {
  "use strict";
  var info = JSON.parse(document.getElementById("wa-frame-info").textContent);
  var frame = document.getElementById("wa-frame");
  var stamps = info.captures || [];
  var MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

  function human(ts) {
    if (!/^\d{14}$/.test(ts)) return ts;
    return (+ts.slice(6, 8)) + " " + MONTHS[+ts.slice(4, 6) - 1] + " " + ts.slice(0, 4) + ", " +
      ts.slice(8, 10) + ":" + ts.slice(10, 12) + ":" + ts.slice(12, 14);
  }
  function replayUrl(ts, url, mod) { return info.prefix + ts + (mod || "") + "/" + url; }
  function setStep(el, ts, url) {
    if (ts) { el.href = replayUrl(ts, url); el.classList.remove("wa-off"); }
    else { el.removeAttribute("href"); el.classList.add("wa-off"); }
  }
  function neighbours(ts) {
    var prev = null, next = null;
    for (var i = 0; i < stamps.length; i++) {
      if (stamps[i] < ts) prev = stamps[i];
      else if (stamps[i] > ts && next === null) next = stamps[i];
    }
    return [prev, next];
  }
  function show(url, ts, title) {
    var sameUrl = url === info.url;
    info.url = url; info.timestamp = ts;
    document.getElementById("wa-date").textContent = human(ts);
    var orig = document.getElementById("wa-orig");
    // a live link only for web schemes: the URL comes from the framed (archived) page's message
    orig.textContent = url; orig.href = /^(https?|ftps?):\/\//i.test(url) ? url : "#";
    if (title) document.title = title + " (" + human(ts) + ")";
    try { history.replaceState(null, "", replayUrl(ts, url)); } catch (e) { /* another origin */ }
    if (!sameUrl) { stamps = []; fetchCaptures(url); }
    update();
  }
  function update() {
    var n = neighbours(info.timestamp);
    setStep(document.getElementById("wa-prev"), n[0], info.url);
    setStep(document.getElementById("wa-next"), n[1], info.url);
    var all = document.getElementById("wa-all");
    all.textContent = stamps.length + (stamps.length === 1 ? " capture" : " captures");
    all.href = info.prefix + "*/" + info.url;
  }
  function fetchCaptures(url) {
    var q = info.cdx + "?output=json&fl=timestamp&matchType=exact&allowFuzzy=false&url=" + encodeURIComponent(url);
    fetch(q).then(function (r) { return r.text(); }).then(function (text) {
      if (url !== info.url) return;
      stamps = text.split("\n").filter(Boolean).map(function (l) { return JSON.parse(l).timestamp; });
      update();
    }).catch(function () {});
  }
  window.addEventListener("message", function (ev) {
    if (ev.source !== frame.contentWindow) return;
    var d = ev.data;
    if (!d || d.wa !== "location" || typeof d.url !== "string" || typeof d.timestamp !== "string") return;
    // the frame is the archived page's to script: a URL it tells becomes a link here, so only
    // a web URL and a timestamp of digits are taken (a javascript: URL would run in the banner)
    if (!/^(https?|ftp):\/\//i.test(d.url) || !/^\d{1,14}$/.test(d.timestamp)) return;
    show(d.url, d.timestamp, typeof d.title === "string" ? d.title : "");
  });
  window.addEventListener("popstate", function () { /* the frame keeps its own history */ });
})();
