/* Relative times ("5 minutes ago") on every <time data-relative> of the page, kept current each
   minute; the exact time stays in the element's title (hover) and datetime. The words are those of
   the server's {{ when|ago }} (feeds/templatetags/times.py), so a refresh changes nothing. */
(function () {
  "use strict";
  const UNITS = [["year", 365 * 86400], ["month", 30 * 86400], ["week", 7 * 86400], ["day", 86400], ["hour", 3600], ["minute", 60]];
  const exactFormat = new Intl.DateTimeFormat("en-US", {
    month: "short", day: "numeric", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC" });

  function ago(iso, now) {
    const when = new Date(iso);
    if (isNaN(when.getTime())) return "";
    const seconds = Math.max(0, ((now || Date.now()) - when.getTime()) / 1000);
    for (const [name, size] of UNITS) {
      const count = Math.floor(seconds / size);
      if (count >= 1) return count + "\u00a0" + name + (count === 1 ? "" : "s") + " ago";
    }
    return "just now";
  }

  function exact(iso) {
    const when = new Date(iso);
    return isNaN(when.getTime()) ? "" : exactFormat.format(when).replace(" at ", ", ") + " UTC";
  }

  /* Sets an element's relative text, its hover title and its datetime. */
  function show(element, iso) {
    element.dateTime = iso;
    element.setAttribute("data-relative", "");
    element.title = exact(iso);
    element.textContent = ago(iso);
  }

  function refresh() {
    document.querySelectorAll("time[data-relative]").forEach(function (element) {
      element.textContent = ago(element.getAttribute("datetime"));
    });
  }

  window.ugcsiteTimes = { ago, exact, show };
  document.addEventListener("DOMContentLoaded", refresh);
  setInterval(refresh, 60 * 1000);
})();
