/* pgbench-kb search: our own small UI over Pagefind's JS API (pagefind/pagefind.js, built by
   `kb index`). Words, filter checkboxes with counts, and an order: relevance or tps.
   - Works at a server's root and under any sub-path: the bundle and the site's base are
     worked out from this script's own address, never written into the page.
   - Text from the index is inserted as text; only Pagefind's <mark> in excerpts becomes an
     element.
   - Within one filter, ticked values are alternatives (any); across filters, all must hold.
     A filter's counts are those of the results with every other filter applied.
   - Ordered by tps, only pages that carry a tps are listed (run and configuration pages).
   - The state is kept in the address (?q=…&sort=desc&f=name:value), so a result's back
     button returns to the same list.
   - #search's data-done holds the number of the last search whose results are all shown. */
(function () {
  "use strict";
  var here = document.currentScript.src;
  var bundle = new URL("../pagefind/", here);
  var site = new URL("../", here);
  var PAGE_SIZE = 20;
  /* Pagefind lowercases filter names: these are the names shown, in the order the page's
     introduction lists them; a filter not listed here comes last, capitalised. */
  var LABELS = {
    "postgresql": "PostgreSQL", "raid level": "RAID level", "wal placement": "WAL placement",
    "write cache": "Write cache", "os": "OS", "filesystem": "Filesystem",
    "workload": "Workload", "origin": "Origin", "machine": "Machine"
  };
  var ORDER = Object.keys(LABELS);

  var root = document.getElementById("search");
  var form = document.getElementById("search-form");
  var input = document.getElementById("search-q");
  var order = document.getElementById("search-sort");
  var filterBox = document.getElementById("search-filters");
  var status = document.getElementById("search-status");
  var list = document.getElementById("search-results");
  var more = document.getElementById("search-more");

  var pagefind = null;
  var totals = {};        // filter name → value → pages in the whole site
  var boxes = {};         // filter name → value → {input, count}
  var latest = 0;         // the newest search; older answers are dropped
  var pending = [];       // results not shown yet
  var timer = null;

  function label(name) {
    return LABELS[name] || name.charAt(0).toUpperCase() + name.slice(1);
  }

  function rank(name) {
    var i = ORDER.indexOf(name);
    return i < 0 ? ORDER.length : i;
  }

  function byName(a, b) {
    return rank(a) - rank(b) || a.localeCompare(b);
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  /* The filter checkboxes, one <details> block per filter, from the site's totals. */
  function drawFilters() {
    Object.keys(totals).sort(byName).forEach(function (name, n) {
      var block = element("details", "search-filter");
      var summary = element("summary", "", label(name));
      summary.id = "search-filter-" + n;
      var group = element("div", "search-values");
      group.setAttribute("role", "group");
      group.setAttribute("aria-labelledby", summary.id);
      boxes[name] = {};
      Object.keys(totals[name]).sort(function (a, b) {
        return a.localeCompare(b, undefined, { numeric: true });
      }).forEach(function (value) {
        var row = element("label");
        var box = element("input");
        box.type = "checkbox";
        box.value = value;
        box.dataset.filter = name;
        var count = element("span", "count");
        row.append(box, " ", element("span", "", value), " ", count);
        group.append(row);
        boxes[name][value] = { input: box, count: count };
      });
      block.append(summary, group);
      filterBox.append(block);
    });
  }

  function ticked() {
    var filters = {};
    Object.keys(boxes).forEach(function (name) {
      var values = Object.keys(boxes[name]).filter(function (v) {
        return boxes[name][v].input.checked;
      });
      if (values.length) { filters[name] = { any: values }; }
    });
    return filters;
  }

  function showCounts(counts) {
    Object.keys(boxes).forEach(function (name) {
      Object.keys(boxes[name]).forEach(function (value) {
        var n = (counts[name] || {})[value] || 0;
        boxes[name][value].count.textContent = "(" + n + ")";
        boxes[name][value].input.parentNode.classList.toggle("none", n === 0);
      });
    });
  }

  /* Counts for each ticked filter: the results with all the other filters applied. */
  function facetCounts(term, filters, found) {
    var names = Object.keys(filters);
    return Promise.all(names.map(function (name) {
      var others = Object.assign({}, filters);
      delete others[name];
      if (!term && !Object.keys(others).length) { return totals[name]; }
      return pagefind.search(term || null, { filters: others })
        .then(function (r) { return r.filters[name] || {}; });
    })).then(function (lists) {
      var counts = Object.assign({}, found);
      names.forEach(function (name, i) { counts[name] = lists[i]; });
      return counts;
    });
  }

  var ENTITIES = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: "\u00a0" };

  function unescape(text) {
    return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, function (all, code) {
      if (code[0] === "#") {
        var n = code[1] === "x" || code[1] === "X" ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
        return n > 0 && n < 0x110000 ? String.fromCodePoint(n) : all;
      }
      return ENTITIES[code.toLowerCase()] || all;
    });
  }

  /* Pagefind's excerpt is escaped text with <mark> around the words found. */
  function excerpt(html) {
    var p = element("p", "excerpt");
    var marked = false;
    html.split(/(<mark>|<\/mark>)/).forEach(function (part) {
      if (part === "<mark>") { marked = true; return; }
      if (part === "</mark>") { marked = false; return; }
      if (part) { p.append(marked ? element("mark", "", unescape(part)) : unescape(part)); }
    });
    return p;
  }

  function item(data) {
    var li = element("li");
    var head = element("div", "search-head");
    var link = element("a", "search-title", (data.meta && data.meta.title) || data.url);
    link.href = data.url;
    head.append(link);
    if (data.meta && data.meta.tps) { head.append(" ", element("span", "tps", data.meta.tps)); }
    li.append(head, excerpt(data.excerpt || ""));
    return li;
  }

  function showMore(id) {
    var next = pending.splice(0, PAGE_SIZE);
    more.hidden = true;
    return Promise.all(next.map(function (r) { return r.data(); })).then(function (pages) {
      if (id !== latest) { return; }
      pages.forEach(function (data) { list.append(item(data)); });
      more.hidden = pending.length === 0;
    });
  }

  function remember(term, sort, filters) {
    var params = new URLSearchParams();
    if (term) { params.set("q", term); }
    if (sort) { params.set("sort", sort); }
    Object.keys(filters).forEach(function (name) {
      filters[name].any.forEach(function (value) { params.append("f", name + ":" + value); });
    });
    var query = params.toString();
    history.replaceState(null, "", window.location.pathname + (query ? "?" + query : ""));
  }

  function describe(n, term, sort) {
    var words = n === 1 ? "1 page" : n + " pages";
    if (sort) { words += " with a tps, " + (sort === "desc" ? "highest" : "lowest") + " first"; }
    return term ? words + " for “" + term + "”" : words;
  }

  function search() {
    var id = ++latest;
    var term = input.value.trim();
    var sort = order.value;
    var filters = ticked();
    remember(term, sort, filters);
    list.textContent = "";
    list.removeAttribute("aria-busy");
    pending = [];
    more.hidden = true;
    if (!term && !sort && !Object.keys(filters).length) {
      status.textContent = "Type words, tick a filter or choose an order.";
      showCounts(totals);
      root.dataset.done = String(id);
      return Promise.resolve();
    }
    var options = { filters: filters };
    if (sort) { options.sort = { tps: sort }; }
    status.textContent = "Searching…";
    list.setAttribute("aria-busy", "true");
    return pagefind.search(term || null, options).then(function (found) {
      if (id !== latest) { return; }
      pending = found.results.slice();
      return Promise.all([showMore(id), facetCounts(term, filters, found.filters)])
        .then(function (done) {
          if (id !== latest) { return; }
          showCounts(done[1]);
          status.textContent = describe(found.results.length, term, sort);
          list.removeAttribute("aria-busy");
          root.dataset.done = String(id);
        });
    });
  }

  function restore() {
    var params = new URLSearchParams(window.location.search);
    input.value = params.get("q") || "";
    var sort = params.get("sort") || "";
    order.value = ["", "desc", "asc"].indexOf(sort) >= 0 ? sort : "";
    params.getAll("f").forEach(function (pair) {
      var at = pair.indexOf(":");
      var box = (boxes[pair.slice(0, at)] || {})[pair.slice(at + 1)];
      if (box) {
        box.input.checked = true;
        box.input.closest("details").open = true;
      }
    });
  }

  function start(api) {
    pagefind = api;
    return pagefind.options({ baseUrl: site.pathname, bundlePath: bundle.pathname })
      .then(function () { return pagefind.filters(); })
      .then(function (all) {
        totals = all;
        drawFilters();
        restore();
        root.hidden = false;
        form.addEventListener("submit", function (event) {
          event.preventDefault();
          clearTimeout(timer);
          search();
        });
        input.addEventListener("input", function () {
          clearTimeout(timer);
          timer = setTimeout(search, 200);
        });
        order.addEventListener("change", search);
        filterBox.addEventListener("change", search);
        more.addEventListener("click", function () {
          var first = list.children.length;
          showMore(latest).then(function () {
            var link = list.children[first] && list.children[first].querySelector("a");
            if (link) { link.focus(); }
          });
        });
        return search();
      });
  }

  function ready() {
    import(bundle.href + "pagefind.js").then(start, function () {
      root.hidden = false;
      form.hidden = true;
      status.textContent = "The search index could not be loaded: use the results explorer.";
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
})();
