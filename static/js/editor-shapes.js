/* Geometry of the drawing's elements (docs/api.md, "Boards"), for the editor (static/js/editor.js):
   what a point touches (the eraser, the select tool), an element's bounds (the selection box),
   and an element moved by (dx, dy) so that it still lies on the canvas, as the API requires
   (every point of a path, a text's anchor, a whole rectangle or ellipse). Elements are never
   changed in place: a moved element is a new object with the same id. */
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

  /* Whether point p (document units) lies within `radius` of what the element draws. */
  function hits(ctx, element, p, radius) {
    if (element.type === "path") {
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

  /* The box an element covers as drawn (strokes' width included): [x0, y0, x1, y1]. */
  function bounds(ctx, element) {
    if (element.type === "path") {
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
    const half = element.width / 2;
    return [element.x - half, element.y - half, element.x + element.w + half, element.y + element.h + half];
  }

  /* The extent of the coordinates the API checks against the canvas: [x0, y0, x1, y1]. */
  function anchors(element) {
    if (element.type === "path") {
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
    if (element.type === "path") {
      copy.points = element.points.map(([x, y]) => [within(round1(x + dx), 0, width), within(round1(y + dy), 0, height)]);
      return copy;
    }
    copy.x = within(round1(element.x + dx), 0, width);
    copy.y = within(round1(element.y + dy), 0, height);
    if (element.type === "rect" || element.type === "ellipse") {
      // The whole shape stays inside (x + w <= width), rounding included.
      while (copy.x > 0 && copy.x + copy.w > width) copy.x = Math.max(0, round1(copy.x - 0.1));
      while (copy.y > 0 && copy.y + copy.h > height) copy.y = Math.max(0, round1(copy.y - 0.1));
    }
    return copy;
  }

  window.ugcsiteShapes = { round1, fontOf, hits, bounds, moveRange, moved, within };
})();
