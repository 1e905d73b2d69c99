/* pgbench-kb "compare any N": made in the browser from the site's own data, no server.
   Reads compare/data/index.json (every configuration, machine by machine) and, for those
   picked (A, B, C… up to LETTERS.length), each one's own file
   (compare/data/<machine>/<configuration>.json: its facts, figures, and the verdict of each
   controlled comparison it is a side of, its sentence naming the sides {A} and {B}): a page
   loads only what it shows. Every verdict shown is one kb computed; a pair kb did not compare
   is said to be one, with why in words, never judged here. Every address is worked out from
   this script's own (js/compare.js), so the page works at a server's root and under a
   sub-path. Everything from the data is put into the page as text, never parsed as HTML. */
(function () {
  "use strict";
  var root = document.getElementById("compare");
  var script = document.currentScript;
  if (!root || !script) { return; }
  var site = new URL("../", script.src);
  var data = new URL("compare/data/", site);
  var LETTERS = ["A", "B", "C", "D", "E", "F", "G", "H"];
  var form = document.getElementById("compare-form");
  var picksBox = document.getElementById("compare-picks");
  var add = document.getElementById("compare-add");
  var swap = document.getElementById("compare-swap");
  var status = document.getElementById("compare-status");
  var result = document.getElementById("compare-result");
  var heading = document.getElementById("compare-heading");
  var verdict = document.getElementById("compare-verdict");
  var pairsList = document.getElementById("compare-pairs");
  var figuresTable = document.getElementById("compare-figures");
  var factsTable = document.getElementById("compare-facts");
  var factsCaption = document.getElementById("compare-facts-caption");
  var byKey = {};
  var entries = [];
  var files = {};
  var picks = [document.getElementById("compare-a"), document.getElementById("compare-b")];
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
  /* "B against A" of kb's sentence, with the letters the reader gave the two sides. */
  function named(template, a, b) {
    return template.split("{A}").join(a).split("{B}").join(b);
  }
  function optionText(entry) {
    return entry.title + (entry.tps ? " — " + entry.tps : "") +
      (entry.when ? " — " + entry.when : "");
  }

  function fill(select) {
    var groups = {};
    entries.forEach(function (entry) {
      if (!groups[entry.machine]) {
        groups[entry.machine] = element("optgroup");
        groups[entry.machine].label = entry.machine;
        select.appendChild(groups[entry.machine]);
      }
      var option = element("option", optionText(entry));
      option.value = entry.key;
      groups[entry.machine].appendChild(option);
    });
  }

  /* One more menu, C to H, with a button that removes it. */
  function addPick(value) {
    if (picks.length >= LETTERS.length) { return null; }
    var letter = LETTERS[picks.length];
    var box = element("div", null, "compare-pick compare-extra");
    var label = element("label", letter);
    var select = element("select");
    select.id = "compare-" + letter.toLowerCase();
    select.name = letter.toLowerCase();
    label.htmlFor = select.id;
    select.appendChild(element("option", "choose a configuration…")).value = "";
    fill(select);
    if (value) { select.value = value; }
    var remove = element("button", "Remove", "compare-remove");
    remove.type = "button";
    remove.setAttribute("aria-label", "Remove " + letter);
    remove.addEventListener("click", function () { removePick(select); });
    box.appendChild(label);
    box.appendChild(select);
    box.appendChild(remove);
    picksBox.appendChild(box);
    picks.push(select);
    add.disabled = picks.length >= LETTERS.length;
    return select;
  }
  /* The menus after the removed one move up a letter, keeping their choices. */
  function removePick(select) {
    var values = picks.map(function (p) { return p.value; });
    var index = picks.indexOf(select);
    values.splice(index, 1);
    while (picks.length > 2) {
      picksBox.removeChild(picks.pop().parentNode);
    }
    picks[0].value = values[0];
    picks[1].value = values[1];
    values.slice(2).forEach(function (value) { addPick(value); });
    add.disabled = false;
    remember();
    var next = picks[Math.min(index, picks.length - 1)];
    next.focus();
    show();
  }

  function fillHead(table, first, count) {
    var row = table.tHead.rows[0];
    row.textContent = "";
    row.appendChild(element("th", first)).scope = "col";
    for (var i = 0; i < count; i += 1) { row.appendChild(element("th", LETTERS[i])).scope = "col"; }
  }

  function figureRows(sides) {
    var rows = [
      ["Throughput", function (s) { return s.figure || "not reported"; }],
      ["What the figure is", function (s) { return s.what; }],
      ["Spread of the runs", function (s) { return s.spread || "not known"; }],
      ["Latency, average", function (s) { return s.latency || "not reported"; }],
      ["Measured in", function (s) { return s.session; }]
    ];
    fillHead(figuresTable, "Figure", sides.length);
    var body = figuresTable.tBodies[0];
    body.textContent = "";
    rows.forEach(function (row) {
      var tr = element("tr");
      tr.appendChild(element("th", row[0])).scope = "row";
      sides.forEach(function (side) { tr.appendChild(element("td", row[1](side))); });
      body.appendChild(tr);
    });
    var tr = element("tr");
    tr.appendChild(element("th", "Page")).scope = "row";
    sides.forEach(function (side) {
      var td = element("td");
      td.appendChild(link("its page", side.url));
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }

  function factValue(side, label, settings) {
    /* A setting a side does not list is the server's default there. */
    if (side.facts[label] !== undefined) { return side.facts[label]; }
    return settings[label] ? "server default" : "not recorded";
  }

  /* Every fact of any side; those that differ first, marked by a word and a colour. */
  function factRows(sides, settings) {
    var labels = [];
    sides.forEach(function (side) {
      Object.keys(side.facts).forEach(function (label) {
        if (labels.indexOf(label) === -1) { labels.push(label); }
      });
    });
    var differ = [], same = [];
    labels.forEach(function (label) {
      var values = sides.map(function (side) { return factValue(side, label, settings); });
      var alike = values.every(function (v) { return v === values[0]; });
      (alike ? same : differ).push([label].concat(values));
    });
    fillHead(factsTable, "Fact", sides.length);
    var body = factsTable.tBodies[0];
    body.textContent = "";
    differ.concat(same).forEach(function (row, index) {
      var tr = element("tr", null, index < differ.length ? "differs" : "same");
      var th = element("th", row[0]);
      th.scope = "row";
      if (index < differ.length) { th.appendChild(element("span", "differs", "mark")); }
      tr.appendChild(th);
      row.slice(1).forEach(function (value) { tr.appendChild(element("td", value)); });
      body.appendChild(tr);
    });
    var what = sides.length === 2 ? "" : " between some of them";
    factsCaption.textContent = differ.length + (differ.length === 1 ? " fact differs" :
      " facts differ") + what + " (marked, listed first); " + same.length + " are the same.";
  }

  /* Why two configurations kb did not compare have no verdict, in words. */
  function noVerdict(x, y, a, b, entryA, entryB, settings) {
    if (entryA.machine !== entryB.machine) {
      return "No verdict: the two were measured on different machines (" + entryA.machine +
        " and " + entryB.machine + "), so everything from the disks to the processor differs " +
        "besides what the table lists; the comparisons of one configuration on two machines " +
        "are under Comparisons → Machines where they exist.";
    }
    if (a.session !== b.session) {
      return "Not comparable: " + x + " was measured in " + a.session + " and " + y + " in " +
        b.session + ". Results of one configuration move between sessions, and nothing here " +
        "measured by how much, so a difference between them is not judged.";
    }
    var labels = Object.keys(a.facts);
    Object.keys(b.facts).forEach(function (l) { if (labels.indexOf(l) === -1) { labels.push(l); } });
    var differ = labels.filter(function (label) {
      return factValue(a, label, settings) !== factValue(b, label, settings);
    }).length;
    if (differ === 0) { return "These are the same configuration."; }
    return "No verdict: these two are not a controlled comparison. They differ in " + differ +
      (differ === 1 ? " fact" : " facts") + " (marked below), so a difference in tps cannot " +
      "be put down to one of them.";
  }

  /* kb's comparison of the pair i, j (either way round), or null. */
  function comparisonOf(loaded, keys, i, j) {
    var found = loaded[i].comparisons[keys[i] + " " + keys[j]];
    if (found) { return { item: found, a: i, b: j }; }
    var reversed = loaded[i].comparisons[keys[j] + " " + keys[i]];
    return reversed ? { item: reversed, a: j, b: i } : null;
  }
  var DECIDED = { higher: true, lower: true, within_noise: true };

  function showPair(target, loaded, keys, sides, chosen, settings, i, j) {
    var found = comparisonOf(loaded, keys, i, j);
    if (found) {
      var words = named(found.item.words, LETTERS[found.a], LETTERS[found.b]);
      if (keys.length === 2 && found.a === 1) {
        words = "Their comparison reads the other way round: " + words;
      }
      target.appendChild(element("span", words + ". "));
      target.appendChild(link("The comparison: " + found.item.title, found.item.url));
      return DECIDED[found.item.verdict] ? "verdict" : "compared";
    }
    var why = noVerdict(LETTERS[i], LETTERS[j], sides[i], sides[j], chosen[i], chosen[j],
      settings);
    target.appendChild(element("span", keys.length === 2 ? why
      : "Not compared by the site. " + why));
    return "not compared";
  }

  function chosenKeys() {
    return picks.map(function (p) { return p.value; }).filter(Boolean);
  }

  function show() {
    var keys = picks.map(function (p) { return p.value; });
    if (keys.some(function (k) { return !k; }) || keys.length < 2) {
      result.hidden = true;
      status.textContent = keys.length > 2 ? "Choose a configuration in every menu, or remove it."
        : "Choose two configurations.";
      return Promise.resolve();
    }
    var chosen = keys.map(function (k) { return byKey[k]; });
    var missing = keys.filter(function (k) { return !byKey[k]; });
    if (missing.length) {
      result.hidden = true;
      status.textContent = "No configuration " + missing[0] + " on this site.";
      return Promise.resolve();
    }
    status.textContent = "Loading…";
    return Promise.all(chosen.map(function (entry) {
      return load(entry.file + "/" + entry.key + ".json");
    }))
      .then(function (loaded) {
        var sides = loaded.map(function (file) { return file.configuration; });
        heading.textContent = chosen.map(function (entry, i) {
          return LETTERS[i] + ": " + entry.title;
        }).join(" — ");
        figureRows(sides);
        var settings = {};
        loaded.forEach(function (file) {
          (file.settings || []).forEach(function (label) { settings[label] = true; });
        });
        factRows(sides, settings);
        verdict.textContent = "";
        pairsList.textContent = "";
        if (keys.length === 2) {
          pairsList.hidden = true;
          showPair(verdict, loaded, keys, sides, chosen, settings, 0, 1);
        } else {
          var counts = { verdict: 0, compared: 0, "not compared": 0 };
          for (var i = 0; i < keys.length; i += 1) {
            for (var j = i + 1; j < keys.length; j += 1) {
              var item = element("li");
              item.appendChild(element("strong", LETTERS[i] + " and " + LETTERS[j] + ": "));
              counts[showPair(item, loaded, keys, sides, chosen, settings, i, j)] += 1;
              pairsList.appendChild(item);
            }
          }
          var total = keys.length * (keys.length - 1) / 2;
          verdict.textContent = "Of the " + total + " pairs, " + counts.verdict +
            (counts.verdict === 1 ? " has a verdict" : " have a verdict") + " from the site's " +
            "comparisons, " + counts.compared + " were compared without one, and " +
            counts["not compared"] + (counts["not compared"] === 1 ? " was" : " were") +
            " not compared (why, for each, below).";
          pairsList.hidden = false;
        }
        result.hidden = false;
        status.textContent = "";
      })
      .catch(function (error) { status.textContent = "Could not load the data: " + error.message; });
  }

  function remember() {
    var query = picks.map(function (p, i) {
      return LETTERS[i].toLowerCase() + "=" + encodeURIComponent(p.value);
    }).join("&");
    history.replaceState(null, "", "?" + query);
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    remember();
    show().then(function () { if (!result.hidden) { heading.focus(); } });
  });
  swap.addEventListener("click", function () {
    var keep = picks[0].value;
    picks[0].value = picks[1].value;
    picks[1].value = keep;
    remember();
    show();
  });
  add.addEventListener("click", function () {
    var select = addPick("");
    if (select) {
      select.focus();
      status.textContent = "Menu " + LETTERS[picks.length - 1] + " added; choose a configuration.";
    }
  });

  status.textContent = "Loading the list of configurations…";
  load("index.json").then(function (index) {
    entries = [];
    index.machines.forEach(function (machine) {
      machine.configurations.forEach(function (entry) {
        entry.machine = machine.machine;
        entry.file = machine.file;
        entries.push(entry);
      });
    });
    entries.forEach(function (entry) { byKey[entry.key] = entry; });
    fill(picks[0]);
    fill(picks[1]);
    var params = new URLSearchParams(location.search);
    var wanted = LETTERS.map(function (l) { return params.get(l.toLowerCase()); });
    var last = 0;
    wanted.forEach(function (value, i) { if (value) { last = i; } });
    for (var i = 2; i <= last; i += 1) { addPick(""); }
    var unknown = null;
    picks.forEach(function (select, i) {
      if (!wanted[i]) { return; }
      select.value = wanted[i];
      if (select.value !== wanted[i] && unknown === null) { unknown = wanted[i]; }
    });
    status.textContent = "";
    if (unknown !== null) {
      result.hidden = true;
      status.textContent = "No configuration " + unknown + " on this site.";
      return;
    }
    if (chosenKeys().length >= 2) {
      show();
    } else if (wanted[0]) {
      status.textContent = "A is chosen; choose B.";
      picks[1].focus();
    }
  }).catch(function (error) { status.textContent = "Could not load the data: " + error.message; });
})();
