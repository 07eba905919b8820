// A receiver written to the design's published rule, as a new user would write it:
//   verify(secret, timestamp, payload, signature)
//   - timestamp: X-Webhook-Timestamp, Unix time in MILLISECONDS; refused when
//     |now_ms - timestamp| > 5 minutes;
//   - signature: X-Webhook-Signature, ONE lowercase hex HMAC-SHA256 of
//     "{timestamp}.{raw body}" keyed with the secret string, compared as a whole.
// A replay is the same signature twice (the receiver remembers what it accepted).
import crypto from "node:crypto";
import { serve } from "./server.mjs";

const TOLERANCE_MS = 5 * 60 * 1000;

function verify(secret, timestamp, payload, signature) {
  if (typeof timestamp !== "string" || !/^[0-9]{1,16}$/.test(timestamp)) return false;
  if (Math.abs(Date.now() - Number(timestamp)) > TOLERANCE_MS) return false;
  const expected = crypto
    .createHmac("sha256", secret)
    .update(`${timestamp}.${payload}`)
    .digest("hex");
  const a = Buffer.from(expected, "utf8");
  const b = Buffer.from(typeof signature === "string" ? signature : "", "utf8");
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

const secret = process.env.WEBHOOK_SECRET;
serve("design", (headers, payload) => ({
  ok: verify(secret, headers["x-webhook-timestamp"], payload, headers["x-webhook-signature"]),
  replayKey: headers["x-webhook-signature"],
}));
