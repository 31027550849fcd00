// Live updates: the server streams the repository's HEAD; when it moves,
// the page's live part is fetched again and swapped in, so an operator
// sees a new memory or commit appear. Reading works without this script.
(function () {
  "use strict";
  var live = document.querySelector("[data-live]");
  if (!live || !window.EventSource || !window.fetch) { return; }
  var url = live.getAttribute("data-live");
  var head = live.getAttribute("data-head") || "";
  var delay = 1000;
  function busy() {
    var a = document.activeElement;
    return a && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName);
  }
  function refresh() {
    if (busy()) { return; }
    fetch(window.location.href, { credentials: "same-origin" }).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (text) {
      if (!text) { return; }
      var doc = new DOMParser().parseFromString(text, "text/html");
      var fresh = doc.querySelector("[data-live]");
      var cur = document.querySelector("[data-live]");
      if (fresh && cur) { cur.replaceWith(fresh); }
    });
  }
  function connect() {
    var es = new EventSource(url);
    es.addEventListener("head", function (e) {
      delay = 1000;
      if (e.data !== head) { head = e.data; refresh(); }
    });
    es.onerror = function () {
      es.close();
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  connect();
}());
