// The TypeScript SDK against a real `homing run` and the sandbox, over real HTTP. Run by
// tests/sdk/test_typescript.py, which starts both and passes their addresses:
// HOMING_URL, HOMING_API_KEY, HOMING_LIMITED_KEY (one request a minute),
// HOMING_RESEND_URL (the sandbox's Resend), HOMING_WEBHOOK_DELIVERY (a file holding a
// real delivery Homing made to a receiver: its secret, headers and raw body).
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { before, test } from "node:test";

import {
  ApiError,
  HomingConnectionError,
  HomingTimeout,
  Homing,
  IdempotencyConflictError,
  NotFoundError,
  ObjectNotFoundError,
  RateLimitError,
  RateLimitedError,
  UnauthenticatedError,
  UnprocessableError,
  ValidationError,
  verifyWebhook,
  WebhookVerificationError,
} from "../dist/index.js";

const env = (name) => {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run this through tests/sdk/test_typescript.py`);
  return value;
};
const baseUrl = env("HOMING_URL");
const homing = new Homing({ baseUrl, apiKey: env("HOMING_API_KEY") });
const MISSING = "00000000-0000-0000-0000-000000000000";

async function completed(jobId) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const job = await homing.jobs.get(jobId);
    if (job.status === "COMPLETED" || Date.now() > deadline) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

before(async () => {
  await homing.providers.create({
    channel: "email",
    provider: "resend",
    credentials: { api_key: "re_sdk_test_key_123456" },
    config: { base_url: env("HOMING_RESEND_URL") },
  });
});

test("an email sent with the SDK is read back COMPLETED", async () => {
  const queued = await homing.email.send({
    to: "ada@example.com",
    from: "app@acme.example",
    subject: "Hello",
    text: "Hi Ada",
  });
  assert.equal(typeof queued.id, "string");
  const job = await completed(queued.id);
  assert.equal(job.status, "COMPLETED");
  assert.equal(job.channel, "email");
  assert.deepEqual(
    job.attempts.map((attempt) => attempt.outcome),
    ["success"],
  );
});

test("jobs.list iterates every cursor page, no job twice", async () => {
  const sent = new Set();
  for (let i = 0; i < 5; i++) {
    const queued = await homing.email.send({
      to: `p${i}@example.com`,
      from: "a@acme.example",
      subject: "s",
      text: "t",
    });
    sent.add(queued.id);
  }
  const first = await homing.jobs.page({ limit: 2 });
  assert.equal(first.data.length, 2);
  assert.ok(first.next_cursor);
  const listed = [];
  for await (const job of homing.jobs.list({ limit: 2 })) listed.push(job.id);
  assert.equal(listed.length, new Set(listed).size, "no job is listed twice across pages");
  for (const id of sent) assert.ok(listed.includes(id), `${id} is listed`);
  const emails = [];
  for await (const job of homing.jobs.list({ limit: 3, channel: "email" })) emails.push(job);
  assert.ok(emails.every((job) => job.channel === "email"), "filters reach the query");
});

test("an explicit idempotency key makes a repeat the same job", async () => {
  const message = { to: "b@example.com", from: "a@acme.example", subject: "s", text: "t" };
  const first = await homing.email.send(message, { idempotencyKey: "ts-order-42" });
  const again = await homing.email.send(message, { idempotencyKey: "ts-order-42" });
  assert.equal(again.id, first.id);
  await assert.rejects(
    homing.email.send({ ...message, text: "other" }, { idempotencyKey: "ts-order-42" }),
    (error) => error instanceof IdempotencyConflictError && error.status === 422,
  );
});

test("errors throw the class of their code, under their status class", async () => {
  const missing = await homing.jobs.get(MISSING).catch((error) => error);
  assert.ok(missing instanceof ObjectNotFoundError, String(missing));
  assert.ok(missing instanceof NotFoundError && missing instanceof ApiError);
  assert.equal(missing.status, 404);
  assert.equal(missing.code, "not_found");
  assert.ok(missing.requestId, "the request id to quote");
  const invalid = await homing.email
    .send({ to: "x", from: "a@acme.example", subject: "s", text: "t" })
    .catch((error) => error);
  assert.ok(invalid instanceof ValidationError && invalid instanceof UnprocessableError);
  assert.ok(Array.isArray(invalid.details.errors) && invalid.details.errors.length > 0);
  const stranger = new Homing({ baseUrl, apiKey: "hk_not_a_key" });
  await assert.rejects(stranger.jobs.page(), UnauthenticatedError);
  assert.ok(!JSON.stringify(stranger).includes("hk_not_a_key"), "the key is never serialised");
});

test("a timeout throws HomingTimeout, no answer HomingConnectionError", async () => {
  const hurried = new Homing({ baseUrl, apiKey: env("HOMING_API_KEY"), timeoutMs: 1 });
  // A server that accepts the connection and never answers: the timeout must fire.
  const { createServer } = await import("node:net");
  const silent = createServer(() => {});
  await new Promise((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const quiet = new Homing({
    baseUrl: `http://127.0.0.1:${silent.address().port}`,
    apiKey: "k",
    timeoutMs: 200,
  });
  try {
    await assert.rejects(quiet.jobs.page(), HomingTimeout);
  } finally {
    silent.close();
  }
  const result = await hurried.jobs.page().catch((error) => error);
  assert.ok(result instanceof HomingTimeout || Array.isArray(result.data));
  const nowhere = new Homing({ baseUrl: "http://127.0.0.1:9", apiKey: "k" });
  const refused = await nowhere.jobs.page().catch((error) => error);
  assert.ok(refused instanceof HomingConnectionError && !(refused instanceof HomingTimeout));
});

test("a 429 is retried after its Retry-After with one Idempotency-Key", async () => {
  const sent = [];
  const waits = [];
  const limited = new Homing({
    baseUrl,
    apiKey: env("HOMING_LIMITED_KEY"),
    maxRetries: 2,
    backoffMs: 10,
    fetch: (url, init) => {
      sent.push({ path: new URL(url).pathname, headers: new Headers(init.headers) });
      return fetch(url, init);
    },
    sleep: async (milliseconds) => {
      waits.push(milliseconds);
    },
  });
  // One request a minute: this send has the window, so the next one is refused.
  await assert.rejects(
    limited.email.send({ to: "x", from: "a@acme.example", subject: "s", text: "t" }),
    UnprocessableError,
  );
  const refused = await limited.email
    .send({ to: "c@example.com", from: "a@acme.example", subject: "s", text: "t" })
    .catch((error) => error);
  assert.ok(refused instanceof RateLimitedError && refused instanceof RateLimitError);
  assert.equal(refused.status, 429);
  const retryAfter = refused.retryAfter;
  assert.ok(retryAfter !== null && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  const sends = sent.filter((request) => request.path === "/v1/notifications/email");
  assert.equal(sends.length, 4, "the first send, then the second and its two retries");
  const keys = sends.map((request) => request.headers.get("Idempotency-Key"));
  assert.ok(keys[1] && keys[1] === keys[2] && keys[2] === keys[3], "one key for a call and its retries");
  assert.notEqual(keys[0], keys[1], "a new key for each call");
  assert.equal(waits.length, 2);
  for (const wait of waits) {
    assert.ok(wait >= (retryAfter - 1) * 1000 && wait <= retryAfter * 1000 + 10, `waited ${wait} ms`);
  }
});

test("a real webhook from Homing verifies with the SDK's helper", async () => {
  const delivery = JSON.parse(await readFile(env("HOMING_WEBHOOK_DELIVERY"), "utf8"));
  const body = Buffer.from(delivery.body_base64, "base64");
  assert.deepEqual(await verifyWebhook(delivery.secret, delivery.headers, body), delivery.payload);
  assert.deepEqual(
    await verifyWebhook(delivery.secret, new Headers(delivery.headers), body.toString("utf8")),
    delivery.payload,
    "a Headers object and a string body verify the same",
  );
  await assert.rejects(
    verifyWebhook(delivery.secret, delivery.headers, Buffer.concat([body, Buffer.from(" ")])),
    (error) => error instanceof WebhookVerificationError && /no matching signature/.test(error.message),
  );
  await assert.rejects(
    verifyWebhook(delivery.secret, delivery.headers, body, { now: Date.now() / 1000 + 3600 }),
    /timestamp too old/,
  );
});
