// Templates, recipients and categories through the TypeScript SDK against a real
// `homing run` (started by tests/sdk/test_typescript.py, which passes HOMING_URL and
// HOMING_API_KEY): each wrapper's call reaches its route and its answer is read back.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";

import { Homing, ObjectNotFoundError, PublicUrlRequiredError } from "../dist/index.js";

const env = (name) => {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run this through tests/sdk/test_typescript.py`);
  return value;
};
const homing = new Homing({ baseUrl: env("HOMING_URL"), apiKey: env("HOMING_API_KEY") });
const key = (prefix) => `${prefix}-${randomUUID().slice(0, 8)}`;

async function collect(generator) {
  const items = [];
  for await (const item of generator) items.push(item);
  return items;
}

test("a template is created, versioned, published and previewed", async () => {
  const ref = key("welcome");
  const created = await homing.templates.create({ key: ref, name: "Welcome" });
  assert.equal(created.key, ref);
  assert.equal((await homing.templates.get(ref)).id, created.id);
  const draft = await homing.templates.createVersion(ref, {
    email: { subject: "Hi {{ name }}", text: "x" },
  });
  assert.equal(draft.state, "draft");
  const edited = await homing.templates.updateVersion(ref, draft.id, {
    email: { subject: "Hello {{ name }}", text: "Dear {{ name }}" },
  });
  assert.equal(edited.email.subject, "Hello {{ name }}");
  assert.equal((await homing.templates.publishVersion(created.id, draft.id)).state, "published");
  const shown = await homing.templates.preview(ref, { data: { name: "Ada" } });
  assert.equal(shown.email.subject, "Hello Ada");
  const listed = await collect(homing.templates.list({ limit: 1 }));
  assert.ok(listed.some((t) => t.key === ref));
  await assert.rejects(homing.templates.get(key("absent")), ObjectNotFoundError);
});

test("a recipient is put, read, listed and deleted, with preferences and a feed token", async () => {
  const category = key("digest");
  const put = await homing.categories.put(category, { name: "Digest", kind: "marketing" });
  assert.equal(put.kind, "marketing");
  assert.equal((await homing.categories.get(category)).name, "Digest");
  assert.ok((await collect(homing.categories.list({ limit: 1 }))).some((c) => c.key === category));
  const person = key("user");
  await homing.recipients.put(person, { email: "ada@example.com" });
  assert.equal((await homing.recipients.get(person)).email, "ada@example.com");
  const people = await collect(homing.recipients.list({ limit: 1 }));
  assert.ok(people.some((r) => r.external_id === person));
  await homing.recipients.updatePreferences(person, { categories: { [category]: { email: false } } });
  assert.equal((await homing.recipients.preferences(person)).categories[category].email, false);
  const token = await homing.recipients.feedToken(person, { ttlSeconds: 60 });
  assert.ok(token.token);
  // No HOMING_PUBLIC_URL on this server: the link cannot be made.
  await assert.rejects(homing.recipients.preferenceLink(person), PublicUrlRequiredError);
  await homing.recipients.delete(person);
  await assert.rejects(homing.recipients.get(person), ObjectNotFoundError);
});
