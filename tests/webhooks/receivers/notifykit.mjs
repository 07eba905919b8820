// A receiver written to the rule of NotifyKit's SDK, verifyWebhookSignature
// (github.com/Brayzonn/notifykit-sdk, src/webhooks.ts, commit dda61e7):
//   - X-Webhook-Signature is "t=<ts>,v1=<hex>" (comma-separated key=value parts);
//     both t and v1 must be present, and t must equal X-Webhook-Timestamp exactly;
//   - the timestamp is Unix SECONDS; refused when now - t < 0 or > 300;
//   - v1 is the hex HMAC-SHA256 of "{X-Webhook-Timestamp}.{raw body}" keyed with the
//     secret string, compared in constant time.
// A replay is the same signature twice (the receiver remembers what it accepted).
import crypto from "node:crypto";
import { serve } from "./server.mjs";

function verify({ payload, timestamp, signature, secret, tolerance = 300 }) {
  if (typeof signature !== "string" || typeof timestamp !== "string") return false;
  const parts = Object.fromEntries(
    signature.split(",").map((part) => {
      const at = part.indexOf("=");
      return at < 0 ? ["", ""] : [part.slice(0, at).trim(), part.slice(at + 1).trim()];
    }),
  );
  if (!parts.v1 || !parts.t || parts.t !== timestamp) return false;
  const ts = parseInt(timestamp, 10);
  if (!Number.isFinite(ts)) return false;
  const age = Math.floor(Date.now() / 1000) - ts;
  if (age < 0 || age > tolerance) return false;
  const expected = crypto.createHmac("sha256", secret).update(`${timestamp}.${payload}`).digest();
  const actual = Buffer.from(parts.v1, "hex");
  return actual.length === expected.length && crypto.timingSafeEqual(actual, expected);
}

const secret = process.env.WEBHOOK_SECRET;
serve("notifykit", (headers, payload) => ({
  ok: verify({
    payload,
    timestamp: headers["x-webhook-timestamp"],
    signature: headers["x-webhook-signature"],
    secret,
  }),
  replayKey: headers["x-webhook-signature"],
}));
