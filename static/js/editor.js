/* The whiteboard editor of /new and /b/<id>/edit.

   The document model is exactly the drawing format of API.md: {width, height, background,
   elements}, elements of type path, text, rect and ellipse. The canvas keeps the document's
   logical size (800x600 for a new board) and is scaled to its CSS size: pointer positions are
   mapped from CSS pixels to document units, clamped to the canvas and rounded to 0.1, and the
   whole drawing is redrawn from the model whenever the element changes size. Undo and redo keep
   whole states; element arrays are never changed in place, so a state is just a reference.
   Saving is POST /api/v1/boards (new) or PATCH /api/v1/boards/<id> with the session; a 4xx
   shows the API's `detail`.

   An existing board is drawn on live (static/js/live.js): every change goes to the server as ops
   (add, remove) and the others' ops come in; the canvas shows the server's doc with this
   person's unconfirmed ops on top, so drawing goes on while the connection is down and is sent
   when it is back. Undo and redo then keep, per person, what each of their own changes added
   and removed, and undo that alone (never someone else's strokes). Saving sends the title, kind
   and tags (and the whole doc only when the connection could not confirm the drawing, or the
   background changed). */
(function () {
  "use strict";

  const form = document.getElementById("editor");
  const canvas = document.getElementById("board-canvas");
  if (!form || !canvas || !canvas.getContext) return;

  // --- limits of API.md, from the server's one definition (feeds/rules.py, embedded by the page)
  const config = JSON.parse(document.getElementById("editor-config").textContent);
  const MAX_ELEMENTS = config.maxElements;
  const MAX_POINTS = config.maxPoints;
  const MAX_TEXT = config.maxText;
  const MAX_TITLE = config.maxTitle;
  const TAG_RE = new RegExp(config.tagPattern);
  const COLOR_RE = new RegExp(config.colorPattern);
  const HISTORY = 200;  // undo steps kept
  // A pen point closer than this (document units) to the last one adds nothing but weight.
  const MIN_STEP = 0.75;
  const ERASER_CSS_RADIUS = 8;

  const ctx = canvas.getContext("2d");
  const wrap = document.getElementById("canvas-wrap");
  const textEntry = document.getElementById("text-entry");
  const errorBox = document.getElementById("editor-error");
  const statusLine = document.getElementById("editor-status");
  const publish = document.getElementById("publish");
  const inputs = {
    title: document.getElementById("title"),
    kind: document.getElementById("kind"),
    tags: document.getElementById("tags"),
    color: document.getElementById("color"),
    width: document.getElementById("stroke-width"),
    widthValue: document.getElementById("stroke-width-value"),
    size: document.getElementById("text-size"),
    fillOn: document.getElementById("fill-on"),
    fill: document.getElementById("fill"),
    background: document.getElementById("background"),
  };

  // --- the model ------------------------------------------------------------------------------
  function isNumber(value) {
    return typeof value === "number" && isFinite(value);
  }

  function loadDoc() {
    const data = document.getElementById("doc-data");
    if (data) {
      try {
        const doc = JSON.parse(data.textContent);
        if (doc && isNumber(doc.width) && isNumber(doc.height) && Array.isArray(doc.elements)
            && typeof doc.background === "string") {
          return { width: doc.width, height: doc.height, background: doc.background, elements: doc.elements.slice() };
        }
      } catch (error) { /* fall through to a blank board */ }
    }
    return { width: 800, height: 600, background: "#ffffff", elements: [] };
  }

  const doc = loadDoc();
  const draw2d = window.ugcsiteLive;  // drawing and ids, shared with the live view (live.js)
  const isAuthor = form.dataset.isAuthor === "1" || !form.dataset.boardId;
  const liveStatus = document.getElementById("live-status");
  const livePeers = document.getElementById("live-peers");
  let live = null;  // the live connection of an existing board
  let liveUndo = [];  // live: this person's changes, {added, removed, background: [before, after]}
  let liveRedo = [];
  let backgroundChanged = false;
  const undoStack = [];
  const redoStack = [];
  let tool = "pen";
  let draft = null;      // the element being drawn, not yet in doc.elements
  let gesture = null;    // the pointer that draws: {pointerId, start, before, erased}
  let pendingText = null; // where typed text goes: {x, y, color, size}
  let dirty = false;
  let saving = false;
  let backgroundBefore = null;

  function round1(value) {
    return Math.round(value * 10) / 10;
  }

  function clampRound(value, max) {
    return Math.min(Math.max(round1(value), 0), max);
  }

  function state() {
    return { elements: doc.elements, background: doc.background };
  }

  function apply(next) {
    doc.elements = next.elements;
    doc.background = next.background;
    if (COLOR_RE.test(doc.background)) inputs.background.value = doc.background.toLowerCase();
  }

  /* What a change did, by element id: the elements it added and those it removed. */
  function diff(before, next) {
    const was = new Set(before.elements.map((e) => e.id));
    const now = new Set(next.elements.map((e) => e.id));
    return {
      added: next.elements.filter((e) => !was.has(e.id)),
      removed: before.elements.filter((e) => !now.has(e.id)),
      background: before.background !== next.background ? [before.background, next.background] : null,
    };
  }

  /* Live: do a change (forward) or its undo (backward) as ops on the board. */
  function liveApply(entry, forward) {
    const present = new Set(live.view().elements.map((e) => e.id));
    const toRemove = forward ? entry.removed : entry.added;
    const toAdd = forward ? entry.added : entry.removed;
    for (const element of toRemove) if (present.has(element.id)) live.send({ kind: "remove", id: element.id });
    for (const element of toAdd) if (!present.has(element.id)) live.send({ kind: "add", element });
    if (entry.background) {
      doc.background = entry.background[forward ? 1 : 0];
      backgroundChanged = true;
      if (COLOR_RE.test(doc.background)) inputs.background.value = doc.background.toLowerCase();
    }
    liveRefresh();
    touched();
  }

  /* Live: the elements to show, the server's doc with this person's pending ops on top (and
     what an eraser gesture under way has taken). */
  function liveRefresh() {
    const view = live.view();
    if (!view) return;
    const erased = gesture && gesture.erasedIds;
    doc.elements = erased ? view.elements.filter((e) => !erased.has(e.id)) : view.elements;
  }

  /* Record the state before a change, then apply the new one. */
  function change(next, before) {
    if (live) {
      const entry = diff(before || state(), next);
      if (!entry.added.length && !entry.removed.length && !entry.background) return;
      liveUndo.push(entry);
      if (liveUndo.length > HISTORY) liveUndo.shift();
      liveRedo = [];
      if (gesture) gesture.erasedIds = null;
      liveApply(entry, true);
      return;
    }
    undoStack.push(before || state());
    if (undoStack.length > HISTORY) undoStack.shift();
    redoStack.length = 0;
    apply(next);
    touched();
  }

  function undo() {
    commitText();
    if (live) {
      if (!liveUndo.length) return;
      const entry = liveUndo.pop();
      liveRedo.push(entry);
      liveApply(entry, false);
      return;
    }
    if (!undoStack.length) return;
    redoStack.push(state());
    apply(undoStack.pop());
    touched();
  }

  function redo() {
    commitText();
    if (live) {
      if (!liveRedo.length) return;
      const entry = liveRedo.pop();
      liveUndo.push(entry);
      liveApply(entry, true);
      return;
    }
    if (!redoStack.length) return;
    undoStack.push(state());
    apply(redoStack.pop());
    touched();
  }

  function touched() {
    dirty = true;
    hideError();
    refreshControls();
    schedule();
  }

  function pointCount(elements) {
    let total = 0;
    for (const element of elements) if (element.type === "path") total += element.points.length;
    return total;
  }

  function add(element) {
    if (doc.elements.length >= MAX_ELEMENTS) {
      showError("A board holds at most 5,000 elements: erase or clear some first.");
      return;
    }
    if (element.type === "path" && pointCount(doc.elements) + element.points.length > MAX_POINTS) {
      showError("A board holds at most 100,000 points in all: erase some strokes first.");
      return;
    }
    element.id = draw2d.newId(config.elementIdLength);
    change({ elements: doc.elements.concat([element]), background: doc.background });
  }

  // --- settings from the toolbar ----------------------------------------------------------------
  function color() {
    return COLOR_RE.test(inputs.color.value) ? inputs.color.value : "#1d2330";
  }

  function intBetween(input, low, high, fallback) {
    const value = Math.round(Number(input.value));
    return isFinite(value) && input.value !== "" ? Math.min(Math.max(value, low), high) : fallback;
  }

  function strokeWidth() {
    return intBetween(inputs.width, config.strokeWidth[0], config.strokeWidth[1], 4);
  }

  function textSize() {
    return intBetween(inputs.size, config.textSize[0], config.textSize[1], 28);
  }

  function fill() {
    return inputs.fillOn.checked && COLOR_RE.test(inputs.fill.value) ? inputs.fill.value : null;
  }

  // --- drawing ----------------------------------------------------------------------------------
  let frame = 0;

  function schedule() {
    if (!frame) frame = window.requestAnimationFrame(() => { frame = 0; draw(); });
  }

  function fontOf(size) {
    return size + "px sans-serif";
  }

  function drawElement(element) {
    draw2d.drawElement(ctx, element);
  }

  function draw() {
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(canvas.width / doc.width, 0, 0, canvas.height / doc.height, 0, 0);
    ctx.fillStyle = doc.background;
    ctx.fillRect(0, 0, doc.width, doc.height);
    for (const element of doc.elements) drawElement(element);
    if (draft) drawElement(draft);
    if (live) draw2d.drawCursors(ctx, live.cursors, 1 / scale());
  }

  /* The backing store follows the element's CSS size (times the pixel ratio, for sharp lines);
     the drawing is redrawn from the model at that scale. */
  function resize() {
    const box = canvas.getBoundingClientRect();
    if (!box.width) return;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(box.width * ratio));
    const height = Math.max(1, Math.round(box.width * (doc.height / doc.width) * ratio));
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = width;
      canvas.height = height;
    }
    if (pendingText) placeTextEntry();
    draw();
  }

  canvas.style.aspectRatio = doc.width + " / " + doc.height;
  // The editor's width follows the window's height, so the whole board and the publish button fit (site.css).
  form.style.setProperty("--doc-ratio", (doc.width / doc.height).toFixed(4));
  if ("ResizeObserver" in window) {
    new ResizeObserver(resize).observe(canvas);
  } else {
    window.addEventListener("resize", resize);
  }

  // --- pointers ---------------------------------------------------------------------------------
  function scale() {
    return canvas.getBoundingClientRect().width / doc.width;  // CSS pixels per document unit
  }

  function toDoc(event) {
    const box = canvas.getBoundingClientRect();
    return [
      clampRound((event.clientX - box.left) * doc.width / box.width, doc.width),
      clampRound((event.clientY - box.top) * doc.height / box.height, doc.height),
    ];
  }

  function shapeFrom(start, end) {
    const x = Math.min(start[0], end[0]);
    const y = Math.min(start[1], end[1]);
    let w = round1(Math.max(start[0], end[0]) - x);
    let h = round1(Math.max(start[1], end[1]) - y);
    // The whole shape must lie inside the canvas (x + w <= width), rounding included.
    while (w > 0 && x + w > doc.width) w = round1(w - 0.1);
    while (h > 0 && y + h > doc.height) h = round1(h - 0.1);
    return { type: tool, color: color(), width: strokeWidth(), x, y, w, h, fill: fill() };
  }

  function addPoint(point) {
    const points = draft.points;
    const last = points[points.length - 1];
    if (Math.hypot(point[0] - last[0], point[1] - last[1]) < MIN_STEP) return;
    points.push(point);
  }

  canvas.addEventListener("pointerdown", (event) => {
    if (gesture || saving) return;
    if (event.pointerType === "mouse" && event.button !== 0) return;
    event.preventDefault();  // no text selection, no focus change, no emulated mouse events
    commitText();
    hideError();
    const point = toDoc(event);
    if (tool === "text") {
      openText(point);
      return;
    }
    canvas.setPointerCapture(event.pointerId);
    gesture = { pointerId: event.pointerId, start: point, before: state(), erased: false };
    if (tool === "pen") {
      draft = { type: "path", color: color(), width: strokeWidth(), points: [point] };
    } else if (tool === "eraser") {
      eraseAt(point);
    }
    schedule();
  });

  canvas.addEventListener("pointermove", (event) => {
    if (live) live.cursor(...toDoc(event));
    if (!gesture || event.pointerId !== gesture.pointerId) return;
    const coalesced = typeof event.getCoalescedEvents === "function" ? event.getCoalescedEvents() : [];
    for (const each of coalesced.length ? coalesced : [event]) {
      const point = toDoc(each);
      if (tool === "pen") addPoint(point);
      else if (tool === "rect" || tool === "ellipse") draft = shapeFrom(gesture.start, point);
      else if (tool === "eraser") eraseAt(point);
    }
    schedule();
  });

  function endGesture(event, cancelled) {
    if (!gesture || event.pointerId !== gesture.pointerId) return;
    const done = gesture;
    const element = draft;
    gesture = null;
    draft = null;
    if (canvas.hasPointerCapture(event.pointerId)) canvas.releasePointerCapture(event.pointerId);
    if (tool === "eraser") {
      if (done.erased) {
        if (cancelled) {
          if (live) liveRefresh();
          else apply(done.before);
        } else {
          change(state(), done.before);
        }
      }
    } else if (!cancelled && element) {
      if (element.type === "path") {
        if (element.points.length < 2) element.points.push(element.points[0].slice());  // a dot
        add(element);
      } else if (element.w >= 1 && element.h >= 1) {
        add(element);
      }
    }
    schedule();
  }

  canvas.addEventListener("pointerup", (event) => endGesture(event, false));
  canvas.addEventListener("pointercancel", (event) => endGesture(event, true));
  canvas.addEventListener("lostpointercapture", (event) => endGesture(event, false));

  // --- the eraser: removes whole elements it touches ----------------------------------------------
  function segmentDistance(p, a, b) {
    const dx = b[0] - a[0];
    const dy = b[1] - a[1];
    const length2 = dx * dx + dy * dy;
    let t = length2 ? ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2 : 0;
    t = Math.max(0, Math.min(1, t));
    return Math.hypot(p[0] - (a[0] + t * dx), p[1] - (a[1] + t * dy));
  }

  function hits(element, p, radius) {
    if (element.type === "path") {
      const reach = radius + element.width / 2;
      const points = element.points;
      for (let i = 0; i < points.length; i++) {
        if (segmentDistance(p, points[i], points[Math.min(i + 1, points.length - 1)]) <= reach) return true;
      }
      return false;
    }
    if (element.type === "text") {
      ctx.font = fontOf(element.size);
      const width = ctx.measureText(element.text).width;
      return p[0] >= element.x - radius && p[0] <= element.x + width + radius
        && p[1] >= element.y - element.size - radius && p[1] <= element.y + element.size * 0.3 + radius;
    }
    const reach = radius + element.width / 2;
    if (element.type === "rect") {
      const inside = p[0] >= element.x - reach && p[0] <= element.x + element.w + reach
        && p[1] >= element.y - reach && p[1] <= element.y + element.h + reach;
      if (!inside) return false;
      if (element.fill) return true;
      const edge = Math.min(Math.abs(p[0] - element.x), Math.abs(p[0] - element.x - element.w),
        Math.abs(p[1] - element.y), Math.abs(p[1] - element.y - element.h));
      return edge <= reach;
    }
    if (element.type === "ellipse") {
      const rx = element.w / 2;
      const ry = element.h / 2;
      const nx = (p[0] - element.x - rx) / rx;
      const ny = (p[1] - element.y - ry) / ry;
      const d = Math.sqrt(nx * nx + ny * ny);  // 1 on the outline
      if (element.fill && d <= 1) return true;
      return Math.abs(d - 1) * Math.min(rx, ry) <= reach;
    }
    return false;
  }

  function eraseAt(point) {
    const radius = ERASER_CSS_RADIUS / scale();
    const kept = doc.elements.filter((element) => !hits(element, point, radius));
    if (kept.length !== doc.elements.length) {
      if (live) {
        gesture.erasedIds = gesture.erasedIds || new Set();
        for (const element of doc.elements) if (kept.indexOf(element) < 0) gesture.erasedIds.add(element.id);
      }
      doc.elements = kept;  // the gesture's start state goes on the undo stack when it ends
      gesture.erased = true;
      dirty = true;
    }
  }

  // --- text: an input over the canvas where the text will stand -----------------------------------
  function placeTextEntry() {
    const s = scale();
    textEntry.style.left = pendingText.x * s + "px";
    textEntry.style.top = (pendingText.y - pendingText.size) * s + "px";  // y is the baseline
    textEntry.style.fontSize = Math.max(pendingText.size * s, 10) + "px";
    textEntry.style.color = pendingText.color;
  }

  function openText(point) {
    pendingText = { x: point[0], y: point[1], color: color(), size: textSize() };
    textEntry.value = "";
    textEntry.hidden = false;
    placeTextEntry();
    textEntry.focus();
  }

  function closeText() {
    pendingText = null;
    textEntry.hidden = true;
    textEntry.value = "";
  }

  function commitText() {
    if (!pendingText) return;
    const where = pendingText;
    const text = textEntry.value.slice(0, MAX_TEXT);
    closeText();
    if (text.trim()) add({ type: "text", color: where.color, size: where.size, x: where.x, y: where.y, text });
  }

  textEntry.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();  // places the text; never submits the form
      commitText();
    } else if (event.key === "Escape") {
      event.preventDefault();
      closeText();
    }
  });
  textEntry.addEventListener("blur", commitText);

  // --- the toolbar --------------------------------------------------------------------------------
  const toolButtons = Array.from(form.querySelectorAll("[data-tool]"));
  const swatches = Array.from(form.querySelectorAll(".swatch"));

  function selectTool(name) {
    commitText();
    tool = name;
    canvas.dataset.tool = name;
    for (const button of toolButtons) button.setAttribute("aria-pressed", String(button.dataset.tool === name));
  }

  function markSwatch() {
    for (const swatch of swatches) {
      swatch.setAttribute("aria-pressed", String(swatch.dataset.color.toLowerCase() === inputs.color.value.toLowerCase()));
    }
  }

  for (const button of toolButtons) button.addEventListener("click", () => selectTool(button.dataset.tool));
  for (const swatch of swatches) {
    swatch.style.backgroundColor = swatch.dataset.color;  // CSSOM, which the CSP allows (no style attributes)
    swatch.addEventListener("click", () => {
      inputs.color.value = swatch.dataset.color;
      markSwatch();
    });
  }
  inputs.color.addEventListener("input", markSwatch);
  inputs.width.addEventListener("input", () => { inputs.widthValue.textContent = String(strokeWidth()); });
  inputs.background.addEventListener("input", () => {
    if (backgroundBefore === null) backgroundBefore = state();
    doc.background = inputs.background.value;
    schedule();
  });
  inputs.background.addEventListener("change", () => {
    const before = backgroundBefore || state();
    backgroundBefore = null;
    if (before.background !== inputs.background.value) {
      change({ elements: doc.elements, background: inputs.background.value }, before);
    }
  });

  form.querySelector('[data-action="undo"]').addEventListener("click", undo);
  form.querySelector('[data-action="redo"]').addEventListener("click", redo);
  form.querySelector('[data-action="clear"]').addEventListener("click", () => {
    commitText();
    if (doc.elements.length) change({ elements: [], background: doc.background });
  });

  function refreshControls() {
    form.querySelector('[data-action="undo"]').disabled = !(live ? liveUndo : undoStack).length;
    form.querySelector('[data-action="redo"]').disabled = !(live ? liveRedo : redoStack).length;
    const count = doc.elements.length;
    const unsent = live ? live.pending.length > 0 || backgroundChanged : dirty;
    statusLine.textContent = count + (count === 1 ? " element" : " elements") + (unsent ? " · not saved yet" : "");
  }

  // Ctrl+Z undoes, Ctrl+Shift+Z and Ctrl+Y redo (Cmd on a Mac); typing fields keep their own undo.
  document.addEventListener("keydown", (event) => {
    if (!(event.ctrlKey || event.metaKey) || event.altKey) return;
    const target = event.target;
    if (target instanceof Element && target.matches(
      "textarea, select, [contenteditable], input:not([type]), input[type=text], input[type=number], input[type=search]")) return;
    const key = event.key.toLowerCase();
    if (key === "z" && !event.shiftKey) undo();
    else if ((key === "z" && event.shiftKey) || key === "y") redo();
    else return;
    event.preventDefault();
  });

  // --- saving -------------------------------------------------------------------------------------
  function showError(message) {
    errorBox.textContent = message;
    errorBox.hidden = false;
  }

  function hideError() {
    errorBox.hidden = true;
    errorBox.textContent = "";
  }

  /* The body for the API, or null after telling the person what to fix. The API checks
     everything again: what it refuses comes back as its `detail`. */
  function collect() {
    const wholeDoc = { width: doc.width, height: doc.height, background: doc.background, elements: doc.elements };
    // Live, the server has the drawing already, unless it could not confirm all of it.
    const docToo = !live || live.state !== "live" || live.pending.length > 0 || backgroundChanged;
    if (!isAuthor) return docToo ? { doc: wholeDoc } : {};
    const title = inputs.title.value.trim();
    if (!title) {
      showError("Give the board a title.");
      inputs.title.focus();
      return null;
    }
    if (title.length > MAX_TITLE) {
      showError("A title has at most " + MAX_TITLE + " characters.");
      inputs.title.focus();
      return null;
    }
    const tags = [];
    const bad = [];
    for (const part of inputs.tags.value.split(",")) {
      const tag = part.trim().toLowerCase();
      if (!tag) continue;
      if (!TAG_RE.test(tag)) bad.push(part.trim());
      else if (tags.indexOf(tag) < 0) tags.push(tag);
    }
    if (bad.length) {
      showError("Tags are " + config.tagWords + ", separated by commas: “" + bad[0] + "” is not one.");
      inputs.tags.focus();
      return null;
    }
    const body = { title, kind: inputs.kind.value, tags };
    if (docToo) body.doc = wholeDoc;
    return body;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (saving) return;
    commitText();
    hideError();
    const body = collect();
    if (!body) return;
    saving = true;
    publish.disabled = true;
    statusLine.textContent = "Saving…";
    let result;
    if (!Object.keys(body).length) {  // an editor whose drawing the server has: nothing to send
      dirty = false;
      window.location.assign("/b/" + encodeURIComponent(form.dataset.boardId));
      return;
    }
    try {
      result = await window.ugcsite.api(form.dataset.saveUrl, { method: form.dataset.saveMethod, json: body });
    } catch (error) {
      result = { ok: false, status: 0, data: { detail: "Could not reach the site; check your connection and try again." } };
    }
    if (result.ok && result.data && result.data.id !== undefined) {
      dirty = false;
      statusLine.textContent = "Saved.";
      window.location.assign("/b/" + encodeURIComponent(result.data.id));
      return;
    }
    saving = false;
    publish.disabled = false;
    refreshControls();
    showError(window.ugcsite.problem(result));
  });

  window.addEventListener("beforeunload", (event) => {
    if ((live ? live.pending.length > 0 || backgroundChanged : dirty) && !saving) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  if (form.dataset.boardId) {
    live = new draw2d.LiveBoard(form.dataset.boardId, {
      initial: { width: doc.width, height: doc.height, background: doc.background, elements: doc.elements },
      onChange() {
        liveRefresh();
        refreshControls();
        schedule();
      },
      onStatus(state, text) {
        if (!liveStatus) return;
        liveStatus.textContent = text;
        liveStatus.dataset.state = state;
      },
      onPeers(peers) {
        if (livePeers) livePeers.textContent = peers.length ? "Here now: " + peers.map((p) => p.username).join(", ") : "";
      },
      onError(detail) { showError(detail); },
    });
    draw2d.boards.push(live);
  }

  selectTool("pen");
  markSwatch();
  refreshControls();
  resize();
  form.dataset.ready = "true";  // for tests and styles: the editor is wired up
})();
