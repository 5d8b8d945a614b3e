/* Geometry of the drawing's elements (docs/api.md, "Boards"), for the editor (static/js/editor.js):
   what a point touches (the eraser, the select tool), an element's bounds (the selection box),
   and an element moved by (dx, dy) or scaled about a point (the resize handles) so that it still
   lies within `limit`, the largest canvas the API allows (every point of a path, a line or an
   arrow, a text's anchor, a whole rectangle, ellipse or sticky note): the board grows to hold it.
   A rotated element turns about its pivot (live.js); its bounds and what it touches turn with it,
   while the API checks its unrotated coordinates. Elements are never changed in place: a moved
   element is a new object with the same id. */
(function () {
  "use strict";

  function round1(value) {
    return Math.round(value * 10) / 10;
  }

  function fontOf(size) {
    return size + "px sans-serif";
  }

  function textWidth(ctx, element) {
    ctx.save();
    ctx.font = fontOf(element.size);
    const width = ctx.measureText(element.text).width;
    ctx.restore();
    return width;
  }

  function segmentDistance(p, a, b) {
    const dx = b[0] - a[0];
    const dy = b[1] - a[1];
    const length2 = dx * dx + dy * dy;
    let t = length2 ? ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2 : 0;
    t = Math.max(0, Math.min(1, t));
    return Math.hypot(p[0] - (a[0] + t * dx), p[1] - (a[1] + t * dy));
  }

  function turn(point, pivot, degrees) {
    const a = degrees * Math.PI / 180;
    const dx = point[0] - pivot[0];
    const dy = point[1] - pivot[1];
    return [pivot[0] + dx * Math.cos(a) - dy * Math.sin(a), pivot[1] + dx * Math.sin(a) + dy * Math.cos(a)];
  }

  function hasBox(element) {
    return element.type === "rect" || element.type === "ellipse" || element.type === "sticky" || element.type === "image";
  }

  /* Whether point p (document units) lies within `radius` of what the element draws. */
  function hits(ctx, element, p, radius) {
    if (element.rotation) p = turn(p, window.ugcsiteLive.pivot(element), -element.rotation);
    if (element.type === "sticky" || element.type === "image") {
      return p[0] >= element.x - radius && p[0] <= element.x + element.w + radius
        && p[1] >= element.y - radius && p[1] <= element.y + element.h + radius;
    }
    if (element.type === "path" || element.type === "line" || element.type === "arrow") {
      const reach = radius + element.width / 2;
      const points = element.points;
      for (let i = 0; i < points.length; i++) {
        if (segmentDistance(p, points[i], points[Math.min(i + 1, points.length - 1)]) <= reach) return true;
      }
      return false;
    }
    if (element.type === "text") {
      const width = textWidth(ctx, element);
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

  /* The box an element covers as drawn (strokes' width included, turned with its rotation): [x0, y0, x1, y1]. */
  function bounds(ctx, element) {
    const box = unturnedBounds(ctx, element);
    if (!element.rotation) return box;
    const pivot = window.ugcsiteLive.pivot(element);
    const corners = [[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]].map((c) => turn(c, pivot, element.rotation));
    const xs = corners.map((c) => c[0]);
    const ys = corners.map((c) => c[1]);
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  }

  function unturnedBounds(ctx, element) {
    if (element.points) {
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (const [x, y] of element.points) {
        x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y);
      }
      const half = element.width / 2;
      return [x0 - half, y0 - half, x1 + half, y1 + half];
    }
    if (element.type === "text") {
      return [element.x, element.y - element.size, element.x + textWidth(ctx, element), element.y + element.size * 0.3];
    }
    const half = element.type === "sticky" ? 0.5 : element.type === "image" ? 0 : element.width / 2;
    return [element.x - half, element.y - half, element.x + element.w + half, element.y + element.h + half];
  }

  /* The extent of the coordinates the API checks against the canvas, and of a rotated box's
     turned corners (which an export at the board's size must hold): [x0, y0, x1, y1]. */
  function anchors(element) {
    if (element.rotation && element.w !== undefined) {
      const t = window.ugcsiteLive.turnedBox(element);
      return [Math.min(element.x, t[0]), Math.min(element.y, t[1]), Math.max(element.x + element.w, t[2]), Math.max(element.y + element.h, t[3])];
    }
    if (element.points) {
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (const [x, y] of element.points) {
        x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y);
      }
      return [x0, y0, x1, y1];
    }
    if (element.type === "text") return [element.x, element.y, element.x, element.y];
    return [element.x, element.y, element.x + element.w, element.y + element.h];
  }

  /* How far the elements may move together and stay on a width x height canvas:
     {dx: [low, high], dy: [low, high]}. */
  function moveRange(elements, width, height) {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const element of elements) {
      const box = anchors(element);
      x0 = Math.min(x0, box[0]); y0 = Math.min(y0, box[1]); x1 = Math.max(x1, box[2]); y1 = Math.max(y1, box[3]);
    }
    return { dx: [-x0, width - x1], dy: [-y0, height - y1] };
  }

  function within(value, low, high) {
    return Math.min(Math.max(value, low), high);
  }

  /* The element moved by (dx, dy), coordinates rounded to 0.1 and kept on the canvas. */
  function moved(element, dx, dy, width, height) {
    const copy = Object.assign({}, element);
    if (element.points) {
      copy.points = element.points.map(([x, y]) => [within(round1(x + dx), 0, width), within(round1(y + dy), 0, height)]);
      return copy;
    }
    copy.x = within(round1(element.x + dx), 0, width);
    copy.y = within(round1(element.y + dy), 0, height);
    if (hasBox(element)) {
      // The whole shape stays inside (x + w <= width), rounding included.
      while (copy.x > 0 && copy.x + copy.w > width) copy.x = Math.max(0, round1(copy.x - 0.1));
      while (copy.y > 0 && copy.y + copy.h > height) copy.y = Math.max(0, round1(copy.y - 0.1));
    }
    return copy;
  }

  /* The element scaled by (sx, sy) about the point `origin` (a resize handle's opposite corner):
     coordinates rounded to 0.1 and kept within a limit x limit canvas; a box at least 1 across; a
     text's size follows the height, within `sizes` ([low, high], docs/api.md). */
  function scaled(element, origin, sx, sy, limit, sizes) {
    const copy = Object.assign({}, element);
    const x = (value) => within(round1(origin[0] + (value - origin[0]) * sx), 0, limit);
    const y = (value) => within(round1(origin[1] + (value - origin[1]) * sy), 0, limit);
    if (element.points) {
      copy.points = element.points.map((p) => [x(p[0]), y(p[1])]);
      return copy;
    }
    if (hasBox(element)) {
      const xs = [x(element.x), x(element.x + element.w)].sort((a, b) => a - b);
      const ys = [y(element.y), y(element.y + element.h)].sort((a, b) => a - b);
      copy.x = Math.min(xs[0], limit - 1);
      copy.y = Math.min(ys[0], limit - 1);
      copy.w = Math.max(1, round1(xs[1] - copy.x));
      copy.h = Math.max(1, round1(ys[1] - copy.y));
      while (copy.x + copy.w > limit) copy.w = round1(copy.w - 0.1);
      while (copy.y + copy.h > limit) copy.h = round1(copy.h - 0.1);
    } else {
      copy.x = x(element.x);
      copy.y = y(element.y);
    }
    if (element.type === "text" || (element.type === "sticky" && sx === sy)) {
      copy.size = within(round1(element.size * Math.abs(sy)), sizes[0], sizes[1]);
    }
    return copy;
  }

  // Each element's extent, kept while the element lives: elements are never changed in place.
  const extents = new WeakMap();

  /* The canvas the elements need from 0, [right, bottom] (the server's element_extent, over all):
     O(elements) once each element's extent is known. */
  function extentOf(elements) {
    let right = 0, bottom = 0;
    for (const element of elements) {
      let known = extents.get(element);
      if (!known) {
        known = window.ugcsiteLive.extent(element);
        extents.set(element, known);
      }
      const [r, b] = known;
      right = Math.max(right, r);
      bottom = Math.max(bottom, b);
    }
    return [right, bottom];
  }

  window.ugcsiteShapes = { round1, fontOf, hits, bounds, anchors, moveRange, moved, scaled, extentOf, within, hasBox };
})();
