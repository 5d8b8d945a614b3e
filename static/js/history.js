/* A board's history panel (templates/feeds/_history.html) on its page and in the editor: its
   versions newest first (GET /api/v1/boards/<id>/versions), a slider over those loaded, and a
   preview of any one drawn over the board, in place, with what draws the board live
   (static/js/live.js's drawElement): the board itself is not changed, and live changes go on
   arriving underneath. "Restore this version" (its author and editors) makes it the drawing
   again as a new version (POST .../restore); every page on the board gets it through its live
   connection. Keys: the list's buttons and the slider as any others; Escape leaves a preview. */
(function () {
  "use strict";
  const panel = document.getElementById("history");
  if (!panel) return;
  const boardId = panel.dataset.boardId;
  const base = "/api/v1/boards/" + boardId + "/versions";
  const list = document.getElementById("history-list");
  const slide = panel.querySelector(".history-slide");
  const slider = document.getElementById("history-slider");
  const more = document.getElementById("history-more");
  const back = document.getElementById("history-back");
  const restore = document.getElementById("history-restore");
  const status = document.getElementById("history-status");
  const error = document.getElementById("history-error");

  let items = [];  // the versions loaded, newest first: {n, created_at, authors, elements}
  let next = null;  // the before= of the next page, or null
  let shown = null;  // the version previewed, or null
  const docs = new Map();  // n -> doc, each version read once (they never change)
  let preview = null, label = null, loading = 0;

  function say(text) {
    error.textContent = text || "";
    error.hidden = !text;
  }

  function authorsText(item) {
    return item.authors.length ? item.authors.join(", ") : "nobody named";
  }

  function describe(item) {
    const times = window.ugcsiteTimes;
    const when = times ? times.ago(item.created_at) : item.created_at;
    return "Version " + item.n + ", " + when + ", by " + authorsText(item) + ", " + item.elements + " element" + (item.elements === 1 ? "" : "s");
  }

  function row(item) {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "history-item";
    button.dataset.n = String(item.n);
    button.setAttribute("aria-pressed", "false");
    const title = document.createElement("strong");
    title.textContent = "Version " + item.n;
    const time = document.createElement("time");
    if (window.ugcsiteTimes) window.ugcsiteTimes.show(time, item.created_at);
    else time.textContent = item.created_at;
    const meta = document.createElement("span");
    meta.className = "meta";
    meta.append(" · ", time, " · " + authorsText(item) + " · " + item.elements + " element" + (item.elements === 1 ? "" : "s"));
    button.append(title, meta);
    button.addEventListener("click", () => show(item.n));
    li.append(button);
    return li;
  }

  function render() {
    list.replaceChildren(...items.map(row));
    more.hidden = next === null;
    slide.hidden = items.length < 2;
    slider.max = String(Math.max(items.length - 1, 0));  // the left end is the oldest loaded
    mark();
  }

  function mark() {
    for (const button of list.querySelectorAll(".history-item")) {
      button.setAttribute("aria-pressed", String(shown !== null && button.dataset.n === String(shown)));
    }
    const at = shown === null ? 0 : items.findIndex((item) => item.n === shown);
    slider.value = String(items.length - 1 - Math.max(at, 0));
    const item = items[Math.max(at, 0)];
    slider.setAttribute("aria-valuetext", item ? describe(item) : "no versions");
    back.hidden = shown === null;
    if (restore) restore.hidden = shown === null;
  }

  async function load(before) {
    say("");
    status.textContent = "Loading the versions…";
    try {
      const result = await window.ugcsite.api(base + "?limit=20" + (before ? "&before=" + before : ""));
      if (!result.ok) { say(window.ugcsite.problem(result)); status.textContent = ""; return; }
      items = before ? items.concat(result.data.items) : result.data.items;
      next = result.data.next;
      status.textContent = items.length ? items.length + " version" + (items.length === 1 ? "" : "s") + (next !== null ? " shown; older ones below" : "") : "No versions yet.";
      render();
    } catch (e) {
      say("The site could not be reached; check your connection and try again.");
      status.textContent = "";
    }
  }

  /* What the preview covers: the first element of data-cover that is shown. */
  function cover() {
    for (const element of document.querySelectorAll(panel.dataset.cover)) {
      if (!element.hidden && element.getClientRects().length) return element;
    }
    return null;
  }

  function draw(doc, item) {
    const under = cover();
    if (!under || !window.ugcsiteLive) return;
    const holder = under.offsetParent || under.parentElement;
    if (!preview) {
      preview = document.createElement("canvas");
      preview.className = "history-preview";
      preview.setAttribute("role", "img");
      label = document.createElement("span");
      label.className = "history-preview-label";
    }
    if (preview.parentElement !== holder) holder.append(preview, label);
    const box = { left: under.offsetLeft, top: under.offsetTop, width: under.offsetWidth, height: under.offsetHeight };
    for (const element of [preview, label]) {
      element.style.left = box.left + "px";
      element.style.top = box.top + "px";
    }
    preview.style.width = box.width + "px";
    preview.style.height = box.height + "px";
    const ratio = window.devicePixelRatio || 1;
    preview.width = Math.max(1, Math.round(box.width * ratio));
    preview.height = Math.max(1, Math.round(box.height * ratio));
    const ctx = preview.getContext("2d");
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, preview.width, preview.height);
    const scale = Math.min(box.width / doc.width, box.height / doc.height) * ratio;
    const dx = (preview.width - doc.width * scale) / 2, dy = (preview.height - doc.height * scale) / 2;
    ctx.setTransform(scale, 0, 0, scale, dx, dy);
    ctx.fillStyle = doc.background;
    ctx.fillRect(0, 0, doc.width, doc.height);
    for (const element of doc.elements) window.ugcsiteLive.drawElement(ctx, element);
    preview.dataset.version = String(item.n);
    preview.dataset.elements = String(doc.elements.length);
    preview.setAttribute("aria-label", "Preview of " + describe(item) + "; the board itself is unchanged");
    label.textContent = "Preview: version " + item.n + " (Escape goes back)";
    const seen = preview.getBoundingClientRect();
    if (seen.bottom < 0 || seen.top > window.innerHeight) preview.scrollIntoView({ block: "nearest" });  // focus stays
  }

  async function show(n) {
    const item = items.find((each) => each.n === n);
    if (!item) return;
    shown = n;
    mark();
    say("");
    const ticket = ++loading;
    let doc = docs.get(n);
    if (!doc) {
      try {
        const result = await window.ugcsite.api(base + "/" + n);
        if (!result.ok) { say(window.ugcsite.problem(result)); return; }
        doc = result.data.doc;
        docs.set(n, doc);
      } catch (e) {
        say("The site could not be reached; check your connection and try again.");
        return;
      }
    }
    if (ticket !== loading || shown !== n) return;  // another version was asked for meanwhile
    draw(doc, item);
    status.textContent = "Showing " + describe(item) + ".";
  }

  function leave() {
    shown = null;
    loading++;
    if (preview) { preview.remove(); label.remove(); }
    mark();
    status.textContent = "Back to the board as it is.";
  }

  async function restoreShown() {
    if (shown === null) return;
    const n = shown;
    restore.disabled = true;
    say("");
    try {
      const result = await window.ugcsite.api(base + "/" + n + "/restore", { method: "POST" });
      if (!result.ok) { say(window.ugcsite.problem(result)); return; }
      leave();
      await load();
      status.textContent = "Version " + n + " is the board's drawing again, kept as version " + result.data.version + ".";
    } catch (e) {
      say("The site could not be reached; check your connection and try again.");
    } finally {
      restore.disabled = false;
    }
  }

  panel.addEventListener("toggle", () => {
    if (panel.open) load();
    else if (shown !== null) leave();
  });
  more.addEventListener("click", () => { if (next !== null) load(next); });
  back.addEventListener("click", leave);
  if (restore) restore.addEventListener("click", restoreShown);
  slider.addEventListener("input", () => {
    const item = items[items.length - 1 - Number(slider.value)];
    if (item) show(item.n);
  });
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && shown !== null) {
      event.preventDefault();
      event.stopPropagation();
      leave();
    }
  });
  window.addEventListener("resize", () => { if (shown !== null && docs.has(shown)) draw(docs.get(shown), items.find((i) => i.n === shown)); });
})();
