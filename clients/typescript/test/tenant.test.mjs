// The rest of the tenant API through the TypeScript SDK against a real `homing run` and
// the sandbox (started by tests/sdk/test_typescript.py, which passes HOMING_URL,
// HOMING_API_KEY and HOMING_RESEND_URL): notifications, in-app and feeds, layouts,
// template versions, erasure, scheduling, webhook secrets and endpoints, inbound
// secrets, API keys, sending domains, settings, usage, reports, the audit log and dead
// letters. Each wrapper's call reaches its route and its answer is read back.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { before, test } from "node:test";

import {
  Homing,
  InvalidRequestError,
  NotFoundError,
  ObjectNotFoundError,
  SendAtTooFarError,
  UnauthenticatedError,
  ValidationError,
} from "../dist/index.js";

const env = (name) => {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run this through tests/sdk/test_typescript.py`);
  return value;
};
const baseUrl = env("HOMING_URL");
const homing = new Homing({ baseUrl, apiKey: env("HOMING_API_KEY") });
const key = (prefix) => `${prefix}-${randomUUID().slice(0, 8)}`;
const FROM = "app@acme.example";
let resend;

async function collect(generator) {
  const items = [];
  for await (const item of generator) items.push(item);
  return items;
}

before(async () => {
  resend = await homing.providers.create({
    channel: "email",
    provider: "resend",
    credentials: { api_key: "re_sdk_tenant_key_123456" },
    config: { base_url: env("HOMING_RESEND_URL") },
  });
});

test("a notification reaches a recipient's feed, read by page and by iterator", async () => {
  const template = key("report");
  await homing.templates.create({ key: template });
  const version = await homing.templates.createVersion(template, {
    in_app: { title: "Report {{ n }}", body: "Report {{ n }} is ready" },
  });
  await homing.templates.publishVersion(template, version.id);
  const person = key("user");
  await homing.recipients.put(person, { email: "ada@example.com" });
  const sent = await homing.notifications.send({
    recipient: person,
    template,
    channels: ["in_app"],
    strategy: "all",
    data: { n: 7 },
  });
  assert.deepEqual(
    sent.steps.map((step) => [step.channel, step.status]),
    [["in_app", "accepted"]],
  );
  const shown = await homing.notifications.get(sent.id);
  assert.equal(shown.recipient, person);
  await assert.rejects(homing.notifications.get(randomUUID()), ObjectNotFoundError);
  const queued = await homing.inApp.send({ recipient: person, body: "Second item" });
  assert.equal(typeof queued.id, "string");
  const page = await homing.feed.page(person, { limit: 1 });
  assert.equal(page.unread_count, 2);
  assert.equal(page.data.length, 1);
  assert.ok(page.next_cursor);
  const items = await collect(homing.feed.list(person, { limit: 1 }));
  assert.deepEqual(
    items.map((item) => item.body),
    ["Second item", "Report 7 is ready"],
  );
});

test("the feed secret rotates and the feed origins are set", async () => {
  const person = key("reader");
  await homing.recipients.put(person, { email: "reader@example.com" });
  const old = (await homing.recipients.feedToken(person)).token;
  const issued = await homing.feed.rotateSecret();
  assert.ok(issued.secret);
  assert.notEqual((await homing.recipients.feedToken(person)).token, old);
  const set = await homing.feed.setOrigins(["https://app.acme.example"]);
  assert.deepEqual(set.origins, ["https://app.acme.example"]);
  assert.deepEqual((await homing.feed.origins()).origins, ["https://app.acme.example"]);
  assert.deepEqual((await homing.feed.setOrigins([])).origins, []);
  await assert.rejects(
    homing.feed.setOrigins(["https://app.acme.example/a/path"]),
    InvalidRequestError,
  );
});

test("a layout is created, versioned, published, listed and deleted", async () => {
  const ref = key("brand");
  const created = await homing.layouts.create({ key: ref, name: "Brand" });
  assert.equal((await homing.layouts.get(ref)).id, created.id);
  assert.ok((await collect(homing.layouts.list({ limit: 1 }))).some((l) => l.key === ref));
  const draft = await homing.layouts.createVersion(ref, { html: "<main>{{ content }}</main>" });
  assert.equal(draft.state, "draft");
  const edited = await homing.layouts.updateVersion(ref, draft.id, { html: "<div>{{ content }}</div>" });
  assert.equal(edited.html, "<div>{{ content }}</div>");
  assert.equal((await homing.layouts.getVersion(created.id, draft.id)).html, edited.html);
  assert.equal((await homing.layouts.publishVersion(ref, draft.id)).state, "published");
  await homing.layouts.createVersion(ref, { html: "<p>{{ content }}</p>" });
  assert.equal((await collect(homing.layouts.versions(ref, { limit: 1 }))).length, 2);
  await homing.layouts.delete(ref);
  await assert.rejects(homing.layouts.get(ref), ObjectNotFoundError);
});

test("template versions are listed and read, and the template deleted", async () => {
  const ref = key("notice");
  await homing.templates.create({ key: ref });
  const first = await homing.templates.createVersion(ref, { sms: { body: "One" } });
  const second = await homing.templates.createVersion(ref, { sms: { body: "Two" } });
  const ids = (await collect(homing.templates.versions(ref, { limit: 1 }))).map((v) => v.id);
  assert.deepEqual(new Set(ids), new Set([first.id, second.id]));
  assert.deepEqual((await homing.templates.getVersion(ref, second.id)).sms, { body: "Two" });
  await homing.templates.delete(ref);
  await assert.rejects(homing.templates.get(ref), ObjectNotFoundError);
});

test("erasure of an address and of a recipient answer what was erased", async () => {
  await homing.suppressions.add({ address: "erase-me@example.com", channel: "email" });
  const erased = await homing.erasure.erase({ address: "erase-me@example.com", channel: "email" });
  assert.equal(erased.complete, true);
  assert.equal(erased.kept_as_hash.suppressions, 1);
  const person = key("gone");
  await homing.recipients.put(person, { email: "gone@example.com" });
  const answer = await homing.recipients.delete(person);
  assert.equal(answer.erased.recipients, 1);
  await assert.rejects(
    homing.erasure.erase({ address: "x".repeat(5000), channel: "email" }),
    ValidationError,
  );
});

test("a scheduled job is rescheduled, by a Date and by text", async () => {
  const later = new Date(Date.now() + 86_400_000);
  const queued = await homing.email.send({
    to: "later@example.com",
    from: FROM,
    subject: "s",
    text: "t",
    send_at: later.toISOString(),
  });
  const movedTo = new Date(Math.floor(later.getTime() / 1000) * 1000 + 7_200_000);
  const moved = await homing.jobs.reschedule(queued.id, movedTo);
  assert.equal(new Date(moved.send_at).getTime(), movedTo.getTime());
  const text = new Date(Date.now() + 20 * 86_400_000).toISOString().replace(/\.\d+Z$/, "Z");
  const again = await homing.jobs.reschedule(queued.id, text);
  assert.equal(new Date(again.send_at).getTime(), new Date(text).getTime());
  await assert.rejects(
    homing.jobs.reschedule(queued.id, new Date(Date.now() + 400 * 86_400_000)),
    SendAtTooFarError,
  );
});

test("the webhook secret is read, rotated, deleted and created; gone endpoints listed", async () => {
  // tests/sdk/test_typescript.py created this tenant's secret before the suite ran.
  const rotated = await homing.webhooks.rotateSecret();
  const status = await homing.webhooks.secret();
  assert.equal(status.configured, true);
  assert.ok(status.preview && status.previous_preview && status.preview !== rotated.secret);
  await homing.webhooks.deleteSecret();
  assert.equal((await homing.webhooks.secret()).configured, false);
  const created = await homing.webhooks.createSecret();
  assert.notEqual(created.secret, rotated.secret);
  assert.equal((await homing.webhooks.secret()).configured, true);
  assert.deepEqual(await homing.webhooks.goneEndpoints(), []);
  await assert.rejects(
    homing.webhooks.enableEndpoint("https://hooks.acme.example/never-gone"),
    NotFoundError,
  );
});

test("an inbound secret is set, read and deleted", async () => {
  const secret = "whsec_U2RrSW5ib3VuZFNlY3JldDEyMzQ1Njc4OTA=";
  const put = await homing.providers.setInbound(resend.id, { signing_secret: secret });
  assert.equal(put.provider, "resend");
  assert.ok(!JSON.stringify(put).includes(secret), "the secret is never answered");
  assert.equal((await homing.providers.inbound(resend.id)).kind, put.kind);
  await homing.providers.deleteInbound(resend.id);
  await assert.rejects(homing.providers.inbound(resend.id), NotFoundError);
});

test("an API key is issued, used, listed and revoked", async () => {
  const issued = await homing.apiKeys.create({ name: "ts-second" });
  assert.ok(issued.key.startsWith(issued.prefix));
  assert.ok((await homing.apiKeys.list()).some((k) => k.id === issued.id));
  const second = new Homing({ baseUrl, apiKey: issued.key });
  assert.ok((await second.usage.get()).plan);
  await homing.apiKeys.revoke(issued.id);
  await assert.rejects(second.usage.get(), UnauthenticatedError);
  assert.ok(!(await homing.apiKeys.list()).some((k) => k.id === issued.id));
});

test("a sending domain is registered, verified, listed and deleted", async () => {
  const name = `${key("mail")}.acme.example`;
  const domain = await homing.domains.create({ domain: name, provider_account_id: resend.id });
  assert.ok(domain.records.length > 0);
  assert.equal((await homing.domains.get(domain.id)).domain, name);
  assert.ok((await homing.domains.list()).some((d) => d.id === domain.id));
  assert.equal((await homing.domains.verify(domain.id)).id, domain.id);
  await homing.domains.delete(domain.id);
  await assert.rejects(homing.domains.get(domain.id), ObjectNotFoundError);
});

test("settings change and clear; usage, the event report and the audit log read", async () => {
  assert.ok((await homing.settings.get()).webhook_signature_format);
  const changed = await homing.settings.update({ contact_email: "ops@acme.example" });
  assert.equal(changed.contact_email, "ops@acme.example");
  assert.equal((await homing.settings.update({ contact_email: null })).contact_email, null);
  const usage = await homing.usage.get();
  assert.ok(usage.rate_limit && usage.quotas.length > 0);
  assert.equal((await homing.reports.events({ hours: 2 })).hours, 2);
  await assert.rejects(homing.reports.events({ hours: 100_000 }), ValidationError);
  for (const name of ["audit-one", "audit-two"]) {
    await homing.apiKeys.revoke((await homing.apiKeys.create({ name })).id);
  }
  const page = await homing.auditLog.page({ limit: 1, action: "api_key.revoked" });
  assert.equal(page.data.length, 1);
  assert.ok(page.next_cursor);
  const revoked = await collect(homing.auditLog.list({ limit: 1, action: "api_key.revoked" }));
  assert.ok(revoked.length >= 2 && revoked.every((event) => event.action === "api_key.revoked"));
  assert.equal(new Set(revoked.map((event) => event.id)).size, revoked.length);
});

test("dead letters are paged, counted for redrive and a missing one is not found", async () => {
  const page = await homing.deadLetters.page({ limit: 1 });
  assert.ok(Array.isArray(page.data));
  const listed = await collect(homing.deadLetters.list({ provider: "resend" }));
  assert.ok(listed.every((letter) => letter.provider === "resend"));
  const every = await collect(homing.deadLetters.list());
  const counted = await homing.deadLetters.redrive({ all: true, dry_run: true });
  assert.equal(counted.matched, every.length);
  assert.equal(counted.redriven, 0, "a dry run redrives nothing");
  const purged = await homing.deadLetters.purge({ ids: [randomUUID()] });
  assert.equal(purged.purged, 0);
  await assert.rejects(homing.deadLetters.get(randomUUID()), ObjectNotFoundError);
});
