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
 * to you, not waited on); nothing else retried; one error class per `code`.
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
      if (wait === null || attempt >= this.maxRetries) return this.#result<T>(response);
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
      return await this.#fetch(url, { method: call.method, headers, body, signal });
    } catch (error) {
      if (timeout.aborted) {
        throw new HomingTimeout(`${call.method} ${call.path} timed out`, {}, { cause: error });
      }
      if (call.signal?.aborted) throw error;
      const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new HomingConnectionError(`${call.method} ${call.path}: ${reason}`, {}, { cause: error });
    }
  }

  async #result<T>(response: Response): Promise<T> {
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
