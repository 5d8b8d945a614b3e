/* Relative times ("5 minutes ago") on every <time data-relative> of the page, kept current each
   minute; the exact time stays in the element's title (hover) and datetime. They are those of the
   server's {{ when|ago }} (feeds/templatetags/times.py), so a refresh changes nothing: the same
   calendar (Django's timesince, ported below) and the same words, read from the page's
   times-config JSON. */
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("times-config").textContent);
  // timesince's MONTHS_DAYS: February has 28 days even in a leap year, as Django counts it.
  const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  const CHUNKS = [7 * 86400e3, 86400e3, 3600e3, 60e3];  // week, day, hour, minute (ms)
  const exactFormat = new Intl.DateTimeFormat("en-US", {
    month: "short", day: "numeric", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC" });

  function timeOfDay(date) {
    return date.getTime() - Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  }

  /* Django's timesince(then, now) in UTC, for then before now: [years, months, weeks, days,
     hours, minutes], whole calendar years and months first, then the rest from a pivot date. */
  function timesince(then, now) {
    let totalMonths = (now.getUTCFullYear() - then.getUTCFullYear()) * 12 + now.getUTCMonth() - then.getUTCMonth();
    if (then.getUTCDate() > now.getUTCDate() || (then.getUTCDate() === now.getUTCDate() && timeOfDay(then) > timeOfDay(now))) {
      totalMonths -= 1;
    }
    const years = Math.floor(totalMonths / 12), months = totalMonths - years * 12;
    let pivot = then.getTime();
    if (years || months) {
      // The month's day is clamped to its end; the pivot keeps then's time to the second.
      const month = (then.getUTCMonth() + months) % 12;
      const year = then.getUTCFullYear() + years + (then.getUTCMonth() + months >= 12 ? 1 : 0);
      pivot = Date.UTC(year, month, Math.min(MONTH_DAYS[month], then.getUTCDate()),
        then.getUTCHours(), then.getUTCMinutes(), then.getUTCSeconds());
    }
    let remaining = now.getTime() - pivot;
    const parts = [years, months];
    for (const chunk of CHUNKS) {
      const count = Math.floor(remaining / chunk);
      parts.push(count);
      remaining -= count * chunk;
    }
    return parts;
  }

  /* What {{ when|ago }} says of iso at now (ms since the epoch, the clock's by default): the
     largest unit only (timesince's depth 1). */
  function ago(iso, now) {
    const when = new Date(iso);
    if (isNaN(when.getTime())) return "";
    const at = new Date(now === undefined ? Date.now() : now);
    if (at - when < config.justNowSeconds * 1000) return config.justNow;
    const parts = timesince(when, at);
    const unit = parts.findIndex((count) => count !== 0);  // one is, a minute or more having passed
    const count = parts[unit];
    return config.ago.replace("{}", config.units[unit][count === 1 ? 0 : 1].replace("{n}", count));
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

  window.ugcsiteTimes = { ago, exact, show, timesince };
  document.addEventListener("DOMContentLoaded", refresh);
  setInterval(refresh, 60 * 1000);
})();
