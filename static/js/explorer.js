/* pgbench-kb results explorer: sort by any column (buttons in the headers), filter by words
   and by facets (PostgreSQL version, RAID level, WAL placement, write cache, machine,
   workload, origin), and tick two configurations or more to compare them
   (compare/?a=…&b=…&c=…).
   Progressive enhancement: without this script the full table is there, unsorted and
   unfiltered; no column is ever hidden. Each row carries its facets (data-facets, JSON), the
   other names people type for them (data-words) and its key for comparing (data-key). */
(function () {
  "use strict";
  var table = document.getElementById("explorer");
  var form = document.getElementById("explorer-filters");
  if (!table || !form) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var input = document.getElementById("explorer-q");
  var count = document.getElementById("explorer-count");
  var facetBox = document.getElementById("explorer-facets");
  var clear = document.getElementById("explorer-clear");
  var compare = document.getElementById("explorer-compare");
  var picked = document.getElementById("explorer-picked");
  var NONE = "not recorded";
  var facetNames = (form.getAttribute("data-facets") || "").split("|").filter(Boolean);
  form.hidden = false;
  form.addEventListener("submit", function (event) { event.preventDefault(); });

  /* "8.4" → [8, 4]; "10.1" → [10, 1]: versions compare number by number. */
  function versionParts(text) {
    var match = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(text);
    return match ? [Number(match[1]), Number(match[2] || 0), Number(match[3] || 0)] : null;
  }
  function compareValues(name, x, y) {
    if (x === NONE || y === NONE) { return x === y ? 0 : x === NONE ? 1 : -1; }
    if (name === "PostgreSQL") {
      var a = versionParts(x), b = versionParts(y);
      if (a && b) {
        for (var i = 0; i < 3; i += 1) { if (a[i] !== b[i]) { return a[i] - b[i]; } }
        return 0;
      }
    }
    return x.localeCompare(y);
  }

  var info = rows.map(function (row) {
    var facets = {};
    try { facets = JSON.parse(row.getAttribute("data-facets") || "{}") || {}; } catch (e) { facets = {}; }
    var text = (row.textContent + " " + (row.getAttribute("data-words") || "")).toLowerCase();
    return { row: row, facets: facets, text: text.replace(/\s+/g, " ") };
  });
  function facetOf(item, name) { return item.facets[name] || NONE; }

  /* Sorting */
  function cellValue(row, index, kind) {
    var cell = row.cells[index];
    if (kind === "number") {
      var raw = cell.getAttribute("data-value");
      var number = raw === null || raw === "" ? NaN : Number(raw);
      return isNaN(number) ? -Infinity : number;
    }
    return cell.textContent.trim().toLowerCase();
  }
  function sortBy(index, kind, button) {
    var ascending = button.getAttribute("data-direction") !== "ascending";
    rows.sort(function (a, b) {
      var x = cellValue(a, index, kind), y = cellValue(b, index, kind);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.removeAttribute("aria-sort");
      var other = th.querySelector("button");
      if (other) { other.removeAttribute("data-direction"); }
    });
    button.setAttribute("data-direction", ascending ? "ascending" : "descending");
    button.parentNode.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows.forEach(function (row) { body.appendChild(row); });
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
    var kind = th.getAttribute("data-sort");
    if (!kind) { return; }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "sort";
    button.textContent = th.textContent;
    button.title = "Sort by " + th.textContent;
    th.textContent = "";
    th.appendChild(button);
    button.addEventListener("click", function () { sortBy(index, kind, button); });
  });

  /* Facets: one block of checkboxes per facet; ticked values of one facet are alternatives,
     different facets must all hold. A value's count is the rows the words and the other
     facets leave with that value. */
  var boxes = {};
  facetNames.forEach(function (name) {
    var values = {};
    info.forEach(function (item) { values[facetOf(item, name)] = true; });
    var sorted = Object.keys(values).sort(function (x, y) { return compareValues(name, x, y); });
    if (sorted.length < 2 && sorted[0] === NONE) { return; }
    var details = document.createElement("details");
    details.className = "explorer-facet";
    var summary = document.createElement("summary");
    summary.textContent = name;
    details.appendChild(summary);
    var list = document.createElement("div");
    list.className = "values";
    list.setAttribute("role", "group");
    list.setAttribute("aria-label", name);
    boxes[name] = [];
    sorted.forEach(function (value) {
      var label = document.createElement("label");
      if (value === NONE) { label.className = "none"; }
      var box = document.createElement("input");
      box.type = "checkbox";
      box.value = value;
      box.addEventListener("change", update);
      var words = document.createElement("span");
      words.textContent = value + " ";
      var number = document.createElement("span");
      number.className = "count";
      label.appendChild(box);
      label.appendChild(words);
      label.appendChild(number);
      list.appendChild(label);
      boxes[name].push({ box: box, value: value, count: number });
    });
    details.appendChild(list);
    facetBox.appendChild(details);
  });

  function ticked(name) {
    return (boxes[name] || []).filter(function (b) { return b.box.checked; })
      .map(function (b) { return b.value; });
  }
  function matchesWords(item, words) {
    return words.every(function (word) { return item.text.indexOf(word) !== -1; });
  }
  function matchesFacets(item, chosen, except) {
    return Object.keys(chosen).every(function (name) {
      return name === except || chosen[name].length === 0 ||
        chosen[name].indexOf(facetOf(item, name)) !== -1;
    });
  }
  function update() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var chosen = {};
    Object.keys(boxes).forEach(function (name) { chosen[name] = ticked(name); });
    var shown = 0;
    var byWords = info.filter(function (item) { return matchesWords(item, words); });
    info.forEach(function (item) { item.row.hidden = true; });
    byWords.forEach(function (item) {
      var match = matchesFacets(item, chosen, null);
      item.row.hidden = !match;
      if (match) { shown += 1; }
    });
    Object.keys(boxes).forEach(function (name) {
      var counts = {};
      byWords.forEach(function (item) {
        if (matchesFacets(item, chosen, name)) {
          var value = facetOf(item, name);
          counts[value] = (counts[value] || 0) + 1;
        }
      });
      boxes[name].forEach(function (b) { b.count.textContent = "(" + (counts[b.value] || 0) + ")"; });
    });
    var any = words.length > 0 || Object.keys(chosen).some(function (n) { return chosen[n].length; });
    clear.hidden = !any;
    count.textContent = shown + " of " + rows.length + " shown";
  }
  input.addEventListener("input", update);
  clear.addEventListener("click", function () {
    input.value = "";
    Object.keys(boxes).forEach(function (name) {
      boxes[name].forEach(function (b) { b.box.checked = false; });
    });
    update();
    input.focus();
  });

  /* Compare any N: a checkbox in each configuration's first cell; up to eight (A to H), the
     ninth ticked unticks the first. The link keeps the compare page's own relative address. */
  var MOST = 8;
  var order = [];
  var target = compare.getAttribute("href");
  function showPicked() {
    if (order.length >= 2) {
      compare.setAttribute("href", target + "?" + order.map(function (entry, i) {
        return "abcdefgh".charAt(i) + "=" + encodeURIComponent(entry.key);
      }).join("&"));
      compare.removeAttribute("aria-disabled");
      picked.textContent = "Ticked: " + order.map(function (e) { return e.title; }).join("; ") +
        ".";
    } else {
      compare.setAttribute("href", target);
      compare.setAttribute("aria-disabled", "true");
      picked.textContent = order.length === 1 ? "Ticked: " + order[0].title + "; tick one more."
        : "Tick two configurations or more to compare them.";
    }
  }
  rows.forEach(function (row) {
    var key = row.getAttribute("data-key");
    if (!key) { return; }
    var link = row.cells[0].querySelector("a");
    var title = link ? link.textContent : key;
    var label = document.createElement("label");
    var box = document.createElement("input");
    box.type = "checkbox";
    box.className = "pick";
    box.setAttribute("aria-label", "Compare: " + title);
    var words = document.createElement("span");
    words.textContent = "compare";
    words.setAttribute("aria-hidden", "true");
    label.appendChild(box);
    label.appendChild(words);
    row.cells[0].appendChild(label);
    var entry = { key: key, title: title, box: box };
    box.addEventListener("change", function () {
      order = order.filter(function (other) { return other !== entry; });
      if (box.checked) {
        order.push(entry);
        if (order.length > MOST) { order.shift().box.checked = false; }
      }
      showPicked();
    });
  });
  showPicked();
  update();
})();
