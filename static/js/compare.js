/* pgbench-kb "compare any two": made in the browser from the site's own data, no server.
   Reads compare/data/index.json (every configuration) and, for the two picked, their
   machines' files (compare/data/<machine>.json: facts, figures, and the verdict of each
   controlled comparison between two configurations). Every address is worked out from this
   script's own (js/compare.js), so the page works at a server's root and under a sub-path.
   Everything from the data is put into the page as text, never parsed as HTML. */
(function () {
  "use strict";
  var root = document.getElementById("compare");
  var script = document.currentScript;
  if (!root || !script) { return; }
  var site = new URL("../", script.src);
  var data = new URL("compare/data/", site);
  var form = document.getElementById("compare-form");
  var pickA = document.getElementById("compare-a");
  var pickB = document.getElementById("compare-b");
  var swap = document.getElementById("compare-swap");
  var status = document.getElementById("compare-status");
  var result = document.getElementById("compare-result");
  var heading = document.getElementById("compare-heading");
  var verdict = document.getElementById("compare-verdict");
  var figures = document.getElementById("compare-figures").tBodies[0];
  var facts = document.getElementById("compare-facts").tBodies[0];
  var factsCaption = document.getElementById("compare-facts-caption");
  var byKey = {};
  var files = {};
  root.hidden = false;

  function load(name) {
    if (!files[name]) {
      files[name] = fetch(new URL(name, data).href).then(function (response) {
        if (!response.ok) { throw new Error(name + ": HTTP " + response.status); }
        return response.json();
      });
    }
    return files[name];
  }
  function element(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = text; }
    if (className) { node.className = className; }
    return node;
  }
  function link(text, url) {
    var a = element("a", text);
    a.href = new URL(url, site).href;
    return a;
  }

  function fill(select, entries) {
    var groups = {};
    entries.forEach(function (entry) {
      if (!groups[entry.machine]) {
        groups[entry.machine] = element("optgroup");
        groups[entry.machine].label = entry.machine;
        select.appendChild(groups[entry.machine]);
      }
      var option = element("option", entry.title + (entry.tps ? " — " + entry.tps : ""));
      option.value = entry.key;
      groups[entry.machine].appendChild(option);
    });
  }

  function figureRows(a, b) {
    var rows = [
      ["Throughput", a.figure || "not reported", b.figure || "not reported"],
      ["What the figure is", a.what, b.what],
      ["Spread of the runs", a.spread || "not known", b.spread || "not known"],
      ["Latency, average", a.latency || "not reported", b.latency || "not reported"],
      ["Measured in", a.session, b.session]
    ];
    figures.textContent = "";
    rows.forEach(function (row) {
      var tr = element("tr");
      tr.appendChild(element("th", row[0])).scope = "row";
      tr.appendChild(element("td", row[1]));
      tr.appendChild(element("td", row[2]));
      figures.appendChild(tr);
    });
    var tr = element("tr");
    tr.appendChild(element("th", "Page")).scope = "row";
    [a, b].forEach(function (side) {
      var td = element("td");
      td.appendChild(link("its page", side.url));
      tr.appendChild(td);
    });
    figures.appendChild(tr);
  }

  /* Every fact of either side; those that differ first, marked by a word and a colour. */
  function factRows(a, b, settings) {
    var labels = Object.keys(a.facts);
    Object.keys(b.facts).forEach(function (label) {
      if (labels.indexOf(label) === -1) { labels.push(label); }
    });
    var differ = [], same = [];
    labels.forEach(function (label) {
      /* A setting a side does not list is the server's default there. */
      var missing = settings[label] ? "default (not set)" : "not recorded";
      var x = a.facts[label] === undefined ? missing : a.facts[label];
      var y = b.facts[label] === undefined ? missing : b.facts[label];
      (x === y ? same : differ).push([label, x, y]);
    });
    facts.textContent = "";
    differ.concat(same).forEach(function (row, index) {
      var tr = element("tr", null, index < differ.length ? "differs" : "same");
      var th = element("th", row[0]);
      th.scope = "row";
      if (index < differ.length) { th.appendChild(element("span", "differs", "mark")); }
      tr.appendChild(th);
      tr.appendChild(element("td", row[1]));
      tr.appendChild(element("td", row[2]));
      facts.appendChild(tr);
    });
    factsCaption.textContent = differ.length + (differ.length === 1 ? " fact differs" :
      " facts differ") + " (marked, listed first); " + same.length + " are the same.";
    return differ;
  }

  function noVerdict(a, b, differ, entryA, entryB) {
    if (entryA.machine !== entryB.machine) {
      return "No verdict: the two were measured on different machines (" + entryA.machine +
        " and " + entryB.machine + "), so everything from the disks to the processor differs " +
        "besides what the table lists; the comparisons of one configuration on two machines " +
        "are under Comparisons → Machines where they exist.";
    }
    if (a.session !== b.session) {
      return "Not comparable: A was measured in " + a.session + " and B in " + b.session +
        ". Results of one configuration move between sessions, and nothing here measured " +
        "by how much, so a difference between them is not judged.";
    }
    if (differ.length === 0) {
      return "These are the same configuration.";
    }
    return "No verdict: these two are not a controlled comparison. They differ in " +
      differ.length + " facts (marked below), so a difference in tps cannot be put down to " +
      "one of them.";
  }

  function show() {
    var keyA = pickA.value, keyB = pickB.value;
    if (!keyA || !keyB) {
      result.hidden = true;
      status.textContent = "Choose two configurations.";
      return Promise.resolve();
    }
    var entryA = byKey[keyA], entryB = byKey[keyB];
    if (!entryA || !entryB) {
      result.hidden = true;
      status.textContent = "No configuration " + (!entryA ? keyA : keyB) + " on this site.";
      return Promise.resolve();
    }
    status.textContent = "Loading…";
    return Promise.all([load(entryA.file + ".json"), load(entryB.file + ".json")])
      .then(function (loaded) {
        var a = loaded[0].configurations[keyA], b = loaded[1].configurations[keyB];
        heading.textContent = "A: " + entryA.title + " — B: " + entryB.title;
        figureRows(a, b);
        var settings = {};
        loaded[0].settings.concat(loaded[1].settings).forEach(function (label) {
          settings[label] = true;
        });
        var differ = factRows(a, b, settings);
        var found = loaded[0].comparisons[keyA + " " + keyB];
        var reversed = loaded[0].comparisons[keyB + " " + keyA];
        verdict.textContent = "";
        if (found || reversed) {
          var item = found || reversed;
          verdict.appendChild(element("span", (reversed ?
            "Their comparison reads the other way (its A is this page's B). " : "") +
            item.words + ". "));
          verdict.appendChild(link("The comparison: " + item.title, item.url));
        } else {
          verdict.textContent = noVerdict(a, b, differ, entryA, entryB);
        }
        result.hidden = false;
        status.textContent = "";
      })
      .catch(function (error) { status.textContent = "Could not load the data: " + error.message; });
  }

  function remember() {
    var query = "?a=" + encodeURIComponent(pickA.value) + "&b=" + encodeURIComponent(pickB.value);
    history.replaceState(null, "", query);
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    remember();
    show().then(function () { if (!result.hidden) { heading.focus(); } });
  });
  swap.addEventListener("click", function () {
    var keep = pickA.value;
    pickA.value = pickB.value;
    pickB.value = keep;
    remember();
    show();
  });

  status.textContent = "Loading the list of configurations…";
  load("index.json").then(function (index) {
    index.configurations.forEach(function (entry) { byKey[entry.key] = entry; });
    fill(pickA, index.configurations);
    fill(pickB, index.configurations);
    var params = new URLSearchParams(location.search);
    if (params.get("a")) { pickA.value = params.get("a"); }
    if (params.get("b")) { pickB.value = params.get("b"); }
    status.textContent = "";
    if (params.get("a") && params.get("b")) {
      var a = params.get("a"), b = params.get("b");
      pickA.value = a;
      pickB.value = b;
      if (pickA.value !== a || pickB.value !== b) {
        result.hidden = true;
        status.textContent = "No configuration " + (pickA.value !== a ? a : b) + " on this site.";
        return;
      }
      show();
    } else if (params.get("a")) {
      status.textContent = "A is chosen; choose B.";
      pickB.focus();
    }
  }).catch(function (error) { status.textContent = "Could not load the data: " + error.message; });
})();
