// A real ActivityPub peer for ugcsite's federation tests: Fedify 2.3.6 (its own signatures, its
// own JSON-LD processing, its own checks), run under the Node 22 of this folder's lock, with one
// actor, "peer", at http://127.0.0.1:PORT/users/peer. ugcsite/tests/fedify_peer.py starts it and
// drives it through a small control API on the same port, under /control/ (JSON in and out):
//
//   GET  /control/health                      {"ok": true, "actor": <the peer's actor id>}
//   POST /control/lookup    {uri}             the object at uri (an actor, a note), as JSON-LD
//   POST /control/webfinger {resource}        the JRD Fedify's WebFinger client reads for resource
//   POST /control/follow    {actor}           sends Follow; answers {"id"} of the Follow
//   POST /control/like      {actor, object}   sends Like of object to actor's inbox
//   POST /control/announce  {actor, object}   sends Announce (a boost), to actor and Public
//   POST /control/reply     {actor, inReplyTo, content}  sends Create(Note) inReplyTo
//   POST /control/undo      {actor, id}       sends Undo of an activity this peer sent before
//   POST /control/delete    {actor, id}       sends Delete of a note this peer created (a Tombstone)
//   GET  /control/received                    {"items"}: every activity its inboxes were sent, in order,
//        {"verified", "reason" (when not), "signedBy" (the keyId the POST names), "scheme"
//         ("draft-cavage" or "rfc9421"), "type", "id", "actor",
//         "activity" (as Fedify parsed it, written back as compact JSON-LD), "raw" (the JSON as
//         it was posted), "at"}
//   POST /control/clear                       forgets what it received (and any failing statuses)
//   POST /control/fail      {statuses}        its inboxes answer these statuses to the next POSTs,
//                                             one each, in order (kept as "refused"), then as usual
//
// A send answers {"id", "activity"} once the recipient's inbox took it (no queue: Fedify delivers
// at once), or 502 {"error"} with what the inbox answered. Activities whose signature Fedify
// could not verify are kept too (verified: false, with Fedify's reason) and answered 401, as
// Fedify does by default. `allowPrivateAddress: true` lets it fetch from and deliver to
// 127.0.0.1 over plain HTTP: for tests only.
//
// Usage: node peer.mjs PORT [FIRST_KNOCK]   (FIRST_KNOCK: "draft-cavage-http-signatures-12", as
// Mastodon signs, by default; or "rfc9421", Fedify's own default)

import http from "node:http";
import { createFederation, generateCryptoKeyPair, MemoryKvStore } from "@fedify/fedify";
import {
  Accept,
  Activity,
  Announce,
  Create,
  Delete,
  Endpoints,
  Follow,
  Like,
  Note,
  Person,
  PUBLIC_COLLECTION,
  Tombstone,
  Undo,
} from "@fedify/vocab";

const port = Number(process.argv[2]);
const firstKnock = process.argv[3] || "draft-cavage-http-signatures-12";
if (!port) {
  console.error("usage: node peer.mjs PORT [FIRST_KNOCK]");
  process.exit(2);
}
const origin = `http://127.0.0.1:${port}`;
const IDENTIFIER = "peer";
const keys = [await generateCryptoKeyPair("RSASSA-PKCS1-v1_5")];
const received = [];
const raw = new Map(); // activity id -> the JSON its inbox POST carried, as sent (Fedify's own
// vocabulary has no term for some of what Mastodon reads, e.g. an attachment's blurhash)
const sent = new Map(); // id -> the Activity this peer sent (what an Undo names)
const notes = new Map(); // id -> the Note this peer created (dereferenceable at its id)
let counter = 0;
const failing = []; // statuses the inboxes answer next, one a POST, before Fedify sees it (then Fedify answers)

const federation = createFederation({
  kv: new MemoryKvStore(),
  origin,
  allowPrivateAddress: true,
  firstKnock,
  // No queue: sendActivity delivers before it returns, so a control call's answer says how the
  // recipient's inbox took it (a queue would retry in the background instead).
});

federation
  .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    if (identifier !== IDENTIFIER) return null;
    const pairs = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      name: "Fedify test peer",
      summary: "The peer of ugcsite's federation tests",
      url: ctx.getActorUri(identifier),
      inbox: ctx.getInboxUri(identifier),
      endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
      publicKey: pairs[0].cryptographicKey,
      assertionMethods: pairs.map((pair) => pair.multikey),
    });
  })
  .setKeyPairsDispatcher(async (_ctx, identifier) => (identifier === IDENTIFIER ? keys : []));

federation.setObjectDispatcher(Note, "/notes/{id}", (ctx, values) => notes.get(ctx.getObjectUri(Note, values).href) ?? null);

async function keep(ctx, activity, verified, reason) {
  let json = null;
  try {
    json = await activity.toJsonLd({ format: "compact" });
  } catch (error) {
    json = { error: String(error) };
  }
  const posted = raw.get(activity.id?.href) ?? null;
  received.push({
    verified,
    reason: reason ? JSON.parse(JSON.stringify(reason, (_k, v) => (v instanceof URL ? v.href : v))) : null,
    signedBy: posted?.signedBy ?? null,
    scheme: posted?.scheme ?? null,
    type: json && json.type ? json.type : activity.constructor.name,
    id: activity.id?.href ?? null,
    actor: activity.actorId?.href ?? null,
    activity: json,
    raw: posted?.json ?? null,
    at: new Date().toISOString(),
  });
}

federation
  .setInboxListeners("/users/{identifier}/inbox", "/inbox")
  .on(Activity, async (ctx, activity) => {
    await keep(ctx, activity, true, null);
  })
  .onUnverifiedActivity(async (ctx, activity, reason) => {
    await keep(ctx, activity, false, reason);
  })
  .onError((_ctx, error) => {
    received.push({ verified: null, type: "error", error: String(error), at: new Date().toISOString() });
  });

const context = () => federation.createContext(new URL(origin), undefined);

async function actorOf(uri) {
  const actor = await context().lookupObject(uri);
  if (actor === null || actor.inboxId === null) throw new Error(`no actor with an inbox at ${uri}`);
  return actor;
}

function newId(kind) {
  counter += 1;
  return new URL(`${origin}/activities/${kind}-${Date.now()}-${counter}`);
}

async function send(recipient, activity) {
  const ctx = context();
  await ctx.sendActivity({ identifier: IDENTIFIER }, recipient, activity, { preferSharedInbox: true });
  sent.set(activity.id.href, activity);
  return { id: activity.id.href, activity: await activity.toJsonLd({ format: "compact" }) };
}

const me = () => context().getActorUri(IDENTIFIER);

const control = {
  "GET /control/health": async () => ({ ok: true, actor: me().href, firstKnock }),
  "GET /control/received": async () => ({ items: received }),
  "POST /control/fail": async ({ statuses }) => {
    failing.splice(0, failing.length, ...statuses);
    return { ok: true, failing };
  },
  "POST /control/clear": async () => {
    received.length = 0;
    failing.length = 0;
    return { ok: true };
  },
  "POST /control/lookup": async ({ uri }) => {
    const found = await context().lookupObject(uri);
    if (found === null) return [404, { error: `nothing found at ${uri}` }];
    return { type: found.constructor.name, object: await found.toJsonLd({ format: "compact" }) };
  },
  "POST /control/webfinger": async ({ resource }) => {
    // Fedify asks https://HOST/.well-known/webfinger for an acct: resource, as Mastodon does, so
    // on loopback HTTP only a URL resource (asked of that URL's own scheme and host) can answer.
    const found = await context().lookupWebFinger(resource);
    if (found === null) return [404, { error: `no WebFinger answer for ${resource}` }];
    return found;
  },
  "POST /control/follow": async ({ actor }) => {
    const target = await actorOf(actor);
    return send(target, new Follow({ id: newId("follow"), actor: me(), object: target.id }));
  },
  "POST /control/like": async ({ actor, object }) => {
    const target = await actorOf(actor);
    return send(target, new Like({ id: newId("like"), actor: me(), object: new URL(object) }));
  },
  "POST /control/announce": async ({ actor, object }) => {
    const target = await actorOf(actor);
    return send(
      target,
      new Announce({
        id: newId("announce"),
        actor: me(),
        object: new URL(object),
        to: PUBLIC_COLLECTION,
        cc: target.id,
      }),
    );
  },
  "POST /control/reply": async ({ actor, inReplyTo, content }) => {
    const target = await actorOf(actor);
    const id = newId("note");
    const note = new Note({
      id,
      attribution: me(),
      content,
      replyTarget: new URL(inReplyTo),
      to: PUBLIC_COLLECTION,
      cc: target.id,
    });
    notes.set(id.href, note);
    return send(
      target,
      new Create({ id: newId("create"), actor: me(), object: note, to: PUBLIC_COLLECTION, cc: target.id }),
    );
  },
  "POST /control/undo": async ({ actor, id }) => {
    const original = sent.get(id);
    if (!original) return [404, { error: `this peer sent no activity ${id}` }];
    const target = await actorOf(actor);
    return send(target, new Undo({ id: newId("undo"), actor: me(), object: original }));
  },
  "POST /control/delete": async ({ actor, id }) => {
    if (!notes.has(id)) return [404, { error: `this peer made no note ${id}` }];
    notes.delete(id);
    const target = await actorOf(actor);
    return send(
      target,
      new Delete({ id: newId("delete"), actor: me(), object: new Tombstone({ id: new URL(id) }), to: PUBLIC_COLLECTION }),
    );
  },
};

function answer(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks);
}

// The key a POST names, and how it is signed: RFC 9421 (Signature-Input's keyid) or draft-cavage
// (Signature's keyId). Fedify checks the signature itself; this only says whose it claims to be.
function signer(headers) {
  const input = headers["signature-input"];
  if (input) {
    const match = /keyid="([^"]+)"/.exec(input);
    return { scheme: "rfc9421", signedBy: match ? match[1] : null };
  }
  const signature = headers.signature;
  if (signature) {
    const match = /keyId="([^"]+)"/.exec(signature);
    return { scheme: "draft-cavage", signedBy: match ? match[1] : null };
  }
  return { scheme: null, signedBy: null };
}

const server = http.createServer(async (req, res) => {
  const body = await readBody(req);
  const url = new URL(req.url, origin);
  const route = control[`${req.method} ${url.pathname}`];
  if (route) {
    try {
      const result = await route(body.length ? JSON.parse(body.toString("utf8")) : {});
      if (Array.isArray(result)) return answer(res, result[0], result[1]);
      return answer(res, 200, result);
    } catch (error) {
      return answer(res, 502, { error: String(error && error.stack ? error.stack : error) });
    }
  }
  // Everything else is the federation's: the actor, its key, its inboxes, WebFinger, the notes.
  if (req.method === "POST" && url.pathname.endsWith("/inbox")) {
    if (failing.length) {
      const status = failing.shift();
      received.push({ verified: null, type: "refused", status, at: new Date().toISOString() });
      return answer(res, status, { error: `told to answer ${status}` });
    }
    try {
      const sent = JSON.parse(body.toString("utf8"));
      if (sent && typeof sent.id === "string") raw.set(sent.id, { json: sent, ...signer(req.headers) });
    } catch {
      // not JSON: Fedify answers it
    }
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) value.forEach((v) => headers.append(name, v));
    else if (value !== undefined) headers.set(name, value);
  }
  const request = new Request(url, {
    method: req.method,
    headers,
    body: ["GET", "HEAD"].includes(req.method) ? undefined : body,
  });
  let response;
  try {
    response = await federation.fetch(request, {
      contextData: undefined,
      onNotFound: () => new Response("Not found\n", { status: 404 }),
      onNotAcceptable: () => new Response("Not acceptable\n", { status: 406 }),
    });
  } catch (error) {
    return answer(res, 500, { error: String(error) });
  }
  const out = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(out);
});

server.listen(port, "127.0.0.1", () => {
  console.log(`fedify peer listening on ${origin} (first knock: ${firstKnock})`);
});
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => server.close(() => process.exit(0)));
