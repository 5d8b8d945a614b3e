/* Export of the drawing the editor shows (static/js/editor.js), made in the browser: SVG from the
   element model, in the look of the server's preview (feeds/svg.py: polylines with round caps,
   texts as <text> with their content escaped, lines and arrows as <line> with the arrow's head a
   <polyline>, a sticky note as a <g> of its paper and its lines), and PNG drawn by the same code as the canvas
   (live.js's drawElement) at the document's own size. Either is downloaded under the board's title. */
(function () {
  "use strict";

  // What XML 1.0 cannot carry (control characters, lone surrogates): dropped, as feeds/svg.py does.
  const XML_INVALID = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const COLOR = /^#[0-9a-fA-F]{6}$/;
  // Characters a file name may not hold on common systems, and control characters.
  const NOT_IN_NAMES = /[\\/:*?"<>|\x00-\x1f\x7f]+/g;

  function escapeXml(text) {
    return String(text).replace(XML_INVALID, "").replace(/&/g, "&amp;").replace(/</g, "&lt;")
      .replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
  }

  /* A coordinate as SVG text: integers as such, decimals to two places (feeds/svg.py's _num). */
  function num(value) {
    const number = Number(value);
    if (Number.isInteger(number)) return String(number);
    return number.toFixed(2).replace(/0+$/, "").replace(/\.$/, "");
  }

  function color(value) {
    return typeof value === "string" && COLOR.test(value) ? value : "#000000";
  }

  function attrs(pairs) {
    return Object.keys(pairs).map((name) => name + '="' + escapeXml(pairs[name]) + '"').join(" ");
  }

  /* The transform of a rotated element, about its pivot (feeds/svg.py's _rotation). */
  function rotation(element) {
    if (!element.rotation) return {};
    const [cx, cy] = window.ugcsiteLive.pivot(element);
    return { transform: "rotate(" + num(element.rotation) + " " + num(cx) + " " + num(cy) + ")" };
  }

  function svgElement(element) {
    const stroke = color(element.color);
    if (element.type === "line" || element.type === "arrow") {
      const line = { stroke, "stroke-width": num(element.width), "stroke-linecap": "round" };
      const [[x0, y0], [x1, y1]] = element.points;
      let out = "<line " + attrs(Object.assign({ x1: num(x0), y1: num(y0), x2: num(x1), y2: num(y1) }, line)) + "/>";
      if (element.type === "arrow") {
        const head = window.ugcsiteLive.arrowHead(element).map((p) => num(p[0]) + "," + num(p[1])).join(" ");
        out += "<polyline " + attrs(Object.assign({ points: head, fill: "none", "stroke-linejoin": "round" }, line)) + "/>";
      }
      return out;
    }
    if (element.type === "image") {  // embedded as a data: URI (feeds/svg.py does the same); a blank box until loaded
      const box = { x: num(element.x), y: num(element.y), width: num(element.w), height: num(element.h) };
      const href = window.ugcsiteLive.pictureDataUri(element.image);
      const inner = href
        ? "<image " + attrs(Object.assign({ preserveAspectRatio: "none", href }, box)) + "/>"
        : "<rect " + attrs(Object.assign({ fill: "#f1f3f5", stroke: "#000000", "stroke-opacity": "0.15", "stroke-width": "1" }, box)) + "/>";
      return "<g " + attrs(Object.assign({}, rotation(element), { "data-type": "image", "data-image": element.image })) + ">" + inner + "</g>";
    }
    if (element.type === "sticky") {
      const parts = ["<g " + attrs(Object.assign({}, rotation(element), { "data-type": "sticky" })) + ">",
        "<rect " + attrs({
          x: num(element.x), y: num(element.y), width: num(element.w), height: num(element.h), fill: color(element.fill),
          stroke: "#000000", "stroke-opacity": "0.15", "stroke-width": "1",
        }) + "/>"];
      for (const [line, x, y] of window.ugcsiteLive.stickyLines(element)) {
        if (!line) continue;
        parts.push("<text " + attrs({
          x: num(x), y: num(y), fill: stroke, "font-size": num(element.size), "font-family": "sans-serif", "xml:space": "preserve",
        }) + ">" + escapeXml(line) + "</text>");
      }
      parts.push("</g>");
      return parts.join("");
    }
    if (element.type === "path") {
      return "<polyline " + attrs({
        points: element.points.map((p) => num(p[0]) + "," + num(p[1])).join(" "), fill: "none", stroke,
        "stroke-width": num(element.width), "stroke-linecap": "round", "stroke-linejoin": "round",
      }) + "/>";
    }
    if (element.type === "text") {
      return "<text " + attrs(Object.assign({
        x: num(element.x), y: num(element.y), fill: stroke, "font-size": num(element.size),
        "font-family": "sans-serif", "xml:space": "preserve",
      }, rotation(element))) + ">" + escapeXml(element.text) + "</text>";
    }
    if (element.type === "rect" || element.type === "ellipse") {
      const paint = Object.assign({ fill: element.fill ? color(element.fill) : "none", stroke, "stroke-width": num(element.width) }, rotation(element));
      if (element.type === "rect") {
        return "<rect " + attrs(Object.assign({ x: num(element.x), y: num(element.y), width: num(element.w), height: num(element.h) }, paint)) + "/>";
      }
      return "<ellipse " + attrs(Object.assign({
        cx: num(element.x + element.w / 2), cy: num(element.y + element.h / 2), rx: num(element.w / 2), ry: num(element.h / 2),
      }, paint)) + "/>";
    }
    return "";
  }

  /* The whole drawing as one SVG document (a string). */
  function toSvg(doc, title) {
    const width = num(doc.width);
    const height = num(doc.height);
    const parts = ['<?xml version="1.0" encoding="UTF-8"?>',
      '<svg xmlns="http://www.w3.org/2000/svg" ' + attrs({ width, height, viewBox: "0 0 " + width + " " + height }) + ">"];
    if (title) parts.push("<title>" + escapeXml(title) + "</title>");
    parts.push("<rect " + attrs({ width: "100%", height: "100%", fill: color(doc.background) }) + "/>");
    for (const element of doc.elements) parts.push(svgElement(element));
    parts.push("</svg>");
    return parts.join("\n");
  }

  /* The drawing as a PNG of doc.width x doc.height pixels (a Promise of a Blob). */
  function toPng(doc, drawElement) {
    const canvas = document.createElement("canvas");
    canvas.width = doc.width;
    canvas.height = doc.height;
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = color(doc.background);
    ctx.fillRect(0, 0, doc.width, doc.height);
    for (const element of doc.elements) drawElement(ctx, element);
    return new Promise((resolve, reject) => {
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("The browser could not make a PNG."))), "image/png");
    });
  }

  /* A file name from the board's title ("board" when it has none) and an extension. */
  function fileName(title, extension) {
    const base = String(title || "").replace(NOT_IN_NAMES, " ").replace(/\s+/g, " ").trim().replace(/^\.+/, "").slice(0, 100);
    return (base || "board") + "." + extension;
  }

  function download(blob, name) {
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.hidden = true;
    document.body.appendChild(link);
    link.click();
    link.remove();
    window.setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  window.ugcsiteExport = { toSvg, toPng, fileName, download, escapeXml };
})();
