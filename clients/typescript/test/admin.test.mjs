// The operator's routes through `homing.admin` against a real `homing run` (started by
// tests/sdk/test_typescript.py, which passes HOMING_URL, HOMING_API_KEY and
// HOMING_ADMIN_TOKEN): a client made with the admin token manages tenants and reads every
// tenant's jobs, queues, dead letters and audit log; a tenant's key is refused there.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { ApiError, Homing, ObjectNotFoundError } from "../dist/index.js";

const env = (name) => {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run this through tests/sdk/test_typescript.py`);
  return value;
};
const baseUrl = env("HOMING_URL");
const operator = new Homing({ baseUrl, apiKey: env("HOMING_ADMIN_TOKEN") });

async function collect(generator) {
  const items = [];
  for await (const item of generator) items.push(item);
  return items;
}

test("the operator creates, renames, suspends and lists a tenant", async () => {
  const name = `acme-${randomUUID().slice(0, 8)}`;
  const created = await operator.admin.tenants.create({ name, plan: "STARTUP" });
  assert.ok(created.api_key);
  assert.equal((await operator.admin.tenants.get(created.id)).name, name);
  assert.equal((await operator.admin.tenants.update(created.id, { name: "Renamed" })).name, "Renamed");
  assert.equal((await operator.admin.tenants.suspend(created.id)).suspended, true);
  const suspended = new Homing({ baseUrl, apiKey: created.api_key });
  const refused = await suspended.usage.get().catch((error) => error);
  assert.ok(refused instanceof ApiError && [401, 403].includes(refused.status), String(refused));
  assert.equal((await operator.admin.tenants.unsuspend(created.id)).suspended, false);
  const tenants = await collect(operator.admin.tenants.list({ limit: 1 }));
  assert.ok(tenants.some((tenant) => tenant.id === created.id));
  const events = await collect(operator.admin.auditLog.list({ tenant_id: created.id }));
  const actions = new Set(events.map((event) => event.action));
  assert.ok(actions.has("tenant.created") && actions.has("tenant.suspended"), [...actions].join());
  assert.equal((await operator.admin.auditLog.page({ limit: 1 })).data.length, 1);
});

test("the operator reads every tenant's jobs, queues and dead letters", async () => {
  const created = await operator.admin.tenants.create({ name: `jobs-${randomUUID().slice(0, 8)}` });
  const tenant = new Homing({ baseUrl, apiKey: created.api_key });
  await tenant.recipients.put("user-1", { email: "op@example.com" });
  const queued = await tenant.inApp.send({ recipient: "user-1", body: "For the operator" });
  const found = await collect(operator.admin.jobs.list({ limit: 1, tenant_id: created.id }));
  assert.deepEqual(
    found.map((job) => [job.id, job.tenant_id]),
    [[queued.id, created.id]],
  );
  assert.ok(Array.isArray((await operator.admin.jobs.page({ limit: 1 })).data));
  const queues = await operator.admin.queues();
  assert.ok(Array.isArray(queues.depths) && Array.isArray(queues.top_tenants));
  const letters = await collect(operator.admin.deadLetters.list());
  assert.ok(Array.isArray((await operator.admin.deadLetters.page()).data));
  const counted = await operator.admin.deadLetters.redrive({ all: true, dry_run: true });
  assert.equal(counted.matched, letters.length);
  assert.equal(counted.redriven, 0);
  assert.equal((await operator.admin.deadLetters.purge({ ids: [randomUUID()] })).purged, 0);
  await assert.rejects(operator.admin.deadLetters.get(randomUUID()), ObjectNotFoundError);
  const refused = await tenant.admin.queues().catch((error) => error);
  assert.ok(refused instanceof ApiError && [401, 403].includes(refused.status), String(refused));
});
