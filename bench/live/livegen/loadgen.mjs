#!/usr/bin/env node
// The live boards' load generator (bench/README.md, "The live load generator and the y-websocket
// peer"): every client of every board in this one Node process, so one clock times every op, and
// the generator leaves the server as much of the 2 cores as it can.
//
//   node loadgen.mjs CONFIG.json   -> one JSON result on stdout, progress on stderr
//
// CONFIG (JSON; the defaults in DEFAULTS below):
//   mode      "ugc" (our server, docs/api.md "Shared boards, live") or "yjs" (@y/websocket-server)
//   boards    ugc: [{"url": "ws://HOST:PORT/ws/boards/ID", "tokens": [...]}], a client a bearer token
//             yjs: [{"url": "ws://HOST:PORT", "room": "b1", "clients": N}], N >= 2
//   rate      ops a second a client, at exponential gaps (Poisson); seconds: how long they send
//   pause     seconds between the last connection and the first op (the joins settle)
//   settle    seconds after the last send for the last receipts; sooner if every op is in
//   max_elements, max_points, points: a board's limits (feeds.rules) and a stroke's points
//   idle      connect, print {"connected": n}, send nothing, hold until SIGTERM, SIGINT or the
//             end of a piped stdin, then print the counts
//   connect_concurrency: connections being opened at once; deflate: offer permessage-deflate
//   yjs_apply every yjs client applies every update to its doc, receipts from its observe events
// An op is one stroke added (ugc: an "add" op; yjs: ymap.set(key, stroke) in the room's one
// Y.Map), or, once a client has `keep` strokes of its own on the board (the board's room under
// max_elements and max_points, shared by its clients), the removal of its oldest. Latency: from
// the send to the receipt by the board's last receiver; an op not received by every receiver
// within `settle` is lost.
// ugc: every client, the sender included, receives an op frame for every op (read from its bytes:
// only the prefix and the client_op_id); the echo to the sender is the server accepting it.
// yjs: the server relays each update to every client, the sender included, but the sender's doc
// had it first, so the receivers are the others, and an op is accepted when one of them has it.
// A relayed update is decoded (Y.decodeUpdate: its key, or its delete set) when its frame arrives,
// not applied: 200 docs in one process applying every update cost more than one core (each doc's
// transactions are O(its writers)), and a ugc client applies nothing either. yjs_apply restores
// full clients for small runs.
// The caller raises `ulimit -n` for thousands of connections; this process raises nothing.

import { readFileSync, fstatSync } from "node:fs";
import { performance, monitorEventLoopDelay } from "node:perf_hooks";
import WebSocket from "ws";

const DEFAULTS = {
  rate: 1.0,
  seconds: 15,
  settle: 3,
  pause: 2,
  idle: false,
  connect_concurrency: 200,
  points: 10,
  deflate: false,
  yjs_apply: false,
};
const COLOR = "#1d2330";
const WIDTH = 3;
const CANVAS = 980; // every point within 0..CANVAS, inside the smallest board make_world creates
const CONNECT_TIMEOUT_MS = 60_000;
const CLOSE_WAIT_MS = 3_000; // the goodbyes at the end, then exit whatever is left
const LOOP_DELAY_WARN_MS = 100; // past this the generator, not the server, may be what is slow

const config = { ...DEFAULTS, ...JSON.parse(readFileSync(process.argv[2], "utf8")) };
if (!["ugc", "yjs"].includes(config.mode))
  fail(`mode must be "ugc" or "yjs", not ${JSON.stringify(config.mode)}`);
if (!Array.isArray(config.boards) || config.boards.length === 0) fail("boards must be a non-empty list");
if (!config.idle && !(config.max_elements > 0 && config.max_points > 0)) {
  fail(
    "max_elements and max_points (feeds.rules.MAX_ELEMENTS, MAX_POINTS) are needed to keep a board within them",
  );
}

function fail(message) {
  process.stderr.write(`loadgen: ${message}\n`);
  process.exit(2);
}

function say(message) {
  process.stderr.write(`loadgen: ${message}\n`);
}

// A prefix of this run's op keys and element ids, so runs on the same boards never reuse an id.
const RUN = Math.floor(Math.random() * 36 ** 4)
  .toString(36)
  .padStart(4, "0");

// --- the bookkeeping every mode shares ----------------------------------------------------------

const boards = config.boards.map((spec, index) => ({ spec, index, clients: [], open: 0, keep: 0 }));
const clients = [];
const ops = new Map(); // key -> {t0, need, got, sender, done}
const latencies = [];
const counts = {
  sent: 0,
  accepted: 0,
  deliveries: 0,
  errors: 0,
  closed: 0,
  connectFailed: 0,
  pending: 0,
  rehellos: 0,
};
const closeCodes = {};
let measuring = false; // deliveries count from the first send on, not the connections' set-up
let ending = false; // our own closes at the end are not the server's

/** An op's receipt by client `receiver` at `now`; `key` is the op's client_op_id (ugc) or map key (yjs). */
function receipt(key, receiver, now) {
  const op = ops.get(key);
  if (op === undefined || op.done) return;
  if (config.mode === "yjs" && receiver === op.sender) return; // the relay's echo: the sender had it
  if (config.mode === "ugc" ? receiver === op.sender : op.got === 0) counts.accepted++;
  op.got++;
  if (op.got >= op.need) {
    op.done = true;
    counts.pending--;
    latencies.push(now - op.t0);
  }
}

function track(key, sender) {
  const board = sender.board;
  const need = config.mode === "ugc" ? board.open : board.open - 1;
  ops.set(key, { t0: performance.now(), need, got: 0, sender: sender.index, done: need <= 0 });
  counts.sent++;
  if (need > 0) counts.pending++;
}

function closedByServer(client, code) {
  if (!client.open) return;
  client.open = false;
  client.board.open--;
  if (ending) return;
  counts.closed++;
  closeCodes[code] = (closeCodes[code] || 0) + 1;
}

function strokePoints() {
  const n = config.points;
  const x = Math.floor(Math.random() * (CANVAS - n));
  const y = Math.floor(Math.random() * (CANVAS - 20));
  const points = new Array(n);
  for (let k = 0; k < n; k++) points[k] = [x + k, y + ((k * 7) % 20)];
  return points;
}

// Each board's own strokes a client may leave on it: what max_elements and max_points leave once
// the board's present content (a hello's doc, a synced map) is counted, shared among its clients.
function setKeep(board, elements, points) {
  const room = Math.min(
    config.max_elements - elements,
    Math.floor((config.max_points - points) / config.points),
  );
  board.keep = Math.max(1, Math.floor(room / Math.max(1, board.clients.length)));
  if (room < board.clients.length)
    say(`board ${board.index} is nearly full (${elements} elements): ops may be refused`);
}

// --- ugc: our server, JSON frames ---------------------------------------------------------------

const OP_PREFIXES = ['{"type":"op"', '{"type": "op"'].map((s) => Buffer.from(s));
const ERROR_PREFIXES = ['{"type":"error"', '{"type": "error"'].map((s) => Buffer.from(s));
const HELLO_PREFIXES = ['{"type":"hello"', '{"type": "hello"'].map((s) => Buffer.from(s));
const TYPED = Buffer.from('{"type"');
const CID_KEY = Buffer.from('"client_op_id"');

function startsWith(buffer, prefix) {
  return buffer.length >= prefix.length && buffer.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
}

/** The client_op_id of an op frame, read from its bytes (no JSON.parse), or null. */
function frameCid(buffer) {
  const at = buffer.indexOf(CID_KEY);
  if (at < 0) return null;
  let i = at + CID_KEY.length;
  while (buffer[i] === 0x20 || buffer[i] === 0x3a) i++; // the ': '
  if (buffer[i] !== 0x22) return null; // null: not one of ours
  const end = buffer.indexOf(0x22, i + 1);
  return end < 0 ? null : buffer.toString("latin1", i + 1, end);
}

function ugcFrame(client, data, isBinary) {
  const now = performance.now();
  if (isBinary) return;
  if (startsWith(data, OP_PREFIXES[0]) || startsWith(data, OP_PREFIXES[1])) {
    if (measuring) counts.deliveries++;
    const cid = frameCid(data);
    if (cid !== null) receipt(cid, client.index, now);
  } else if (startsWith(data, ERROR_PREFIXES[0]) || startsWith(data, ERROR_PREFIXES[1])) {
    counts.errors++;
  } else if (startsWith(data, HELLO_PREFIXES[0]) || startsWith(data, HELLO_PREFIXES[1])) {
    counts.rehellos++; // the server fell too far behind and sent the whole doc: its ops never come
  } else if (!startsWith(data, TYPED)) {
    // The frames' keys in another order: read this one whole (correct, only slower).
    const message = JSON.parse(data.toString());
    if (message.type === "op") {
      if (measuring) counts.deliveries++;
      if (typeof message.client_op_id === "string") receipt(message.client_op_id, client.index, now);
    } else if (message.type === "error") counts.errors++;
    else if (message.type === "hello") counts.rehellos++;
  }
}

function connectUgc(client) {
  return new Promise((resolve) => {
    const ws = new WebSocket(client.url, {
      headers: { Authorization: `Bearer ${client.token}` },
      perMessageDeflate: config.deflate,
      handshakeTimeout: CONNECT_TIMEOUT_MS,
      maxPayload: 64 * 1024 * 1024,
    });
    client.ws = ws;
    let hello = false;
    const timer = setTimeout(() => {
      if (!hello) ws.terminate();
    }, CONNECT_TIMEOUT_MS);
    ws.on("message", (data, isBinary) => {
      if (hello) return ugcFrame(client, data, isBinary);
      const message = JSON.parse(data.toString());
      if (message.type !== "hello") return;
      hello = true;
      clearTimeout(timer);
      client.open = true;
      client.board.open++;
      const elements = message.doc?.elements ?? [];
      if (!client.board.seen) {
        client.board.seen = true;
        client.board.present = [
          elements.length,
          elements.reduce((sum, e) => sum + (e.points?.length ?? 0), 0),
        ];
      }
      resolve(true);
    });
    ws.on("close", (code) => {
      clearTimeout(timer);
      if (!hello) {
        counts.connectFailed++;
        closeCodes[code] = (closeCodes[code] || 0) + 1;
        resolve(false);
      } else closedByServer(client, code);
    });
    ws.on("error", (error) => {
      if (!hello && counts.connectFailed < 5) say(`connect ${client.url}: ${error.message}`);
    });
  });
}

function ugcSend(client, cid, op) {
  client.ws.send(`{"type":"op","client_op_id":"${cid}","op":${op}}`);
}

function ugcOp(client) {
  const cid = `${RUN}${client.index}_${client.nextOp++}`;
  let op;
  if (client.mine.length >= client.board.keep) {
    op = `{"kind":"remove","id":"${client.mine.shift()}"}`;
  } else {
    op = `{"kind":"add","element":{"type":"path","color":"${COLOR}","width":${WIDTH},"id":"${cid}","points":${JSON.stringify(strokePoints())}}}`;
    client.mine.push(cid);
  }
  track(cid, client);
  ugcSend(client, cid, op);
}

// --- yjs: the peer, yjs clients through y-websocket's WebsocketProvider -------------------------

let Y, WebsocketProvider;
if (config.mode === "yjs") {
  // Loaded only for this mode: the ugc mode need not pay for them.
  Y = await import("yjs");
  WebsocketProvider = (await import("y-websocket")).WebsocketProvider;
  process.setMaxListeners(0); // each provider listens for the process's exit
}

const itemKeys = new Map(); // "client:clock" of each item set -> its key: a relayed delete names only the item

/** A frame from the peer: a relayed update (y-websocket's messageSync, then messageYjsUpdate) is
 * a delivery; unless the clients apply updates (yjs_apply), it is decoded, not applied, and its
 * items (adds) and delete set (removes) are the receipts. */
function yjsFrame(client, data) {
  const now = performance.now();
  const bytes = new Uint8Array(data);
  if (bytes[0] !== 0 || bytes[1] !== 2) return;
  if (measuring) counts.deliveries++;
  if (config.yjs_apply) return; // the receipts come from the doc's observe
  let length = 0;
  let shift = 0;
  let i = 2;
  let byte;
  do {
    byte = bytes[i++];
    length += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  const update = Y.decodeUpdate(bytes.subarray(i, i + length));
  for (const struct of update.structs) if (struct.parentSub) receipt(struct.parentSub, client.index, now);
  update.ds.clients.forEach((ranges, id) => {
    for (const range of ranges) {
      for (let clock = range.clock; clock < range.clock + range.len; clock++) {
        const key = itemKeys.get(`${id}:${clock}`);
        if (key !== undefined) receipt("-" + key, client.index, now);
      }
    }
  });
}

/** ws for a provider, with our compression choice, showing us every frame before the provider. */
class PeerSocket extends WebSocket {
  constructor(url, protocols) {
    super(url, protocols, { perMessageDeflate: config.deflate, handshakeTimeout: CONNECT_TIMEOUT_MS });
    this.on("message", (data) => yjsFrame(this.client, data));
  }
}

function connectYjs(client) {
  return new Promise((resolve) => {
    const doc = new Y.Doc();
    const map = doc.getMap("board");
    const provider = new WebsocketProvider(client.url, client.room, doc, {
      connect: false,
      WebSocketPolyfill: function (url, protocols) {
        return Object.assign(new PeerSocket(url, protocols), { client });
      },
      disableBc: true, // Node has BroadcastChannel: clients in one process would talk around the server
      shouldReconnect: () => false, // as a ugc client: one closed by the server stays closed
    });
    // No awareness: our ugc clients send no presence either, and its 15 s renewals would be load
    // the ugc mode does not make. Without them an idle client hears nothing for minutes, so the
    // provider's 30 s "no message" watchdog (a private interval in y-websocket 3.1.0) goes too.
    provider.awareness.destroy();
    clearInterval(provider._checkInterval);
    client.doc = doc;
    client.map = map;
    client.provider = provider;
    let synced = false;
    const timer = setTimeout(() => {
      if (!synced) provider.disconnect();
    }, CONNECT_TIMEOUT_MS);
    provider.on("sync", (state) => {
      if (!state || synced) return;
      synced = true;
      clearTimeout(timer);
      client.open = true;
      client.board.open++;
      if (!client.board.seen) {
        client.board.seen = true;
        let points = 0;
        map.forEach((value) => {
          points += value?.points?.length ?? 0;
        });
        client.board.present = [map.size, points];
      }
      resolve(true);
    });
    provider.on("connection-close", (event) => {
      if (!synced) {
        clearTimeout(timer);
        counts.connectFailed++;
        const code = event?.code ?? "local";
        closeCodes[code] = (closeCodes[code] || 0) + 1;
        provider.shouldConnect = false;
        resolve(false);
      } else closedByServer(client, event?.code ?? "local");
    });
    if (config.yjs_apply) {
      map.observe((event) => {
        if (event.transaction.local) return;
        const now = performance.now();
        for (const key of event.keysChanged) receipt(map.has(key) ? key : "-" + key, client.index, now);
      });
    } else {
      // The relayed updates are read by yjsFrame and not applied (the sync at connect still is):
      // applying costs each doc O(its writers) a transaction (the state vectors), times every
      // client of a board in this one process, and a ugc client applies nothing either.
      const sync = provider.messageHandlers[0];
      provider.messageHandlers[0] = (encoder, decoder, ...rest) => {
        if (decoder.arr[decoder.pos] !== 2) sync(encoder, decoder, ...rest);
      };
    }
    provider.connect();
  });
}

function yjsOp(client) {
  if (client.mine.length >= client.board.keep) {
    const key = client.mine.shift();
    track("-" + key, client);
    client.map.delete(key);
  } else {
    const key = `${RUN}${client.index}_${client.nextOp++}`;
    client.mine.push(key);
    track(key, client);
    client.map.set(key, {
      type: "path",
      color: COLOR,
      width: WIDTH,
      points: strokePoints(),
      t: Math.round(performance.now()),
    });
    const id = client.map._map.get(key).id;
    itemKeys.set(`${id.client}:${id.clock}`, key);
  }
}

// --- the run ------------------------------------------------------------------------------------

for (const board of boards) {
  const spec = board.spec;
  const count = config.mode === "ugc" ? (spec.tokens ?? []).length : (spec.clients ?? 0);
  for (let i = 0; i < count; i++) {
    const client = { index: clients.length, board, url: spec.url, open: false, mine: [], nextOp: 0 };
    if (config.mode === "ugc") client.token = spec.tokens[i];
    else client.room = spec.room;
    board.clients.push(client);
    clients.push(client);
  }
}

async function connectAll() {
  const started = performance.now();
  const connect = config.mode === "ugc" ? connectUgc : connectYjs;
  let next = 0;
  let done = 0;
  const progress = setInterval(() => say(`connecting: ${done} of ${clients.length}`), 2000);
  const worker = async () => {
    while (next < clients.length) {
      await connect(clients[next++]);
      done++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(config.connect_concurrency, clients.length) }, worker));
  clearInterval(progress);
  const seconds = (performance.now() - started) / 1000;
  const connected = clients.filter((c) => c.open).length;
  say(
    `${connected} of ${clients.length} connected in ${seconds.toFixed(1)} s (${counts.connectFailed} failed)`,
  );
  return { connected, seconds };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return round(sorted[Math.min(Math.floor(sorted.length * p), sorted.length - 1)]);
}

function round(x) {
  return Math.round(x * 100) / 100;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function emit(result) {
  return new Promise((resolve) => process.stdout.write(JSON.stringify(result) + "\n", resolve));
}

async function goodbye() {
  ending = true;
  const closing = [];
  for (const client of clients) {
    if (config.mode === "ugc" && client.ws) {
      if (client.ws.readyState === WebSocket.CLOSED) continue;
      closing.push(new Promise((resolve) => client.ws.once("close", resolve)));
      client.ws.close(1000);
    } else if (client.provider) {
      client.provider.destroy();
    }
  }
  await Promise.race([Promise.all(closing), sleep(CLOSE_WAIT_MS)]);
  process.exit(0);
}

async function holdIdle(connect) {
  await emit({ connected: connect.connected, connect_seconds: round(connect.seconds) });
  let stdinPiped = false;
  try {
    stdinPiped = fstatSync(0).isFIFO();
  } catch {}
  await new Promise((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
    if (stdinPiped) {
      process.stdin.on("end", resolve);
      process.stdin.resume();
    }
  });
  await emit({
    connected: connect.connected,
    connect_seconds: round(connect.seconds),
    connections: clients.filter((c) => c.open).length,
    closed: counts.closed,
    close_codes: closeCodes,
    connect_failed: counts.connectFailed,
    errors: counts.errors,
  });
}

async function runOps(connect) {
  for (const board of boards) if (board.present) setKeep(board, ...board.present);
  await sleep(config.pause * 1000); // the joins' presence frames settle before the first op
  const sendOp = config.mode === "ugc" ? ugcOp : yjsOp;
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + config.seconds * 1000;
  measuring = true;
  const fire = (client) => {
    if (!client.open || performance.now() >= end) return;
    try {
      sendOp(client);
    } catch (error) {
      say(`send: ${error.message}`);
      return;
    }
    schedule(client);
  };
  const schedule = (client) => {
    if (config.rate > 0) setTimeout(fire, (-Math.log(1 - Math.random()) / config.rate) * 1000, client);
  };
  for (const client of clients) if (client.open) schedule(client);
  const progress = setInterval(() => {
    say(
      `${((performance.now() - start) / 1000).toFixed(0)} s: ${counts.sent} sent, ${counts.accepted} accepted, ${counts.pending} not yet seen by all, ${counts.errors} errors, ${counts.closed} closed`,
    );
  }, 5000);
  await sleep(config.seconds * 1000);
  const settleBy = performance.now() + config.settle * 1000;
  while (counts.pending > 0 && performance.now() < settleBy) await sleep(50);
  clearInterval(progress);
  measuring = false;
  const wall = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  loopDelay.disable();
  latencies.sort((a, b) => a - b);
  const connections = clients.filter((c) => c.open).length;
  const result = {
    mode: config.mode,
    sent: counts.sent,
    accepted: counts.accepted,
    offered_per_s: round(connect.connected * config.rate),
    sent_per_s: round(counts.sent / config.seconds), // below offered: the generator fell behind
    accepted_per_s: round(counts.accepted / config.seconds),
    deliveries_per_s: round(counts.deliveries / config.seconds),
    p50_ms: percentile(latencies, 0.5),
    p99_ms: percentile(latencies, 0.99),
    max_ms: latencies.length ? round(latencies[latencies.length - 1]) : null,
    lost: counts.pending,
    connections,
    connect_failed: counts.connectFailed,
    errors: counts.errors,
    closed: counts.closed,
    close_codes: closeCodes,
    rehellos: counts.rehellos,
    connect_seconds: round(connect.seconds),
    keep: Math.min(...boards.map((b) => b.keep)),
    loadgen_cpu: round((cpu.user + cpu.system) / 1e6 / wall), // cores, over the sending and settling
    loadgen_loop_delay_p99_ms: round(loopDelay.percentile(99) / 1e6),
    loadgen_rss_mib: round(process.memoryUsage.rss() / 2 ** 20),
  };
  if (result.loadgen_loop_delay_p99_ms > LOOP_DELAY_WARN_MS) {
    say(
      `the generator itself fell behind (its event loop's delay p99 ${result.loadgen_loop_delay_p99_ms} ms): its latencies include that`,
    );
  }
  say(
    `${result.accepted_per_s} ops/s accepted of ${result.offered_per_s} offered, ${result.deliveries_per_s} deliveries/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, ${result.lost} lost, loadgen ${result.loadgen_cpu} of a core`,
  );
  await emit(result);
}

const connect = await connectAll();
if (config.idle) await holdIdle(connect);
else await runOps(connect);
await goodbye();
