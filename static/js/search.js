/* pgbench-kb search: our own small UI over Pagefind's JS API. `kb index` writes one Pagefind
   bundle for the whole site (pagefind/); this script imports its pagefind.js.
   Words, filter checkboxes with counts, and an order: relevance or tps.
   - The code below still takes a list of bundles ("slices") and merges their answers (by
     Pagefind's score, or a k-way merge in tps order); with the one bundle the merge keeps
     Pagefind's own order.
   - The first result is shown as soon as its data is read; the others are read after it, so
     that the page answers after some 20 requests, not 40.
   - The filters (one file each in the bundle) are read after the first search has shown its
     results, not before: eleven filters would otherwise cost eleven requests before the first
     answer. An address that ticks filters (&f=…) reads them first, as it needs them.
   - Words that are a PostgreSQL version ("8.4", "10.1", "PG 9.6") list the pages they find
     of that version first (Pagefind's filter on it), then the other pages they find.
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
    "workload": "Workload", "origin": "Origin", "machine": "Machine", "source": "Source",
    "author": "Author"
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

  var slices = [];        // {api, names}: each slice's pagefind.js and its filter names
                          // (names null until its filters are read)
  var drawn = false;      // the filter checkboxes are drawn and counted
  var totals = {};        // filter name → value → pages in the whole site
  var boxes = {};         // filter name → value → {input, count}
  var latest = 0;         // the newest search; older answers are dropped
  var pending = null;     // results not shown yet: {left, take(n)}
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

  /* Each filter name → value → the sum of its counts in ``lists``. */
  function summed(lists) {
    var sum = {};
    lists.forEach(function (filters) {
      Object.keys(filters || {}).forEach(function (name) {
        var values = sum[name] = sum[name] || {};
        Object.keys(filters[name]).forEach(function (value) {
          values[value] = (values[value] || 0) + filters[name][value];
        });
      });
    });
    return sum;
  }

  /* Every slice's answer to one search ({results: [], filters: {}} for a slice lacking a
     filter asked for: none of its pages can match it). */
  function searchAll(term, options) {
    var names = Object.keys(options.filters || {});
    return Promise.all(slices.map(function (slice) {
      var lacking = slice.names && names.some(function (name) { return !slice.names[name]; });
      return lacking ? { results: [], filters: {} } : slice.api.search(term, options);
    }));
  }

  /* Counts for each ticked filter: the results with all the other filters applied. */
  function facetCounts(term, filters, found) {
    var names = Object.keys(filters);
    return Promise.all(names.map(function (name) {
      var others = Object.assign({}, filters);
      delete others[name];
      if (!term && !Object.keys(others).length) { return totals[name]; }
      return searchAll(term || null, { filters: others })
        .then(function (answers) {
          return summed(answers.map(function (r) { return r.filters; }))[name] || {};
        });
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

  /* The slices' results by relevance: one list by score (ties: slice order, then each
     slice's own order). */
  function byScore(lists) {
    var all = [];
    lists.forEach(function (results, s) {
      results.forEach(function (r, n) { all.push({ r: r, s: s, n: n }); });
    });
    all.sort(function (a, b) { return b.r.score - a.r.score || a.s - b.s || a.n - b.n; });
    var next = 0;
    var listed = {};
    all.forEach(function (c) { listed[c.r.id] = true; });
    return {
      left: all.length,
      /* More results after those already here (a second search's), each page once. */
      add: function (results) {
        results.forEach(function (r, n) {
          if (!listed[r.id]) { listed[r.id] = true; all.push({ r: r, s: lists.length, n: n }); }
        });
        this.left = all.length - next;
      },
      take: function (n, first) {
        var chosen = all.slice(next, next + n);
        next += chosen.length;
        this.left = all.length - next;
        if (!chosen.length) { return Promise.resolve([]); }
        /* The first result's data alone, shown at once (``first``), then the others. */
        return chosen[0].r.data().then(function (head) {
          if (first) { first(head); }
          /* After the next frame: the first result is drawn before the others are asked. */
          return new Promise(function (resolve) {
            window.requestAnimationFrame(function () { setTimeout(resolve, 0); });
          }).then(function () {
            return Promise.all(chosen.slice(1).map(function (c) { return c.r.data(); }));
          }).then(function (rest) { return first ? rest : [head].concat(rest); });
        });
      }
    };
  }

  /* The tps of a result's data: its exact figure (meta tps_sort), else the tps as shown
     ("45,314 tps": two pages may show the same). */
  function tpsOf(data) {
    var meta = data.meta || {};
    var text = String(meta.tps_sort || meta.tps || "").replace(/[^0-9.eE+-]/g, "");
    var n = parseFloat(text);
    return isNaN(n) ? null : n;
  }

  /* The slices' tps-ordered lists merged in order: each list's next result's data is read
     (one fragment per list), the best of them taken, and the list it came from advanced. */
  function byTps(lists, sort) {
    var at = lists.map(function () { return 0; });
    var heads = lists.map(function () { return null; });
    var merger = {
      left: lists.reduce(function (n, l) { return n + l.length; }, 0),
      take: function (n) {
        var out = [];
        function head(s) {
          heads[s] = heads[s] || lists[s][at[s]].data();
          return heads[s];
        }
        function better(a, b) {
          if (a === null || b === null) { return a !== null; }
          return sort === "asc" ? a < b : a > b;
        }
        function step() {
          var live = [];
          lists.forEach(function (l, s) { if (at[s] < l.length) { live.push(s); } });
          if (out.length >= n || !live.length) { return Promise.resolve(out); }
          return Promise.all(live.map(head)).then(function (pages) {
            var best = 0;
            for (var k = 1; k < live.length; k++) {
              if (better(tpsOf(pages[k]), tpsOf(pages[best]))) { best = k; }
            }
            var s = live[best];
            out.push(pages[best]);
            at[s] += 1;
            heads[s] = null;
            merger.left -= 1;
            return step();
          });
        }
        return step();
      }
    };
    return merger;
  }

  function showMore(id, count) {
    more.hidden = true;
    var shown = function (data) { if (id === latest) { list.append(item(data)); } };
    return pending.take(count || PAGE_SIZE, shown).then(function (pages) {
      if (id !== latest) { return; }
      pages.forEach(shown);
      more.hidden = pending.left === 0;
    });
  }

  /* "8.4", "8.4.2", "PG 10.1", "postgresql 17" → the PostgreSQL filter value it names
     ("PostgreSQL 8.4", "PostgreSQL 10"), when the site has it; null otherwise. */
  function versionOf(term) {
    var match = /^(?:pg|postgres|postgresql)?\s*(\d+)(?:\.(\d+))?(?:\.\d+)?$/i.exec(term);
    if (!match) { return null; }
    var major = Number(match[1]);
    var value = "PostgreSQL " + (major >= 10 || match[2] === undefined ? major : major + "." + match[2]);
    return (totals.postgresql || {})[value] ? value : null;
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

  /* Search ``id`` has shown its results; its filter counts too once the filters are drawn. */
  function finished(id) {
    if (drawn) { root.dataset.done = String(id); }
  }

  function search() {
    var id = ++latest;
    var term = input.value.trim();
    var sort = order.value;
    var filters = ticked();
    remember(term, sort, filters);
    list.textContent = "";
    list.removeAttribute("aria-busy");
    pending = null;
    more.hidden = true;
    if (!term && !sort && !Object.keys(filters).length) {
      status.textContent = "Type words, tick a filter or choose an order.";
      showCounts(totals);
      finished(id);
      return Promise.resolve();
    }
    var options = { filters: filters };
    if (sort) { options.sort = { tps: sort }; }
    status.textContent = "Searching…";
    list.setAttribute("aria-busy", "true");
    var version = term && !sort ? versionOf(term) : null;
    var versions = filters.postgresql ? filters.postgresql.any : null;
    if (version && (!versions || versions.indexOf(version) !== -1)) {
      return versionFirst(id, term, version, options);
    }
    return searchAll(term || null, options).then(function (answers) {
      if (id !== latest) { return; }
      var lists = answers.map(function (a) { return a.results; });
      pending = sort ? byTps(lists, sort) : byScore(lists);
      var total = pending.left;
      var found = summed(answers.map(function (a) { return a.filters; }));
      return Promise.all([showMore(id), facetCounts(term, filters, found)])
        .then(function (done) {
          if (id !== latest) { return; }
          showCounts(done[1]);
          status.textContent = describe(total, term, sort);
          list.removeAttribute("aria-busy");
          finished(id);
        });
    });
  }

  /* Words that name a PostgreSQL version: the pages the words find that are of that version
     first (the words with Pagefind's filter on the version: every page of a version names it,
     and a search without words would read the whole word index), then the other pages the
     words find, each page once. The counts are the words' search's. */
  function versionFirst(id, term, version, options) {
    var pinned = { filters: Object.assign({}, options.filters) };
    pinned.filters.postgresql = { any: [version] };
    return searchAll(term, pinned).then(function (answers) {
      if (id !== latest) { return; }
      pending = byScore(answers.map(function (a) { return a.results; }));
      return showMore(id).then(function () {
        return searchAll(term, options);
      }).then(function (words) {
        if (id !== latest) { return; }
        words.forEach(function (a) { pending.add(a.results); });
        var shown = list.children.length;
        var total = shown + pending.left;
        var fill = shown < PAGE_SIZE && pending.left ? showMore(id, PAGE_SIZE - shown)
          : Promise.resolve();
        more.hidden = pending.left === 0;
        var found = summed(words.map(function (a) { return a.filters; }));
        return Promise.all([fill, facetCounts(term, options.filters, found)])
          .then(function (done) {
            if (id !== latest) { return; }
            showCounts(done[1]);
            status.textContent = describe(total, term, "");
            list.removeAttribute("aria-busy");
            finished(id);
          });
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

  /* The site's one bundle: its pagefind.js, set up (its filters are read by readFilters). */
  function loadSlices() {
    return import(new URL("pagefind.js", bundle).href).then(function (api) {
      return api.options({ baseUrl: site.pathname, bundlePath: bundle.pathname })
        .then(function () { return [{ api: api, names: null, filters: {} }]; });
    });
  }

  /* Every slice's filters and their site-wide counts, then the checkboxes. */
  function readFilters() {
    return Promise.all(slices.map(function (slice) {
      return slice.api.filters().then(function (filters) {
        slice.filters = filters;
        slice.names = {};
        Object.keys(filters).forEach(function (n) { slice.names[n] = true; });
      });
    })).then(function () {
      totals = summed(slices.map(function (s) { return s.filters; }));
      filterBox.textContent = "";
      drawFilters();
      filterBox.removeAttribute("aria-busy");
    });
  }

  /* The counts of the search shown now, once the filters are read after it; then it is done. */
  function recount() {
    var id = latest;
    var term = input.value.trim();
    var filters = ticked();
    drawn = true;
    if (!term && !order.value && !Object.keys(filters).length) {
      showCounts(totals);
      finished(id);
      return Promise.resolve();
    }
    var options = { filters: filters };
    return searchAll(term || null, options).then(function (answers) {
      var found = summed(answers.map(function (a) { return a.filters; }));
      return facetCounts(term, filters, found);
    }).then(function (counts) {
      if (id !== latest) { return; }
      showCounts(counts);
      finished(id);
    });
  }

  function start(loaded) {
    slices = loaded;
    var ticks = new URLSearchParams(window.location.search).getAll("f").length > 0;
    filterBox.setAttribute("aria-busy", "true");
    filterBox.append(element("p", "search-filters-wait", "The filters load after the first results."));
    return (ticks ? readFilters() : Promise.resolve())
      .then(function () {
        drawn = ticks;
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
      })
      .then(function () { return ticks ? null : readFilters().then(recount); });
  }

  function ready() {
    loadSlices().then(start, function () {
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
