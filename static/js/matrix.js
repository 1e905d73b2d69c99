/* pgbench-kb per-machine matrix (layouts/matrix/page.html, derive/matrix.py): sort by any
   column, and set every figure against a baseline row the reader picks.
   Progressive enhancement: without this script the table is there with every figure. Each
   figure cell carries its number (data-value, empty for "—"); each column header says which
   way is better (data-better: "higher" for tps, "lower" for latency and costs). A change is
   written as numbers.change writes it (+73.4%, −12.0%, ±0%) beside the figure, and coloured
   by its size in steps; the colour is never the only sign (the change and the word "better"
   or "worse" are in the cell). Nothing here judges a difference: that is kb's, on the
   comparison pages.
   Two tables may be on the page: one row per configuration (#matrix), and one per
   configuration and bench session (#matrix-sessions, in a <details> one click away); each
   sorts and takes a baseline of its own. */
(function () {
  "use strict";
  var tools = document.getElementById("matrix-tools");
  var status = document.getElementById("matrix-status");
  var first = document.getElementById("matrix");
  if (!first || !tools || !status) { return; }
  tools.hidden = false;
  var MINUS = "\u2212";
  /* Steps of the colour, by how many times as much (either way): under 2% no colour. */
  var STEPS = [1.02, 1.1, 1.25, 1.5];
  function say(text) { status.textContent = text; }
  /* numbers.change: one decimal, a real minus sign, "±0%" when it rounds to zero. */
  function change(pct) {
    var rounded = Math.round(pct * 10) / 10;
    if (rounded === 0) { return "±0%"; }
    return (pct > 0 ? "+" : MINUS) + Math.abs(pct).toLocaleString("en-US",
      { minimumFractionDigits: 1, maximumFractionDigits: 1 }) + "%";
  }
  [first, document.getElementById("matrix-sessions")].forEach(function (table) {
    if (table) { matrix(table); }
  });
  /* The link to the sessions' table opens it. */
  var sessions = document.getElementById("matrix-by-session");
  function openSessions() {
    if (sessions && location.hash === "#matrix-by-session") { sessions.open = true; }
  }
  window.addEventListener("hashchange", openSessions);
  openSessions();

  function matrix(table) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);

    function titleOf(row) {
      var cell = row.cells[0];
      var link = cell.querySelector("a");
      var when = cell.querySelector(".when");
      return (link ? link.textContent : cell.textContent).trim() +
        (when ? " (" + when.textContent.trim() + ")" : "");
    }
    function valueOf(cell) {
      var raw = cell.getAttribute("data-value");
      var number = raw === null || raw === "" ? NaN : Number(raw);
      return isNaN(number) ? null : number;
    }
    /* Sorting: a figure column sorts by its number, rows without one last either way. */
    function sortBy(index, button) {
      var ascending = button.getAttribute("data-direction") !== "ascending";
      var numeric = headers[index].getAttribute("data-sort") === "number";
      rows.sort(function (a, b) {
        if (numeric) {
          var x = valueOf(a.cells[index]), y = valueOf(b.cells[index]);
          if (x === null || y === null) { return x === y ? 0 : x === null ? 1 : -1; }
          return ascending ? x - y : y - x;
        }
        var order = titleOf(a).localeCompare(titleOf(b));
        return ascending ? order : -order;
      });
      headers.forEach(function (th) {
        th.removeAttribute("aria-sort");
        var other = th.querySelector("button.sort");
        if (other) { other.removeAttribute("data-direction"); }
      });
      button.setAttribute("data-direction", ascending ? "ascending" : "descending");
      headers[index].setAttribute("aria-sort", ascending ? "ascending" : "descending");
      rows.forEach(function (row) { body.appendChild(row); });
      say("Sorted by " + button.textContent.replace(/\s+/g, " ").trim() + ", " + (ascending ? "smallest" : "largest") +
        " first.");
    }
    headers.forEach(function (th, index) {
      if (!th.getAttribute("data-sort")) { return; }
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) { button.appendChild(th.firstChild); }
      th.appendChild(button);
      button.addEventListener("click", function () { sortBy(index, button); });
    });

    /* The baseline: a button at the end of each row. */
    var pickHeader = document.createElement("th");
    pickHeader.scope = "col";
    pickHeader.textContent = "Baseline";
    table.tHead.rows[0].appendChild(pickHeader);
    rows.forEach(function (row) {
      var cell = document.createElement("td");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "baseline";
      button.textContent = "Set as baseline";
      button.setAttribute("aria-label", "Set as baseline: " + titleOf(row));
      button.setAttribute("aria-pressed", "false");
      button.addEventListener("click", function () { setBaseline(row); });
      cell.appendChild(button);
      row.appendChild(cell);
    });

    function clearCell(cell) {
      cell.className = "num";
      var old = cell.querySelector(".change");
      if (old) { cell.removeChild(old); }
    }
    function mark(cell, text, className) {
      var span = document.createElement("span");
      span.className = "change";
      span.textContent = text;
      cell.appendChild(span);
      if (className) { cell.className = "num " + className; }
    }
    function setBaseline(base, quiet) {
      rows.forEach(function (row) {
        var pressed = row === base;
        row.classList.toggle("is-baseline", pressed);
        var button = row.querySelector("button.baseline");
        button.setAttribute("aria-pressed", pressed ? "true" : "false");
        button.textContent = pressed ? "Baseline" : "Set as baseline";
        headers.forEach(function (th, index) {
          if (th.getAttribute("data-sort") !== "number") { return; }
          var cell = row.cells[index];
          clearCell(cell);
          var value = valueOf(cell), reference = valueOf(base.cells[index]);
          if (pressed) { mark(cell, "baseline", "base"); return; }
          if (value === null) { return; }
          if (reference === null) { mark(cell, "no baseline figure", ""); return; }
          /* Too few digits on either side for a change to mean anything (derive/matrix.py). */
          if (cell.hasAttribute("data-coarse") || base.cells[index].hasAttribute("data-coarse")) {
            return;
          }
          if (reference === 0 || value === 0) { return; }  /* 0 → x is no percentage */
          var times = value / reference;
          var size = Math.max(times, 1 / times);
          var step = 0;
          STEPS.forEach(function (limit, i) { if (size >= limit) { step = i + 1; } });
          var higherIsBetter = th.getAttribute("data-better") === "higher";
          var better = higherIsBetter ? times > 1 : times < 1;
          var words = change((times - 1) * 100);
          if (step > 0) { words += better ? " better" : " worse"; }
          mark(cell, words, step > 0 ? (better ? "better-" : "worse-") + step : "same");
        });
      });
      if (!quiet) { say("Baseline: " + titleOf(base) + "."); }
    }

    if (rows.length) { setBaseline(rows[0], table !== first); }
  }
})();
