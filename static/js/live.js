/* Shared boards, live (docs/api.md, "Shared boards, live"): the client of /ws/boards/<id>, used by the
   editor (static/js/editor.js) and by a board's page, which watches.

   The server's order is the truth. `confirmed` is the doc as of the last seq the server sent;
   `pending` holds this person's ops not yet seen back (sent, or waiting while the connection is
   down). What the page shows is `confirmed` with `pending` applied on top; an op that comes back
   (its client_op_id) leaves `pending`, and one the server refused (an error with its id) is
   dropped. After a reconnect (`?since=` the last seq) the server replays what was missed, or
   sends the whole doc, and what is still pending is sent again: nothing drawn offline is lost,
   and every client ends on the server's doc. With `handlers.keep` (a key of static/js/keep.js),
   `pending` is also kept in the browser: after the tab closes or the browser crashes, the next
   page of the same person and board sends it (again: an op the server has already is refused
   with an error, which is dropped silently, as after any reconnect).

   Strokes others see while they are drawn: the drawer's page sends the new points of the stroke
   under way as ephemeral `stroke` frames, coalesced to the hello's `limits` (frames a second,
   points a frame); the final stroke is the one op. The others draw it (`strokes`) and drop it
   when the op with its id arrives, when its drawer cancels it (`done`) or leaves, or when it has
   not moved for `limits.stroke_idle` seconds (the drawer vanished).

   The board itself changes by `board` ops too: its background, its width and height (never
   below what is drawn: the server refuses that), its title (its author's alone). The title is
   not part of the doc: `title` is the board's as of the last seq (a hello says it), and
   `handlers.onTitle(title)` hears when it changes. */
(function () {
  "use strict";

  const ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
  const OFFLINE_TEXT = "Offline: your changes are kept in this browser and sent when the connection is back.";
  const CLOSE_DROPPED = 4000;  // this end gave the connection up (offline, or silent): the others see "reconnecting"
  const REFUSED_CODES = { 4401: "Your sign-in is no longer valid; log in again.",
    4403: "You may not open this board live.", 4404: "This board no longer exists.",
    4429: "Too many changes at once; reconnecting more slowly." };

  /* A fresh element id (12 characters of [A-Za-z0-9_-], like the server's). */
  function newId(length) {
    const bytes = new Uint8Array(length || 12);
    window.crypto.getRandomValues(bytes);
    let id = "";
    for (const byte of bytes) id += ID_CHARS[byte & 63];
    return id;
  }

  // Arrow heads and sticky notes are drawn as the server's preview draws them (feeds/svg.py), with
  // the numbers of feeds/rules.py's DRAWING_LAYOUT, which the page embeds (with MAX_CANVAS, the
  // largest board, which a rotated box's corners grow a board up to).
  const LAYOUT_DATA = document.getElementById("drawing-layout");
  if (!LAYOUT_DATA) throw new Error("live.js needs the page's drawing-layout JSON (feeds.context_processors.drawing)");
  const { arrowHeadAngle: ARROW_HEAD_ANGLE, stickyPad: STICKY_PAD, stickyLineHeight: STICKY_LINE_HEIGHT,
    stickyCharWidth: STICKY_CHAR_WIDTH, maxCanvas: MAX_CANVAS } = JSON.parse(LAYOUT_DATA.textContent);

  const ROUNDING = 1e-6;  // feeds/validation.py's _ROUNDING

  /* The box [left, top, right, bottom] a rect, ellipse or sticky note covers turned by its
     rotation about its centre, each side rounded outwards to 0.1 (feeds/validation.py's turned_box). */
  function turnedBox(element) {
    const angle = (element.rotation || 0) * Math.PI / 180;
    const halfW = Math.abs(element.w / 2 * Math.cos(angle)) + Math.abs(element.h / 2 * Math.sin(angle));
    const halfH = Math.abs(element.w / 2 * Math.sin(angle)) + Math.abs(element.h / 2 * Math.cos(angle));
    const cx = element.x + element.w / 2, cy = element.y + element.h / 2;
    return [Math.floor((cx - halfW) * 10 + ROUNDING) / 10, Math.floor((cy - halfH) * 10 + ROUNDING) / 10,
      Math.ceil((cx + halfW) * 10 - ROUNDING) / 10, Math.ceil((cy + halfH) * 10 - ROUNDING) / 10];
  }

  /* The canvas an element needs, [right, bottom] (feeds/validation.py's element_extent, a rotated
     box's turned corners included): a live board grows to hold what is drawn past its edge. */
  function extent(element) {
    if (element.points) {
      let right = -Infinity, bottom = -Infinity;  // a loop: a path may hold 100,000 points, too many to spread
      for (const p of element.points) {
        if (p[0] > right) right = p[0];
        if (p[1] > bottom) bottom = p[1];
      }
      return [right, bottom];
    }
    if (element.w === undefined) return [element.x, element.y];
    const right = element.x + element.w, bottom = element.y + element.h;
    if (!element.rotation) return [right, bottom];
    const turned = turnedBox(element);
    return [Math.max(right, Math.min(turned[2], MAX_CANVAS)), Math.max(bottom, Math.min(turned[3], MAX_CANVAS))];
  }

  /* A doc grown to hold the element of an op, as the server grows it (the same doc if it fits). */
  function grown(doc, op) {
    if (!op.element) return doc;
    const [right, bottom] = extent(op.element);
    if (right <= doc.width && bottom <= doc.height) return doc;
    return Object.assign({}, doc, { width: Math.max(doc.width, right), height: Math.max(doc.height, bottom) });
  }

  /* The board's fields a `board` op sets (its title lives beside the doc, not in it). */
  const HEAD_FIELDS = ["background", "width", "height"];

  /* A doc after one op (a new object; the old one is never changed): a board op sets the head's
     fields it names, an element op grows the doc to hold its element and changes the elements. */
  function applyToDoc(doc, op) {
    if (op.kind === "board") {
      const head = {};
      for (const field of HEAD_FIELDS) if (op[field] !== undefined) head[field] = op[field];
      return Object.assign({}, doc, head);
    }
    return Object.assign({}, grown(doc, op), { elements: applyOp(doc.elements, op) });
  }

  /* The elements after one op (a new array; the old one is never changed). */
  function applyOp(elements, op) {
    if (op.kind === "add") {
      return elements.some((e) => e.id === op.element.id) ? elements : elements.concat([op.element]);
    }
    if (op.kind === "update") return elements.map((e) => (e.id === op.element.id ? op.element : e));
    if (op.kind === "remove") return elements.filter((e) => e.id !== op.id);
    return elements;
  }

  function fontOf(size) {
    return size + "px sans-serif";
  }

  /* The three points of an arrow's head: one side, the tip, the other (feeds/svg.py's arrow_head). */
  function arrowHead(element) {
    const [[x0, y0], [x1, y1]] = element.points;
    const angle = Math.atan2(y1 - y0, x1 - x0);
    const size = Math.max(10, 3 * element.width);
    const side = (a) => [x1 + size * Math.cos(a), y1 + size * Math.sin(a)];
    return [side(angle + Math.PI - ARROW_HEAD_ANGLE), [x1, y1], side(angle + Math.PI + ARROW_HEAD_ANGLE)];
  }

  /* A sticky note's text in the lines it is drawn in, wrapped to its box (feeds/svg.py's
     sticky_wrap: the same count of characters, code points as Python counts them). */
  function stickyWrap(element) {
    const room = Math.max(1, Math.floor((element.w - 2 * STICKY_PAD) / (element.size * STICKY_CHAR_WIDTH)));
    const lines = [];
    for (const paragraph of element.text.split("\n")) {
      let line = null;
      for (const part of paragraph.split(" ")) {
        let word = Array.from(part);
        const candidate = line === null ? word : line.concat([" "], word);
        if (candidate.length <= room) {
          line = candidate;
          continue;
        }
        if (line !== null) lines.push(line.join(""));
        while (word.length > room) {
          lines.push(word.slice(0, room).join(""));
          word = word.slice(room);
        }
        line = word;
      }
      lines.push(line ? line.join("") : "");
    }
    return lines;
  }

  /* A sticky note's text as [line, x, baseline y], one per wrapped line (feeds/svg.py's sticky_lines). */
  function stickyLines(element) {
    const top = element.y + STICKY_PAD + element.size;
    return stickyWrap(element).map((line, i) => [line, element.x + STICKY_PAD, top + i * element.size * STICKY_LINE_HEIGHT]);
  }

  /* The height a sticky note needs to hold its wrapped lines (the last one's descent and the padding included). */
  function stickyHeight(element) {
    const lines = stickyWrap(element).length;
    return 2 * STICKY_PAD + element.size * (1 + (lines - 1) * STICKY_LINE_HEIGHT + 0.3);
  }

  /* Pictures (image elements) by their id: loaded once from /images/<id> (a redirect to the
     stored copy, feeds/images.py), drawn once loaded; until then, or when it cannot be loaded
     (hidden by staff, deleted), a blank box with a faint edge, as the server's preview draws
     it. Whoever draws hears when one arrives (onImageLoad) and draws again. */
  const pictures = new Map();  // id -> {img, state: "loading" | "ready" | "failed"}
  const pictureListeners = [];

  function onImageLoad(callback) {
    pictureListeners.push(callback);
  }

  function picture(id) {
    let entry = pictures.get(id);
    if (!entry) {
      const img = new Image();
      entry = { img, state: "loading" };
      pictures.set(id, entry);
      img.crossOrigin = "anonymous";  // a copy on another origin (a bucket with CORS) keeps the canvas exportable
      img.addEventListener("load", () => { entry.state = "ready"; for (const callback of pictureListeners) callback(id); });
      img.addEventListener("error", () => { entry.state = "failed"; for (const callback of pictureListeners) callback(id); });
      img.src = "/images/" + encodeURIComponent(id);
    }
    return entry;
  }

  /* A picture the browser has, as a data: URI of a PNG (the editor's SVG export embeds it), or null. */
  function pictureDataUri(id) {
    const entry = picture(id);
    if (entry.state !== "ready") return null;
    if (!entry.dataUri) {
      const copy = document.createElement("canvas");
      copy.width = entry.img.naturalWidth;
      copy.height = entry.img.naturalHeight;
      copy.getContext("2d").drawImage(entry.img, 0, 0);
      try { entry.dataUri = copy.toDataURL("image/png"); } catch (error) { return null; }  // a tainted copy
    }
    return entry.dataUri;
  }

  /* The point an element turns about: its box's centre, or a text's anchor. */
  function pivot(element) {
    return element.w !== undefined ? [element.x + element.w / 2, element.y + element.h / 2] : [element.x, element.y];
  }

  /* Draw one element of docs/api.md's drawing format on a 2D context in document units. */
  function drawElement(ctx, element) {
    if (element.rotation) {
      const [cx, cy] = pivot(element);
      ctx.save();
      ctx.translate(cx, cy);
      ctx.rotate(element.rotation * Math.PI / 180);
      ctx.translate(-cx, -cy);
      drawUnrotated(ctx, element);
      ctx.restore();
      return;
    }
    drawUnrotated(ctx, element);
  }

  function drawUnrotated(ctx, element) {
    ctx.lineCap = "round";
    ctx.lineJoin = "round";
    if (element.type === "image") {
      const entry = picture(element.image);
      if (entry.state === "ready") {
        ctx.drawImage(entry.img, element.x, element.y, element.w, element.h);
      } else {
        ctx.fillStyle = "#f1f3f5";
        ctx.fillRect(element.x, element.y, element.w, element.h);
        ctx.strokeStyle = "rgba(0, 0, 0, 0.15)";
        ctx.lineWidth = 1;
        ctx.strokeRect(element.x, element.y, element.w, element.h);
      }
    } else if (element.type === "path") {
      const points = element.points;
      ctx.strokeStyle = element.color;
      ctx.lineWidth = element.width;
      const dot = points.every((p) => p[0] === points[0][0] && p[1] === points[0][1]);
      if (dot) {  // a tap: canvas prunes zero-length segments, SVG's round caps draw a dot
        ctx.fillStyle = element.color;
        ctx.beginPath();
        ctx.arc(points[0][0], points[0][1], element.width / 2, 0, 2 * Math.PI);
        ctx.fill();
        return;
      }
      ctx.beginPath();
      ctx.moveTo(points[0][0], points[0][1]);
      for (let i = 1; i < points.length; i++) ctx.lineTo(points[i][0], points[i][1]);
      ctx.stroke();
    } else if (element.type === "line" || element.type === "arrow") {
      ctx.strokeStyle = element.color;
      ctx.lineWidth = element.width;
      ctx.beginPath();
      ctx.moveTo(element.points[0][0], element.points[0][1]);
      ctx.lineTo(element.points[1][0], element.points[1][1]);
      if (element.type === "arrow") {
        const [a, tip, b] = arrowHead(element);
        ctx.moveTo(a[0], a[1]);
        ctx.lineTo(tip[0], tip[1]);
        ctx.lineTo(b[0], b[1]);
      }
      ctx.stroke();
    } else if (element.type === "text") {
      ctx.fillStyle = element.color;
      ctx.font = fontOf(element.size);
      ctx.textBaseline = "alphabetic";
      ctx.fillText(element.text, element.x, element.y);
    } else if (element.type === "sticky") {
      ctx.fillStyle = element.fill;
      ctx.fillRect(element.x, element.y, element.w, element.h);
      ctx.strokeStyle = "rgba(0, 0, 0, 0.15)";
      ctx.lineWidth = 1;
      ctx.strokeRect(element.x, element.y, element.w, element.h);
      ctx.fillStyle = element.color;
      ctx.font = fontOf(element.size);
      ctx.textBaseline = "alphabetic";
      for (const [line, x, y] of stickyLines(element)) if (line) ctx.fillText(line, x, y);
    } else if (element.type === "rect" || element.type === "ellipse") {
      ctx.beginPath();
      if (element.type === "rect") {
        ctx.rect(element.x, element.y, element.w, element.h);
      } else {
        ctx.ellipse(element.x + element.w / 2, element.y + element.h / 2, element.w / 2, element.h / 2, 0, 0, 2 * Math.PI);
      }
      if (element.fill) {
        ctx.fillStyle = element.fill;
        ctx.fill();
      }
      ctx.strokeStyle = element.color;
      ctx.lineWidth = element.width;
      ctx.stroke();
    }
  }

  /* Others' strokes under way, as paths. */
  function drawStrokes(ctx, strokes) {
    for (const key of Object.keys(strokes)) {
      const stroke = strokes[key];
      if (!stroke.points.length) continue;
      const points = stroke.points.length > 1 ? stroke.points : [stroke.points[0], stroke.points[0]];
      drawElement(ctx, { type: "path", color: stroke.color, width: stroke.width, points });
    }
  }

  /* "Here now: alice, bob (reconnecting…)", or nothing. */
  function peersText(peers) {
    if (!peers.length) return "";
    return "Here now: " + peers.map((p) => p.username + (p.reconnecting ? " (reconnecting…)" : "")).join(", ");
  }

  /* Others' cursors: a dot and a name, in document units, scaled by `unit` (document units per CSS pixel). */
  function drawCursors(ctx, cursors, unit) {
    const now = Date.now();
    for (const name of Object.keys(cursors)) {
      const cursor = cursors[name];
      if (now - cursor.at > 10000) continue;
      ctx.fillStyle = cursor.color;
      ctx.beginPath();
      ctx.arc(cursor.x, cursor.y, 5 * unit, 0, 2 * Math.PI);
      ctx.fill();
      ctx.font = fontOf(12 * unit);
      ctx.textBaseline = "top";
      ctx.fillText(name, cursor.x + 7 * unit, cursor.y + 4 * unit);
    }
  }

  const CURSOR_COLORS = ["#3b5bdb", "#e8590c", "#2f9e44", "#c2255c", "#f59f00", "#7048e8"];

  function colorOf(name) {
    let hash = 0;
    for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) >>> 0;
    return CURSOR_COLORS[hash % CURSOR_COLORS.length];
  }

  /* The connection to one board. `handlers`: onChange(), onStatus(state, text), onPeers(peers),
     onError(detail). state is "connecting", "live", "reconnecting" or "closed". */
  class LiveBoard {
    constructor(boardId, handlers) {
      this.boardId = boardId;
      this.handlers = handlers;
      this.seq = null;
      this.confirmed = handlers.initial || null;  // the page's doc until the server says hello
      this.title = handlers.title === undefined ? null : handlers.title;  // the page's, until hello
      this.pending = [];
      this.peers = [];
      this.cursors = {};
      this.strokes = {};  // others' strokes under way: by + " " + id -> {by, id, color, width, points, seen}
      this.limits = null;  // the stroke frames' limits, from hello
      this.outgoing = null;  // this person's stroke under way: {element, sent, timer}
      this.forget = {};  // reconnecting peers' timers
      this.keep = null;  // this tab's key, once keep.js gave it (ownKey)
      if (handlers.keep && window.ugcsiteKeep) {
        window.ugcsiteKeep.ownKey(handlers.keep, (key, adopted) => {
          this.keep = key;
          for (const kept of adopted) {
            if (!Array.isArray(kept)) continue;
            for (const item of kept) {
              if (!item || typeof item.cid !== "string" || !item.op) continue;
              const adoptedItem = { cid: item.cid, op: item.op, resent: true };
              this.pending.push(adoptedItem);
              this.transmit(adoptedItem);
            }
          }
          this.saveKept();
          this.changed();
        });
      }
      window.addEventListener("pagehide", () => { if (this.socket) this.socket.close(1000); });
      // Offline (issue 40): the browser says so, or the server's heartbeat goes silent
      // (hello's limits.silence): the page says it at once, keeps what is drawn, and reconnects
      // when the browser is back online.
      this.offline = false;
      this.heardAt = 0;
      this.watch = 0;
      window.addEventListener("offline", () => this.drop());
      window.addEventListener("online", () => {
        if (!this.offline) return;
        this.offline = false;
        this.retry = 0;
        if (!this.socket && !this.held) this.connect();
      });
      this.you = null;
      this.socket = null;
      this.retry = 0;
      this.held = false;  // a test (or a person going offline) holds the connection down
      this.lastCursor = 0;
      this.connect();
    }

    status(state, text) {
      this.state = state;
      if (this.handlers.onStatus) this.handlers.onStatus(state, text);
    }

    connect() {
      const scheme = window.location.protocol === "https:" ? "wss" : "ws";
      const since = this.seq !== null ? "?since=" + this.seq : "";
      const socket = new WebSocket(scheme + "://" + window.location.host + "/ws/boards/" + this.boardId + since);
      this.socket = socket;
      if (this.offline) this.status("offline", OFFLINE_TEXT);  // until hello says otherwise
      else this.status(this.seq === null ? "connecting" : "reconnecting", this.seq === null ? "Connecting…" : "Reconnecting…");
      socket.addEventListener("message", (event) => this.receive(JSON.parse(event.data)));
      socket.addEventListener("close", (event) => this.closed(socket, event.code));
    }

    closed(socket, code) {
      if (socket !== this.socket) return;
      this.socket = null;
      this.strokes = {};
      window.clearInterval(this.watch);
      this.setPeers([]);  // who is here is unknown until the connection is back
      if (code === 4401 || code === 4403 || code === 4404) {
        this.status("closed", REFUSED_CODES[code]);
        return;
      }
      if (this.offline) {
        this.status("offline", OFFLINE_TEXT);
        if (navigator.onLine === false) return;  // the "online" event reconnects
      } else {
        this.status("reconnecting", this.pending.length ? "Reconnecting… (your drawing is kept and sent when it is back)" : "Reconnecting…");
      }
      if (this.held) return;
      const wait = Math.min(500 * Math.pow(2, this.retry++), 5000) * (code === 4429 ? 4 : 1);
      window.setTimeout(() => { if (!this.socket && !this.held) this.connect(); }, wait);
    }

    /* Offline: the browser says so, or nothing came for limits.silence
       seconds. The connection is given up at once, without waiting for a closing handshake that
       cannot come, and closed with a code that is no goodbye (if it reaches the server at all). */
    drop() {
      this.offline = true;
      const socket = this.socket;
      if (!socket) {
        if (this.state !== "closed") this.status("offline", OFFLINE_TEXT);
        return;
      }
      this.closed(socket, CLOSE_DROPPED);
      try { socket.close(CLOSE_DROPPED); } catch (error) { /* already closing */ }
    }

    /* The heartbeat (hello's limits): join it, and watch that something comes. */
    startHeartbeat() {
      window.clearInterval(this.watch);
      if (!this.limits || !this.limits.silence || !this.socket) return;
      this.heardAt = Date.now();
      this.socket.send(JSON.stringify({ type: "ping" }));
      const socket = this.socket;
      this.watch = window.setInterval(() => {
        if (socket !== this.socket) return;
        if (Date.now() - this.heardAt > this.limits.silence * 1000) this.drop();
      }, 1000);
    }

    /* Cut the connection and keep it down until resume() (drawing goes on meanwhile). */
    hold() {
      this.held = true;
      if (this.socket) this.socket.close();
    }

    resume() {
      this.held = false;
      if (!this.socket) this.connect();
    }

    receive(message) {
      this.heardAt = Date.now();
      if (message.type === "ping") {
        if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: "pong" }));
        return;
      }
      if (message.type === "hello") {
        this.retry = 0;
        if (message.doc) {
          this.confirmed = message.doc;
          if (typeof message.title === "string") this.retitle(message.title);
        } else {
          for (const op of message.replay) this.accept(op);
        }
        this.seq = message.seq;
        this.you = message.you;
        this.limits = message.limits || null;
        this.setPeers(message.peers);
        this.offline = false;
        this.status("live", "Live");
        this.startHeartbeat();
        for (const item of this.pending) {
          item.resent = true;
          this.transmit(item);
        }
        this.changed();
      } else if (message.type === "op") {
        this.accept(message);
        const element = message.op.element;
        if (element) this.dropStroke((stroke) => stroke.id === element.id);
        this.changed();
      } else if (message.type === "stroke") {
        this.strokeIn(message);
      } else if (message.type === "error") {
        const index = this.pending.findIndex((item) => item.cid === message.client_op_id);
        const resent = index >= 0 && this.pending[index].resent;
        if (index >= 0) {
          this.pending.splice(index, 1);
          this.saveKept();
        }
        if (!resent && this.handlers.onError) this.handlers.onError(message.detail);
        this.changed();
      } else if (message.type === "presence") {
        this.setPeers(message.peers);
      } else if (message.type === "cursor") {
        this.cursors[message.by] = { x: message.x, y: message.y, at: Date.now(), color: colorOf(message.by) };
        if (this.handlers.onChange) this.handlers.onChange();
      } else if (message.type === "comment") {
        /* A comment of this board was posted, edited or removed: static/js/comments.js reads it. */
        document.dispatchEvent(new CustomEvent("ugcsite:comment", { detail: message }));
      }
    }

    accept(message) {
      if (message.seq <= this.seq) return;
      this.confirmed = applyToDoc(this.confirmed, message.op);
      if (message.op.kind === "board" && message.op.title !== undefined) this.retitle(message.op.title);
      this.seq = message.seq;
      const index = this.pending.findIndex((item) => item.cid === message.client_op_id);
      if (index >= 0) {
        this.pending.splice(index, 1);
        this.saveKept();
      }
    }

    retitle(title) {
      if (title === this.title) return;
      const before = this.title;
      this.title = title;
      if (this.handlers.onTitle) this.handlers.onTitle(title, before);
    }

    saveKept() {
      if (!this.keep) return;
      if (this.pending.length) window.ugcsiteKeep.set(this.keep, this.pending.map((item) => ({ cid: item.cid, op: item.op })));
      else window.ugcsiteKeep.remove(this.keep);
    }

    setPeers(peers) {
      this.peers = peers;
      const here = new Set(peers.map((p) => p.username));
      for (const name of Object.keys(this.cursors)) if (!here.has(name)) delete this.cursors[name];
      this.dropStroke((stroke) => !here.has(stroke.by));
      for (const name of Object.keys(this.forget)) window.clearTimeout(this.forget[name]);
      this.forget = {};
      for (const peer of peers) {
        if (!peer.reconnecting) continue;
        this.forget[peer.username] = window.setTimeout(() => {  // its entry lapsed on the server too
          this.setPeers(this.peers.filter((p) => p.username !== peer.username));
        }, (peer.forget_after || 1) * 1000);
      }
      if (this.handlers.onPeers) this.handlers.onPeers(peers);
      if (this.handlers.onChange) this.handlers.onChange();
    }

    changed() {
      if (this.handlers.onChange) this.handlers.onChange();
    }

    /* The doc to show: the server's, with this person's pending ops on top (null before hello). */
    view() {
      if (!this.confirmed) return null;
      let doc = this.confirmed;
      for (const item of this.pending) doc = applyToDoc(doc, item.op);
      return doc;
    }

    /* Someone else's stroke under way: its points from `at` on. */
    strokeIn(message) {
      const key = message.by + " " + message.id;
      if (message.done || !this.confirmed || this.confirmed.elements.some((e) => e.id === message.id)) {
        this.dropStroke((stroke) => stroke.by === message.by && stroke.id === message.id);
        return;  // cancelled, or a frame that came after its op
      }
      const stroke = this.strokes[key] || { by: message.by, id: message.id, points: [] };
      stroke.color = message.color;
      stroke.width = message.width;
      stroke.points = stroke.points.slice(0, Math.min(message.at, stroke.points.length)).concat(message.points);
      stroke.seen = Date.now();
      this.strokes[key] = stroke;
      this.sweepStrokes();
      this.changed();
    }

    dropStroke(test) {
      let dropped = false;
      for (const key of Object.keys(this.strokes)) {
        if (test(this.strokes[key])) {
          delete this.strokes[key];
          dropped = true;
        }
      }
      if (dropped) this.changed();
    }

    /* Strokes whose drawer vanished (no frame for limits.stroke_idle seconds) go. */
    sweepStrokes() {
      if (this.sweeping || !this.limits) return;
      this.sweeping = window.setTimeout(() => {
        this.sweeping = 0;
        const idle = this.limits.stroke_idle * 1000;
        this.dropStroke((stroke) => Date.now() - stroke.seen >= idle);
        if (Object.keys(this.strokes).length) this.sweepStrokes();
      }, 1000);
    }

    /* This person's stroke under way (`element`, a path with its id, growing): its new points
       go to the others, at most limits.stroke_frames_per_second frames a second. */
    drawing(element) {
      if (!this.outgoing || this.outgoing.element.id !== element.id) {
        this.strokeEnd();
        this.outgoing = { element, sent: 0, timer: 0 };
      }
      this.outgoing.element = element;
      if (!this.outgoing.timer && this.limits) {
        this.outgoing.timer = window.setTimeout(() => this.strokeFlush(), 1000 / this.limits.stroke_frames_per_second);
      }
    }

    strokeFlush() {
      const out = this.outgoing;
      if (!out) return;
      out.timer = 0;
      const points = out.element.points;
      if (out.sent >= points.length) return;
      if (!this.socket || this.socket.readyState !== WebSocket.OPEN || this.state !== "live") return;
      const upto = Math.min(points.length, out.sent + this.limits.stroke_points);
      this.socket.send(JSON.stringify({ type: "stroke", id: out.element.id, color: out.element.color,
        width: out.element.width, at: out.sent, points: points.slice(out.sent, upto) }));
      out.sent = upto;
      if (upto < points.length) this.drawing(out.element);
    }

    /* The stroke under way ended: as an op (sent already: nothing to say), or not (cancelled,
       refused by a limit): then the others are told to drop it. */
    strokeEnd() {
      const out = this.outgoing;
      if (!out) return;
      this.outgoing = null;
      window.clearTimeout(out.timer);
      const id = out.element.id;
      const added = this.pending.some((item) => item.op.kind === "add" && item.op.element.id === id);
      if (out.sent && !added && this.socket && this.socket.readyState === WebSocket.OPEN && this.state === "live") {
        this.socket.send(JSON.stringify({ type: "stroke", id, color: out.element.color, width: out.element.width,
          at: out.sent, points: [], done: true }));
      }
    }

    send(op) {
      const item = { cid: newId(), op, resent: false };
      this.pending.push(item);
      this.saveKept();
      this.transmit(item);
      this.changed();
    }

    transmit(item) {
      if (this.socket && this.socket.readyState === WebSocket.OPEN && this.state === "live") {
        this.socket.send(JSON.stringify({ type: "op", client_op_id: item.cid, op: item.op }));
      }
    }

    /* Cursor moves go at most limits.cursors_per_second times a second (the server's rule): a
       move sooner than its turn waits, replaced by any later one, and goes when its turn comes. */
    cursor(x, y) {
      if (!this.limits) return;
      this.nextCursor = { x, y };
      if (this.cursorTimer) return;
      const every = 1000 / this.limits.cursors_per_second;
      const wait = Math.max(0, (this.lastCursor || 0) + every - Date.now());
      this.cursorTimer = window.setTimeout(() => {
        this.cursorTimer = null;
        const next = this.nextCursor;
        this.nextCursor = null;
        if (!next || !this.socket || this.socket.readyState !== WebSocket.OPEN) return;
        this.lastCursor = Date.now();
        this.socket.send(JSON.stringify({ type: "cursor", x: next.x, y: next.y }));
      }, wait);
    }
  }

  /* The page's title (the document's, in the tab) with a board's old title in it replaced. */
  function retitlePage(title, before) {
    if (before && document.title.indexOf(before) >= 0) document.title = document.title.replace(before, () => title);
  }

  window.ugcsiteLive = { newId, applyOp, applyToDoc, retitlePage, extent, turnedBox, drawElement, arrowHead, stickyWrap, stickyLines, stickyHeight, pivot, drawCursors, drawStrokes, peersText, onImageLoad, pictureDataUri, LiveBoard, boards: [] };

  /* A board's page: the drawing live, for everyone who may view it. */
  const view = document.getElementById("live-view");
  if (view && view.getContext) {
    const ctx = view.getContext("2d");
    const image = document.querySelector(".board-image");
    const status = document.getElementById("live-status");
    let frame = 0;
    const draw = () => {
      frame = 0;
      const doc = board.view();
      if (!doc) return;
      const box = view.getBoundingClientRect();
      const ratio = window.devicePixelRatio || 1;
      const width = Math.max(1, Math.round((box.width || doc.width) * ratio));
      view.width = width;
      view.height = Math.max(1, Math.round(width * doc.height / doc.width));
      ctx.setTransform(view.width / doc.width, 0, 0, view.height / doc.height, 0, 0);
      ctx.fillStyle = doc.background;
      ctx.fillRect(0, 0, doc.width, doc.height);
      for (const element of doc.elements) drawElement(ctx, element);
      drawStrokes(ctx, board.strokes);
      drawCursors(ctx, board.cursors, doc.width / Math.max(box.width, 1));
      view.dataset.elements = String(doc.elements.length);
    };
    const heading = document.getElementById("board-title");
    const board = new LiveBoard(view.dataset.boardId, {
      title: heading ? heading.textContent : null,
      onTitle(title, before) {
        if (heading) heading.textContent = title;
        view.setAttribute("aria-label", title + ", live");
        retitlePage(title, before);
      },
      onChange() {
        if (board.confirmed) view.style.aspectRatio = board.confirmed.width + " / " + board.confirmed.height;  // it grows
        if (board.confirmed && view.hidden) {
          view.hidden = false;
          if (image) image.hidden = true;
        }
        if (!frame) frame = window.requestAnimationFrame(draw);
      },
      onStatus(state, text) { if (status) { status.textContent = text; status.dataset.state = state; } },
      onPeers(peers) {
        const list = document.getElementById("live-peers");
        if (list) list.textContent = peersText(peers);
      },
    });
    onImageLoad(() => { if (!frame) frame = window.requestAnimationFrame(draw); });
    window.ugcsiteLive.boards.push(board);
  }
})();
