/* Helpers every page shares (loaded first, deferred): the CSRF token for same-origin API calls,
   JSON requests with the session, and dates written as the server writes them. */
(function () {
  "use strict";

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  /* A JSON request with the session cookie; unsafe methods carry X-CSRFToken (ugcsite/api.py).
     Resolves to {ok, status, data}; data is the parsed body or null. Network failures reject. */
  async function api(url, options) {
    const opts = options || {};
    const method = (opts.method || "GET").toUpperCase();
    const headers = { Accept: "application/json" };
    if (method !== "GET" && method !== "HEAD") headers["X-CSRFToken"] = csrfToken();
    let body;
    if (opts.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(opts.json);
    }
    const response = await fetch(url, { method, headers, body, credentials: "same-origin" });
    let data = null;
    const type = response.headers.get("Content-Type") || "";
    if (type.indexOf("application/json") === 0) {
      try { data = await response.json(); } catch (e) { data = null; }
    }
    return { ok: response.ok, status: response.status, data };
  }

  /* The sentence to show a person for a failed call: the API's own `detail` on a 4xx (a 401's
     speaks of bearer tokens, so a person whose session ended is told what to do instead). */
  function problem(result) {
    if (result.status === 401) {
      return "You are no longer logged in. Log in again in another tab (this page keeps what you did), then try again.";
    }
    if (result.data && typeof result.data.detail === "string") return result.data.detail;
    if (result.status >= 500) return "Something went wrong on our side (" + result.status + "). Try again in a moment.";
    return "The request failed (" + result.status + ").";
  }

  const dateFormat = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", year: "numeric", timeZone: "UTC" });

  /* "Nov 22, 2025", like the templates' {{ date|date:"M j, Y" }} (the site's time zone is UTC). */
  function shortDate(iso) {
    const when = new Date(iso);
    return isNaN(when.getTime()) ? "" : dateFormat.format(when);
  }

  window.ugcsite = { csrfToken, api, problem, shortDate };
})();
