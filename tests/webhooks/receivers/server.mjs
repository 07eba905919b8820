// A receiver harness shared by design.mjs and notifykit.mjs: node's own http
// module, nothing from npm. It reads the raw body, asks the receiver's rule, and
// answers 204 (accepted), 401 (not genuine or stale) or 409 (replayed). It listens
// on 127.0.0.1 on a free port, prints {"port": N} once, and lists what it received
// at GET /_log (for the test to re-send captured requests).
import http from "node:http";

export function serve(name, check) {
  const log = [];
  const seen = new Set();
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/_log") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(log));
      return;
    }
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > 1 << 20) req.destroy(); // a receiver bounds what it reads
      else chunks.push(chunk);
    });
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const { ok, replayKey } = check(req.headers, raw.toString("utf8"));
      let status = ok ? 204 : 401;
      if (ok && seen.has(replayKey)) status = 409;
      if (status === 204) seen.add(replayKey);
      log.push({ receiver: name, status, headers: req.headers, body: raw.toString("base64") });
      res.writeHead(status);
      res.end();
    });
  });
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
  });
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
}
