/* The editor's view of the drawing (static/js/editor.js): zoom and pan, never saved in the doc.

   The canvas keeps its place and size on the page; the view maps document units to its CSS
   pixels: screen = offset + document * base * zoom, where base (CSS pixels per document unit at
   zoom 1) is the canvas's width over the document's width when the page opened (the frame: the
   document grows with its content, the scale does not jump with it). At zoom 1 and no offset the
   frame fills the canvas; "fit" shows a box of the drawing (its content) as large as it fits. Input that moves the view: Ctrl+wheel (and
   a trackpad's pinch, which browsers send as one) zooms around the pointer; the wheel pans once
   zoomed; the middle button, space held down, or the hand tool drag it; two fingers pinch and
   pan together. A pointer the view takes is not drawn with. */
(function () {
  "use strict";

  const MIN_ZOOM = 0.25;
  const MAX_ZOOM = 8;
  const STEP = 1.25;           // one press of +/-
  const KEEP_VISIBLE = 48;     // CSS pixels of the drawing that panning always leaves in sight
  const WHEEL_NOTCH = 1.1;      // one notch of a mouse wheel zooms 10%
  const NOTCH_PIXELS = 100;     // what browsers report for one notch in pixels (Chromium, Firefox: 100 or more)
  const FIT_MARGIN = 24;       // CSS pixels left around the drawing by "fit to content"
  const PINCH_RATE = 0.01;      // a trackpad's pinch (many small deltas): zoom per pixel of delta
  // The view follows the pen (issue 40): a pointer drawing within FOLLOW_EDGE CSS pixels of the
  // canvas's edge, or past it, pans the view that way each frame, faster the farther out (at
  // most FOLLOW_MAX pixels a frame), so what is drawn past the board's edge, which grows it, stays in view.
  const FOLLOW_EDGE = 24;
  const FOLLOW_MAX = 8;

  class View {
    constructor(canvas, doc, onChange) {
      this.canvas = canvas;
      this.doc = doc;
      this.frame = { width: doc.width, height: doc.height };
      this.onChange = onChange;
      this.zoom = 1;
      this.x = 0;  // CSS pixels from the canvas's left edge to the drawing's
      this.y = 0;
      this.touches = new Map();  // touch pointers down on the canvas: id -> [clientX, clientY]
      this.pinch = null;
      this.pan = null;            // {pointerId, last: [clientX, clientY]}
      this.afterPinch = false;    // fingers left from a pinch draw nothing until all are lifted
      this.spaceHeld = false;
      canvas.addEventListener("wheel", (event) => this.wheel(event), { passive: false });
      // The middle button pans the drawing, not the page (the browser's autoscroll).
      canvas.addEventListener("mousedown", (event) => { if (event.button === 1) event.preventDefault(); });
    }

    box() {
      return this.canvas.getBoundingClientRect();
    }

    base() {
      return this.box().width / this.frame.width;
    }

    /* CSS pixels per document unit. */
    scale() {
      return this.base() * this.zoom;
    }

    /* A point of the page (clientX, clientY) in document units, unclamped. */
    toDoc(clientX, clientY) {
      const box = this.box();
      const s = (box.width / this.frame.width) * this.zoom;
      return [(clientX - box.left - this.x) / s, (clientY - box.top - this.y) / s];
    }

    /* A document point in CSS pixels from the canvas's top left corner. */
    toCanvas(x, y) {
      const s = this.scale();
      return [this.x + x * s, this.y + y * s];
    }

    isReset() {
      return this.zoom === 1 && this.x === 0 && this.y === 0;
    }

    changed() {
      this.clampOffset();
      this.canvas.dataset.zoom = String(Math.round(this.zoom * 1000) / 1000);
      if (this.onChange) this.onChange();
    }

    clampOffset() {
      const box = this.box();
      const reach = this.reach || [0, 0];  // a stroke under way past the board's edge (followStep)
      const width = Math.max(this.doc.width, reach[0]) * this.scale();
      const height = Math.max(this.doc.height, reach[1]) * this.scale();
      this.x = Math.min(Math.max(this.x, KEEP_VISIBLE - width), box.width - KEEP_VISIBLE);
      this.y = Math.min(Math.max(this.y, KEEP_VISIBLE - height), box.height - KEEP_VISIBLE);
    }

    /* Zoom to `zoom`, keeping the document point under (cx, cy) (CSS pixels of the canvas) in place. */
    zoomTo(zoom, cx, cy) {
      const next = Math.min(Math.max(zoom, MIN_ZOOM), MAX_ZOOM);
      if (cx === undefined) {
        const box = this.box();
        cx = box.width / 2;
        cy = box.height / 2;
      }
      this.x = cx - (cx - this.x) * (next / this.zoom);
      this.y = cy - (cy - this.y) * (next / this.zoom);
      this.zoom = next;
      this.changed();
    }

    zoomIn(cx, cy) { this.zoomTo(this.zoom * STEP, cx, cy); }

    zoomOut(cx, cy) { this.zoomTo(this.zoom / STEP, cx, cy); }

    panBy(dx, dy) {
      this.x += dx;
      this.y += dy;
      this.changed();
    }

    reset() {
      this.zoom = 1;
      this.x = 0;
      this.y = 0;
      this.changed();
    }

    /* A drawing pointer at (clientX, clientY): near or past an edge, the view pans that way
       every frame until it comes back or stopFollow(); after each step `step()` is called (the
       editor extends what is drawn to the document point now under the pointer). */
    follow(clientX, clientY, step) {
      this.following = { clientX, clientY, step };
      if (!this.followFrame) this.followFrame = window.requestAnimationFrame(() => this.followStep());
    }

    followStep() {
      this.followFrame = 0;
      const at = this.following;
      if (!at) return;
      const box = this.box();
      const push = (position, low, high) => {
        const into = Math.max(low + FOLLOW_EDGE - position, 0) - Math.max(position - (high - FOLLOW_EDGE), 0);
        return into ? Math.sign(into) * Math.min(FOLLOW_MAX, Math.abs(into) / 6 + 1) : 0;
      };
      const dx = push(at.clientX, box.left, box.right);
      const dy = push(at.clientY, box.top, box.bottom);
      if (!dx && !dy) return;
      // What is drawn reaches the point under the pen: panning may show that much (clampOffset).
      this.reach = this.toDoc(at.clientX, at.clientY);
      const before = [this.x, this.y];
      this.x += dx;
      this.y += dy;
      this.clampOffset();
      if (this.x === before[0] && this.y === before[1]) return;  // as far as the view goes
      this.changed();
      at.step();
      this.followFrame = window.requestAnimationFrame(() => this.followStep());
    }

    /* The document point (x, y) brought onto the canvas (FOLLOW_EDGE inside its edge) if it
       lies off it: where the pen lifted past the edge. */
    reveal(x, y) {
      const box = this.box();
      const [cx, cy] = this.toCanvas(x, y);
      const inside = (position, size) => Math.min(Math.max(position, FOLLOW_EDGE), size - FOLLOW_EDGE) - position;
      const dx = inside(cx, box.width);
      const dy = inside(cy, box.height);
      if (dx || dy) this.panBy(dx, dy);
    }

    stopFollow() {
      this.following = null;
      this.reach = null;
      if (this.followFrame) window.cancelAnimationFrame(this.followFrame);
      this.followFrame = 0;
    }

    /* Show the document box [x0, y0, x1, y1] centred, as large as fits with FIT_MARGIN around it
       (within the zoom's limits). */
    fit(area) {
      const box = this.box();
      const width = Math.max(area[2] - area[0], 1);
      const height = Math.max(area[3] - area[1], 1);
      const room = (pixels) => Math.max(pixels - 2 * FIT_MARGIN, 1);
      const zoom = Math.min(room(box.width) / (width * this.base()), room(box.height) / (height * this.base()));
      this.zoom = Math.min(Math.max(zoom, MIN_ZOOM), MAX_ZOOM);
      const s = this.scale();
      this.x = box.width / 2 - ((area[0] + area[2]) / 2) * s;
      this.y = box.height / 2 - ((area[1] + area[3]) / 2) * s;
      this.changed();
    }

    /* How much one Ctrl+wheel event zooms: a mouse notch (lines or pages, or a delta of a notch's
       size or more) 10% per notch; a trackpad's pinch, which arrives as many small pixel deltas,
       smoothly by its delta. */
    wheelFactor(delta, mode) {
      if (mode !== 0 || Math.abs(delta) >= NOTCH_PIXELS / 2) {
        const notches = Math.max(1, Math.round(Math.abs(delta) / (mode === 0 ? NOTCH_PIXELS : 48)));
        return Math.pow(WHEEL_NOTCH, delta < 0 ? notches : -notches);
      }
      return Math.exp(-delta * PINCH_RATE);
    }

    wheel(event) {
      const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? this.box().height : 1;
      const box = this.box();
      if (event.ctrlKey || event.metaKey) {
        event.preventDefault();  // not the browser's own page zoom
        this.zoomTo(this.zoom * this.wheelFactor(event.deltaY * unit, event.deltaMode), event.clientX - box.left, event.clientY - box.top);
      } else if (!this.isReset()) {
        event.preventDefault();  // zoomed: the wheel moves the drawing, not the page
        const dx = event.shiftKey && !event.deltaX ? event.deltaY : event.deltaX;
        const dy = event.shiftKey && !event.deltaX ? 0 : event.deltaY;
        this.panBy(-dx * unit, -dy * unit);
      }
    }

    /* A pointer went down on the canvas: true when the view takes it (a pan or a pinch), so
       the editor draws nothing with it. `hand`: the hand tool is chosen. A second finger calls
       onPinch() first, so the editor drops what the first one began. */
    pointerDown(event, hand, onPinch) {
      if (event.pointerType === "touch") {
        this.touches.set(event.pointerId, [event.clientX, event.clientY]);
        if (this.touches.size === 2 && !this.pinch) {
          if (this.pan) this.pan = null;
          if (onPinch) onPinch();
          this.startPinch();
          return true;
        }
        if (this.pinch || this.afterPinch) return true;
      }
      const middle = event.pointerType === "mouse" && event.button === 1;
      if (!this.pan && (middle || hand || (this.spaceHeld && event.pointerType !== "touch"))) {
        this.pan = { pointerId: event.pointerId, last: [event.clientX, event.clientY] };
        this.canvas.setPointerCapture(event.pointerId);
        return true;
      }
      return false;
    }

    pointerMove(event) {
      if (this.touches.has(event.pointerId)) {
        this.touches.set(event.pointerId, [event.clientX, event.clientY]);
        if (this.pinch) {
          this.movePinch();
          return true;
        }
      }
      if (this.pan && this.pan.pointerId === event.pointerId) {
        const [lastX, lastY] = this.pan.last;
        this.pan.last = [event.clientX, event.clientY];
        this.panBy(event.clientX - lastX, event.clientY - lastY);
        return true;
      }
      return this.afterPinch && this.touches.has(event.pointerId);
    }

    /* A pointer went up or was cancelled: true when it was the view's. */
    pointerUp(event) {
      const wasTouch = this.touches.delete(event.pointerId);
      if (this.pinch && wasTouch) {
        if (this.pinch.ids.indexOf(event.pointerId) >= 0) {
          this.pinch = null;
          this.afterPinch = this.touches.size > 0;
        }
        return true;
      }
      if (this.pan && this.pan.pointerId === event.pointerId) {
        this.pan = null;
        return true;
      }
      if (this.afterPinch && wasTouch) {
        this.afterPinch = this.touches.size > 0;
        return true;
      }
      return false;
    }

    busy() {
      return Boolean(this.pinch || this.pan);
    }

    startPinch() {
      const ids = Array.from(this.touches.keys()).slice(0, 2);
      const [a, b] = ids.map((id) => this.touches.get(id));
      const middle = [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];
      this.pinch = {
        ids,
        distance: Math.max(Math.hypot(a[0] - b[0], a[1] - b[1]), 1),
        zoom: this.zoom,
        anchor: this.toDoc(middle[0], middle[1]),  // the document point between the fingers stays between them
      };
    }

    movePinch() {
      const [a, b] = this.pinch.ids.map((id) => this.touches.get(id));
      const box = this.box();
      const distance = Math.max(Math.hypot(a[0] - b[0], a[1] - b[1]), 1);
      const zoom = Math.min(Math.max(this.pinch.zoom * distance / this.pinch.distance, MIN_ZOOM), MAX_ZOOM);
      const s = this.base() * zoom;
      const middle = [(a[0] + b[0]) / 2 - box.left, (a[1] + b[1]) / 2 - box.top];
      this.zoom = zoom;
      this.x = middle[0] - this.pinch.anchor[0] * s;
      this.y = middle[1] - this.pinch.anchor[1] * s;
      this.changed();
    }
  }

  window.ugcsiteView = { View, MIN_ZOOM, MAX_ZOOM };
})();
