// gradviz report: the page's behaviour. Every name and value from the user's file is shown
// with textContent (never innerHTML), so it stays text whatever it holds.
(function () {
  "use strict";
  var report = JSON.parse(document.getElementById("gv-report").textContent);
  var page = JSON.parse(document.getElementById("gv-page").textContent);
  var tensors = new Map(), nodes = new Map();
  (report.tensors || []).forEach(function (t) { tensors.set(t.name, t); });
  (report.nodes || []).forEach(function (n) { nodes.set(n.id, n); });
  var userHooks = report.user_hooks || [];
  var SMALL = 100;  // values with at most this many elements are shown whole

  // ----- Small DOM helpers -----
  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function add(parent, child) {
    if (child === null || child === undefined) return;
    if (Array.isArray(child)) { child.forEach(function (c) { add(parent, c); }); return; }
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
  function link(text, key) {
    var a = el("a", {cls: "gv-link", "data-ref": key, text: text});
    a.addEventListener("click", function () { select(key, true); });
    return a;
  }
  function rows(pairs) {
    var table = el("table", {cls: "gv-rows"});
    pairs.forEach(function (p) { if (p) table.appendChild(el("tr", null, el("th", {text: p[0]}), el("td", null, p[1]))); });
    return table;
  }
  function show(v) { return v === null || v === undefined ? "None" : String(v); }
  function py(v) { return v === true ? "True" : v === false ? "False" : show(v); }

  // ----- Values -----
  function flatten(v, out) {
    if (Array.isArray(v)) v.forEach(function (x) { flatten(x, out); }); else out.push(v);
    return out;
  }
  function num(x) {
    if (typeof x === "number") return Number.isInteger(x) ? String(x) : String(+x.toPrecision(6));
    return show(x);
  }
  function nested(v) {
    if (Array.isArray(v)) return "[" + v.map(nested).join(", ") + "]";
    return num(v);
  }
  function summary(v) {
    if (v === null || v === undefined) return "None";
    if (typeof v === "string") return v;
    var flat = flatten(v, []);
    if (flat.length <= 6) return nested(v);
    var finite = flat.filter(function (x) { return typeof x === "number"; });
    var nan = flat.filter(function (x) { return x === "nan"; }).length;
    var inf = flat.filter(function (x) { return x === "inf" || x === "-inf"; }).length;
    var parts = [];
    if (finite.length) {
      var lo = Math.min.apply(null, finite), hi = Math.max.apply(null, finite);
      var mean = finite.reduce(function (a, b) { return a + b; }, 0) / finite.length;
      if (lo === hi && finite.length === flat.length) parts.push("all " + num(lo));
      else parts.push("min=" + num(lo), "max=" + num(hi), "mean=" + num(mean));
    }
    if (nan) parts.push("nan=" + nan);
    if (inf) parts.push("inf=" + inf);
    return parts.join(" ") + " (" + flat.length + " values)";
  }
  function valueBlock(v) {
    if (v === null || v === undefined) return el("code", {text: "None"});
    if (typeof v !== "object") return el("code", {text: num(v)});
    var flat = flatten(v, []);
    if (flat.length <= SMALL) return el("pre", {text: nested(v)});
    return el("details", null, el("summary", {text: summary(v)}), el("pre", {text: nested(v)}));
  }
  function where(item) {
    if (!item || !item.file) return null;
    var text = (page.lines[item.file] || {})[String(item.line)];
    return el("div", null, el("code", {text: item.file + ":" + show(item.line)}),
              text === undefined ? null : el("pre", {text: text.trim()}));
  }

  // ----- The drawings -----
  var views = {};
  ["backward", "forward"].forEach(function (name) {
    var host = document.getElementById("view-" + name);
    var info = page.views[name];
    if (!host || !info) return;
    var svg = host.querySelector("svg");
    var v = {name: name, host: host, svg: svg, byRef: new Map(), byDot: new Map(), edges: []};
    svg.querySelectorAll("g.node").forEach(function (g) {
      var id = g.querySelector("title").textContent;
      v.byDot.set(id, g);
      var ref = info.refs[id];
      if (!ref) return;
      var key = refKey(ref);
      g.setAttribute("data-ref", key);
      g.classList.add("gv-clickable");
      if (!v.byRef.has(key)) v.byRef.set(key, []);
      v.byRef.get(key).push(g);
    });
    svg.querySelectorAll("g.edge").forEach(function (g) {
      var ends = g.querySelector("title").textContent.split("->");
      v.edges.push({tail: ends[0], head: ends[1], el: g});
    });
    var box = svg.viewBox.baseVal;
    v.full = {x: box.x, y: box.y, w: box.width, h: box.height};
    views[name] = v;
    panZoom(v);
  });
  function refKey(ref) { return ref[0] + ":" + ref[1]; }
  var current = null;

  function setBox(v, b) {
    v.box = b;
    v.svg.setAttribute("viewBox", b.x + " " + b.y + " " + b.w + " " + b.h);
  }
  function toSvg(v, x, y) {
    var pt = v.svg.createSVGPoint();
    pt.x = x; pt.y = y;
    return pt.matrixTransform(v.svg.getScreenCTM().inverse());
  }
  function zoom(v, factor, cx, cy) {
    var b = v.box, p = {x: b.x + b.w / 2, y: b.y + b.h / 2};
    if (cx !== undefined) p = toSvg(v, cx, cy);
    setBox(v, {x: p.x - (p.x - b.x) * factor, y: p.y - (p.y - b.y) * factor,
               w: b.w * factor, h: b.h * factor});
  }
  function fit(v) { setBox(v, {x: v.full.x, y: v.full.y, w: v.full.w, h: v.full.h}); }
  function panZoom(v) {
    fit(v);
    var drag = null;
    v.svg.addEventListener("wheel", function (e) {
      e.preventDefault();
      zoom(v, Math.exp(Math.max(-1, Math.min(1, e.deltaY / 300))), e.clientX, e.clientY);
    }, {passive: false});
    v.svg.addEventListener("mousedown", function (e) {
      if (e.button !== 0) return;
      drag = {x: e.clientX, y: e.clientY, box: v.box, moved: false};
    });
    window.addEventListener("mousemove", function (e) {
      if (!drag) return;
      var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; v.svg.classList.add("gv-dragging"); }
      if (!drag.moved) return;
      var r = v.svg.getBoundingClientRect();
      var scale = Math.max(drag.box.w / r.width, drag.box.h / r.height);
      setBox(v, {x: drag.box.x - dx * scale, y: drag.box.y - dy * scale, w: drag.box.w, h: drag.box.h});
    });
    window.addEventListener("mouseup", function () {
      if (drag && drag.moved) v.justDragged = true;
      drag = null;
      v.svg.classList.remove("gv-dragging");
    });
    v.svg.addEventListener("click", function (e) {
      if (v.justDragged) { v.justDragged = false; return; }
      var g = e.target.closest("g.node[data-ref]");
      if (g) select(g.getAttribute("data-ref"), false);
    });
  }
  function centerOn(v, elements) {
    if (!elements || !elements.length) return;
    var r = elements[0].getBoundingClientRect();
    var c = toSvg(v, r.left + r.width / 2, r.top + r.height / 2);
    var w = Math.min(v.full.w, Math.max(v.box.w < v.full.w ? v.box.w : 0, 600));
    var h = w * (v.box.h / v.box.w);
    setBox(v, {x: c.x - w / 2, y: c.y - h / 2, w: w, h: h});
  }
  function showView(name) {
    if (!views[name]) return;
    current = views[name];
    Object.keys(views).forEach(function (n) { views[n].host.hidden = n !== name; });
    ["backward", "forward"].forEach(function (n) {
      var b = document.getElementById("gv-view-" + n);
      b.classList.toggle("gv-on", n === name);
    });
    markInplace();
    if (selected) highlight(selected, false);
    runSearch(false);
    renderStep();
  }

  // ----- Selection and the side panel -----
  var selected = null;
  function elementsOf(key) { return current ? current.byRef.get(key) || [] : []; }
  function highlight(key, center) {
    Object.keys(views).forEach(function (n) {
      views[n].svg.querySelectorAll("g.gv-selected").forEach(function (g) { g.classList.remove("gv-selected"); });
    });
    var found = elementsOf(key);
    // A tensor made by a node is drawn as that node (backward view): select it there.
    if (!found.length && key.indexOf("tensor:") === 0) {
      var t = tensors.get(key.slice(7));
      if (t && t.node) found = elementsOf("node:" + t.node);
      if (!found.length && t && t.accumulator) found = elementsOf("node:" + t.accumulator);
    }
    found.forEach(function (g) { g.classList.add("gv-selected"); });
    if (center) centerOn(current, found);
  }
  function select(key, center) {
    if (key.indexOf("saved:") === 0) key = "node:" + key.slice(6);   // a saved tensor: its node
    selected = key;
    highlight(key, center);
    var panel = clear(document.getElementById("gv-panel"));
    if (key.indexOf("node:") === 0) nodePanel(panel, nodes.get(key.slice(5)));
    else tensorPanel(panel, tensors.get(key.slice(7)), key.slice(7));
    panel.scrollIntoView({block: "nearest"});
  }
  function hookLine(h) {
    var kind = h.kind === "tensor" ? "" : " (" + h.kind + ")";
    var name = h.kind === "retain_grad" ? "retain_grad()" : show(h.function);
    var item = el("li", null, el("code", {text: name + kind}));
    if (h.grad_in !== undefined) {
      add(item, [" got ", el("code", {text: summary(h.grad_in)})]);
      add(item, h.grad_out === null ? " returned None (unchanged)"
                                    : [" returned ", el("code", {text: summary(h.grad_out)})]);
      if (h.changed) add(item, el("span", {cls: "gv-bad", text: " changed the gradient"}));
      if (h.call !== null && h.call !== undefined) add(item, " (backward call " + (h.call + 1) + ")");
    }
    if (h.file) add(item, [" defined at ", el("code", {text: h.file + ":" + show(h.line)})]);
    return item;
  }
  function nextFunctions(list) {
    if (!list || !list.length) return "()";
    return "(" + list.map(function (p) { return "(" + show(p[0]) + ", " + p[1] + ")"; }).join(", ") + ")";
  }
  function tensorSection(parent, t) {
    add(parent, rows([
      ["shape", el("code", {text: "[" + (t.shape || []).join(", ") + "]"})],
      ["dtype", t.dtype],
      ["requires_grad", py(t.requires_grad)], ["is_leaf", py(t.is_leaf)],
      ["grad_fn", t.node ? link(show(t.grad_fn) + " (" + t.node + ")", "node:" + t.node) : py(t.grad_fn)],
      ["next_functions", el("code", {text: nextFunctions(t.next_functions)})],
      ["_version", show(t.version)], ["retains_grad", py(t.retains_grad)],
      t.is_parameter ? ["is_parameter", "True"] : null,
      t.is_root ? ["root", "True (nothing in the graph consumes it)"] : null,
      t.accumulator ? ["AccumulateGrad", link(t.accumulator, "node:" + t.accumulator)] : null,
      t.file ? ["made at", where(t)] : null
    ]));
    add(parent, [el("h3", {text: "value"}), valueBlock(t.data)]);
    add(parent, [el("h3", {text: ".grad"}), valueBlock(t.grad)]);
    (t.grad_changed_by || []).forEach(function (i) {
      add(parent, el("div", {cls: "gv-bad"}, "changed by hook: ", el("ul", null, hookLine(userHooks[i]))));
    });
    verdict(parent, t);
    if (t.history && t.history.length) {
      add(parent, el("h3", {text: "in-place edits (" + t.edits + ")"}));
      add(parent, el("ul", null, t.history.map(function (h) {
        return el("li", null, "v" + h.version + ": " + show(h.op) + " → " + show(h.grad_fn) +
                  (h.grad_enabled ? "" : " (under no_grad)") + " ", where(h));
      })));
    }
    var hooks = userHooks.filter(function (h) { return h.target === t.name; });
    if (hooks.length) add(parent, [el("h3", {text: "hooks that fired"}), el("ul", null, hooks.map(hookLine))]);
  }
  function verdict(parent, t) {
    var result = page.explain[t.name];
    if (result) {
      var box = el("div", {cls: "gv-verdict"}, el("strong", {text: "Why .grad is " + summary(t.grad) + ":"}));
      add(box, el("ul", null, (result.causes || []).map(function (c) {
        return el("li", null, c.message + (c.fix ? " Fix: " + c.fix : ""));
      })));
      add(parent, box);
    } else if (t.requires_grad && t.grad === null && (t.is_leaf || t.retains_grad) &&
               !(report.backward_calls || []).length) {
      add(parent, el("div", {cls: "gv-verdict"},
        "Why .grad is None: no backward() or autograd.grad() call ran (gradviz report --backward NAME calls one)."));
    }
  }
  function tensorPanel(panel, t, name) {
    if (!t) { add(panel, el("p", {text: "No tensor named " + name + " in the report."})); return; }
    add(panel, el("h2", {text: t.name}));
    tensorSection(panel, t);
  }
  function nodePanel(panel, n) {
    if (!n) return;
    add(panel, el("h2", {text: n.name + " (" + n.id + ")"}));
    add(panel, rows([
      n.tensor !== null && n.tensor !== undefined ? ["made", link(n.tensor, "tensor:" + n.tensor)] : null,
      n.variable ? ["accumulates into", link(n.variable, "tensor:" + n.variable)] : null,
      ["next_functions", el("span", null, (n.next_functions || []).length ? (n.next_functions || []).map(function (p, i) {
        var target = p[0] ? nodes.get(p[0]) : null;
        return el("span", null, i ? ", " : "", "(",
                  target ? link(target.name + " " + p[0], "node:" + p[0]) : "None", ", " + p[1] + ")");
      }) : "()")],
      ["inputs", el("code", {text: (n.inputs || []).map(show).join(", ")})],
      ["grad at node", el("code", {text: summary(n.grad)})],
      n.anomaly ? ["anomaly", el("span", {cls: "gv-bad", text: n.anomaly})] : null,
      n.file ? ["made at", where(n)] : null
    ]));
    if ((n.saved || []).length) {
      add(panel, el("h3", {text: "saved tensors"}));
      var table = el("table", {cls: "gv-rows"}, el("tr", null, ["name", "tensor", "shape", "saved at", "now"].map(function (h) { return el("th", {text: h}); })));
      n.saved.forEach(function (s) {
        var modified = s.saved_version !== null && s.version !== null && s.saved_version !== s.version;
        table.appendChild(el("tr", modified ? {cls: "gv-bad"} : null,
          el("td", null, el("code", {text: s.name})),
          el("td", null, s.tensor ? link(s.tensor, "tensor:" + s.tensor) : show(s.value)),
          el("td", {text: s.shape ? "[" + s.shape.join(", ") + "] " + show(s.dtype) : "-"}),
          el("td", {text: s.saved_version === null || s.saved_version === undefined ? "-" : "v" + s.saved_version}),
          el("td", {text: s.version === null || s.version === undefined ? "-" : "v" + s.version + (modified ? " (modified in place)" : "")})));
      });
      add(panel, table);
    }
    var registered = n.hooks || [];
    if (registered.length) add(panel, [el("h3", {text: "hooks registered"}), el("ul", null, registered.map(hookLine))]);
    var fired = userHooks.filter(function (h) { return h.node === n.id; });
    if (fired.length) add(panel, [el("h3", {text: "hooks that fired (gradient in → out)"}), el("ul", null, fired.map(hookLine))]);
    var made = n.name === "AccumulateGrad" ? null : tensors.get(n.tensor);
    if (made) { add(panel, el("h3", {text: "tensor " + made.name})); tensorSection(panel, made); }
    var leaf = n.variable ? tensors.get(n.variable) : null;
    if (leaf) { add(panel, el("h3", {text: "leaf " + leaf.name})); tensorSection(panel, leaf); }
  }

  // ----- Search -----
  var matches = [], matchAt = -1;
  function runSearch(step) {
    Object.keys(views).forEach(function (n) {
      views[n].svg.querySelectorAll("g.gv-match").forEach(function (g) { g.classList.remove("gv-match"); });
    });
    var q = document.getElementById("gv-search").value.trim().toLowerCase();
    var count = document.getElementById("gv-search-count");
    if (!q || !current) { matches = []; count.textContent = ""; return; }
    if (!step) {
      // Exact names first (a tensor, a node id, the tensor a node made), then prefixes, then
      // any name containing the text, each in drawing order.
      var ranked = [];
      current.byRef.forEach(function (elements, key) {
        var id = key.slice(key.indexOf(":") + 1), n = key.indexOf("node:") === 0 ? nodes.get(id) : null;
        var names = [id].concat(n ? [n.name, show(n.tensor), show(n.variable)] : []).map(function (x) { return x.toLowerCase(); });
        var rank = names.indexOf(q) >= 0 ? 0 : names.some(function (x) { return x.indexOf(q) === 0; }) ? 1
                 : names.some(function (x) { return x.indexOf(q) >= 0; }) ? 2 : -1;
        if (rank >= 0) ranked.push([rank, ranked.length, key]);
      });
      ranked.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
      matches = ranked.map(function (r) { return r[2]; });
      matchAt = -1;
    }
    matches.forEach(function (key) { current.byRef.get(key).forEach(function (g) { g.classList.add("gv-match"); }); });
    count.textContent = matches.length ? (matchAt + 1 > 0 ? (matchAt + 1) + " of " : "") + matches.length + " found" : "none found";
  }
  function nextMatch() {
    if (!matches.length) return;
    matchAt = (matchAt + 1) % matches.length;
    select(matches[matchAt], true);
    runSearch(true);
  }

  // ----- Playing backward -----
  var calls = (report.backward_calls || []).filter(function (c) { return (c.steps || []).length; });
  var callAt = calls.length - 1, stepAt = -1, timer = null;
  function stepElements(step) {
    if (!step || !step.node) return [];
    var found = elementsOf("node:" + step.node);
    if (!found.length && step.accumulated) found = elementsOf("tensor:" + step.accumulated);
    return found;
  }
  function clearPlay() {
    Object.keys(views).forEach(function (n) {
      var svg = views[n].svg;
      svg.querySelectorAll(".gv-running, .gv-done, .gv-passing").forEach(function (g) {
        g.classList.remove("gv-running", "gv-done", "gv-passing");
      });
      svg.querySelectorAll("text.gv-edge-label").forEach(function (t) { t.remove(); });
    });
  }
  function dotIds(elements) { return elements.map(function (g) { return g.querySelector("title").textContent; }); }
  function edgeLabel(edge, text) {
    var path = edge.el.querySelector("path");
    if (!path) return;
    var p = path.getPointAtLength(path.getTotalLength() / 2);
    var t = document.createElementNS(edge.el.namespaceURI, "text");
    t.setAttribute("class", "gv-edge-label");
    t.setAttribute("x", p.x + 4); t.setAttribute("y", p.y);
    t.textContent = text;
    edge.el.appendChild(t);
  }
  function runningGrad(call, upto, name) {
    // What this backward call wrote into name's .grad up to step upto, summed.
    var total = null, ok = true;
    call.steps.slice(0, upto + 1).forEach(function (s) {
      if (s.accumulated !== name) return;
      var g = s.grad_in && s.grad_in.length ? s.grad_in[0] : null;
      if (g === null) return;
      if (typeof g === "string") { ok = false; return; }
      total = total === null ? g : addValues(total, g);
      if (total === undefined) ok = false;
    });
    return ok ? total : undefined;
  }
  function addValues(a, b) {
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      var out = [];
      for (var i = 0; i < a.length; i++) { var s = addValues(a[i], b[i]); if (s === undefined) return undefined; out.push(s); }
      return out;
    }
    if (typeof a === "number" && typeof b === "number") return a + b;
    return undefined;
  }
  function renderStep() {
    clearPlay();
    var box = document.getElementById("gv-step");
    var count = document.getElementById("gv-step-count");
    var call = calls[callAt];
    if (!call) { count.textContent = "no backward steps"; box.hidden = true; return; }
    count.textContent = stepAt < 0 ? call.steps.length + (call.steps.length === 1 ? " step" : " steps") : "step " + (stepAt + 1) + " of " + call.steps.length;
    if (stepAt < 0 || !current) { box.hidden = stepAt < 0; return; }
    for (var j = 0; j < stepAt; j++) stepElements(call.steps[j]).forEach(function (g) { g.classList.add("gv-done"); });
    var step = call.steps[stepAt];
    var here = stepElements(step);
    here.forEach(function (g) { g.classList.remove("gv-done"); g.classList.add("gv-running"); });
    var tails = dotIds(here);
    (step.grad_out || []).forEach(function (out) {
      if (!out.node) return;
      var heads = dotIds(stepElements({node: out.node, accumulated: (nodes.get(out.node) || {}).variable}));
      current.edges.forEach(function (e) {
        if (tails.indexOf(e.tail) >= 0 && heads.indexOf(e.head) >= 0) {
          e.el.classList.add("gv-passing");
          edgeLabel(e, summary(out.grad));
        }
      });
    });
    (step.hooks || []).forEach(function (i) {
      var h = userHooks[i];
      var flash = h && h.node ? elementsOf("node:" + h.node) : here;
      flash.forEach(function (g) { g.classList.remove("gv-hook-flash"); void g.getBoundingClientRect(); g.classList.add("gv-hook-flash"); });
    });
    clear(box).hidden = false;
    add(box, el("h2", {text: "Step " + (stepAt + 1) + " of " + call.steps.length + ": " + step.name +
                        (step.tensor !== null && step.tensor !== undefined ? " (" + step.tensor + ")" : step.accumulated ? " (" + step.accumulated + ")" : "")}));
    add(box, el("div", {cls: "gv-hint", text: "backward call " + (call.call + 1) + " (" + call.kind + " from " +
                (call.roots || []).join(", ") + (call.file ? " at " + call.file + ":" + call.line : ", by gradviz") + ")"}));
    var items = [];
    if (stepAt === 0 && call.roots && call.roots.length)
      items.push(["root gradient", el("code", {text: (step.grad_in || []).map(summary).join(", ")})]);
    items.push(["received", el("code", {text: (step.grad_in || []).map(summary).join(", ")})]);
    var sent = el("ul");
    (step.grad_out || []).forEach(function (out) {
      add(sent, el("li", null, out.node ? link(show(out.name) + " (" + out.node + ")", "node:" + out.node) : show(out.name),
                   " input " + out.input_nr + ": ", el("code", {text: summary(out.grad)})));
    });
    items.push(["sent", (step.grad_out || []).length ? sent : "nothing (a leaf's AccumulateGrad)"]);
    if (step.accumulated) {
      var sum = runningGrad(call, stepAt, step.accumulated);
      items.push(["AccumulateGrad", el("span", null, "added to ", link(step.accumulated + ".grad", "tensor:" + step.accumulated),
                  sum === undefined ? "" : "; this call's total so far: ", sum === undefined ? null : el("code", {text: summary(sum)}))]);
    }
    add(box, rows(items));
    if ((step.hooks || []).length) {
      add(box, [el("h3", {text: "hooks that fired"}), el("ul", null, step.hooks.map(function (i) { return hookLine(userHooks[i]); }))]);
    }
    if (current && here.length) centerOnIfHidden(here);
  }
  function centerOnIfHidden(elements) {
    var r = elements[0].getBoundingClientRect(), c = current.svg.getBoundingClientRect();
    if (r.right < c.left || r.left > c.right || r.bottom < c.top || r.top > c.bottom) centerOn(current, elements);
  }
  function go(i) {
    var call = calls[callAt];
    if (!call) return;
    stepAt = Math.max(0, Math.min(call.steps.length - 1, i));
    renderStep();
  }
  function play() {
    var button = document.getElementById("gv-play");
    if (timer) { clearInterval(timer); timer = null; button.classList.remove("gv-on"); return; }
    var call = calls[callAt];
    if (!call) return;
    if (stepAt >= call.steps.length - 1) stepAt = -1;
    button.classList.add("gv-on");
    timer = setInterval(function () {
      if (stepAt >= calls[callAt].steps.length - 1) { play(); return; }
      go(stepAt + 1);
    }, 900);
  }

  // ----- Findings, output, header -----
  function findings() {
    var box = clear(document.getElementById("gv-findings"));
    var items = [];
    (report.nodes || []).forEach(function (n) {
      (n.saved || []).forEach(function (s) {
        if (s.saved_version === null || s.version === null || s.saved_version === s.version) return;
        items.push(el("div", {cls: "gv-finding"}, "in-place: ", link(show(s.tensor), "tensor:" + s.tensor),
          " saved by ", link(n.name + " (" + n.id + ")", "node:" + n.id),
          " as " + s.name + " at version " + s.saved_version + ", now version " + s.version +
          (s.freed ? " (its buffers were already freed: harmless)" : "")));
      });
    });
    (report.anomalies || []).forEach(function (a) {
      items.push(el("div", {cls: "gv-finding"}, "anomaly: ", a.node ? link(a.name + " (" + a.node + ")", "node:" + a.node) : show(a.name),
        " " + show(a.message), where(a)));
    });
    var gc = page.gradcheck;
    if (gc) {
      var box2 = el("div", {cls: gc.passed ? "gv-verdict" : "gv-finding"}, el("strong", {text: "gradcheck: " + gc.verdict}), " " + show(gc.message));
      var list = el("ul");
      (gc.roots || []).forEach(function (r) {
        (r.leaves || []).forEach(function (l) {
          add(list, el("li", null, r.root + " → ", link(l.name, "tensor:" + l.name),
            ": " + l.status + " (" + l.checked + " of " + l.total + " checked, max abs error " + show(l.max_abs_error) + ")"));
        });
        if (r.error) add(list, el("li", {cls: "gv-bad", text: r.root + ": " + r.error}));
      });
      add(box2, list);
      items.push(box2);
    }
    add(box, el("h3", {text: items.length ? "Findings" : "Findings: none"}));
    add(box, items);
  }
  function markInplace() {
    if (!current) return;
    (report.nodes || []).forEach(function (n) {
      var bad = (n.saved || []).some(function (s) { return s.saved_version !== null && s.version !== null && s.saved_version !== s.version && !s.freed; });
      if (bad) elementsOf("node:" + n.id).forEach(function (g) { g.classList.add("gv-inplace"); });
    });
  }
  function output() {
    var box = clear(document.getElementById("gv-output"));
    var err = report.error;
    if (err) {
      var d = el("details", {open: ""}, el("summary", {cls: "gv-bad", text: "Error: " + err.type + ": " + err.message}));
      add(d, where(err));
      if (err.hint && err.hint.fix) add(d, el("p", {text: "Fix: " + err.hint.fix}));
      (err.traceback || []).forEach(function (f) {
        add(d, f.repeated ? el("div", {text: "[previous " + f.frames + " frame(s) repeated " + f.repeated + " more times]"})
                          : el("div", null, el("code", {text: f.file + ":" + f.line + " in " + f.function}), f.code ? el("pre", {text: f.code}) : null));
      });
      add(box, d);
    }
    add(box, el("details", null, el("summary", {text: "Output of the file (" + (report.stdout || "").length + " characters)"}),
                el("pre", {text: report.stdout || "(nothing printed)"})));
    if ((report.warnings || []).length) {
      add(box, el("details", null, el("summary", {text: "Warnings (" + report.warnings.length + ")"}),
        el("ul", null, report.warnings.map(function (w) { return el("li", null, w.category + ": " + w.message + " ", where(w)); }))));
    }
  }
  function header() {
    document.getElementById("gv-file").textContent = show(report.file);
    var meta = document.getElementById("gv-meta");
    add(meta, [el("span", null, el("code", {text: page.command})),
               el("span", {text: "gradviz " + page.version}),
               el("span", {text: "backend: " + show(page.backend)}),
               el("span", {text: (report.tensors || []).length + " tensors, " + (report.nodes || []).length + " nodes"}),
               el("span", {text: "exit code " + show(report.exit_code)})]);
  }

  // ----- Wiring -----
  header();
  findings();
  output();
  var callSelect = document.getElementById("gv-call");
  calls.forEach(function (c, i) {
    callSelect.appendChild(el("option", {value: String(i), text: "call " + (c.call + 1) + ": " + c.kind + "(" + (c.roots || []).join(", ") + ")"}));
  });
  callSelect.value = String(callAt);
  callSelect.hidden = calls.length < 2;
  callSelect.addEventListener("change", function () { callAt = +callSelect.value; stepAt = -1; renderStep(); });
  ["gv-first", "gv-prev", "gv-play", "gv-next", "gv-last"].forEach(function (id) {
    document.getElementById(id).disabled = !calls.length;
  });
  document.getElementById("gv-first").addEventListener("click", function () { go(0); });
  document.getElementById("gv-prev").addEventListener("click", function () { go(stepAt - 1); });
  document.getElementById("gv-next").addEventListener("click", function () { go(stepAt + 1); });
  document.getElementById("gv-last").addEventListener("click", function () { go(Infinity); });
  document.getElementById("gv-play").addEventListener("click", play);
  document.getElementById("gv-fit").addEventListener("click", function () { if (current) fit(current); });
  document.getElementById("gv-zoom-in").addEventListener("click", function () { if (current) zoom(current, 0.8); });
  document.getElementById("gv-zoom-out").addEventListener("click", function () { if (current) zoom(current, 1.25); });
  var search = document.getElementById("gv-search");
  search.addEventListener("input", function () { runSearch(false); });
  search.addEventListener("keydown", function (e) { if (e.key === "Enter") { e.preventDefault(); nextMatch(); } });
  ["backward", "forward"].forEach(function (n) {
    var b = document.getElementById("gv-view-" + n);
    if (!views[n]) {
      b.disabled = true;
      b.title = n === "forward" || n === "backward" ? (page.notes.filter(function (t) { return t.indexOf("The " + n) === 0; })[0] || "not drawn") : "";
    }
    b.addEventListener("click", function () { showView(n); });
  });
  document.addEventListener("keydown", function (e) {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT")) return;
    var keys = {ArrowRight: function () { go(stepAt + 1); }, ArrowLeft: function () { go(stepAt - 1); },
                Home: function () { go(0); }, End: function () { go(Infinity); }, " ": play,
                "+": function () { if (current) zoom(current, 0.8); }, "-": function () { if (current) zoom(current, 1.25); },
                "0": function () { if (current) fit(current); }, "/": function () { search.focus(); }};
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
  var none = document.getElementById("gv-no-drawing");
  if (!Object.keys(views).length) {
    none.hidden = false;
    none.textContent = "No graph to draw: no tensor that requires grad has a grad_fn or an AccumulateGrad.";
  }
  page.notes.forEach(function (t) { add(document.getElementById("gv-findings"), el("p", {cls: "gv-hint", text: t})); });
  showView(views[page.view] ? page.view : Object.keys(views)[0]);
  renderStep();
  // For tests and scripts: what the page shows, read without parsing the DOM.
  window.gradvizReport = {
    select: select, go: go, showView: showView,
    state: function () {
      var call = calls[callAt], step = call && stepAt >= 0 ? call.steps[stepAt] : null;
      return {view: current ? current.name : null, selected: selected, call: call ? call.call : null,
              step: stepAt, node: step ? step.node : null, matches: matches.slice()};
    }
  };
}());
