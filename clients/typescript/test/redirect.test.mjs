// The SDK follows no redirect: a 3xx from the base URL is an error naming its status,
// and the place it points to never sees the call (the body of a send: address,
// subject, text). Two loopback servers; no Homing needed.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";

import { ApiError, Homing } from "../dist/index.js";

const hits = [];
// Where a redirect points: it records every call and answers as Homing would.
const elsewhere = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk) => (body += chunk));
  request.on("end", () => {
    hits.push({ method: request.method, url: request.url, body });
    response.writeHead(202, { "Content-Type": "application/json" });
    response.end(JSON.stringify({ id: "11111111-1111-1111-1111-111111111111", status: "QUEUED" }));
  });
});
// The configured base URL: it answers every call with the status its path names.
const redirecting = createServer((request, response) => {
  const status = Number(request.url.split("/")[1]);
  const location = `http://127.0.0.1:${elsewhere.address().port}${request.url}`;
  response.writeHead(status, { Location: location, "Content-Type": "application/json" });
  response.end("{}");
});

const listen = (server) => new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
before(async () => {
  await listen(elsewhere);
  await listen(redirecting);
});
after(() => {
  elsewhere.close();
  redirecting.close();
});

for (const status of [301, 302, 303, 307, 308]) {
  test(`a ${status} is an error naming it, and its Location never sees the call`, async () => {
    hits.length = 0;
    const baseUrl = `http://127.0.0.1:${redirecting.address().port}/${status}`;
    const homing = new Homing({ baseUrl, apiKey: "hm_live_redirect_test", maxRetries: 0 });
    const send = homing.email.send({
      to: "ada@example.com",
      from: "app@acme.example",
      subject: "Your invoice",
      text: "Secret text",
    });
    await assert.rejects(send, (error) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, status);
      assert.match(error.message, new RegExp(`\\b${status}\\b`));
      return true;
    });
    await assert.rejects(homing.jobs.get("11111111-1111-1111-1111-111111111111"), ApiError);
    assert.deepEqual(hits, []);
  });
}
