// The BullMQ peer that `python -m bench all` runs beside Homing: the seed design's
// delivery path (BullMQ on Redis, 3 attempts, exponential backoff, priorities, a job row
// in PostgreSQL) and its ingest path (HTTP → INSERT the job row → enqueue).
//
//   node peer.mjs fill  --jobs N [--mode seed|bare|noop] [--db URL]
//   node peer.mjs work  --mode seed|bare|noop --concurrency C [--target URL] [--db URL] [--jobs N]
//   node peer.mjs serve --port P --db URL [--worker --concurrency C --target URL]
//
// Common: --redis URL (redis://127.0.0.1:6379/12), --prefix P, --queue NAME.
// Every command prints one JSON object per line on stdout; the last one is its result.

import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { Queue, Worker } from "bullmq";
import pg from "pg";

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    redis: { type: "string", default: "redis://127.0.0.1:6379/12" },
    prefix: { type: "string", default: "homing-bench-peer" },
    queue: { type: "string", default: "notifications-email" },
    mode: { type: "string", default: "seed" },
    jobs: { type: "string", default: "0" },
    concurrency: { type: "string", default: "5" },
    target: { type: "string" },
    db: { type: "string" },
    port: { type: "string", default: "0" },
    worker: { type: "boolean", default: false },
  },
});

// The seed's job options: 3 attempts, exponential backoff, NORMAL priority (1 is CRITICAL).
const SEED_JOB = { attempts: 3, backoff: { type: "exponential", delay: 5000 }, priority: 2 };
const MESSAGE = { to: "a@example.com", from: "b@example.com", subject: "bench", text: "x" };
const API_KEY = "peer_bench_key";
const RESEND_KEY = "re_bench_key_000000";
const CHUNK = 1000;
const IN_FLIGHT = 4; // chunks being written at once while filling

const redisUrl = new URL(opts.redis);
const connection = {
  host: redisUrl.hostname,
  port: Number(redisUrl.port || 6379),
  db: Number(redisUrl.pathname.slice(1) || 0),
  maxRetriesPerRequest: null,
};
const queueOpts = { connection, prefix: opts.prefix };
const db = opts.db ? new pg.Pool({ connectionString: opts.db, max: 10 }) : null;

const print = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const rssMb = () => process.memoryUsage.rss() / 1024 / 1024;

async function createTable() {
  await db?.query(`CREATE TABLE IF NOT EXISTS peer_jobs (
    id uuid PRIMARY KEY, status text NOT NULL, payload jsonb NOT NULL,
    attempts int NOT NULL DEFAULT 0, created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now())`);
}

const SQL = {
  insertOne: "INSERT INTO peer_jobs (id, status, payload) VALUES ($1, 'PENDING', $2)",
  insertMany:
    "INSERT INTO peer_jobs (id, status, payload) " +
    "SELECT unnest($1::uuid[]), 'PENDING', unnest($2::jsonb[])",
  completed:
    "UPDATE peer_jobs SET status = 'COMPLETED', attempts = $2, updated_at = now() WHERE id = $1",
  failed: "UPDATE peer_jobs SET status = 'FAILED', updated_at = now() WHERE id = ANY($1)",
};

// Job rows first, then the queue: the seed's dual write (a row can be left PENDING).
async function enqueue(queue, messages, jobOpts) {
  const ids = messages.map(() => randomUUID());
  const jobs = ids.map((id, i) => ({ name: "email", data: { id, ...messages[i] }, opts: jobOpts }));
  const one = jobs.length === 1;
  if (one) await db?.query(SQL.insertOne, [ids[0], messages[0]]);
  else await db?.query(SQL.insertMany, [ids, messages.map((m) => JSON.stringify(m))]);
  try {
    await (one ? queue.add(jobs[0].name, jobs[0].data, jobOpts) : queue.addBulk(jobs));
  } catch (err) {
    await db?.query(SQL.failed, [ids]);
    throw err;
  }
  return ids;
}

// One POST like Homing's Resend adapter: same headers, same body shape.
async function send(data) {
  const response = await fetch(opts.target, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${RESEND_KEY}`,
      "Content-Type": "application/json",
      "User-Agent": "homing-bench-peer",
      "Idempotency-Key": `peer-${data.id}`,
    },
    body: JSON.stringify({
      from: data.from,
      to: [data.to],
      subject: data.subject,
      text: data.text,
      tags: [{ name: "hjid", value: data.id }],
    }),
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`provider answered ${response.status}`);
}

const PROCESSORS = {
  seed: async (job) => {
    await send(job.data);
    await db?.query(SQL.completed, [job.data.id, job.attemptsMade + 1]);
  },
  bare: (job) => send(job.data),
  noop: async () => {},
};

function startWorker(mode, concurrency, onDone) {
  const worker = new Worker(opts.queue, PROCESSORS[mode], { ...queueOpts, concurrency });
  const tally = { completed: 0, failed: 0, first: 0, last: 0 };
  worker.on("completed", () => {
    tally.last = performance.now();
    tally.first ||= tally.last;
    tally.completed += 1;
    onDone?.(tally);
  });
  worker.on("failed", async (job, err) => {
    tally.failed += 1;
    if (db && job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
      await db.query(SQL.failed, [[job.data.id]]);
    }
    if (tally.failed <= 3) console.error(`peer: job failed: ${err.message}`);
  });
  return { worker, tally };
}

function summary(tally) {
  const seconds = (tally.last - tally.first) / 1000;
  const rate = seconds > 0 ? (tally.completed - 1) / seconds : 0;
  const { completed, failed } = tally;
  return { completed, failed, seconds, per_second: rate, rss_mb: rssMb() };
}

async function fill() {
  await createTable();
  const queue = new Queue(opts.queue, queueOpts);
  const total = Number(opts.jobs);
  const jobOpts = opts.mode === "seed" ? SEED_JOB : {};
  const started = performance.now();
  const pending = new Set();
  for (let done = 0; done < total; done += CHUNK) {
    const messages = Array(Math.min(CHUNK, total - done)).fill(MESSAGE);
    const chunk = enqueue(queue, messages, jobOpts).finally(() => pending.delete(chunk));
    pending.add(chunk);
    if (pending.size >= IN_FLIGHT) await Promise.race(pending);
  }
  await Promise.all(pending);
  print({ added: total, seconds: (performance.now() - started) / 1000 });
  await queue.close();
}

// Runs until SIGTERM, or until --jobs jobs have completed; then prints its tally.
async function work() {
  await createTable();
  const goal = Number(opts.jobs);
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  const { worker, tally } = startWorker(opts.mode, Number(opts.concurrency), (t) => {
    if (goal && t.completed >= goal) finish();
  });
  process.once("SIGTERM", finish);
  await worker.waitUntilReady();
  print({ event: "ready", pid: process.pid });
  await finished;
  await worker.close(true);
  print(summary(tally));
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

const REQUIRED = ["to", "from", "subject"];
const valid = (m) => m && typeof m === "object" && REQUIRED.every((f) => typeof m[f] === "string");

async function route(queue, req) {
  if (req.method === "GET" && req.url === "/healthz") return [200, { status: "ok" }];
  if (req.headers.authorization !== `Bearer ${API_KEY}`) return [401, { error: "unauthorized" }];
  let body;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    return [400, { error: "invalid JSON" }];
  }
  if (req.method === "POST" && req.url === "/v1/notifications/email") {
    if (!valid(body)) return [422, { error: "to, from and subject are required" }];
    const [id] = await enqueue(queue, [body], SEED_JOB);
    return [202, { id, status: "PENDING" }];
  }
  if (req.method === "POST" && req.url === "/v1/notifications/email/batch") {
    const messages = body?.messages;
    if (!Array.isArray(messages) || !messages.every(valid)) return [422, { error: "messages" }];
    const ids = await enqueue(queue, messages, SEED_JOB);
    return [202, { accepted: ids.length }];
  }
  return [404, { error: "not found" }];
}

// The seed's API: HTTP → job row → BullMQ, and with --worker its worker in the same process.
async function serve() {
  await createTable();
  const queue = new Queue(opts.queue, queueOpts);
  const consumer = opts.worker ? startWorker("seed", Number(opts.concurrency)).worker : null;
  const server = createServer(async (req, res) => {
    const [status, reply] = await route(queue, req).catch((err) => [503, { error: err.message }]);
    res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(reply));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(Number(opts.port), "127.0.0.1", resolve));
  print({ event: "ready", port: server.address().port, pid: process.pid });
  await new Promise((resolve) => process.once("SIGTERM", resolve));
  server.close();
  server.closeAllConnections();
  await consumer?.close(true);
  await queue.close();
  print({ rss_mb: rssMb() });
}

const commands = { fill, work, serve };
const command = commands[positionals[0]];
if (!command) {
  console.error(`usage: node peer.mjs ${Object.keys(commands).join("|")} [options]`);
  process.exit(2);
}
try {
  await command();
} finally {
  await db?.end();
}
