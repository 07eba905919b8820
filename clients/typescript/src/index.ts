export * from "./client.js";
export * from "./errors.js";
export * from "./codes.js";
export { verifyWebhook, standardSignature, WebhookVerificationError } from "./webhooks.js";
export type { HeadersLike, VerifyOptions } from "./webhooks.js";
export type { components, paths, operations } from "./schema.js";
