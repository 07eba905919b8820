// The webhook helper against the Standard Webhooks spec's public vector (the same vector
// the spec's JS, Python, Go, PHP, C# and Java libraries test; tests/data/signatures.json)
// and against hostile headers. No server: these run on their own too (`npm test`).
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readFile } from "node:fs/promises";
import { test } from "node:test";

import { CODES, standardSignature, verifyWebhook, WebhookVerificationError } from "../dist/index.js";

const vectors = JSON.parse(
  await readFile(new URL("../../../tests/data/signatures.json", import.meta.url), "utf8"),
);
const vector = vectors.standard_webhooks_v1;

test("the Standard Webhooks vector signs and verifies", async () => {
  const signature = await standardSignature(vector.secret, vector.msg_id, vector.timestamp, vector.payload);
  assert.equal(signature, vector.expected_signature);
  const headers = {
    "Webhook-Id": vector.msg_id,
    "Webhook-Timestamp": String(vector.timestamp),
    "Webhook-Signature": `v1,bm90IGl0 ${vector.expected_signature}`,
  };
  assert.deepEqual(await verifyWebhook(vector.secret, headers, vector.payload, { now: vector.timestamp }), {
    test: 2432232314,
  });
});

test("every tampered part is refused", async () => {
  const good = {
    "webhook-id": vector.msg_id,
    "webhook-timestamp": String(vector.timestamp),
    "webhook-signature": vector.expected_signature,
  };
  const now = { now: vector.timestamp };
  const refused = async (secret, headers, body, options = now) =>
    assert.rejects(verifyWebhook(secret, headers, body, options), WebhookVerificationError);
  await refused(vector.secret, good, vector.payload + " ");
  await refused(vector.secret, { ...good, "webhook-id": "msg_other" }, vector.payload);
  await refused(vector.secret, { ...good, "webhook-timestamp": String(vector.timestamp + 1) }, vector.payload);
  await refused("whsec_" + Buffer.from("another key").toString("base64"), good, vector.payload);
  await refused(vector.secret, good, vector.payload, { now: vector.timestamp + 301 });
  await refused(vector.secret, good, vector.payload, { now: vector.timestamp - 301 });
  await refused(vector.secret, {}, vector.payload);
  await refused("whsec_not*base64", good, vector.payload);
  await refused(vector.secret, { ...good, "webhook-timestamp": "1e9" }, vector.payload);
  await refused(vector.secret, { ...good, "webhook-timestamp": "9".repeat(17) }, vector.payload);
  const many = Array.from({ length: 9 }, () => vector.expected_signature).join(" ");
  await refused(vector.secret, { ...good, "webhook-signature": many }, vector.payload);
  await refused(vector.secret, { ...good, "webhook-signature": "v1," + "A".repeat(2000) }, vector.payload);
});

test("the X-Webhook-Signature forms verify and refuse like the Python helper", async () => {
  const secret = "s3cret";
  const body = '{"a":1}';
  const seconds = 1_700_000_000;
  const hex = (stamp) => createHmac("sha256", secret).update(`${stamp}.${body}`).digest("hex");
  const notifykit = {
    "X-Webhook-Signature": `t=${seconds},v1=${hex(seconds)}`,
    "X-Webhook-Timestamp": String(seconds),
  };
  assert.deepEqual(await verifyWebhook(secret, notifykit, body, { now: seconds }), { a: 1 });
  await assert.rejects(
    verifyWebhook(secret, { ...notifykit, "X-Webhook-Timestamp": String(seconds + 1) }, body, { now: seconds }),
    /t= does not match/,
  );
  const ms = seconds * 1000;
  const design = { "X-Webhook-Signature": hex(ms), "X-Webhook-Timestamp": String(ms) };
  assert.deepEqual(await verifyWebhook(secret, design, body, { now: seconds }), { a: 1 });
  await assert.rejects(verifyWebhook(secret, design, body + " ", { now: seconds }), /no matching signature/);
});

test("a genuine delivery whose body is not JSON is refused as such", async () => {
  const body = "not json";
  const signature = await standardSignature(vector.secret, "m", vector.timestamp, body);
  const headers = { "webhook-id": "m", "webhook-timestamp": String(vector.timestamp), "webhook-signature": signature };
  await assert.rejects(verifyWebhook(vector.secret, headers, body, { now: vector.timestamp }), /not JSON/);
});

test("every error code of the OpenAPI document has its class", async () => {
  const document = JSON.parse(
    await readFile(new URL("../../../docs/openapi.json", import.meta.url), "utf8"),
  );
  const listed = new Set();
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        for (const code of response["x-error-codes"] ?? []) listed.add(`${status} ${code}`);
      }
    }
  }
  for (const response of Object.values(document.components?.responses ?? {})) {
    for (const code of response["x-error-codes"] ?? []) listed.add(`${response["x-error-status"]} ${code}`);
  }
  assert.ok(listed.size > 20);
  assert.deepEqual(new Set(CODES.keys()), listed);
  for (const [key, cls] of CODES) {
    const [status, code] = key.split(" ");
    const error = new cls("m", { status: Number(status), code });
    assert.equal(error.code, code);
    assert.equal(cls.code, code);
  }
});
