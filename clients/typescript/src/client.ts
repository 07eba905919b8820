/**
 * `Homing`: the client. One instance holds one API key.
 *
 *     const homing = new Homing({ baseUrl: "http://127.0.0.1:8000", apiKey: "hk_..." });
 *     const queued = await homing.email.send({ to: "ada@example.com", from: "a@acme.example",
 *                                              subject: "Hello", text: "Hi" });
 *     const job = await homing.jobs.get(queued.id);
 *
 * Behaviour is the Python SDK's (homing_client): an `Idempotency-Key` on every sending
 * call, yours or one generated per call and reused on its retries; a 429 or 503 retried
 * up to `maxRetries` times after the `Retry-After` Homing sent (one over 60 s is thrown
 * to you, not waited on); nothing else retried; one error class per `code`; no redirect
 * followed (a 3xx is an `ApiError` naming its status: following one would re-send the
 * call's body to wherever it points).
 */

import { CODES } from "./codes.js";
import {
  ApiError,
  type ApiErrorClass,
  HomingConnectionError,
  HomingTimeout,
  STATUS_CLASSES,
} from "./errors.js";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
export type EmailCreate = Schemas["EmailCreate"];
export type SmsCreate = Schemas["SmsCreate"];
export type ChatCreate = Schemas["ChatCreate"];
export type WebhookCreate = Schemas["WebhookCreate"];
export type ProviderCreate = Schemas["ProviderCreate"];
export type ProviderPatch = Schemas["ProviderPatch"];
export type SuppressionCreate = Schemas["SuppressionCreate"];
export type BulkBody = Schemas["BulkBody"];
export type Queued = Schemas["Queued"];
export type BatchResult = Schemas["BatchResult"];
export type JobPublic = Schemas["JobPublic"];
export type JobSummary = Schemas["JobSummary"];
export type ProviderPublic = Schemas["ProviderPublic"];
export type SuppressionPublic = Schemas["SuppressionPublic"];
export type WebhookSecretIssued = Schemas["WebhookSecretIssued"];
export type DeadLetterPublic = Schemas["DeadLetterPublic"];
export type DeadLetterDetail = Schemas["DeadLetterDetail"];
export type Redriven = Schemas["Redriven"];
export type Purged = Schemas["Purged"];
export type Channel = Schemas["Channel"];
export type TemplateCreate = Schemas["TemplateCreate"];
export type TemplatePublic = Schemas["TemplatePublic"];
export type VersionCreate = Schemas["VersionCreate"];
export type VersionEdit = Schemas["VersionEdit"];
export type VersionPublic = Schemas["VersionPublic"];
export type PreviewCreate = Schemas["PreviewCreate"];
export type PreviewPublic = Schemas["PreviewPublic"];
export type RecipientPut = Schemas["RecipientPut"];
export type RecipientPublic = Schemas["RecipientPublic"];
export type Preferences = Schemas["Preferences"];
export type PreferenceLink = Schemas["PreferenceLink"];
export type FeedToken = Schemas["FeedToken"];
export type CategoryPut = Schemas["CategoryPut"];
export type CategoryPublic = Schemas["CategoryPublic"];
export type JobReschedule = Schemas["JobReschedule"];
export type WebhookSecretStatus = Schemas["WebhookSecretStatus"];
export type GoneEndpointPublic = Schemas["GoneEndpointPublic"];
export type InboundSecretPut = Schemas["InboundSecretPut"];
export type InboundSecretPublic = Schemas["InboundSecretPublic"];
export type ErasureCreate = Schemas["ErasureCreate"];
export type ErasurePublic = Schemas["ErasurePublic"];
export type NotificationsCreate = Schemas["NotificationsCreate"];
export type NotificationPublic = Schemas["NotificationPublic"];
export type InAppCreate = Schemas["InAppCreate"];
export type FeedItemPublic = Schemas["FeedItemPublic"];
export type FeedPagePublic = Schemas["FeedPagePublic"];
export type FeedSecretIssued = Schemas["FeedSecretIssued"];
export type FeedOrigins = Schemas["FeedOrigins"];
export type LayoutCreate = Schemas["LayoutCreate"];
export type LayoutPublic = Schemas["LayoutPublic"];
export type LayoutVersionCreate = Schemas["LayoutVersionCreate"];
export type LayoutVersionEdit = Schemas["LayoutVersionEdit"];
export type LayoutVersionPublic = Schemas["LayoutVersionPublic"];
export type ApiKeyCreate = Schemas["ApiKeyCreate"];
export type ApiKeyPublic = Schemas["ApiKeyPublic"];
export type ApiKeyIssued = Schemas["ApiKeyIssued"];
export type DomainCreate = Schemas["DomainCreate"];
export type DomainPublic = Schemas["DomainPublic"];
export type TenantSettingsPublic = Schemas["TenantSettingsPublic"];
export type SettingsPatch = NonNullable<
  paths["/v1/settings"]["patch"]["requestBody"]
>["content"]["application/json"];
export type UsagePublic = Schemas["UsagePublic"];
export type EventReport = Schemas["EventReport"];
export type AuditEventPublic = Schemas["AuditEventPublic"];
export type AuditFilters = Omit<
  NonNullable<paths["/v1/audit-log"]["get"]["parameters"]["query"]>,
  "cursor" | "limit"
>;
export type TenantCreate = Schemas["TenantCreate"];
export type TenantCreated = Schemas["TenantCreated"];
export type TenantPatch = Schemas["TenantPatch"];
export type TenantPublic = Schemas["TenantPublic"];
export type TenantDetail = Schemas["TenantDetail"];
export type QueuesPublic = Schemas["QueuesPublic"];
export type AdminJobSummary = Schemas["AdminJobSummary"];
type QueryOf<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? Omit<NonNullable<Q>, "cursor" | "limit">
  : never;
export type AdminJobFilters = QueryOf<"/admin/v1/jobs">;
export type AdminDeadLetterFilters = QueryOf<"/admin/v1/dead-letters">;
export type AdminAuditFilters = QueryOf<"/admin/v1/audit-log">;
export type JobFilters = Omit<
  NonNullable<paths["/v1/jobs"]["get"]["parameters"]["query"]>,
  "cursor" | "limit"
>;
export type DeadLetterFilters = Omit<
  NonNullable<paths["/v1/dead-letters"]["get"]["parameters"]["query"]>,
  "cursor" | "limit"
>;

/** One page of a cursor-paged list: `nextCursor` is absent on the last page. */
export interface Page<T> {
  data: T[];
  next_cursor?: string | null;
}

export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 503]);
/** `Retry-After` is honoured up to this many seconds; a longer wait is thrown to the caller. */
export const MAX_RETRY_AFTER_SECONDS = 60;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_RETRIES = 3;
export const USER_AGENT = "homing-client-typescript/0.1.0";

export interface HomingOptions {
  /** Where Homing's API answers, e.g. `http://127.0.0.1:8000`. */
  baseUrl: string;
  /** A tenant's API key (`hk_...`). */
  apiKey: string;
  /** Bounds each HTTP request, in milliseconds (10,000 by default). */
  timeoutMs?: number;
  /** Retries of a 429 or 503 (3 by default). */
  maxRetries?: number;
  /** The wait, in milliseconds, when a 429/503 carries no usable `Retry-After` (doubled per retry). */
  backoffMs?: number;
  /** The fetch to use (the global one by default). */
  fetch?: typeof fetch;
  /** How to wait between retries (a test can see the waits without taking them). */
  sleep?: (milliseconds: number) => Promise<void>;
}

/** Per-call options of a sending call. */
export interface SendOptions {
  /** Reuse this key to make a repeat of the call the same job (one is generated otherwise). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

interface Call {
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  path: string;
  body?: unknown;
  query?: Record<string, unknown>;
  /** POSTs that create something carry an Idempotency-Key, the same on every retry. */
  idempotent?: boolean;
  idempotencyKey?: string | undefined;
  signal?: AbortSignal | undefined;
}

const defaultSleep = (milliseconds: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, milliseconds));

/** One path segment: an id never adds a `/` or a `?` to the URL. */
function segment(value: string): string {
  return encodeURIComponent(value);
}

function digits(header: string | null): number | null {
  return header !== null && /^[0-9]{1,6}$/.test(header) ? Number(header) : null;
}

/**
 * Milliseconds to wait before retrying `response` (attempt counts from 0), or null when it
 * is not retried: only 429 and 503, and only a Retry-After Homing can keep.
 */
export function retryDelay(response: Response, attempt: number, backoffMs: number): number | null {
  if (!RETRY_STATUSES.has(response.status)) return null;
  const seconds = digits(response.headers.get("Retry-After"));
  const wait = seconds !== null ? seconds * 1000 : backoffMs * 2 ** attempt;
  if (wait > MAX_RETRY_AFTER_SECONDS * 1000) return null;
  return wait + Math.random() * backoffMs;
}

/** The error for one error response: the class of its (status, code), else of its status. */
export async function errorFor(response: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const envelope =
    body !== null && typeof body === "object" ? (body as { error?: unknown }).error : undefined;
  const error =
    envelope !== null && typeof envelope === "object" ? (envelope as Record<string, unknown>) : {};
  const code = typeof error.code === "string" && error.code ? error.code : "http_error";
  const message =
    typeof error.message === "string" && error.message ? error.message : `HTTP ${response.status}`;
  const details =
    error.details !== null && typeof error.details === "object"
      ? (error.details as Record<string, unknown>)
      : {};
  const cls: ApiErrorClass =
    CODES.get(`${response.status} ${code}`) ?? STATUS_CLASSES.get(response.status) ?? ApiError;
  return new cls(message, {
    status: response.status,
    code,
    details,
    requestId: response.headers.get("X-Request-Id"),
    retryAfter: digits(response.headers.get("Retry-After")),
  });
}

export class Homing {
  readonly email: Email;
  readonly sms: Sms;
  readonly chat: Chat;
  readonly webhooks: Webhooks;
  readonly batch: Batch;
  readonly jobs: Jobs;
  readonly suppressions: Suppressions;
  readonly providers: Providers;
  readonly deadLetters: DeadLetters;
  readonly templates: Templates;
  readonly recipients: Recipients;
  readonly categories: Categories;
  readonly notifications: Notifications;
  readonly inApp: InApp;
  readonly feed: Feed;
  readonly erasure: Erasure;
  readonly layouts: Layouts;
  readonly apiKeys: ApiKeys;
  readonly domains: Domains;
  readonly settings: Settings;
  readonly usage: Usage;
  readonly reports: Reports;
  readonly auditLog: AuditLog;
  readonly admin: Admin;
  readonly maxRetries: number;
  readonly backoffMs: number;
  readonly timeoutMs: number;
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #sleep: (milliseconds: number) => Promise<void>;

  constructor(options: HomingOptions) {
    if (!options.baseUrl) throw new TypeError("baseUrl is required");
    if (!options.apiKey) throw new TypeError("apiKey is required");
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? DEFAULT_RETRIES;
    this.backoffMs = options.backoffMs ?? 500;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#sleep = options.sleep ?? defaultSleep;
    this.email = new Email(this);
    this.sms = new Sms(this);
    this.chat = new Chat(this);
    this.webhooks = new Webhooks(this);
    this.batch = new Batch(this);
    this.jobs = new Jobs(this);
    this.suppressions = new Suppressions(this);
    this.providers = new Providers(this);
    this.deadLetters = new DeadLetters(this);
    this.templates = new Templates(this);
    this.recipients = new Recipients(this);
    this.categories = new Categories(this);
    this.notifications = new Notifications(this);
    this.inApp = new InApp(this);
    this.feed = new Feed(this);
    this.erasure = new Erasure(this);
    this.layouts = new Layouts(this);
    this.apiKeys = new ApiKeys(this);
    this.domains = new Domains(this);
    this.settings = new Settings(this);
    this.usage = new Usage(this);
    this.reports = new Reports(this);
    this.auditLog = new AuditLog(this);
    this.admin = new Admin(this);
  }

  /** The key is never shown: not in a log line, not in an error. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.#baseUrl };
  }

  /** Send one call, retrying a 429/503 after its Retry-After; the parsed answer. */
  async request<T>(call: Call): Promise<T> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#apiKey}`,
      "User-Agent": USER_AGENT,
      Accept: "application/json",
    };
    if (call.body !== undefined) headers["Content-Type"] = "application/json";
    if (call.idempotent) {
      headers["Idempotency-Key"] = call.idempotencyKey ?? `sdk-${globalThis.crypto.randomUUID()}`;
    }
    const url = new URL(this.#baseUrl + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    for (let attempt = 0; ; attempt++) {
      const response = await this.#once(call, url, headers, body);
      const wait = retryDelay(response, attempt, this.backoffMs);
      if (wait === null || attempt >= this.maxRetries) return this.#result<T>(call, response);
      await response.body?.cancel();
      await this.#sleep(wait);
    }
  }

  async #once(
    call: Call,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
  ): Promise<Response> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    try {
      // "manual": a redirect is answered as it came, never followed. Following it would
      // send the call's body (addresses, subjects, texts) to wherever it points and take
      // that host's answer for Homing's; the Python SDK follows none either.
      const init: RequestInit = { method: call.method, headers, body, signal, redirect: "manual" };
      return await this.#fetch(url, init);
    } catch (error) {
      if (timeout.aborted) {
        throw new HomingTimeout(`${call.method} ${call.path} timed out`, {}, { cause: error });
      }
      if (call.signal?.aborted) throw error;
      const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new HomingConnectionError(`${call.method} ${call.path}: ${reason}`, {}, { cause: error });
    }
  }

  async #result<T>(call: Call, response: Response): Promise<T> {
    // Node, Deno and Bun show a redirect as it came; a browser as an "opaqueredirect"
    // whose status it hides (0).
    if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
      await response.body?.cancel();
      const status = response.status || "3xx";
      const message = `${call.method} ${call.path}: HTTP ${status}, a redirect the SDK does not follow`;
      throw new ApiError(message, {
        status: response.status || null,
        requestId: response.headers.get("X-Request-Id"),
      });
    }
    if (response.status >= 400) throw await errorFor(response);
    if (response.status === 204) {
      await response.body?.cancel();
      return undefined as T;
    }
    return (await response.json()) as T;
  }
}

abstract class Resource {
  protected readonly client: Homing;
  constructor(client: Homing) {
    this.client = client;
  }

  protected post<T>(path: string, body: unknown, options: SendOptions | undefined): Promise<T> {
    return this.client.request<T>({
      method: "POST",
      path,
      body,
      idempotent: true,
      idempotencyKey: options?.idempotencyKey,
      signal: options?.signal,
    });
  }

  /** Every item of a cursor-paged list, fetching the pages as it goes. */
  protected async *every<T>(
    fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  ): AsyncGenerator<T, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const page = await fetchPage(cursor);
      yield* page.data;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }
}

export class Email extends Resource {
  /** Queue one email. */
  send(message: EmailCreate, options?: SendOptions): Promise<Queued> {
    return this.post<Queued>("/v1/notifications/email", message, options);
  }
}

export class Sms extends Resource {
  /** Queue one SMS. */
  send(message: SmsCreate, options?: SendOptions): Promise<Queued> {
    return this.post<Queued>("/v1/notifications/sms", message, options);
  }
}

export class Chat extends Resource {
  /** Queue one chat message (Telegram, Slack). */
  send(message: ChatCreate, options?: SendOptions): Promise<Queued> {
    return this.post<Queued>("/v1/notifications/chat", message, options);
  }
}

export class Webhooks extends Resource {
  /** Queue one webhook delivery of `payload` (JSON) to `url`. */
  send(message: WebhookCreate, options?: SendOptions): Promise<Queued> {
    return this.post<Queued>("/v1/notifications/webhook", message, options);
  }
  /** A new signing secret (`whsec_...`), shown this once. */
  createSecret(): Promise<WebhookSecretIssued> {
    return this.client.request({ method: "POST", path: "/v1/webhook-secret" });
  }
  /** A new secret; the old one keeps verifying for the overlap Homing documents. */
  rotateSecret(): Promise<WebhookSecretIssued> {
    return this.client.request({ method: "POST", path: "/v1/webhook-secret/rotate" });
  }
  /** Whether a signing secret is set, and its preview (never the secret). */
  secret(): Promise<WebhookSecretStatus> {
    return this.client.request({ method: "GET", path: "/v1/webhook-secret" });
  }
  /** Stop signing webhook deliveries. */
  deleteSecret(): Promise<void> {
    return this.client.request({ method: "DELETE", path: "/v1/webhook-secret" });
  }
  /** The endpoints Homing stopped delivering to after they answered 410 Gone. */
  async goneEndpoints(): Promise<GoneEndpointPublic[]> {
    const page = await this.client.request<Page<GoneEndpointPublic>>({
      method: "GET",
      path: "/v1/webhook-endpoints/gone",
    });
    return page.data;
  }
  /** Deliver to a gone endpoint again. */
  enableEndpoint(url: string): Promise<void> {
    return this.client.request({ method: "POST", path: "/v1/webhook-endpoints/enable", body: { url } });
  }
}

export class Batch extends Resource {
  /** Queue up to the batch limit of emails at once; one result per message, in order. */
  email(messages: EmailCreate[], options?: SendOptions): Promise<BatchResult> {
    return this.post<BatchResult>("/v1/notifications/email/batch", { messages }, options);
  }
  sms(messages: SmsCreate[], options?: SendOptions): Promise<BatchResult> {
    return this.post<BatchResult>("/v1/notifications/sms/batch", { messages }, options);
  }
}

export interface PageOptions {
  cursor?: string;
  limit?: number;
}

export class Jobs extends Resource {
  get(jobId: string): Promise<JobPublic> {
    return this.client.request({ method: "GET", path: `/v1/jobs/${segment(jobId)}` });
  }
  /** One page of jobs, newest first. */
  page(options: PageOptions & JobFilters = {}): Promise<Page<JobSummary>> {
    return this.client.request({ method: "GET", path: "/v1/jobs", query: { ...options } });
  }
  /** Every job matching `filters`: `for await (const job of homing.jobs.list())`. */
  list(options: Omit<PageOptions, "cursor"> & JobFilters = {}): AsyncGenerator<JobSummary> {
    return this.every((cursor) => this.page(cursor ? { ...options, cursor } : options));
  }
  retry(jobId: string): Promise<Queued> {
    return this.client.request({ method: "POST", path: `/v1/jobs/${segment(jobId)}/retry` });
  }
  cancel(jobId: string): Promise<JobSummary> {
    return this.client.request({ method: "POST", path: `/v1/jobs/${segment(jobId)}/cancel` });
  }
  /** Move a scheduled job to `sendAt` (a Date or ISO 8601 text with its offset). */
  reschedule(jobId: string, sendAt: Date | string): Promise<JobSummary> {
    const body: JobReschedule = { send_at: sendAt instanceof Date ? sendAt.toISOString() : sendAt };
    return this.client.request({ method: "PATCH", path: `/v1/jobs/${segment(jobId)}`, body });
  }
}

export class Suppressions extends Resource {
  /** Every suppression, optionally of one channel. */
  list(options: { channel?: Channel } = {}): AsyncGenerator<SuppressionPublic> {
    return this.every((cursor) =>
      this.client.request<Page<SuppressionPublic>>({
        method: "GET",
        path: "/v1/suppressions",
        query: { ...options, cursor },
      }),
    );
  }
  add(suppression: SuppressionCreate): Promise<SuppressionPublic> {
    return this.client.request({ method: "POST", path: "/v1/suppressions", body: suppression });
  }
  remove(address: string, options: { channel?: Channel } = {}): Promise<void> {
    return this.client.request({
      method: "DELETE",
      path: "/v1/suppressions",
      query: { address, channel: options.channel ?? "email" },
    });
  }
}

export class Providers extends Resource {
  async list(): Promise<ProviderPublic[]> {
    const page = await this.client.request<Page<ProviderPublic>>({
      method: "GET",
      path: "/v1/providers",
    });
    return page.data;
  }
  create(provider: ProviderCreate): Promise<ProviderPublic> {
    return this.client.request({ method: "POST", path: "/v1/providers", body: provider });
  }
  update(providerId: string, changes: ProviderPatch): Promise<ProviderPublic> {
    const path = `/v1/providers/${segment(providerId)}`;
    return this.client.request({ method: "PATCH", path, body: changes });
  }
  delete(providerId: string): Promise<void> {
    return this.client.request({ method: "DELETE", path: `/v1/providers/${segment(providerId)}` });
  }
  /** The provider account's inbound (delivery-event) secret: its kind and preview. */
  inbound(providerId: string): Promise<InboundSecretPublic> {
    const path = `/v1/providers/${segment(providerId)}/inbound`;
    return this.client.request({ method: "GET", path });
  }
  /** Set the secret the vendor signs its events with. */
  setInbound(providerId: string, secret: InboundSecretPut): Promise<InboundSecretPublic> {
    const path = `/v1/providers/${segment(providerId)}/inbound`;
    return this.client.request({ method: "PUT", path, body: secret });
  }
  deleteInbound(providerId: string): Promise<void> {
    const path = `/v1/providers/${segment(providerId)}/inbound`;
    return this.client.request({ method: "DELETE", path });
  }
}

export class DeadLetters extends Resource {
  page(options: PageOptions & DeadLetterFilters = {}): Promise<Page<DeadLetterPublic>> {
    return this.client.request({ method: "GET", path: "/v1/dead-letters", query: { ...options } });
  }
  list(options: Omit<PageOptions, "cursor"> & DeadLetterFilters = {}): AsyncGenerator<DeadLetterPublic> {
    return this.every((cursor) => this.page(cursor ? { ...options, cursor } : options));
  }
  get(deadLetterId: string): Promise<DeadLetterDetail> {
    return this.client.request({ method: "GET", path: `/v1/dead-letters/${segment(deadLetterId)}` });
  }
  /** Queue the chosen dead letters again (`dry_run: true` counts them only). */
  redrive(selection: BulkBody): Promise<Redriven> {
    return this.client.request({ method: "POST", path: "/v1/dead-letters/redrive", body: selection });
  }
  purge(selection: BulkBody): Promise<Purged> {
    return this.client.request({ method: "POST", path: "/v1/dead-letters/purge", body: selection });
  }
}

/** Templates and their versions (docs/templates.md); `ref` is an id or a key. */
export class Templates extends Resource {
  create(template: TemplateCreate): Promise<TemplatePublic> {
    return this.client.request({ method: "POST", path: "/v1/templates", body: template });
  }
  get(ref: string): Promise<TemplatePublic> {
    return this.client.request({ method: "GET", path: `/v1/templates/${segment(ref)}` });
  }
  /** Every template in creation order: `for await (const t of homing.templates.list())`. */
  list(options: Omit<PageOptions, "cursor"> = {}): AsyncGenerator<TemplatePublic> {
    return this.every((cursor) =>
      this.client.request<Page<TemplatePublic>>({
        method: "GET",
        path: "/v1/templates",
        query: { ...options, cursor },
      }),
    );
  }
  delete(ref: string): Promise<void> {
    return this.client.request({ method: "DELETE", path: `/v1/templates/${segment(ref)}` });
  }
  /** Every version of a template: `for await (const v of homing.templates.versions(ref))`. */
  versions(ref: string, options: Omit<PageOptions, "cursor"> = {}): AsyncGenerator<VersionPublic> {
    const path = `/v1/templates/${segment(ref)}/versions`;
    return this.every((cursor) =>
      this.client.request<Page<VersionPublic>>({ method: "GET", path, query: { ...options, cursor } }),
    );
  }
  getVersion(ref: string, versionId: string): Promise<VersionPublic> {
    const path = `/v1/templates/${segment(ref)}/versions/${segment(versionId)}`;
    return this.client.request({ method: "GET", path });
  }
  /** A new draft version. */
  createVersion(ref: string, version: VersionCreate): Promise<VersionPublic> {
    const path = `/v1/templates/${segment(ref)}/versions`;
    return this.client.request({ method: "POST", path, body: version });
  }
  /** Change a draft version's parts. */
  updateVersion(ref: string, versionId: string, changes: VersionEdit): Promise<VersionPublic> {
    const path = `/v1/templates/${segment(ref)}/versions/${segment(versionId)}`;
    return this.client.request({ method: "PATCH", path, body: changes });
  }
  /** Make a version the live one of its locale. */
  publishVersion(ref: string, versionId: string): Promise<VersionPublic> {
    const path = `/v1/templates/${segment(ref)}/versions/${segment(versionId)}/publish`;
    return this.client.request({ method: "POST", path });
  }
  /** Every part rendered with `data` (the live version, or `version`). */
  preview(ref: string, request: PreviewCreate = {}): Promise<PreviewPublic> {
    const path = `/v1/templates/${segment(ref)}/preview`;
    return this.client.request({ method: "POST", path, body: request });
  }
}

/** Recipients by your external id, their preferences and links (docs/recipients.md). */
export class Recipients extends Resource {
  /** Create or replace a recipient. */
  put(externalId: string, recipient: RecipientPut): Promise<RecipientPublic> {
    const path = `/v1/recipients/${segment(externalId)}`;
    return this.client.request({ method: "PUT", path, body: recipient });
  }
  get(externalId: string): Promise<RecipientPublic> {
    return this.client.request({ method: "GET", path: `/v1/recipients/${segment(externalId)}` });
  }
  /** Every recipient by external id: `for await (const r of homing.recipients.list())`. */
  list(options: Omit<PageOptions, "cursor"> = {}): AsyncGenerator<RecipientPublic> {
    return this.every((cursor) =>
      this.client.request<Page<RecipientPublic>>({
        method: "GET",
        path: "/v1/recipients",
        query: { ...options, cursor },
      }),
    );
  }
  /** Erase the recipient and what Homing holds of its addresses. */
  delete(externalId: string): Promise<ErasurePublic> {
    const path = `/v1/recipients/${segment(externalId)}`;
    return this.client.request({ method: "DELETE", path });
  }
  preferences(externalId: string): Promise<Preferences> {
    const path = `/v1/recipients/${segment(externalId)}/preferences`;
    return this.client.request({ method: "GET", path });
  }
  /** Change the categories named, keep the others. */
  updatePreferences(externalId: string, changes: Preferences): Promise<Preferences> {
    const path = `/v1/recipients/${segment(externalId)}/preferences`;
    return this.client.request({ method: "PATCH", path, body: changes });
  }
  /** A signed link to the recipient's preference page (needs HOMING_PUBLIC_URL). */
  preferenceLink(externalId: string): Promise<PreferenceLink> {
    const path = `/v1/recipients/${segment(externalId)}/preference-link`;
    return this.client.request({ method: "GET", path });
  }
  /** A token the recipient's browser reads its in-app feed with (`ttlSeconds`: a day by default). */
  feedToken(externalId: string, options: { ttlSeconds?: number } = {}): Promise<FeedToken> {
    const path = `/v1/recipients/${segment(externalId)}/feed-token`;
    return this.client.request({ method: "GET", path, query: { ttl_seconds: options.ttlSeconds } });
  }
}

/** The tenant's notification categories (docs/recipients.md). */
export class Categories extends Resource {
  /** Create or replace a category. */
  put(key: string, category: CategoryPut): Promise<CategoryPublic> {
    return this.client.request({ method: "PUT", path: `/v1/categories/${segment(key)}`, body: category });
  }
  get(key: string): Promise<CategoryPublic> {
    return this.client.request({ method: "GET", path: `/v1/categories/${segment(key)}` });
  }
  /** Every category: `for await (const c of homing.categories.list())`. */
  list(options: Omit<PageOptions, "cursor"> = {}): AsyncGenerator<CategoryPublic> {
    return this.every((cursor) =>
      this.client.request<Page<CategoryPublic>>({
        method: "GET",
        path: "/v1/categories",
        query: { ...options, cursor },
      }),
    );
  }
}

/** One notification to a recipient over several channels (docs/notifications.md). */
export class Notifications extends Resource {
  /** Queue one notification: `all` channels at once, the `first` accepted, or `escalate`. */
  send(notification: NotificationsCreate, options?: SendOptions): Promise<NotificationPublic> {
    return this.post<NotificationPublic>("/v1/notifications", notification, options);
  }
  /** The notification and each channel's step. */
  get(notificationId: string): Promise<NotificationPublic> {
    const path = `/v1/notifications/${segment(notificationId)}`;
    return this.client.request({ method: "GET", path });
  }
}

export class InApp extends Resource {
  /** Queue one item for a recipient's in-app feed. */
  send(message: InAppCreate, options?: SendOptions): Promise<Queued> {
    return this.post<Queued>("/v1/notifications/in-app", message, options);
  }
}

/**
 * Recipients' in-app feeds read by your server, and the feed's secret and origins
 * (docs/feed.md); `recipients.feedToken` makes the token a browser reads with.
 */
export class Feed extends Resource {
  /** One page of a recipient's feed, newest first, with its unread count. */
  page(externalId: string, options: PageOptions = {}): Promise<FeedPagePublic> {
    const path = `/v1/recipients/${segment(externalId)}/feed`;
    return this.client.request({ method: "GET", path, query: { ...options } });
  }
  /** Every item of a recipient's feed: `for await (const item of homing.feed.list(id))`. */
  list(externalId: string, options: Omit<PageOptions, "cursor"> = {}): AsyncGenerator<FeedItemPublic> {
    return this.every((cursor) => this.page(externalId, cursor ? { ...options, cursor } : options));
  }
  /** A new feed-token signing secret: every token issued before stops working. */
  rotateSecret(): Promise<FeedSecretIssued> {
    return this.client.request({ method: "POST", path: "/v1/feed-secret/rotate" });
  }
  /** The browser origins allowed to read feeds. */
  origins(): Promise<FeedOrigins> {
    return this.client.request({ method: "GET", path: "/v1/feed-origins" });
  }
  /** Replace the allowed browser origins. */
  setOrigins(origins: string[]): Promise<FeedOrigins> {
    const body: FeedOrigins = { origins };
    return this.client.request({ method: "PUT", path: "/v1/feed-origins", body });
  }
}

export class Erasure extends Resource {
  /** Erase what Homing holds of one address (docs/recipients.md). */
  erase(request: ErasureCreate): Promise<ErasurePublic> {
    return this.client.request({ method: "POST", path: "/v1/erasure", body: request });
  }
}

/** Email layouts and their versions (docs/templates.md); `ref` is an id or a key. */
export class Layouts extends Resource {
  create(layout: LayoutCreate): Promise<LayoutPublic> {
    return this.client.request({ method: "POST", path: "/v1/layouts", body: layout });
  }
  get(ref: string): Promise<LayoutPublic> {
    return this.client.request({ method: "GET", path: `/v1/layouts/${segment(ref)}` });
  }
  /** Every layout: `for await (const layout of homing.layouts.list())`. */
  list(options: Omit<PageOptions, "cursor"> = {}): AsyncGenerator<LayoutPublic> {
    return this.every((cursor) =>
      this.client.request<Page<LayoutPublic>>({
        method: "GET",
        path: "/v1/layouts",
        query: { ...options, cursor },
      }),
    );
  }
  delete(ref: string): Promise<void> {
    return this.client.request({ method: "DELETE", path: `/v1/layouts/${segment(ref)}` });
  }
  /** A new draft version; its `html` holds `{{ content }}` where the email goes. */
  createVersion(ref: string, version: LayoutVersionCreate): Promise<LayoutVersionPublic> {
    const path = `/v1/layouts/${segment(ref)}/versions`;
    return this.client.request({ method: "POST", path, body: version });
  }
  /** Every version of a layout. */
  versions(ref: string, options: Omit<PageOptions, "cursor"> = {}): AsyncGenerator<LayoutVersionPublic> {
    const path = `/v1/layouts/${segment(ref)}/versions`;
    return this.every((cursor) =>
      this.client.request<Page<LayoutVersionPublic>>({ method: "GET", path, query: { ...options, cursor } }),
    );
  }
  getVersion(ref: string, versionId: string): Promise<LayoutVersionPublic> {
    const path = `/v1/layouts/${segment(ref)}/versions/${segment(versionId)}`;
    return this.client.request({ method: "GET", path });
  }
  /** Change a draft version. */
  updateVersion(ref: string, versionId: string, changes: LayoutVersionEdit): Promise<LayoutVersionPublic> {
    const path = `/v1/layouts/${segment(ref)}/versions/${segment(versionId)}`;
    return this.client.request({ method: "PATCH", path, body: changes });
  }
  /** Make a version the live one of its locale. */
  publishVersion(ref: string, versionId: string): Promise<LayoutVersionPublic> {
    const path = `/v1/layouts/${segment(ref)}/versions/${segment(versionId)}/publish`;
    return this.client.request({ method: "POST", path });
  }
}

export class ApiKeys extends Resource {
  /** The tenant's API keys (their prefixes; never a key). */
  async list(): Promise<ApiKeyPublic[]> {
    const page = await this.client.request<Page<ApiKeyPublic>>({ method: "GET", path: "/v1/api-keys" });
    return page.data;
  }
  /** A new API key (`test: true`: a test-mode key), shown this once in `key`. */
  create(request: ApiKeyCreate = {}): Promise<ApiKeyIssued> {
    return this.client.request({ method: "POST", path: "/v1/api-keys", body: request });
  }
  revoke(keyId: string): Promise<void> {
    return this.client.request({ method: "DELETE", path: `/v1/api-keys/${segment(keyId)}` });
  }
}

/** Sending domains registered with a provider account (docs/sending.md). */
export class Domains extends Resource {
  async list(): Promise<DomainPublic[]> {
    const page = await this.client.request<Page<DomainPublic>>({ method: "GET", path: "/v1/domains" });
    return page.data;
  }
  /** Register a domain with the provider; the answer lists the DNS records to add. */
  create(domain: DomainCreate): Promise<DomainPublic> {
    return this.client.request({ method: "POST", path: "/v1/domains", body: domain });
  }
  get(domainId: string): Promise<DomainPublic> {
    return this.client.request({ method: "GET", path: `/v1/domains/${segment(domainId)}` });
  }
  delete(domainId: string): Promise<void> {
    return this.client.request({ method: "DELETE", path: `/v1/domains/${segment(domainId)}` });
  }
  /** Ask the provider to check the domain's DNS records now. */
  verify(domainId: string): Promise<DomainPublic> {
    return this.client.request({ method: "POST", path: `/v1/domains/${segment(domainId)}/verify` });
  }
}

/** The tenant's settings (docs/settings.md). */
export class Settings extends Resource {
  get(): Promise<TenantSettingsPublic> {
    return this.client.request({ method: "GET", path: "/v1/settings" });
  }
  /** Change the settings named; `null` clears one. */
  update(changes: SettingsPatch): Promise<TenantSettingsPublic> {
    return this.client.request({ method: "PATCH", path: "/v1/settings", body: changes });
  }
}

export class Usage extends Resource {
  /** This period's sends against the plan's quotas, and the rate limit. */
  get(): Promise<UsagePublic> {
    return this.client.request({ method: "GET", path: "/v1/usage" });
  }
}

export class Reports extends Resource {
  /** Delivery events counted per hour over the last `hours` (24 by default). */
  events(options: { hours?: number } = {}): Promise<EventReport> {
    return this.client.request({ method: "GET", path: "/v1/reports/events", query: { ...options } });
  }
}

export class AuditLog extends Resource {
  /** One page of the tenant's audit events, newest first. */
  page(options: PageOptions & AuditFilters = {}): Promise<Page<AuditEventPublic>> {
    return this.client.request({ method: "GET", path: "/v1/audit-log", query: { ...options } });
  }
  /** Every audit event matching `filters`. */
  list(options: Omit<PageOptions, "cursor"> & AuditFilters = {}): AsyncGenerator<AuditEventPublic> {
    return this.every((cursor) => this.page(cursor ? { ...options, cursor } : options));
  }
}

/**
 * The operator's routes (`/admin/v1/...`): a `Homing` made with the operator's
 * `HOMING_ADMIN_TOKEN` as its `apiKey` calls them (docs/operations.md).
 */
export class Admin extends Resource {
  readonly tenants: AdminTenants;
  readonly jobs: AdminJobs;
  readonly deadLetters: AdminDeadLetters;
  readonly auditLog: AdminAuditLog;
  constructor(client: Homing) {
    super(client);
    this.tenants = new AdminTenants(client);
    this.jobs = new AdminJobs(client);
    this.deadLetters = new AdminDeadLetters(client);
    this.auditLog = new AdminAuditLog(client);
  }
  /** Queue depths per state and priority, and the tenants with the most waiting. */
  queues(): Promise<QueuesPublic> {
    return this.client.request({ method: "GET", path: "/admin/v1/queues" });
  }
}

export class AdminTenants extends Resource {
  /** A new tenant and its first API key, shown this once. */
  create(tenant: TenantCreate): Promise<TenantCreated> {
    return this.client.request({ method: "POST", path: "/admin/v1/tenants", body: tenant });
  }
  get(tenantId: string): Promise<TenantDetail> {
    return this.client.request({ method: "GET", path: `/admin/v1/tenants/${segment(tenantId)}` });
  }
  /** Change the tenant's name, plan or limits (`null` clears a custom limit). */
  update(tenantId: string, changes: TenantPatch): Promise<TenantPublic> {
    const path = `/admin/v1/tenants/${segment(tenantId)}`;
    return this.client.request({ method: "PATCH", path, body: changes });
  }
  suspend(tenantId: string): Promise<TenantPublic> {
    return this.client.request({ method: "POST", path: `/admin/v1/tenants/${segment(tenantId)}/suspend` });
  }
  unsuspend(tenantId: string): Promise<TenantPublic> {
    return this.client.request({ method: "POST", path: `/admin/v1/tenants/${segment(tenantId)}/unsuspend` });
  }
  /** Every tenant: `for await (const tenant of homing.admin.tenants.list())`. */
  list(options: Omit<PageOptions, "cursor"> = {}): AsyncGenerator<TenantPublic> {
    return this.every((cursor) =>
      this.client.request<Page<TenantPublic>>({
        method: "GET",
        path: "/admin/v1/tenants",
        query: { ...options, cursor },
      }),
    );
  }
}

export class AdminJobs extends Resource {
  /** One page of every tenant's jobs, newest first. */
  page(options: PageOptions & AdminJobFilters = {}): Promise<Page<AdminJobSummary>> {
    return this.client.request({ method: "GET", path: "/admin/v1/jobs", query: { ...options } });
  }
  list(options: Omit<PageOptions, "cursor"> & AdminJobFilters = {}): AsyncGenerator<AdminJobSummary> {
    return this.every((cursor) => this.page(cursor ? { ...options, cursor } : options));
  }
}

export class AdminDeadLetters extends Resource {
  page(options: PageOptions & AdminDeadLetterFilters = {}): Promise<Page<DeadLetterPublic>> {
    return this.client.request({ method: "GET", path: "/admin/v1/dead-letters", query: { ...options } });
  }
  list(options: Omit<PageOptions, "cursor"> & AdminDeadLetterFilters = {}): AsyncGenerator<DeadLetterPublic> {
    return this.every((cursor) => this.page(cursor ? { ...options, cursor } : options));
  }
  get(deadLetterId: string): Promise<DeadLetterDetail> {
    const path = `/admin/v1/dead-letters/${segment(deadLetterId)}`;
    return this.client.request({ method: "GET", path });
  }
  /** Queue the chosen dead letters of any tenant again (`dry_run: true` counts them only). */
  redrive(selection: BulkBody): Promise<Redriven> {
    return this.client.request({ method: "POST", path: "/admin/v1/dead-letters/redrive", body: selection });
  }
  purge(selection: BulkBody): Promise<Purged> {
    return this.client.request({ method: "POST", path: "/admin/v1/dead-letters/purge", body: selection });
  }
}

export class AdminAuditLog extends Resource {
  /** One page of audit events, every tenant's and the operator's. */
  page(options: PageOptions & AdminAuditFilters = {}): Promise<Page<AuditEventPublic>> {
    return this.client.request({ method: "GET", path: "/admin/v1/audit-log", query: { ...options } });
  }
  list(options: Omit<PageOptions, "cursor"> & AdminAuditFilters = {}): AsyncGenerator<AuditEventPublic> {
    return this.every((cursor) => this.page(cursor ? { ...options, cursor } : options));
  }
}
