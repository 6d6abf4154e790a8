// The step-through of a GEMM trace, drawn and played in the browser (ui.stepper, st.components.v2).
//
// Python computes the trace (gemmlib.explain.reference.Trace.frames) and sends it as data with the
// matrices as text and every label. This file only draws: A, B, C (when β ≠ 0) and D as grids, the
// arithmetic line and the loads beside them, always from the same step. Playback runs on
// requestAnimationFrame. Up to EVERY_STEP_SPEED steps per second every step is drawn: when a frame
// comes late the next step waits for it (the pace slows, no step is skipped); above that the pace
// follows the clock and a late frame skips a step. Python hears the step only when playback stops
// (pause, the end, a button, a key, the scrubber released), never per frame: state value
// "step" = {id: the trace's id, step: 0-based index}. With data.editable the cells of A, B and C can
// be edited in place; a changed cell is sent as the trigger "edit" = {id, m, i, j, value, step}.
const KEY_NEXT = new Set(["ArrowRight", "PageDown"]);
const KEY_PREV = new Set(["ArrowLeft", "PageUp"]);
const MIN_CELL = 18;
const EVERY_STEP_SPEED = 10;     // at or below this pace every step is drawn
const PRESENT_MAX_CELL = 160;    // presentation: the largest cell, on a big screen with a small problem
const PRESENT_MIN_CELL = 16;     // presentation: below this the grids wrap as in the page view
const PRESENT_READABLE = 12;     // presentation: numbers smaller than this try the tight layout
const PRESENT_LEAST = 10;        // presentation: numbers smaller than this (or cut) stack the matrices
const TIGHT_MIN_CELL = 12;       // tight layout (a small window): below this the grids wrap as in the page view

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, k) => (k in values ? String(values[k]) : `{${k}}`));
}

function buildGrid(host, caption, mat, cls, editable, label) {
  const rows = mat.length, cols = rows ? mat[0].length : 0;
  const box = document.createElement("div");
  box.className = "mat " + cls;
  const cap = document.createElement("div");
  cap.className = "cap";
  cap.textContent = caption;
  const grid = document.createElement("div");
  grid.className = "grid";
  grid.style.setProperty("--cols", cols);
  box.append(cap, grid);
  const cells = [];
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      const c = document.createElement("div");
      c.className = "cell";
      c.textContent = mat[i][j] ?? "";
      if (editable) {
        c.contentEditable = "true";
        c.spellcheck = false;
        c.inputMode = "decimal";
        c.setAttribute("role", "textbox");
        c.setAttribute("aria-label", fill(label, { i, j }));
        c.dataset.i = String(i); c.dataset.j = String(j);
      }
      grid.appendChild(c);
      cells.push(c);
    }
  }
  host.appendChild(box);
  return { cells, cols, rows, box, cap, at: (i, j) => cells[i * cols + j] };
}

function icon(name) {                         // Streamlit's bundled Material Symbols font (a ligature)
  const s = document.createElement("span");
  s.className = "icon"; s.setAttribute("aria-hidden", "true"); s.textContent = name;
  return s;
}

// The scrolling ancestor of the component (Streamlit scrolls its main area, not the window).
function scroller(el) {
  let node = el.getRootNode().host || el.parentElement;
  while (node && node !== document.body) {
    const oy = getComputedStyle(node).overflowY;
    if ((oy === "auto" || oy === "scroll") && node.scrollHeight > node.clientHeight) return node;
    node = node.parentElement || (node.getRootNode && node.getRootNode().host);
  }
  return null;
}

function createStepper(parent, data, setStateValue, setTriggerValue) {
  const root = parent.querySelector(".gst");
  const $ = (s) => root.querySelector(s);
  const L = data.labels;
  const steps = data.frames, last = steps.length - 1;
  const M = data.m, N = data.n, K = data.A[0].length;
  const editable = !!data.editable;

  const grids = $(".grids");
  grids.replaceChildren();
  const gA = buildGrid(grids, L.a, data.A, "ga", editable, "A[{i},{j}]");
  const gB = buildGrid(grids, L.b, data.B, "gb", editable, "B[{i},{j}]");
  const gC = data.C ? buildGrid(grids, L.c, data.C, "gc", editable, "C[{i},{j}]") : null;
  const gD = buildGrid(grids, L.d, data.A.map(() => new Array(N).fill("")), "gd", false, "");
  const mats = [gA, gB, gC, gD].filter(Boolean);
  // the widest text any cell will hold (D's final values included), for the cell size
  let chars = 1;
  for (const m of [data.A, data.B, data.C || []]) for (const r of m) for (const v of r) chars = Math.max(chars, v.length);
  for (const s of steps) for (const v of s.dv) chars = Math.max(chars, v.length);
  let longest = "";                           // the longest arithmetic line: its height is kept free
  for (const s of steps) if (s.text.length > longest.length) longest = s.text;

  const buttons = [[".first", "first", "skip_previous"], [".back", "back", "chevron_left"],
                   [".fwd", "forward", "chevron_right"], [".last", "last", "skip_next"]];
  for (const [sel, key, name] of buttons) {
    const b = $(sel);
    b.replaceChildren(icon(name));
    b.title = L[key]; b.setAttribute("aria-label", L[key]);
  }
  const scrub = $(".scrub"), playBtn = $(".play"), text = $(".text");
  scrub.max = String(Math.max(0, last));
  scrub.setAttribute("aria-label", L.scrub);
  root.setAttribute("aria-label", L.keys);
  $(".hint").textContent = editable ? L.keys + " " + L.edit : L.keys;
  const S = { cur: -1, playing: false, raf: 0, t0: 0, s0: 0, shownAt: 0, sent: null, speed: 5, lit: [],
              dvals: new Array(M * N).fill(null), applied: -1, present: null, fitting: false };

  // the widest values as the browser draws them (bold, as D's written cells), measured at 100 px
  const probe = document.createElement("span");
  probe.style.cssText = "position:absolute;visibility:hidden;white-space:nowrap;font-weight:700;" +
                        "font-variant-numeric:tabular-nums;font-size:100px;left:0;top:0";
  const wide = [];
  for (const m of [data.A, data.B, data.C || []]) for (const r of m) for (const v of r) if (v.length >= chars - 1) wide.push(v);
  for (const st of steps) for (const v of st.dv) if (v.length >= chars - 1) wide.push(v);
  const widest = [...new Set(wide)].slice(0, 64);
  function valuePx() {                        // the widest value's width per px of font size
    root.appendChild(probe);
    let w = 0;
    for (const v of widest) { probe.textContent = v; w = Math.max(w, probe.getBoundingClientRect().width); }
    probe.remove();
    return w / 100;
  }

  // The page view: each matrix as wide as the stepper at most, the numbers as large as their columns allow,
  // sized by the widest value as drawn (the 0.62-em estimate drew 12×12×12's decimals at 9 px in a
  // 1280×720 window at 125 %, where 11 px fit). Under 9 px the matrix scrolls rather than cut a number.
  // ``pair``: A and B side by side (their K + N columns and the 20-px gap between them in one row).
  function fitPage(pair = false) {
    const gap = 2;
    const avail = Math.max(120, root.clientWidth - 12) - (pair ? 20 : 0);
    const cols = pair ? K + N : Math.max(K, N);
    const col = Math.floor((avail - (cols - (pair ? 2 : 1)) * gap) / cols);
    const per = valuePx() || chars * 0.62;
    const font = Math.max(9, Math.min(14, Math.floor((col - 6) / per)));
    const cell = Math.max(MIN_CELL, Math.min(34, Math.round(font / 0.41)));
    const text = Math.ceil(per * font);      // the column's own width where it allows, never under the widest value
    return { cell, cw: Math.max(text + 2, Math.min(col, Math.max(cell, text + 6))), font, gap, wrap: true };
  }

  // Presentation: every matrix in one row and everything on one screen. The cells are as large as
  // both the width (all columns side by side) and the height left under the stepper's top edge
  // (the tallest matrix, below it the arithmetic line, the counts and the controls) allow.
  function fitPresent() {
    const tight = root.classList.contains("tight");
    const gap = tight ? 1 : 3;
    const width = root.clientWidth - 8;
    const colGaps = mats.reduce((s, g) => s + (g.cols - 1) * gap, 0);
    const between = parseFloat(getComputedStyle(grids).columnGap) || 24;
    const byW = Math.floor((width - colGaps - between * (mats.length - 1)) / mats.reduce((s, g) => s + g.cols, 0));
    const sc = scroller(root);
    const top = root.getBoundingClientRect().top + (sc ? sc.scrollTop : 0);
    const other = root.offsetHeight - grids.offsetHeight;   // the line, the counts, the controls, padding
    const rows = Math.max(M, K);
    const capH = gA.cap.offsetHeight + 3;
    const byH = Math.floor((window.innerHeight - top - other - capH - 10 - (rows - 1) * gap) / rows);
    if (tight) {                              // a small window: cells as wide and as tall as each allows, not square
      const cell = Math.min(byH, Math.round(byW * 1.3));
      if (cell < TIGHT_MIN_CELL || byW < TIGHT_MIN_CELL) return { ...fitPage(), wrap: true };
      const per = valuePx();
      const font = Math.max(9, Math.min(44, Math.round(cell * 0.62), Math.floor((byW - 2) / per)));
      return readable({ cell, cw: byW, font, gap, wrap: false }, per * font > byW - 2);
    }
    const cell = Math.min(PRESENT_MAX_CELL, byW, byH);
    if (cell < PRESENT_MIN_CELL) return { ...fitPage(), wrap: true };
    // a wide value: smaller text, same cells; sized by the widest value as drawn (the 0.62-em estimate left
    // -0.2729 at 10 px in 55-px cells at 1920×1080), never under 9 px
    const per = valuePx();
    const font = Math.max(9, Math.min(44, Math.max(10, Math.round(cell * 0.45)), Math.floor((byW - 4) / per)));
    return readable({ cell, cw: Math.min(byW, Math.max(cell, Math.ceil(per * font) + 4)), font, gap, wrap: false },
                    per * font + 4 > byW);
  }

  // Whole numbers the back row can read, before one screen. Where one row would cut them (the 9-px floor wider
  // than the cell: 12×12×12's decimals read ".0416" at 1280×720 zoomed to 125 %, and 88 values were cut with C
  // at 1280×720) or draw them under PRESENT_LEAST px of a
  // 1280-px-wide screen (a zoomed window's CSS px are larger on the wall: 6.7 px at 150 %), the matrices are
  // stacked as in the page view: A and B side by side where their numbers keep PRESENT_READABLE px (12 px at
  // 1280×720, D under them), else one under another. The presenter scrolls; the clicker's keys still step.
  function readable(f, cut) {
    const wall = Math.min(1, innerWidth / 1280);
    if (!cut && f.font >= PRESENT_LEAST * wall) return f;
    const two = fitPage(true);
    const p = two.font >= PRESENT_READABLE * wall ? two : fitPage();
    return cut || p.font > f.font ? { ...p, wrap: true } : f;
  }

  function apply(f) {
    root.style.setProperty("--cell", Math.round(f.cell) + "px");
    root.style.setProperty("--cw", Math.floor(f.cw) + "px");
    root.style.setProperty("--cfs", f.font + "px");
    root.style.setProperty("--gap", f.gap + "px");
    root.classList.toggle("onerow", !f.wrap);
  }

  function fit() {
    if (S.fitting) return;
    S.fitting = true;
    try {
      const present = root.classList.contains("present");
      root.classList.remove("tight");
      if (present) {
        const f = fitOnce();
        // A small window (933×600: a 1400-px window at 150 %): if the numbers come out under 12 px, or the grids
        // would wrap off the screen, try the tight layout: a smaller arithmetic line and counts, 1-px gaps,
        // cells as wide and as tall as each allows. Kept when its numbers are larger (or it keeps one row).
        if ((f.wrap || f.font < PRESENT_READABLE) && (innerWidth < 1280 || innerHeight < 720)) {
          root.classList.add("tight");
          const t = fitOnce();
          if (t.wrap || (!f.wrap && t.font <= f.font)) {
            root.classList.remove("tight");
            fitOnce();
          }
        }
      } else {
        $(".side").style.minHeight = "";
        apply(fitPage());
      }
      root.dataset.fitted = String((Number(root.dataset.fitted) || 0) + 1);  // for tests: sized at least once
    } finally {
      S.fitting = false;
    }
  }

  function fitOnce() {                        // presentation: size everything for the current classes
    // room for the longest line, so that nothing moves while playing
    const side = $(".side"), parts = [".pos", ".kind", ".loads"].map((q) => $(q));
    const kept = parts.map((e) => e.textContent), shown = text.textContent, long = text.classList.contains("long");
    const end = steps[last];
    side.style.minHeight = "";
    text.textContent = longest;
    text.classList.toggle("long", longest.length > 48);
    parts[0].textContent = fill(L.step, { n: last + 1, total: last + 1 });
    parts[1].textContent = L.epilogue;
    parts[2].textContent = fill(L.loads, { a: end.loads[0], b: end.loads[1], d: end.loads[2] });
    side.style.minHeight = side.offsetHeight + "px";
    parts.forEach((e, n) => { e.textContent = kept[n]; });
    text.textContent = shown;
    text.classList.toggle("long", long);
    apply({ cell: PRESENT_MIN_CELL, cw: PRESENT_MIN_CELL, font: 10, gap: 3, wrap: false });
    apply(fitPresent());
    const f = fitPresent();                   // once more: the captions and the line may rewrap
    apply(f);
    return f;
  }
  let lastW = -1;
  const ro = new ResizeObserver(() => { if (root.clientWidth !== lastW) { lastW = root.clientWidth; fit(); } });
  ro.observe(root);
  const onResize = () => fit();
  window.addEventListener("resize", onResize);

  function setSpeed(v) {
    S.speed = Math.max(1, Math.min(30, Math.round(Number(v) || 1)));
    if (S.playing) { S.t0 = performance.now(); S.s0 = S.cur; S.shownAt = S.t0; }  // re-anchor the clock
  }

  function applyUpTo(s) {                     // D's values after step s, incrementally
    if (s < S.applied) { S.dvals.fill(null); S.applied = -1; }
    for (let k = S.applied + 1; k <= s; k++) {
      const st = steps[k];
      st.d.forEach(([i, j], n) => { S.dvals[i * N + j] = st.dv[n]; });
    }
    S.applied = s;
  }

  function draw(s) {                          // one frame: grids, arithmetic line and counts together
    s = Math.max(0, Math.min(last, s));
    if (s === S.cur) return;
    for (const [c, k] of S.lit) c.classList.remove(k);
    S.lit = [];
    const st = steps[s];
    const lite = (g, list, k) => list.forEach(([i, j]) => { const c = g.at(i, j); c.classList.add(k); S.lit.push([c, k]); });
    applyUpTo(s);
    gD.cells.forEach((c, n) => {
      const v = S.dvals[n];
      const t = v === null ? "" : v;
      if (c.textContent !== t) c.textContent = t;
      c.classList.toggle("todo", v === null);
    });
    lite(gA, st.a, "rd");
    lite(gB, st.b, "rd");
    if (gC) lite(gC, st.c, "rdc");
    lite(gD, st.d, "wr");
    $(".pos").textContent = fill(L.step, { n: s + 1, total: last + 1 });
    text.textContent = st.text;
    text.classList.toggle("long", st.text.length > 48);   // a tile step's line: smaller, still large
    $(".kind").textContent = st.kind === "epilogue" ? L.epilogue : "";
    $(".loads").textContent = fill(L.loads, { a: st.loads[0], b: st.loads[1], d: st.loads[2] });
    scrub.value = String(s);
    S.cur = s;
    root.dataset.step = String(s);            // for tests and CSS hooks
  }

  function commit() {                         // the only place that tells Python the step
    if (S.sent !== S.cur) { S.sent = S.cur; setStateValue("step", { id: data.traceId, step: S.cur }); }
  }

  function frame(now) {
    if (!S.playing) return;
    let target;
    if (S.speed <= EVERY_STEP_SPEED) {        // one step per interval, and never more than one per frame
      const every = 1000 / S.speed;
      target = S.cur;
      if (now - S.shownAt >= every) {
        target = S.cur + 1;
        // on time: keep the beat; late by more than a step: start the next interval now (slower, nothing skipped)
        S.shownAt = now - S.shownAt < 2 * every ? S.shownAt + every : now;
      }
    } else {
      target = S.s0 + Math.floor(((now - S.t0) * S.speed) / 1000);
    }
    if (target >= last) { draw(last); pause(); return; }
    draw(target);
    S.raf = requestAnimationFrame(frame);
  }
  function setPlayLabel() {
    playBtn.replaceChildren(icon(S.playing ? "pause" : "play_arrow"), document.createTextNode(S.playing ? L.pause : L.play));
    playBtn.setAttribute("aria-pressed", S.playing ? "true" : "false");
    root.dataset.playing = S.playing ? "1" : "0";
    text.setAttribute("aria-busy", S.playing ? "true" : "false");  // a screen reader reads the step it stops on
  }
  function play() {
    if (S.playing || last < 1) return;
    if (S.cur >= last) draw(0);
    S.playing = true; S.t0 = performance.now(); S.s0 = S.cur; S.shownAt = S.t0;
    setPlayLabel();
    S.raf = requestAnimationFrame(frame);
  }
  function pause() {
    const was = S.playing;
    S.playing = false; cancelAnimationFrame(S.raf);
    setPlayLabel();
    if (was) commit();
  }
  const toggle = () => (S.playing ? pause() : play());
  function go(s) { pause(); draw(s); commit(); }

  // ---- editing a cell of A, B or C in place
  const byClass = { ga: ["A", data.A], gb: ["B", data.B], gc: ["C", data.C] };
  function cellOf(el) {
    const c = el && el.closest && el.closest(".cell[contenteditable]");
    if (!c) return null;
    const [name, mat] = byClass[c.closest(".mat").classList[1]];
    return { c, name, mat, i: Number(c.dataset.i), j: Number(c.dataset.j) };
  }
  function finishEdit(c, keep) {
    const e = cellOf(c);
    if (!e) return;
    const was = e.mat[e.i][e.j], typed = e.c.textContent.trim();
    const v = Number(typed.replace(/\s+/g, ""));
    if (!keep || typed === "" || !Number.isFinite(v) || Number(was) === v) {
      e.c.textContent = was;                 // nothing changed, or not a number: back to what it was
      e.c.classList.remove("bad");
      return;
    }
    pause();
    root.dataset.edited = `${e.name}[${e.i},${e.j}]=${typed}`;
    setTriggerValue("edit", { id: data.traceId, m: e.name, i: e.i, j: e.j, value: typed, step: S.cur });
  }

  const on = [];                              // every listener, so dispose() can remove them
  const listen = (el, ev, fn) => { el.addEventListener(ev, fn); on.push([el, ev, fn]); };
  listen($(".first"), "click", () => go(0));
  listen($(".back"), "click", () => go(S.cur - 1));
  listen($(".fwd"), "click", () => go(S.cur + 1));
  listen($(".last"), "click", () => go(last));
  listen(playBtn, "click", toggle);
  listen(scrub, "input", () => { pause(); draw(Number(scrub.value)); });
  listen(scrub, "change", () => commit());
  // Keys reach us only while the focus is inside the component (the root has tabindex=0), so typing
  // in Streamlit's own widgets is never intercepted. A click on the grids focuses it.
  listen(root, "pointerdown", (e) => {
    if (!e.target.closest("input,button,[contenteditable]")) root.focus({ preventScroll: true });
  });
  listen(root, "keydown", (e) => {
    const editing = cellOf(e.target);
    if (editing && (e.key === "PageDown" || e.key === "PageUp") && !(e.altKey || e.ctrlKey || e.metaKey)) {
      // a presenter's clicker sends these: they step even from a cell (its value kept as Enter keeps it)
      e.preventDefault();
      e.stopPropagation();
      root.focus({ preventScroll: true });    // (focusout finishes the edit first)
      go(S.cur + (e.key === "PageDown" ? 1 : -1));
      return;
    }
    if (editing) {                            // typing in a cell: Enter keeps it, Escape puts it back
      if (e.key === "Enter" || e.key === "Escape") {
        e.preventDefault();
        if (e.key === "Escape") editing.c.textContent = editing.mat[editing.i][editing.j];
        root.focus({ preventScroll: true });
      }
      e.stopPropagation();
      return;
    }
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    let handled = true;
    if (KEY_NEXT.has(e.key)) go(S.cur + 1);
    else if (KEY_PREV.has(e.key)) go(S.cur - 1);
    else if (e.key === " " || e.key === "Spacebar") toggle();
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(last);
    else handled = false;
    if (handled) { e.preventDefault(); e.stopPropagation(); }
  });
  listen(root, "focusin", (e) => {
    const c = cellOf(e.target);
    parent.__gemmFocus = c ? { m: c.name, i: c.i, j: c.j } : null;  // refocused after the rerun an edit causes
  });
  listen(root, "focusout", (e) => { if (cellOf(e.target)) finishEdit(e.target, true); });
  listen(root, "input", (e) => {
    const c = cellOf(e.target);
    if (c) c.c.classList.toggle("bad", !Number.isFinite(Number(c.c.textContent.trim().replace(/\s+/g, ""))));
  });

  function setPresent(p) {
    root.classList.toggle("present", p);
    // a clicker works at once: on switching to presentation, and on a page opened in it (a link; S.present null)
    if (p && S.present !== true) root.focus({ preventScroll: true });
    S.present = p;
    fit();
  }

  const api = {
    traceId: data.traceId,
    update(d) {                               // same trace, new options (speed, presentation)
      setPresent(!!d.presentation);
      if (d.speed !== S.speed) setSpeed(d.speed);
    },
    dispose() {
      pause();
      ro.disconnect();
      window.removeEventListener("resize", onResize);
      for (const [el, ev, fn] of on) el.removeEventListener(ev, fn);
      on.length = 0;
    },
  };
  setSpeed(data.speed ?? 5);
  setPlayLabel();
  draw(Math.max(0, Math.min(last, data.start | 0)));
  setPresent(!!data.presentation);
  S.sent = S.cur;                             // Python already knows the start
  const f = parent.__gemmFocus;               // an edit reran the page: the focus goes back where it was
  if (f && editable) {
    const g = { A: gA, B: gB, C: gC }[f.m];
    const c = g && f.i < g.rows && f.j < g.cols ? g.at(f.i, f.j) : null;
    if (c) c.focus({ preventScroll: true });
  }
  if (document.fonts && document.fonts.status !== "loaded") document.fonts.ready.then(() => fit());
  return api;
}

export default function (component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  // Streamlit calls this again on the SAME DOM whenever `data` (or the theme) changes and does NOT
  // run the previous cleanup then; only the last returned cleanup runs, on unmount. So the instance
  // lives on parentElement and is reused (same trace) or disposed (a new one) here.
  let inst = parentElement.__gemmStepper;
  if (inst && inst.traceId === data.traceId) {
    inst.update(data);
  } else {
    if (inst) inst.dispose();
    inst = parentElement.__gemmStepper = createStepper(parentElement, data, setStateValue, setTriggerValue);
  }
  return () => {
    const cur = parentElement.__gemmStepper;
    if (cur) { cur.dispose(); delete parentElement.__gemmStepper; }
  };
}
