// The step-through of a GEMM trace, drawn and played in the browser (ui.stepper, st.components.v2).
//
// Python computes the trace (gemmlib.explain.reference.Trace.frames) and sends it as data with the
// matrices as text and every label. This file only draws: A, B, C (when β ≠ 0) and D as grids, the
// arithmetic line and the loads beside them, always from the same step. Playback runs on
// requestAnimationFrame against the clock (a late frame skips a step, never slows the pace), and
// Python hears the step only when playback stops (pause, the end, a button, a key, the scrubber
// released), never per frame: state value "step" = {id: the trace's id, step: 0-based index}.
const KEY_NEXT = new Set(["ArrowRight", "PageDown"]);
const KEY_PREV = new Set(["ArrowLeft", "PageUp"]);
const MIN_CELL = 18;

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, k) => (k in values ? String(values[k]) : `{${k}}`));
}

function buildGrid(host, caption, mat, cls) {
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
      grid.appendChild(c);
      cells.push(c);
    }
  }
  host.appendChild(box);
  return { cells, cols, box, at: (i, j) => cells[i * cols + j] };
}

function createStepper(parent, data, setStateValue) {
  const root = parent.querySelector(".gst");
  const $ = (s) => root.querySelector(s);
  const L = data.labels;
  const steps = data.frames, last = steps.length - 1;
  const M = data.m, N = data.n;

  const grids = $(".grids");
  grids.replaceChildren();
  const gA = buildGrid(grids, L.a, data.A, "ga");
  const gB = buildGrid(grids, L.b, data.B, "gb");
  const gC = data.C ? buildGrid(grids, L.c, data.C, "gc") : null;
  const gD = buildGrid(grids, L.d, data.A.map(() => new Array(N).fill("")), "gd");
  // the widest text any cell will hold (D's final values included), for the cell size
  let chars = 1;
  for (const m of [data.A, data.B, data.C || []]) for (const r of m) for (const v of r) chars = Math.max(chars, v.length);
  for (const s of steps) for (const v of s.dv) chars = Math.max(chars, v.length);

  for (const [sel, key] of [[".first", "first"], [".back", "back"], [".fwd", "forward"], [".last", "last"]]) {
    $(sel).title = L[key]; $(sel).setAttribute("aria-label", L[key]);
  }
  const scrub = $(".scrub"), playBtn = $(".play");
  scrub.max = String(Math.max(0, last));
  scrub.setAttribute("aria-label", L.scrub);
  root.setAttribute("aria-label", L.keys);
  $(".hint").textContent = L.keys;
  const S = { cur: -1, playing: false, raf: 0, t0: 0, s0: 0, sent: null, speed: 5, lit: [],
              dvals: new Array(M * N).fill(null), applied: -1, present: null };

  function fit() {                            // cells as large as allowed where the matrices fit
    const present = root.classList.contains("present");
    const gap = present ? 3 : 2;
    const avail = Math.max(120, root.clientWidth - 12);
    const cols = Math.max(data.A[0].length, N);
    const textW = (font) => chars * 0.62 * font + 10;   // the widest value at this font size
    const fits = (w) => cols * w + (cols - 1) * gap <= avail;
    let cell, cw, font;
    if (present) {                                      // 64-px cells, 26-px text; text never below 24 px
      font = 26;
      cell = 64;
      while (font > 24 && !fits(Math.max(cell, textW(font)))) { font -= 1; }
      cw = Math.max(textW(font), cell);
      while (cw > textW(font) && !fits(cw)) cw -= 1;    // narrower cells before smaller text
      cell = Math.max(font + 14, Math.min(cell, cw));
    } else {
      cell = 34;
      const w = (c) => Math.max(c, textW(Math.round(c * 0.41)));
      while (cell > MIN_CELL && !fits(w(cell))) cell -= 1;
      font = Math.max(9, Math.round(cell * 0.41));
      cw = w(cell);
    }
    root.style.setProperty("--cell", Math.round(cell) + "px");
    root.style.setProperty("--cw", Math.ceil(cw) + "px");
    root.style.setProperty("--cfs", font + "px");
    root.style.setProperty("--gap", gap + "px");
  }
  const ro = new ResizeObserver(() => fit());
  ro.observe(root);

  function setSpeed(v) {
    S.speed = Math.max(1, Math.min(30, Math.round(Number(v) || 1)));
    if (S.playing) { S.t0 = performance.now(); S.s0 = S.cur; }  // re-anchor the clock
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
    const text = $(".text");
    text.textContent = st.text;
    text.classList.toggle("long", st.text.length > 48);   // a tile step's line: smaller, still large
    $(".kind").textContent = st.kind === "epilogue" ? L.epilogue : "";
    $(".loads").textContent = fill(L.loads, { a: st.loads[0], b: st.loads[1], d: st.loads[2] });
    scrub.value = String(s);
    S.cur = s;
    root.dataset.step = String(s);            // for tests and CSS hooks
  }

  function commit() {                         // the only place that talks to Python
    if (S.sent !== S.cur) { S.sent = S.cur; setStateValue("step", { id: data.traceId, step: S.cur }); }
  }

  function frame(now) {
    if (!S.playing) return;
    const target = S.s0 + Math.floor(((now - S.t0) * S.speed) / 1000);
    if (target >= last) { draw(last); pause(); return; }
    draw(target);
    S.raf = requestAnimationFrame(frame);
  }
  function setPlayLabel() {
    playBtn.textContent = S.playing ? L.pause : L.play;
    playBtn.setAttribute("aria-pressed", S.playing ? "true" : "false");
    root.dataset.playing = S.playing ? "1" : "0";
  }
  function play() {
    if (S.playing || last < 1) return;
    if (S.cur >= last) draw(0);
    S.playing = true; S.t0 = performance.now(); S.s0 = S.cur;
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
  listen(root, "pointerdown", (e) => { if (!e.target.closest("input,button")) root.focus({ preventScroll: true }); });
  listen(root, "keydown", (e) => {
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

  function setPresent(p) {
    root.classList.toggle("present", p);
    if (p && S.present === false) root.focus({ preventScroll: true });  // a clicker works at once
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
      for (const [el, ev, fn] of on) el.removeEventListener(ev, fn);
      on.length = 0;
    },
  };
  setPresent(!!data.presentation);
  setSpeed(data.speed ?? 5);
  setPlayLabel();
  draw(Math.max(0, Math.min(last, data.start | 0)));
  S.sent = S.cur;                             // Python already knows the start
  return api;
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  // Streamlit calls this again on the SAME DOM whenever `data` (or the theme) changes and does NOT
  // run the previous cleanup then; only the last returned cleanup runs, on unmount. So the instance
  // lives on parentElement and is reused (same trace) or disposed (a new one) here.
  let inst = parentElement.__gemmStepper;
  if (inst && inst.traceId === data.traceId) {
    inst.update(data);
  } else {
    if (inst) inst.dispose();
    inst = parentElement.__gemmStepper = createStepper(parentElement, data, setStateValue);
  }
  return () => {
    const cur = parentElement.__gemmStepper;
    if (cur) { cur.dispose(); delete parentElement.__gemmStepper; }
  };
}
