// warchive: the client script of a replayed page (inserted after <head> by the server).
// It tells the banner where the frame is. (The routing of fetch, XHR, location and the other
// run-time doors through the archive grows here.)
(function () {
  "use strict";
  var el = document.getElementById("wa-replay-info");
  if (!el) return;
  var info = JSON.parse(el.textContent);
  function tell() {
    if (window.parent === window) return;
    try {
      window.parent.postMessage({wa: "location", url: info.url, timestamp: info.timestamp,
                                 title: document.title || ""}, "*");
    } catch (e) { /* nothing to tell */ }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", tell);
  else tell();
})();
