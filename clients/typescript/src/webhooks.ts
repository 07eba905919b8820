/**
 * Verify a webhook delivery from Homing with the Web Crypto API (Node.js 18+, Deno, Bun,
 * browsers, workers): the same scheme as `homing.webhooks.verify` and the Python SDK's
 * `verify_webhook`.
 *
 *     const event = await verifyWebhook(secret, request.headers, rawBody); // throws unless genuine
 *
 * Standard Webhooks (`webhook-id`, `webhook-timestamp` in seconds, `webhook-signature` =
 * `v1,` + base64 HMAC-SHA256 of `"{id}.{timestamp}.{body}"` keyed with the base64 after
 * `whsec_`) when present; otherwise `X-Webhook-Signature`: `t=<s>,v1=<hex>` (the
 * `notifykit` form) or one hex HMAC-SHA256 of `"{ms}.{body}"` keyed with the whole secret,
 * `X-Webhook-Timestamp` in milliseconds (the `design` form). Comparisons are
 * constant-time; a timestamp more than `toleranceSeconds` away is refused.
 */

const MAX_SIGNATURES = 8;
const MAX_HEADER = 1024;
const MAX_DIGITS = 16;
const encoder = new TextEncoder();

/** The request is not a genuine, fresh delivery signed with this secret. */
export class WebhookVerificationError extends Error {
  override readonly name: string = "WebhookVerificationError";
}

export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Seconds a timestamp may be away from now (300 by default). */
  toleranceSeconds?: number;
  /** Now, in seconds since the epoch (for tests). */
  now?: number;
}

function lowered(headers: HeadersLike): Map<string, string> {
  const found = new Map<string, string>();
  if (typeof (headers as Headers).forEach === "function" && headers instanceof Headers) {
    headers.forEach((value, name) => found.set(name.toLowerCase(), value));
    return found;
  }
  for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value === undefined) continue;
    found.set(name.toLowerCase(), Array.isArray(value) ? value.join(", ") : value);
  }
  return found;
}

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === "string") return encoder.encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

function concat(prefix: string, body: Uint8Array): Uint8Array {
  const head = encoder.encode(prefix);
  const joined = new Uint8Array(head.length + body.length);
  joined.set(head, 0);
  joined.set(body, head.length);
  return joined;
}

async function hmac(key: Uint8Array, content: Uint8Array): Promise<Uint8Array> {
  const imported = await globalThis.crypto.subtle.importKey(
    "raw",
    new Uint8Array(key),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", imported, new Uint8Array(content)));
}

function base64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function standardKey(secret: string): Uint8Array {
  let encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) {
    throw new WebhookVerificationError("the secret is not whsec_ followed by base64");
  }
  encoded += "=".repeat((4 - (encoded.length % 4)) % 4);
  let decoded: string;
  try {
    decoded = atob(encoded);
  } catch {
    throw new WebhookVerificationError("the secret is not whsec_ followed by base64");
  }
  if (!decoded) throw new WebhookVerificationError("the secret is empty");
  return Uint8Array.from(decoded, (char) => char.charCodeAt(0));
}

/** `v1,<base64>`: the Standard Webhooks signature of one message. */
export async function standardSignature(
  secret: string,
  messageId: string,
  timestamp: number,
  body: string | Uint8Array,
): Promise<string> {
  const content = concat(`${messageId}.${timestamp}.`, bytesOf(body));
  return "v1," + base64(await hmac(standardKey(secret), content));
}

async function hexSignature(secret: string, timestamp: number, body: Uint8Array): Promise<string> {
  return hex(await hmac(encoder.encode(secret), concat(`${timestamp}.`, body)));
}

function timestamp(value: string | undefined, tolerance: number, now: number, scale = 1): number {
  if (value === undefined || !/^[0-9]+$/.test(value) || value.length > MAX_DIGITS) {
    throw new WebhookVerificationError("missing or malformed timestamp");
  }
  const stamp = Number(value);
  if (stamp < (now - tolerance) * scale) throw new WebhookVerificationError("timestamp too old");
  if (stamp > (now + tolerance) * scale) throw new WebhookVerificationError("timestamp too new");
  return stamp;
}

function header(headers: Map<string, string>, name: string): string {
  const value = headers.get(name) ?? "";
  if (value.length > MAX_HEADER) throw new WebhookVerificationError("the signature header is too long");
  return value.trim();
}

/** Constant-time in the length of `expected`: every candidate is compared in full. */
function anyMatches(expected: string, offered: string[]): boolean {
  if (offered.length > MAX_SIGNATURES) throw new WebhookVerificationError("too many signatures");
  const want = encoder.encode(expected);
  let matched = 0;
  for (const candidate of offered) {
    const got = encoder.encode(candidate);
    let difference = want.length ^ got.length;
    for (let i = 0; i < want.length; i++) difference |= want[i]! ^ (got[i] ?? 0);
    matched |= difference === 0 ? 1 : 0;
  }
  return matched === 1;
}

async function checkStandard(
  secret: string,
  headers: Map<string, string>,
  body: Uint8Array,
  tolerance: number,
  now: number,
): Promise<void> {
  const messageId = headers.get("webhook-id");
  if (!messageId) throw new WebhookVerificationError("missing webhook-id");
  const stamp = timestamp(headers.get("webhook-timestamp"), tolerance, now);
  const offered = header(headers, "webhook-signature")
    .split(/\s+/)
    .filter((signature) => signature.startsWith("v1,"));
  if (!anyMatches(await standardSignature(secret, messageId, stamp, body), offered)) {
    throw new WebhookVerificationError("no matching signature");
  }
}

async function checkXWebhook(
  secret: string,
  headers: Map<string, string>,
  body: Uint8Array,
  tolerance: number,
  now: number,
): Promise<void> {
  const value = header(headers, "x-webhook-signature");
  const rawStamp = headers.get("x-webhook-timestamp");
  let stamp: number;
  let offered: string[];
  if (value.startsWith("t=")) {
    const pairs = value
      .split(",", MAX_SIGNATURES + 2)
      .map((part) => {
        const at = part.indexOf("=");
        return at < 0 ? [part.trim(), ""] : [part.slice(0, at).trim(), part.slice(at + 1).trim()];
      });
    const t = pairs.find(([name]) => name === "t")?.[1];
    offered = pairs.filter(([name]) => name === "v1").map(([, signature]) => signature!);
    if (t !== rawStamp) throw new WebhookVerificationError("t= does not match X-Webhook-Timestamp");
    stamp = timestamp(rawStamp, tolerance, now);
  } else {
    stamp = timestamp(rawStamp, tolerance, now, 1000);
    offered = [value];
  }
  if (!anyMatches(await hexSignature(secret, stamp, body), offered)) {
    throw new WebhookVerificationError("no matching signature");
  }
}

/**
 * Check one delivery's signature and timestamp; resolve to its parsed JSON body.
 *
 * `headers`: the request's headers (a `Headers` or a plain object, any case); `body`: the
 * raw body exactly as received (never re-serialised JSON).
 */
export async function verifyWebhook(
  secret: string,
  headers: HeadersLike,
  body: string | Uint8Array | ArrayBuffer,
  options: VerifyOptions = {},
): Promise<unknown> {
  const raw = bytesOf(body);
  const found = lowered(headers);
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.now ?? Date.now() / 1000;
  if (found.has("webhook-signature")) {
    await checkStandard(secret, found, raw, tolerance, now);
  } else if (found.has("x-webhook-signature")) {
    await checkXWebhook(secret, found, raw, tolerance, now);
  } else {
    throw new WebhookVerificationError("no signature headers");
  }
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    throw new WebhookVerificationError("the body is not JSON");
  }
}
