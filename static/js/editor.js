/* The whiteboard editor of /new and /b/<id>/edit.

   The document model is exactly the drawing format of docs/api.md: {width, height, background,
   elements}, elements of type path, text, rect, ellipse, line, arrow and sticky. A new board
   starts 800x600 and grows with its content: whatever is drawn, moved or resized past its edge
   makes it wider or taller, up to the largest canvas the API allows (config.maxCanvas), never
   smaller. Pointer positions are mapped from CSS pixels to document units (editor-view.js),
   clamped to that limit and rounded to 0.1, and the whole drawing is redrawn from the model. Undo and redo keep
   whole states; element arrays are never changed in place, so a state is just a reference.
   Saving is POST /api/v1/boards (new) or PATCH /api/v1/boards/<id> with the session; a 4xx
   shows the API's `detail`.

   An existing board is drawn on live (static/js/live.js): every change goes to the server as ops
   (add, remove) and the others' ops come in; the canvas shows the server's doc with this
   person's unconfirmed ops on top, so drawing goes on while the connection is down and is sent
   when it is back. Undo and redo then keep, per person, what each of their own changes added
   and removed, and undo that alone (never someone else's strokes). The board's background and
   size go as `board` ops too (and their undo), and so does the title its author types (when the
   field is left); the others' come in and show at once. Saving sends the title, kind and tags
   (and the whole doc only when the connection could not confirm the drawing).

   The board's size (width x height, in the style controls) may be set by hand: larger, or
   smaller down to what is drawn on it (as the server rules), and one undo step.

   The select tool picks elements (a click, shift-click, or a box dragged around them); dragging
   moves them, the corner handles resize them (Shift keeps proportions), the round handle above
   one text, box or note turns it (Shift: by 15 degrees), Delete removes them, and
   the style controls (colour, width, text size, fill, rotation) restyle them; a double click on a
   text or a sticky note edits it in place. Each is one ordinary change: one undo step, and live
   one `update` (or `remove`) op per element it changed. The view (static/js/editor-view.js) zooms and pans without touching the doc;
   geometry is in editor-shapes.js, SVG and PNG export in editor-export.js, the keyboard
   shortcuts in editor-keys.js. Each person's pen (colour, width, text size, fill) is kept in
   localStorage. */
(function () {
  "use strict";

  const form = document.getElementById("editor");
  const canvas = document.getElementById("board-canvas");
  if (!form || !canvas || !canvas.getContext) return;

  // --- limits of docs/api.md, from the server's one definition (feeds/rules.py, embedded by the page)
  const config = JSON.parse(document.getElementById("editor-config").textContent);
  const MAX_ELEMENTS = config.maxElements;
  const MAX_POINTS = config.maxPoints;
  const MAX_TEXT = config.maxText;
  const MAX_TITLE = config.maxTitle;
  const TAG_RE = new RegExp(config.tagPattern);
  const COLOR_RE = new RegExp(config.colorPattern);
  const LIMIT = config.maxCanvas;  // the board grows up to LIMIT x LIMIT
  const HANDLE_CSS = 5;           // half a resize handle's side (CSS pixels)
  const HANDLE_REACH = 12;        // how near (CSS pixels) a press must be to take a handle
  const DOUBLE_PRESS_MS = 450;    // two presses on one text this close edit it
  const STICKY_SIZE = [160, 120]; // a sticky note placed with a click
  const TURN_HANDLE_CSS = 22;     // the rotation handle stands this far above the selection's box
  const TURN_SNAP = 15;           // degrees a turn snaps to with Shift
  const TURNING = new Set(["text", "rect", "ellipse", "sticky", "image"]);  // the types with a rotation
  const HISTORY = 200;  // undo steps kept
  // A pen point closer than this (document units) to the last one adds nothing but weight.
  const MIN_STEP = 0.75;
  const ERASER_CSS_RADIUS = 8;
  const SELECT_CSS_RADIUS = 6;   // how near (CSS pixels) a click must be to pick an element
  const BACKDROP = "#e4e1d8";     // around the drawing when zoomed out or panned
  const ACCENT = "#3b5bdb";
  const shapes = window.ugcsiteShapes;
  const exporter = window.ugcsiteExport;

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
    rotation: document.getElementById("rotation"),
    background: document.getElementById("background"),
    boardWidth: document.getElementById("board-width"),
    boardHeight: document.getElementById("board-height"),
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
  // A new board's kept draft; a remix's is its own (one per source), never a blank board's.
  const NEW_KEY = form.dataset.boardId
    ? null
    : "new." + (form.dataset.person || "") + (form.dataset.remixOf ? ".remix." + form.dataset.remixOf : "");
  const livePeers = document.getElementById("live-peers");
  let live = null;  // the live connection of an existing board
  // live: this person's changes, {added, removed, updated, background: [before, after], size: [[w, h], [w, h]]}
  let liveUndo = [];
  let liveRedo = [];
  const undoStack = [];
  const redoStack = [];
  let tool = "pen";
  let draft = null;      // the element being drawn, not yet in doc.elements
  let gesture = null;    // the pointer that draws: {pointerId, start, before, erased}
  let pendingText = null; // where typed text goes: {x, y, color, size}, or {edit: id} of a text or sticky
  let lastPress = null;  // {id, at}: the last press of the select or text tool on an element
  let dirty = false;
  let saving = false;
  let backgroundBefore = null;
  let selection = new Set();  // ids of the selected elements
  const view = new window.ugcsiteView.View(canvas, doc, () => {
    if (pendingText) placeTextEntry();
    refreshZoom();
    schedule();
  });

  const round1 = shapes.round1;

  function clampRound(value, max) {
    return Math.min(Math.max(round1(value), 0), max);
  }

  /* The state undo keeps; with `withSize`, the board's size too (a size change and its undo:
     growing with the content is never undone). */
  function state(withSize) {
    const now = { elements: doc.elements, background: doc.background };
    if (withSize) now.size = [doc.width, doc.height];
    return now;
  }

  /* The board grows to hold its elements (never shrinks): as the server grows a live board. */
  function growToFit() {
    const [right, bottom] = shapes.extentOf(doc.elements);
    if (right > doc.width) doc.width = right;
    if (bottom > doc.height) doc.height = bottom;
  }

  function apply(next) {
    doc.elements = next.elements;
    doc.background = next.background;
    if (next.size) [doc.width, doc.height] = next.size;
    growToFit();
    if (COLOR_RE.test(doc.background)) inputs.background.value = doc.background.toLowerCase();
  }

  /* What a change did, by element id: the elements it added, those it removed, and those it
     replaced ([before, after], a move). */
  function diff(before, next) {
    const was = new Map(before.elements.map((e) => [e.id, e]));
    const now = new Set(next.elements.map((e) => e.id));
    const updated = [];
    for (const element of next.elements) {
      const old = was.get(element.id);
      if (old && old !== element && JSON.stringify(old) !== JSON.stringify(element)) updated.push([old, element]);
    }
    return {
      added: next.elements.filter((e) => !was.has(e.id)),
      removed: before.elements.filter((e) => !now.has(e.id)),
      updated,
      background: before.background !== next.background ? [before.background, next.background] : null,
      size: next.size && before.size && (next.size[0] !== before.size[0] || next.size[1] !== before.size[1])
        ? [before.size, next.size] : null,
    };
  }

  /* Live: do a change (forward) or its undo (backward) as ops on the board. */
  function liveApply(entry, forward) {
    const present = new Set(live.view().elements.map((e) => e.id));
    const toRemove = forward ? entry.removed : entry.added;
    const toAdd = forward ? entry.added : entry.removed;
    for (const element of toRemove) if (present.has(element.id)) live.send({ kind: "remove", id: element.id });
    for (const element of toAdd) if (!present.has(element.id)) live.send({ kind: "add", element });
    for (const pair of entry.updated) {
      const element = pair[forward ? 1 : 0];
      if (present.has(element.id)) live.send({ kind: "update", element });
    }
    const board = {};
    if (entry.background) board.background = entry.background[forward ? 1 : 0];
    if (entry.size) {  // never below what is drawn now, others' strokes included (the server's rule)
      const [right, bottom] = shapes.extentOf(live.view().elements);
      const [width, height] = entry.size[forward ? 1 : 0];
      board.width = Math.max(width, right, 1);
      board.height = Math.max(height, bottom, 1);
    }
    if (Object.keys(board).length) live.send(Object.assign({ kind: "board" }, board));
    liveRefresh();
    touched();
  }

  /* Live: the elements to show, the server's doc with this person's pending ops on top (and
     what an eraser gesture under way has taken). */
  function liveRefresh() {
    const board = live.view();
    if (!board) return;
    const erased = gesture && gesture.erasedIds;
    doc.elements = erased ? board.elements.filter((e) => !erased.has(e.id)) : board.elements;
    doc.width = board.width;
    doc.height = board.height;
    if (backgroundBefore === null) {  // not while this person picks one (shown as they go)
      doc.background = board.background;
      if (COLOR_RE.test(doc.background)) inputs.background.value = doc.background.toLowerCase();
    }
    growToFit();
  }

  /* Record the state before a change, then apply the new one. */
  function change(next, before) {
    if (live) {
      const entry = diff(before || state(), next);
      if (!entry.added.length && !entry.removed.length && !entry.updated.length && !entry.background && !entry.size) return;
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
    const previous = undoStack.pop();
    redoStack.push(state(Boolean(previous.size)));
    apply(previous);
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
    const next = redoStack.pop();
    undoStack.push(state(Boolean(next.size)));
    apply(next);
    touched();
  }

  function touched() {
    dirty = true;
    keepNew();
    hideError();
    refreshControls();
    schedule();
  }

  function pointCount(elements) {
    let total = 0;
    for (const element of elements) if (element.type === "path") total += element.points.length;
    return total;
  }

  /* Whether the board has room for `elements` within its limits; if not, say which. */
  function roomFor(elements) {
    if (doc.elements.length + elements.length > MAX_ELEMENTS) {
      showError("A board holds at most " + MAX_ELEMENTS.toLocaleString("en") + " elements: erase or clear some first.");
      return false;
    }
    if (pointCount(doc.elements) + pointCount(elements) > MAX_POINTS) {
      showError("A board holds at most " + MAX_POINTS.toLocaleString("en") + " points in all: erase some strokes first.");
      return false;
    }
    return true;
  }

  /* Add a new element (it gets its id): true when there was room for it. */
  function add(element) {
    if (!roomFor([element])) return false;
    element.id = element.id || draw2d.newId(config.elementIdLength);
    change({ elements: doc.elements.concat([element]), background: doc.background });
    return true;
  }

  /* Replace elements by new versions with the same ids (a restyle, a resize, an edit): one change. */
  function replace(versions) {
    const byId = new Map(versions.map((e) => [e.id, e]));
    change({ elements: doc.elements.map((e) => byId.get(e.id) || e), background: doc.background });
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

  // --- what each person chose last time (localStorage, per signed-in person) ------------------------
  const PREFS_KEY = "ugcsite.editor.pen." + (form.dataset.person || "");
  const PREF_INPUTS = { color: inputs.color, width: inputs.width, size: inputs.size, fill: inputs.fill };

  function loadPrefs() {
    let saved = null;
    try {
      saved = JSON.parse(window.localStorage.getItem(PREFS_KEY) || "null");
    } catch (error) { return; }  // storage off (a private window) or a damaged entry: the defaults stay
    if (!saved || typeof saved !== "object") return;
    for (const name of ["color", "fill"]) if (COLOR_RE.test(saved[name])) PREF_INPUTS[name].value = saved[name].toLowerCase();
    for (const name of ["width", "size"]) if (isNumber(saved[name])) PREF_INPUTS[name].value = String(saved[name]);
    inputs.fillOn.checked = saved.fillOn === true;
  }

  function savePrefs() {
    const prefs = { color: color(), width: strokeWidth(), size: textSize(), fill: inputs.fill.value, fillOn: inputs.fillOn.checked };
    try {
      window.localStorage.setItem(PREFS_KEY, JSON.stringify(prefs));
    } catch (error) { /* storage off or full: the choice lasts for this page only */ }
  }

  // --- drawing ----------------------------------------------------------------------------------
  let frame = 0;

  function schedule() {
    if (!frame) frame = window.requestAnimationFrame(() => { frame = 0; draw(); });
  }

  function drawElement(element) {
    draw2d.drawElement(ctx, element);
  }

  /* An element as shown: moved along while the select tool drags it. */
  function shown(element) {
    if (gesture && gesture.mode === "move" && (gesture.dx || gesture.dy) && gesture.ids.has(element.id)) {
      return shapes.moved(element, gesture.dx, gesture.dy, LIMIT, LIMIT);
    }
    if (gesture && gesture.mode === "turn" && gesture.ids.has(element.id)) return turned(element, gesture.degrees);
    if (gesture && gesture.mode === "resize" && gesture.scale && gesture.ids.has(element.id)) {
      return shapes.scaled(element, gesture.origin, gesture.scale[0], gesture.scale[1], LIMIT, config.textSize);
    }
    return element;
  }

  /* The box around the selection as shown: [x0, y0, x1, y1], or null. */
  function selectionBox() {
    let box = null;
    for (const element of doc.elements) {
      if (!selection.has(element.id)) continue;
      const b = shapes.bounds(ctx, shown(element));
      box = box ? [Math.min(box[0], b[0]), Math.min(box[1], b[1]), Math.max(box[2], b[2]), Math.max(box[3], b[3])] : b;
    }
    return box;
  }

  /* The resize handles: the corners of the selection's box, [x, y] each (top left, top right,
     bottom right, bottom left). */
  function handles() {
    const box = tool === "select" && selection.size ? selectionBox() : null;
    return box ? [[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]] : [];
  }

  /* The rotation handle, above the middle of the box of one selected element that turns:
     [x, y], or null. */
  function turnHandle() {
    if (tool !== "select" || selection.size !== 1) return null;
    const element = selected()[0];
    if (!element || !TURNING.has(element.type)) return null;
    const box = selectionBox();
    return [(box[0] + box[2]) / 2, box[1] - TURN_HANDLE_CSS / scale()];
  }

  function turnHandleAt(p) {
    const at = turnHandle();
    return Boolean(at) && Math.hypot(p[0] - at[0], p[1] - at[1]) <= HANDLE_REACH / scale();
  }

  function drawSelection(unit) {
    const boxes = [];
    for (const element of doc.elements) if (selection.has(element.id)) boxes.push(shapes.bounds(ctx, shown(element)));
    if (gesture && gesture.mode === "marquee") {
      const [x0, y0] = gesture.start;
      const [x1, y1] = gesture.end;
      boxes.push([Math.min(x0, x1), Math.min(y0, y1), Math.max(x0, x1), Math.max(y0, y1)]);
    }
    if (!boxes.length) return;
    const pad = 4 * unit;
    ctx.save();
    ctx.strokeStyle = ACCENT;
    ctx.lineWidth = 1.5 * unit;
    ctx.setLineDash([5 * unit, 4 * unit]);
    for (const [x0, y0, x1, y1] of boxes) ctx.strokeRect(x0 - pad, y0 - pad, x1 - x0 + 2 * pad, y1 - y0 + 2 * pad);
    ctx.setLineDash([]);
    ctx.fillStyle = "#ffffff";
    const side = 2 * HANDLE_CSS * unit;
    for (const [x, y] of handles()) {
      ctx.fillRect(x - side / 2, y - side / 2, side, side);
      ctx.strokeRect(x - side / 2, y - side / 2, side, side);
    }
    const turn = turnHandle();
    if (turn) {
      ctx.beginPath();
      ctx.moveTo(turn[0], turn[1] + side / 2);
      ctx.lineTo(turn[0], turn[1] + TURN_HANDLE_CSS * unit - pad);
      ctx.stroke();
      ctx.beginPath();
      ctx.arc(turn[0], turn[1], side / 2 + unit, 0, 2 * Math.PI);
      ctx.fill();
      ctx.stroke();
    }
    ctx.restore();
  }

  function draw() {
    const box = canvas.getBoundingClientRect();
    if (!box.width) return;
    const ratio = canvas.width / box.width;  // backing-store pixels per CSS pixel
    const s = view.scale() * ratio;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = BACKDROP;
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(s, 0, 0, s, view.x * ratio, view.y * ratio);
    ctx.fillStyle = doc.background;
    ctx.fillRect(0, 0, doc.width, doc.height);
    const editing = pendingText && pendingText.edit;  // its field stands in for it meanwhile
    for (const element of doc.elements) if (element.id !== editing) drawElement(shown(element));
    if (live) draw2d.drawStrokes(ctx, live.strokes);
    if (draft) drawElement(draft);
    const unit = 1 / view.scale();  // document units per CSS pixel
    drawSelection(unit);
    if (live) draw2d.drawCursors(ctx, live.cursors, unit);
  }

  /* The backing store follows the element's CSS size (times the pixel ratio, for sharp lines);
     the drawing is redrawn from the model at that scale. */
  function resize() {
    const box = canvas.getBoundingClientRect();
    if (!box.width) return;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(box.width * ratio));
    const height = Math.max(1, Math.round(box.width * (view.frame.height / view.frame.width) * ratio));
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = width;
      canvas.height = height;
    }
    view.clampOffset();  // a smaller canvas still shows some of the drawing
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
    return view.scale();  // CSS pixels per document unit, zoom included
  }

  /* A pointer event's place in document units (the view's zoom and pan undone), clamped to the
     largest canvas (the board grows to it) and rounded to 0.1. */
  function toDoc(event) {
    const [x, y] = view.toDoc(event.clientX, event.clientY);
    return [clampRound(x, LIMIT), clampRound(y, LIMIT)];
  }

  function shapeFrom(start, end) {
    const x = Math.min(start[0], end[0]);
    const y = Math.min(start[1], end[1]);
    let w = round1(Math.max(start[0], end[0]) - x);
    let h = round1(Math.max(start[1], end[1]) - y);
    // The whole shape must lie inside the largest canvas (x + w <= LIMIT), rounding included.
    while (w > 0 && x + w > LIMIT) w = round1(w - 0.1);
    while (h > 0 && y + h > LIMIT) h = round1(h - 0.1);
    if (gesture.tool === "sticky") {
      return { type: "sticky", color: color(), fill: config.stickyFill, size: textSize(), x, y, w, h, text: "" };
    }
    return { type: gesture.tool, color: color(), width: strokeWidth(), x, y, w, h, fill: fill() };
  }

  /* A sticky note of STICKY_SIZE placed with a click at `point` (moved in where the canvas ends). */
  function stickyAt(point) {
    const x = Math.min(point[0], LIMIT - STICKY_SIZE[0]);
    const y = Math.min(point[1], LIMIT - STICKY_SIZE[1]);
    return { type: "sticky", color: color(), fill: config.stickyFill, size: textSize(), x, y, w: STICKY_SIZE[0], h: STICKY_SIZE[1], text: "" };
  }

  /* Which resize handle (0..3) is within reach of the document point p, or -1. On a small
     selection (a text under a finger) the reach shrinks to a quarter of the box, the handle's
     own size at least, so that a press inside it still takes the element. */
  function handleAt(p) {
    const corners = handles();
    if (!corners.length) return -1;
    const side = Math.min(corners[2][0] - corners[0][0], corners[2][1] - corners[0][1]);
    const reach = Math.min(HANDLE_REACH / scale(), Math.max(HANDLE_CSS / scale(), side / 4));
    return corners.findIndex(([x, y]) => Math.abs(p[0] - x) <= reach && Math.abs(p[1] - y) <= reach);
  }

  function addPoint(point) {
    const points = draft.points;
    const last = points[points.length - 1];
    if (Math.hypot(point[0] - last[0], point[1] - last[1]) < MIN_STEP) return;
    points.push(point);
  }

  function markPanning() {
    canvas.dataset.panning = String(view.busy() || view.spaceHeld);
  }

  canvas.addEventListener("pointerdown", (event) => {
    if (saving) return;
    if (view.pointerDown(event, tool === "hand", cancelGesture)) {
      event.preventDefault();
      markPanning();
      return;
    }
    if (gesture) return;
    if (event.pointerType === "mouse" && event.button !== 0) return;
    event.preventDefault();  // no text selection, no focus change, no emulated mouse events
    commitText();
    hideError();
    const point = toDoc(event);
    const raw = view.toDoc(event.clientX, event.clientY);
    if (tool === "text" || tool === "select") {
      // A text or a sticky note pressed twice (or once with the text tool) is edited in place.
      const target = handleAt(raw) < 0 && !turnHandleAt(raw) ? topmostAt(raw) : null;
      const editable = target && (target.type === "text" || target.type === "sticky") ? target : null;
      const again = editable && lastPress && lastPress.id === editable.id && event.timeStamp - lastPress.at < DOUBLE_PRESS_MS;
      lastPress = editable ? { id: editable.id, at: event.timeStamp } : null;
      if (editable && (tool === "text" || again)) {
        lastPress = null;
        editText(editable);
        return;
      }
    }
    if (tool === "text") {
      openText(point);
      return;
    }
    canvas.setPointerCapture(event.pointerId);
    gesture = { pointerId: event.pointerId, tool, start: point, before: state(), erased: false };
    if (tool === "pen") {
      draft = { type: "path", id: draw2d.newId(config.elementIdLength), color: color(), width: strokeWidth(), points: [point] };
      if (live) live.drawing(draft);  // the others see it as it is drawn
    } else if (tool === "line" || tool === "arrow") {
      draft = { type: tool, color: color(), width: strokeWidth(), points: [point, point] };
    } else if (tool === "eraser") {
      eraseAt(point);
    } else if (tool === "select") {
      const corner = handleAt(raw);
      if (turnHandleAt(raw)) startTurn(raw);
      else if (corner >= 0) startResize(corner);
      else pick(point, event.shiftKey, raw);
    }
    schedule();
  });

  canvas.addEventListener("pointermove", (event) => {
    if (view.pointerMove(event)) return;
    if (live) live.cursor(...toDoc(event));
    if (!gesture && tool === "select" && event.pointerType === "mouse") {
      const at = view.toDoc(event.clientX, event.clientY);
      const corner = handleAt(at);
      // The cursor says what a press there does: resize, or turn.
      canvas.dataset.handle = turnHandleAt(at) ? "turn" : corner < 0 ? "" : corner % 2 ? "nesw" : "nwse";
    }
    if (!gesture || event.pointerId !== gesture.pointerId) return;
    const coalesced = typeof event.getCoalescedEvents === "function" ? event.getCoalescedEvents() : [];
    const kind = gesture.tool;
    for (const each of kind === "pen" || kind === "eraser" ? (coalesced.length ? coalesced : [event]) : [event]) {
      gestureTo(each);
    }
    if (live && kind === "pen" && draft) live.drawing(draft);
    schedule();
    if (FOLLOWING.has(kind)) {
      const at = { clientX: event.clientX, clientY: event.clientY, shiftKey: event.shiftKey };
      view.follow(at.clientX, at.clientY, () => {  // the view panned: the pen is over another point now
        if (!gesture) return;
        gestureTo(at);
        if (live && gesture.tool === "pen" && draft) live.drawing(draft);
      });
    }
  });

  // The gestures the view follows to an edge (editor-view.js: follow): those that draw (a move
  // lands where it is dropped, exactly; Fit shows it if it went past the edge).
  const FOLLOWING = new Set(["pen", "line", "arrow", "rect", "ellipse", "sticky", "eraser"]);

  /* The gesture under way, with its pointer at `each` (an event, or {clientX, clientY, shiftKey}). */
  function gestureTo(each) {
    const kind = gesture.tool;
    const point = toDoc(each);
    if (kind === "pen") addPoint(point);
    else if (kind === "rect" || kind === "ellipse" || kind === "sticky") draft = shapeFrom(gesture.start, point);
    else if (kind === "line" || kind === "arrow") draft = Object.assign({}, draft, { points: [gesture.start, point] });
    else if (kind === "eraser") eraseAt(point);
    else if (gesture.mode === "move") dragTo(view.toDoc(each.clientX, each.clientY));
    else if (gesture.mode === "resize") resizeTo(view.toDoc(each.clientX, each.clientY), each.shiftKey);
    else if (gesture.mode === "turn") turnTo(view.toDoc(each.clientX, each.clientY), each.shiftKey);
    else if (gesture.mode === "marquee") gesture.end = point;
  }

  /* Drop what the gesture under way did (a second finger came down to pinch, or the pointer was
     cancelled): nothing of it reaches the doc. */
  function cancelGesture() {
    view.stopFollow();
    if (!gesture) return;
    const done = gesture;
    gesture = null;
    draft = null;
    if (live) live.strokeEnd();
    if (done.tool === "eraser" && done.erased) {
      if (live) liveRefresh();
      else apply(done.before);
    }
    schedule();
  }

  function endGesture(event, cancelled) {
    if (!gesture || event.pointerId !== gesture.pointerId) return;
    view.stopFollow();
    if (cancelled) {
      cancelGesture();
      return;
    }
    const done = gesture;
    const element = draft;
    gesture = null;
    draft = null;
    if (canvas.hasPointerCapture(event.pointerId)) canvas.releasePointerCapture(event.pointerId);
    if (done.tool === "eraser") {
      if (done.erased) {
        // Live, the change is against what the board holds now (others may have drawn meanwhile).
        change(state(), live ? { elements: live.view().elements, background: doc.background } : done.before);
      }
    } else if (done.tool === "select") {
      finishSelect(done);
    } else if (done.tool === "sticky") {
      const note = element && element.w >= 8 && element.h >= 8 ? element : stickyAt(done.start);
      if (add(note)) editText(note);
    } else if (element) {
      if (element.type === "path") {
        if (element.points.length < 2) element.points.push(element.points[0].slice());  // a dot
        add(element);
        if (live) live.strokeEnd();
      } else if (element.type === "line" || element.type === "arrow") {
        const [[x0, y0], [x1, y1]] = element.points;
        if (Math.hypot(x1 - x0, y1 - y0) >= 2) add(element);
      } else if (element.w >= 1 && element.h >= 1) {
        add(element);
      }
    }
    // Where the pen lifted is on the canvas (past its edge, the board grew to hold it).
    if (element && element.points) view.reveal(...element.points[element.points.length - 1]);
    schedule();
  }

  function pointerEnds(event, cancelled) {
    if (view.pointerUp(event)) {
      markPanning();
      return;
    }
    endGesture(event, cancelled);
  }

  canvas.addEventListener("pointerup", (event) => pointerEnds(event, false));
  canvas.addEventListener("pointercancel", (event) => pointerEnds(event, true));
  canvas.addEventListener("lostpointercapture", (event) => pointerEnds(event, false));

  // --- the select tool: pick, move, delete --------------------------------------------------------
  function selected() {
    return doc.elements.filter((element) => selection.has(element.id));
  }

  function setSelection(ids) {
    selection = new Set(ids);
    showStyleOf(selected()[0]);
    refreshControls();
    schedule();
  }

  /* Forget selected ids that are gone (undone, erased, removed by someone else). */
  function pruneSelection() {
    if (!selection.size) return;
    const present = new Set(doc.elements.map((e) => e.id));
    for (const id of Array.from(selection)) if (!present.has(id)) selection.delete(id);
  }

  function topmostAt(point) {
    const radius = SELECT_CSS_RADIUS / scale();
    for (let i = doc.elements.length - 1; i >= 0; i--) {
      if (shapes.hits(ctx, doc.elements[i], point, radius)) return doc.elements[i];
    }
    return null;
  }

  function insideSelection(point) {
    const pad = SELECT_CSS_RADIUS / scale();
    return selected().some((element) => {
      const [x0, y0, x1, y1] = shapes.bounds(ctx, element);
      return point[0] >= x0 - pad && point[0] <= x1 + pad && point[1] >= y0 - pad && point[1] <= y1 + pad;
    });
  }

  /* A press with the select tool: on an element (or inside the selection's box) it selects and
     starts a move; elsewhere it starts a selection box. Shift adds or takes away. */
  function pick(point, shift, raw) {
    const target = !shift && insideSelection(point) ? null : topmostAt(point);
    if (target && shift && selection.has(target.id)) {
      selection.delete(target.id);
      gesture.mode = "none";
    } else if (target || insideSelection(point)) {
      if (target && !selection.has(target.id)) {
        if (!shift) selection.clear();
        selection.add(target.id);
        showStyleOf(target);
      }
      const moving = selected();
      gesture.mode = "move";
      gesture.ids = new Set(moving.map((e) => e.id));
      gesture.range = shapes.moveRange(moving, LIMIT, LIMIT);
      gesture.grab = raw;
      gesture.dx = 0;
      gesture.dy = 0;
    } else {
      if (!shift) selection.clear();
      gesture.mode = "marquee";
      gesture.end = point;
    }
    refreshControls();
  }

  function dragTo(raw) {
    const range = gesture.range;
    gesture.dx = shapes.within(round1(raw[0] - gesture.grab[0]), range.dx[0], range.dx[1]);
    gesture.dy = shapes.within(round1(raw[1] - gesture.grab[1]), range.dy[0], range.dy[1]);
  }

  /* A press on resize handle `corner`: the opposite corner stays where it is. */
  function startResize(corner) {
    const corners = handles();
    gesture.mode = "resize";
    gesture.ids = new Set(selection);
    gesture.origin = corners[(corner + 2) % 4];
    gesture.corner = corners[corner];
    gesture.scale = null;
  }

  /* The handle dragged to the document point p: the scale of the selection (Shift: the same both ways). */
  function resizeTo(p, keepRatio) {
    const [ox, oy] = gesture.origin;
    const ratio = (to, from, o) => (Math.abs(from - o) < 1e-6 ? 1 : (to - o) / (from - o));
    let sx = ratio(p[0], gesture.corner[0], ox);
    let sy = ratio(p[1], gesture.corner[1], oy);
    if (keepRatio) {
      const both = Math.max(Math.abs(sx), Math.abs(sy));
      sx = Math.sign(sx || 1) * both;
      sy = Math.sign(sy || 1) * both;
    }
    const least = 0.02;  // never flattened to nothing
    sx = Math.sign(sx || 1) * Math.max(Math.abs(sx), least);
    sy = Math.sign(sy || 1) * Math.max(Math.abs(sy), least);
    gesture.scale = [sx, sy];
  }

  /* The element with a rotation of `degrees` (0 leaves the field out, as the API allows); a box
     whose turned corners would pass the board's left or top edge moves in (the right and bottom
     grow the board), so an export at the board's size holds it whole. */
  function turned(element, degrees) {
    const copy = Object.assign({}, element);
    if (degrees) copy.rotation = degrees;
    else delete copy.rotation;
    return keptOnBoard(copy);
  }

  function keptOnBoard(element) {
    if (!element.rotation || element.w === undefined) return element;
    const [left, top] = draw2d.turnedBox(element);
    if (left >= 0 && top >= 0) return element;
    const copy = Object.assign({}, element);
    if (left < 0) copy.x = Math.min(round1(copy.x - left), LIMIT - copy.w);
    if (top < 0) copy.y = Math.min(round1(copy.y - top), LIMIT - copy.h);
    return copy;
  }

  /* A press on the rotation handle: the selected element turns about its pivot (live.js). */
  function startTurn(p) {
    const element = selected()[0];
    const pivot = draw2d.pivot(element);
    gesture.mode = "turn";
    gesture.ids = new Set([element.id]);
    gesture.pivot = pivot;
    gesture.from = Math.atan2(p[1] - pivot[1], p[0] - pivot[0]);
    gesture.base = element.rotation || 0;
    gesture.degrees = gesture.base;
  }

  /* The rotation handle dragged to p: degrees from 0 up to 360, to 0.1 (Shift: to TURN_SNAP). */
  function turnTo(p, snap) {
    const angle = Math.atan2(p[1] - gesture.pivot[1], p[0] - gesture.pivot[0]);
    let degrees = gesture.base + (angle - gesture.from) * 180 / Math.PI;
    degrees = snap ? Math.round(degrees / TURN_SNAP) * TURN_SNAP : round1(degrees);
    const span = config.rotation[1] - config.rotation[0];
    gesture.degrees = round1(((degrees % span) + span) % span) % span;
  }

  function finishSelect(done) {
    if (done.mode === "move" && (done.dx || done.dy)) {
      moveSelection(done.ids, done.dx, done.dy);
    } else if (done.mode === "turn" && done.degrees !== done.base) {
      const element = doc.elements.find((e) => done.ids.has(e.id));
      if (element) replace([turned(element, done.degrees)]);
      inputs.rotation.value = String(done.degrees);
    } else if (done.mode === "resize" && done.scale && (done.scale[0] !== 1 || done.scale[1] !== 1)) {
      replace(doc.elements.filter((e) => done.ids.has(e.id))
        .map((e) => keptOnBoard(shapes.scaled(e, done.origin, done.scale[0], done.scale[1], LIMIT, config.textSize))));
    } else if (done.mode === "marquee") {
      const [ax, ay] = done.start;
      const [bx, by] = done.end;
      const x0 = Math.min(ax, bx), y0 = Math.min(ay, by), x1 = Math.max(ax, bx), y1 = Math.max(ay, by);
      if (x1 - x0 > 0 || y1 - y0 > 0) {
        for (const element of doc.elements) {
          const box = shapes.bounds(ctx, element);
          if (box[0] >= x0 && box[1] >= y0 && box[2] <= x1 && box[3] <= y1) selection.add(element.id);
        }
        showStyleOf(selected()[0]);
      }
    }
    refreshControls();
  }

  function moveSelection(ids, dx, dy) {
    const elements = doc.elements.map((e) => (ids.has(e.id) ? shapes.moved(e, dx, dy, LIMIT, LIMIT) : e));
    change({ elements, background: doc.background });
  }

  /* Arrow keys: move the selection by one unit (ten with Shift), kept on the canvas. */
  function nudge(dx, dy) {
    const moving = selected();
    if (!moving.length) return;
    const range = shapes.moveRange(moving, LIMIT, LIMIT);
    dx = shapes.within(dx, range.dx[0], range.dx[1]);
    dy = shapes.within(dy, range.dy[0], range.dy[1]);
    if (dx || dy) moveSelection(new Set(moving.map((e) => e.id)), dx, dy);
  }

  function deleteSelection() {
    commitText();
    if (!selection.size) return;
    const ids = selection;
    selection = new Set();
    change({ elements: doc.elements.filter((e) => !ids.has(e.id)), background: doc.background });
  }

  // --- copy, paste, duplicate (Ctrl+C, Ctrl+V, Ctrl+D) ---------------------------------------------
  // What was copied lives in this tab's sessionStorage, so it pastes into another board too.
  const CLIPBOARD_KEY = "ugcsite-editor-clipboard";
  const PASTE_OFFSET = 10;  // canvas units right and down, so that a copy does not hide its original
  let clipboard = [];

  function copySelection() {
    commitText();
    const chosen = selected();
    if (!chosen.length) return false;
    clipboard = chosen;
    try {
      sessionStorage.setItem(CLIPBOARD_KEY, JSON.stringify(chosen));
    } catch (error) {  // storage off or full: this page keeps its copy, and an older one must not win
      try { sessionStorage.removeItem(CLIPBOARD_KEY); } catch (ignored) { /* no storage at all */ }
    }
    return true;
  }

  function copied() {
    try {
      const stored = JSON.parse(sessionStorage.getItem(CLIPBOARD_KEY) || "null");
      // written by copySelection; the server checks every element again when the board is saved
      if (Array.isArray(stored)) return stored.filter((e) => e && typeof e === "object" && config.elementTypes.indexOf(e.type) >= 0);
    } catch (error) { /* unreadable: this page's copy */ }
    return clipboard;
  }

  /* Add copies of `elements` with new ids, moved by PASTE_OFFSET (the other way where the canvas
     ends; into it when they come from a larger board), and select them; the board's limits hold
     as for any drawing, and what cannot fit on this canvas is refused. */
  function pasteElements(elements) {
    commitText();
    if (!elements.length || !roomFor(elements)) return;
    const range = shapes.moveRange(elements, LIMIT, LIMIT);
    if (range.dx[0] > range.dx[1] || range.dy[0] > range.dy[1]) {
      showError("What you copied is larger than the largest board (" + LIMIT + " x " + LIMIT + "): it was not pasted.");
      return;
    }
    // Right and down; where the canvas ends, left or up instead, so a copy never hides its original.
    const offset = (span) => (PASTE_OFFSET <= span[1] ? PASTE_OFFSET : shapes.within(-PASTE_OFFSET, span[0], span[1]));
    const dx = offset(range.dx);
    const dy = offset(range.dy);
    const copies = elements.map((element) => {
      const copy = shapes.moved(element, dx, dy, LIMIT, LIMIT);
      copy.id = draw2d.newId(config.elementIdLength);
      return copy;
    });
    change({ elements: doc.elements.concat(copies), background: doc.background });
    selectTool("select");
    setSelection(copies.map((copy) => copy.id));
  }

  // --- the eraser: removes whole elements it touches ----------------------------------------------
  function eraseAt(point) {
    const radius = ERASER_CSS_RADIUS / scale();
    const kept = doc.elements.filter((element) => !shapes.hits(ctx, element, point, radius));
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

  // --- text: a field over the canvas where the text stands (a new text, or one being edited) -----
  function placeTextEntry() {
    const s = scale();
    const where = pendingText;
    const sticky = where.type === "sticky";
    // A text's y is its baseline; a sticky note's field covers the note.
    const [left, top] = view.toCanvas(where.x, sticky ? where.y : where.y - where.size);
    textEntry.style.left = left + "px";
    textEntry.style.top = top + "px";
    textEntry.style.fontSize = Math.max(where.size * s, 10) + "px";
    textEntry.style.color = where.color;
    textEntry.style.width = sticky ? where.w * s + "px" : "";
    textEntry.style.height = sticky ? where.h * s + "px" : "";
    textEntry.style.backgroundColor = sticky ? where.fill : "";
    // A note's lines start where live.js draws them (its padding, scaled with the view).
    textEntry.style.padding = sticky ? (draw2d.stickyLines(where)[0][1] - where.x) * s + "px" : "";
    textEntry.dataset.kind = sticky ? "sticky" : "text";
  }

  function showTextEntry(where, value) {
    pendingText = where;
    textEntry.value = value;
    textEntry.hidden = false;
    placeTextEntry();
    textEntry.focus();
    textEntry.select();
  }

  function openText(point) {
    showTextEntry({ type: "text", x: point[0], y: point[1], color: color(), size: textSize() }, "");
  }

  /* Edit a text or a sticky note in place: what is typed replaces its text (one change). */
  function editText(element) {
    showTextEntry(Object.assign({}, element, { edit: element.id }), element.text);
  }

  function closeText() {
    pendingText = null;
    textEntry.hidden = true;
    textEntry.value = "";
  }

  function commitText() {
    if (!pendingText) return;
    const where = pendingText;
    const typed = textEntry.value.slice(0, MAX_TEXT);
    // A text is one line; a sticky note keeps its lines.
    const text = where.type === "sticky" ? typed : typed.replace(/\r?\n/g, " ");
    closeText();
    if (!where.edit) {
      if (text.trim()) add({ type: "text", color: where.color, size: where.size, x: where.x, y: where.y, text });
      return;
    }
    const element = doc.elements.find((e) => e.id === where.edit);
    if (!element || element.text === text) return;
    if (element.type === "text" && !text.trim()) {
      change({ elements: doc.elements.filter((e) => e.id !== element.id), background: doc.background });
    } else if (element.type === "sticky") {
      // A note grows downwards to hold its wrapped lines (never past the largest canvas).
      const needed = Math.ceil(draw2d.stickyHeight(Object.assign({}, element, { text })));
      const h = Math.max(element.h, Math.min(needed, LIMIT - element.y));
      replace([Object.assign({}, element, { text, h })]);
    } else {
      replace([Object.assign({}, element, { text })]);
    }
  }

  textEntry.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !(event.shiftKey && pendingText && pendingText.type === "sticky")) {
      event.preventDefault();  // places the text; never submits the form (Shift+Enter: a new line in a note)
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
  const zoomLabel = form.querySelector('[data-action="zoom-reset"]');

  function selectTool(name) {
    commitText();
    if (name !== "select" && selection.size) setSelection([]);
    tool = name;
    canvas.dataset.tool = name;
    for (const button of toolButtons) button.setAttribute("aria-pressed", String(button.dataset.tool === name));
  }

  function markSwatch() {
    for (const swatch of swatches) {
      swatch.setAttribute("aria-pressed", String(swatch.dataset.color.toLowerCase() === inputs.color.value.toLowerCase()));
    }
  }

  function refreshZoom() {
    const percent = Math.round(view.zoom * 100) + "%";
    zoomLabel.textContent = percent;
    zoomLabel.setAttribute("aria-label", "Reset view, zoom " + percent);  // axe ignores words in parentheses
  }

  // --- the style controls: the pen for what is drawn next, and a restyle of the selection ----------
  const STROKED = new Set(["path", "line", "arrow", "rect", "ellipse"]);
  const SIZED = new Set(["text", "sticky"]);

  /* The selected elements with one style property set (`name`: color, width, size, fill or
     rotation), where it applies: one change, one undo step (live: an update op per element). */
  function restyle(name) {
    if (!selection.size) return;
    const versions = [];
    for (const element of selected()) {
      const copy = Object.assign({}, element);
      if (name === "color" && element.type === "image") continue;  // a picture has no colour
      if (name === "color") copy.color = color();
      else if (name === "width" && STROKED.has(element.type)) copy.width = strokeWidth();
      else if (name === "size" && SIZED.has(element.type)) copy.size = textSize();
      else if (name === "fill" && (element.type === "rect" || element.type === "ellipse")) copy.fill = fill();
      else if (name === "fill" && element.type === "sticky" && COLOR_RE.test(inputs.fill.value)) copy.fill = inputs.fill.value;
      else if (name !== "rotation" || !TURNING.has(element.type)) continue;
      const next = name === "rotation" ? turned(element, rotation()) : copy;
      if (JSON.stringify(next) !== JSON.stringify(element)) versions.push(next);
    }
    if (versions.length) replace(versions);
  }

  /* The rotation control's degrees, 0 up to 360 (config.rotation), whole degrees. */
  function rotation() {
    const value = Math.round(Number(inputs.rotation.value));
    if (!isFinite(value)) return 0;
    const span = config.rotation[1] - config.rotation[0];
    return ((value % span) + span) % span;
  }

  /* The controls show the style of what was selected (the first element of it). */
  function showStyleOf(element) {
    if (!element) return;
    if (COLOR_RE.test(element.color)) inputs.color.value = element.color.toLowerCase();
    if (isNumber(element.width)) {
      inputs.width.value = String(element.width);
      inputs.widthValue.textContent = String(strokeWidth());
    }
    if (isNumber(element.size)) inputs.size.value = String(element.size);
    if (element.fill !== undefined) {
      inputs.fillOn.checked = Boolean(element.fill);
      if (element.fill && COLOR_RE.test(element.fill)) inputs.fill.value = element.fill.toLowerCase();
    }
    inputs.rotation.value = String(element.rotation || 0);
    markSwatch();
  }

  for (const button of toolButtons) button.addEventListener("click", () => selectTool(button.dataset.tool));
  for (const swatch of swatches) {
    swatch.style.backgroundColor = swatch.dataset.color;  // CSSOM, which the CSP allows (no style attributes)
    swatch.addEventListener("click", () => {
      inputs.color.value = swatch.dataset.color;
      markSwatch();
      savePrefs();
      restyle("color");
    });
  }
  inputs.color.addEventListener("input", markSwatch);
  inputs.width.addEventListener("input", () => { inputs.widthValue.textContent = String(strokeWidth()); });
  for (const input of [inputs.color, inputs.width, inputs.size, inputs.fillOn, inputs.fill]) input.addEventListener("change", savePrefs);
  inputs.color.addEventListener("change", () => restyle("color"));
  inputs.width.addEventListener("change", () => restyle("width"));
  inputs.size.addEventListener("change", () => restyle("size"));
  inputs.fillOn.addEventListener("change", () => restyle("fill"));
  inputs.fill.addEventListener("change", () => restyle("fill"));
  inputs.rotation.addEventListener("change", () => restyle("rotation"));
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

  /* The board's size from the width and height fields, within 1..LIMIT and never below what is
     drawn (the server's rule; the person is told when that is what held it): one change. */
  function resizeBoard() {
    const width = Number(inputs.boardWidth.value);
    const height = Number(inputs.boardHeight.value);
    const given = inputs.boardWidth.value !== "" && inputs.boardHeight.value !== "" && isFinite(width) && isFinite(height);
    const asked = given ? [Math.min(Math.max(round1(width), 1), LIMIT), Math.min(Math.max(round1(height), 1), LIMIT)] : null;
    if (!asked || (asked[0] === doc.width && asked[1] === doc.height)) {
      refreshSize(true);
      return;
    }
    commitText();
    const [right, bottom] = shapes.extentOf(live ? live.view().elements : doc.elements);
    const size = [Math.max(asked[0], right), Math.max(asked[1], bottom)];
    if (size[0] !== doc.width || size[1] !== doc.height) {
      change({ elements: doc.elements, background: doc.background, size }, state(true));
    }
    refreshSize(true);
    if (size[0] !== asked[0] || size[1] !== asked[1]) {
      showError("What is drawn reaches " + right + " × " + bottom + ": the board cannot be smaller than that.");
    }
  }
  inputs.boardWidth.addEventListener("change", resizeBoard);
  inputs.boardHeight.addEventListener("change", resizeBoard);

  /* The size fields show the board's size (not while the person types in one, unless `now`). */
  function refreshSize(now) {
    for (const [input, value] of [[inputs.boardWidth, doc.width], [inputs.boardHeight, doc.height]]) {
      if (now || document.activeElement !== input) input.value = String(value);
    }
  }

  function onAction(name, handler) {
    form.querySelector('[data-action="' + name + '"]').addEventListener("click", handler);
  }

  onAction("undo", undo);
  onAction("redo", redo);
  onAction("clear", () => {
    commitText();
    if (doc.elements.length) change({ elements: [], background: doc.background });
  });
  onAction("delete", deleteSelection);
  onAction("zoom-in", () => view.zoomIn());
  onAction("zoom-out", () => view.zoomOut());
  onAction("zoom-reset", () => view.reset());
  onAction("zoom-fit", fitToContent);
  onAction("export-svg", () => {
    commitText();
    const svg = exporter.toSvg(shownDoc(), boardTitle());
    exporter.download(new Blob([svg], { type: "image/svg+xml" }), exporter.fileName(boardTitle(), "svg"));
  });
  onAction("export-png", () => {
    commitText();
    exporter.toPng(shownDoc(), draw2d.drawElement).then(
      (blob) => exporter.download(blob, exporter.fileName(boardTitle(), "png")),
      (error) => showError(error.message));
  });

  /* Show all that is drawn, as large as it fits (the whole board when nothing is). */
  function fitToContent() {
    let area = null;
    for (const element of doc.elements) {
      const b = shapes.bounds(ctx, element);
      area = area ? [Math.min(area[0], b[0]), Math.min(area[1], b[1]), Math.max(area[2], b[2]), Math.max(area[3], b[3])] : b;
    }
    view.fit(area || [0, 0, doc.width, doc.height]);
  }

  /* What the editor shows now (the live board with this person's changes), to export. */
  function shownDoc() {
    return { width: doc.width, height: doc.height, background: doc.background, elements: doc.elements };
  }

  function boardTitle() {
    return inputs.title.value.trim();
  }

  function refreshControls() {
    pruneSelection();
    form.querySelector('[data-action="undo"]').disabled = !(live ? liveUndo : undoStack).length;
    form.querySelector('[data-action="redo"]').disabled = !(live ? liveRedo : redoStack).length;
    form.querySelector('[data-action="delete"]').disabled = !selection.size;
    refreshSize(false);
    const count = doc.elements.length;
    const unsent = live ? live.pending.length > 0 : dirty;
    statusLine.textContent = count + (count === 1 ? " element" : " elements")
      + (selection.size ? " · " + selection.size + " selected" : "") + (unsent ? " · not saved yet" : "");
    canvas.dataset.selected = Array.from(selection).join(" ");
  }

  // --- keyboard shortcuts (static/js/editor-keys.js; the page's dialog lists them) ----------------
  onAction("help", window.ugcsiteKeys.install({
    undo,
    redo,
    selectTool,
    selectAll() {
      selectTool("select");
      setSelection(doc.elements.map((e) => e.id));
    },
    hasSelection: () => selection.size > 0,
    deleteSelection,
    deselect: () => setSelection([]),
    copy: copySelection,
    paste: pasteKey,
    duplicate: () => pasteElements(selected()),
    nudge,
    fit: fitToContent,
    editSelected() {
      const chosen = selected();
      if (chosen.length !== 1 || (chosen[0].type !== "text" && chosen[0].type !== "sticky")) return false;
      editText(chosen[0]);
      return true;
    },
    view,
    panning: markPanning,
    help: document.getElementById("shortcuts-help"),
  }));

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
    const docToo = !live || live.state !== "live" || live.pending.length > 0;
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
      if (NEW_KEY) window.ugcsiteKeep.remove(NEW_KEY);
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
    if ((live ? live.pending.length > 0 : dirty) && !saving) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  if (form.dataset.boardId) {
    live = new draw2d.LiveBoard(form.dataset.boardId, {
      initial: { width: doc.width, height: doc.height, background: doc.background, elements: doc.elements },
      title: inputs.title.value.trim(),
      keep: "live." + form.dataset.person + "." + form.dataset.boardId,  // unsent ops survive a closed tab
      onChange() {
        liveRefresh();
        refreshControls();
        schedule();
      },
      onTitle(title, before) {  // the board's title changed (its author, here or elsewhere)
        if (document.activeElement !== inputs.title) inputs.title.value = title;
        draw2d.retitlePage(title, before);
      },
      onStatus(state, text) {
        if (!liveStatus) return;
        liveStatus.textContent = text;
        liveStatus.dataset.state = state;
      },
      onPeers(peers) {
        if (livePeers) livePeers.textContent = draw2d.peersText(peers);
      },
      onError(detail) { showError(detail); },
    });
    draw2d.boards.push(live);
    // The author's title goes live when the field is left (or Enter is pressed), once it changed.
    if (isAuthor) {
      inputs.title.addEventListener("change", () => {
        const title = inputs.title.value.trim();
        const sent = live.pending.filter((item) => item.op.kind === "board" && item.op.title !== undefined).pop();
        if (title === (sent ? sent.op.title : live.title)) return;
        if (!title || title.length > MAX_TITLE) {
          showError(title ? "A title has at most " + MAX_TITLE + " characters." : "Give the board a title.");
          return;
        }
        hideError();
        live.send({ kind: "board", title });
      });
    }
  }

  // A new board not yet published is kept in this browser (static/js/keep.js) at every change,
  // and brought back when the person opens /new again (after the tab closed or the browser crashed).
  function keepNew() {
    if (!NEW_KEY || saving) return;
    window.ugcsiteKeep.set(NEW_KEY, { doc: state(true), title: inputs.title.value, kind: inputs.kind.value, tags: inputs.tags.value });
  }
  if (NEW_KEY) {
    const kept = window.ugcsiteKeep.get(NEW_KEY);
    if (kept && kept.doc && Array.isArray(kept.doc.elements) && typeof kept.doc.background === "string") {
      const size = kept.doc.size;
      const sized = Array.isArray(size) && size.length === 2 && size.every((n) => isNumber(n) && n >= 1 && n <= LIMIT);
      apply({ elements: kept.doc.elements, background: kept.doc.background, size: sized ? size : undefined });
      inputs.title.value = typeof kept.title === "string" ? kept.title : "";
      inputs.tags.value = typeof kept.tags === "string" ? kept.tags : "";
      if (config.kinds.indexOf(kept.kind) >= 0) inputs.kind.value = kept.kind;
      dirty = kept.doc.elements.length > 0;
    }
    for (const input of [inputs.title, inputs.kind, inputs.tags]) input.addEventListener("input", keepNew);
    const discard = form.querySelector("[data-discard]");  // Cancel: the person gives this board up
    if (discard) discard.addEventListener("click", () => window.ugcsiteKeep.remove(NEW_KEY));
  }

  loadPrefs();
  inputs.widthValue.textContent = String(strokeWidth());
  selectTool("pen");
  markSwatch();
  refreshZoom();
  refreshControls();
  resize();
  // For tests and the console: what the editor shows and its view (read them; change nothing).
  // --- pictures: a button, paste and drop upload one (POST /api/v1/images, with its progress),
  // then it is placed as an image element (docs/api.md, "Pictures"), selected, to move and resize.
  const IMAGE_TYPES = config.imageTypes;
  const pictureFile = document.getElementById("image-file");
  const pictureStatus = document.getElementById("image-status");
  const pictureProgress = document.getElementById("image-progress");
  const pictureText = document.getElementById("image-status-text");
  let uploads = 0;

  function pictureFileOf(items) {
    for (const item of Array.from(items || [])) {
      const file = item.kind === "file" ? item.getAsFile() : item;
      if (file && file.type && file.type.indexOf("image/") === 0) return file;
    }
    return null;
  }

  /* The visible middle of the board, in document units: where a pasted or chosen picture goes. */
  function viewMiddle() {
    const box = canvas.getBoundingClientRect();
    const [x, y] = view.toDoc(box.left + box.width / 2, box.top + box.height / 2);
    return [clampRound(x, doc.width), clampRound(y, doc.height)];
  }

  function uploadPicture(file, at) {
    commitText();
    if (IMAGE_TYPES.indexOf(file.type) < 0) {
      showError("A picture must be a PNG, JPEG or WebP file; this one is " + (file.type || "of a type the browser does not know") + ".");
      return;
    }
    if (file.size > config.imageUploadMax) {
      showError("The picture is larger than " + Math.round(config.imageUploadMax / 1048576) + " MiB; choose a smaller one.");
      return;
    }
    if (!roomFor([{ type: "image" }])) return;
    const request = new XMLHttpRequest();
    request.open("POST", "/api/v1/images");
    request.setRequestHeader("Content-Type", file.type);
    request.setRequestHeader("X-CSRFToken", window.ugcsite.csrfToken());
    uploads += 1;
    pictureStatus.hidden = false;
    pictureProgress.value = 0;
    pictureText.textContent = "Uploading the picture…";
    const done = () => {
      uploads -= 1;
      if (!uploads) pictureStatus.hidden = true;
    };
    request.upload.addEventListener("progress", (event) => {
      if (!event.lengthComputable) return;
      const percent = Math.round((100 * event.loaded) / event.total);
      pictureProgress.value = percent;
      pictureText.textContent = "Uploading the picture… " + percent + "%";
    });
    request.addEventListener("load", () => {
      done();
      let answer = null;
      try { answer = JSON.parse(request.responseText); } catch (error) { /* not JSON: said below */ }
      if (request.status === 201 && answer && typeof answer.id === "string") placePicture(answer, at || viewMiddle());
      else showError((answer && answer.detail) || "The picture could not be uploaded (status " + request.status + "); try again.");
    });
    request.addEventListener("error", () => {
      done();
      showError("The picture could not be sent: the connection failed. Try again.");
    });
    request.send(file);
  }

  /* An uploaded picture as an element centred on `at`: its own size, shrunk to half the board's
     (and to the largest canvas) keeping its proportions. */
  function placePicture(answer, at) {
    const fit = Math.min(1, (doc.width * 0.5) / answer.width, (doc.height * 0.5) / answer.height);
    const w = Math.max(1, round1(answer.width * fit));
    const h = Math.max(1, round1(answer.height * fit));
    const x = shapes.within(round1(at[0] - w / 2), 0, LIMIT - w);
    const y = shapes.within(round1(at[1] - h / 2), 0, LIMIT - h);
    const element = { type: "image", x, y, w, h, image: answer.id };
    if (!add(element)) return;
    selectTool("select");
    setSelection([element.id]);
  }

  onAction("image", () => pictureFile.click());
  pictureFile.addEventListener("change", () => {
    const file = pictureFile.files && pictureFile.files[0];
    pictureFile.value = "";
    if (file) uploadPicture(file, null);
  });
  // A paste with a picture in it uploads the picture; any other paste (Ctrl+V with no picture)
  // pastes the elements copied on this site (editor-keys.js leaves Ctrl+V to this event).
  let pasteExpected = false;
  document.addEventListener("paste", (event) => {
    const target = event.target;
    if (target && target !== document.body && target.closest && target.closest("input, textarea, select, [contenteditable]")) return;
    const file = pictureFileOf(event.clipboardData && (event.clipboardData.items || event.clipboardData.files));
    pasteExpected = false;
    if (!file) {
      pasteElements(copied());
      return;
    }
    event.preventDefault();
    uploadPicture(file, null);
  });
  function pasteKey() {
    pasteExpected = true;  // a browser that sends no paste event (nothing focused) still pastes
    window.setTimeout(() => { if (pasteExpected) { pasteExpected = false; pasteElements(copied()); } }, 0);
    return false;
  }
  wrap.addEventListener("dragover", (event) => {
    if (event.dataTransfer && Array.from(event.dataTransfer.types || []).indexOf("Files") >= 0) {
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
    }
  });
  wrap.addEventListener("drop", (event) => {
    const file = event.dataTransfer && pictureFileOf(event.dataTransfer.files);
    if (!file) return;
    event.preventDefault();
    uploadPicture(file, toDoc(event));
  });
  draw2d.onImageLoad(schedule);

  window.ugcsiteEditor = { doc: shownDoc, view, selection: () => Array.from(selection) };
  form.dataset.ready = "true";  // for tests and styles: the editor is wired up
})();
