/**
 * Signed, expiring run tokens: what a resume URL (or a `DurableChatTransport`) carries so that a
 * run id alone opens nothing. A token is bound to one run and its owner (`resourceId`), signed
 * with HMAC-SHA256 under the app's secret, and checked in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RunAuthorize } from '../storage/index.js';

/** The header a run token travels in (the readers' responses may carry it too). */
export const RUN_TOKEN_HEADER = 'x-rxagent-run-token';

const VERSION = 'rt1';
const MIN_SECRET_BYTES = 32;
/** The longest lifetime `createRunToken` mints, and the longest `verifyRunToken` accepts by default: 31 days. */
const MAX_LIFETIME_SECONDS = 31 * 24 * 3600;
/** How far the minting instance's clock may run ahead of the verifier's, in seconds. */
const CLOCK_SKEW_SECONDS = 300;

/**
 * What a valid run token says.
 *
 * @example
 * ```ts
 * import { verifyRunToken, type RunTokenClaims } from 'rxagent/durable';
 * const claims: RunTokenClaims | null = verifyRunToken(token, { secret });
 * ```
 */
export interface RunTokenClaims {
  /** The run the token opens. */
  runId: string;
  /** The run's owner (its memory `resource`), as the run records it. */
  resourceId: string;
  /** When the token expires, in seconds since the epoch. */
  expiresAt: number;
}

/**
 * Options of {@link createRunToken}.
 *
 * @example
 * ```ts
 * import type { CreateRunTokenOptions } from 'rxagent/durable';
 * const options: CreateRunTokenOptions = { runId, resourceId: userId, expiresInSeconds: 3600, secret };
 * ```
 */
export interface CreateRunTokenOptions {
  /** The run the token opens. */
  runId: string;
  /** The run's owner: the `resource` the run was submitted with. */
  resourceId: string;
  /** How long the token is valid, in seconds (an integer from 1 to 31 days). */
  expiresInSeconds: number;
  /** The signing secret: at least 32 bytes (a string's UTF-8 or a `Uint8Array`). */
  secret: string | Uint8Array;
  /** The clock, for tests (default `Date.now`). */
  now?: () => number;
}

function secretBytes(what: string, secret: unknown): Uint8Array {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret instanceof Uint8Array ? secret : undefined;
  if (bytes === undefined || bytes.byteLength < MIN_SECRET_BYTES) {
    throw new TypeError(`${what}: secret must be a string or Uint8Array of at least ${MIN_SECRET_BYTES} bytes (got ${bytes === undefined ? typeof secret : `${bytes.byteLength} bytes`})`);
  }
  return bytes;
}

const sign = (key: Uint8Array, body: string): Buffer => createHmac('sha256', key).update(`${VERSION}.${body}`).digest();

/**
 * A token that opens run `runId` of owner `resourceId` until it expires: `rt1.<claims>.<mac>`
 * (base64url), safe in a URL or a header. `TypeError` for an empty id, a bad lifetime or a
 * secret shorter than 32 bytes.
 *
 * @example
 * ```ts
 * import { createRunToken } from 'rxagent/durable';
 * const token = createRunToken({ runId, resourceId: userId, expiresInSeconds: 3600, secret: process.env.RUN_TOKEN_SECRET! });
 * const resumeUrl = `/runs/${runId}/events?token=${token}`;
 * ```
 */
export function createRunToken(options: CreateRunTokenOptions): string {
  const { runId, resourceId, expiresInSeconds } = options;
  if (typeof runId !== 'string' || runId === '') throw new TypeError('createRunToken: runId must be a non-empty string');
  if (typeof resourceId !== 'string' || resourceId === '') throw new TypeError('createRunToken: resourceId must be a non-empty string');
  if (!Number.isSafeInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_LIFETIME_SECONDS) {
    throw new TypeError(`createRunToken: expiresInSeconds must be an integer from 1 to ${MAX_LIFETIME_SECONDS} (got ${String(expiresInSeconds)})`);
  }
  const key = secretBytes('createRunToken', options.secret);
  const expiresAt = Math.floor((options.now ?? Date.now)() / 1000) + expiresInSeconds;
  const body = Buffer.from(JSON.stringify({ r: runId, o: resourceId, e: expiresAt }), 'utf8').toString('base64url');
  return `${VERSION}.${body}.${sign(key, body).toString('base64url')}`;
}

/**
 * Options of {@link verifyRunToken}.
 *
 * @example
 * ```ts
 * import type { VerifyRunTokenOptions } from 'rxagent/durable';
 * const options: VerifyRunTokenOptions = { secret, maxLifetimeSeconds: 3600 };
 * ```
 */
export interface VerifyRunTokenOptions {
  /** The secret the token was signed with. */
  secret: string | Uint8Array;
  /**
   * The longest lifetime a token may have, in seconds (an integer ≥ 1): a token whose expiry lies
   * further than this (plus 300 s for clocks that disagree) from now is refused, however it was
   * signed. Default 2,678,400 (31 days, the longest `createRunToken` mints); set it to the
   * `expiresInSeconds` your app mints with to refuse anything longer.
   */
  maxLifetimeSeconds?: number;
  /** The clock, for tests (default `Date.now`). */
  now?: () => number;
}

/** `maxLifetimeSeconds` checked (`TypeError` naming `what` otherwise), or its default. */
function maxLifetimeOf(what: string, value: unknown): number {
  if (value === undefined) return MAX_LIFETIME_SECONDS;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`${what}: maxLifetimeSeconds must be an integer ≥ 1 (got ${typeof value === 'number' ? String(value) : typeof value})`);
  }
  return value;
}

/**
 * The claims of `token` when it is well formed, signed with `secret` (compared in constant time),
 * not expired, and expiring within `maxLifetimeSeconds` of now (default 31 days, plus 300 s of
 * clock skew: a token minted far into the future, or with an expiry no clock can hold, is refused);
 * `null` otherwise. A bad secret or `maxLifetimeSeconds` is a `TypeError`.
 *
 * @example
 * ```ts
 * import { verifyRunToken } from 'rxagent/durable';
 * const claims = verifyRunToken(token, { secret });
 * if (claims?.runId === runId) console.log('opens', claims.runId, 'for', claims.resourceId);
 * ```
 */
export function verifyRunToken(token: unknown, options: VerifyRunTokenOptions): RunTokenClaims | null {
  const key = secretBytes('verifyRunToken', options.secret);
  const maxLifetime = maxLifetimeOf('verifyRunToken', options.maxLifetimeSeconds);
  if (typeof token !== 'string' || token.length > 4096) return null;
  const [version, body, mac, extra] = token.split('.');
  if (version !== VERSION || body === undefined || mac === undefined || extra !== undefined) return null;
  if (!/^[\w-]+$/.test(body) || !/^[\w-]+$/.test(mac)) return null;
  // the MAC's text as createRunToken writes it: another spelling of the same bytes (base64url's spare low bits) is refused
  const expected = Buffer.from(sign(key, body).toString('base64url'));
  const given = Buffer.from(mac);
  if (given.byteLength !== expected.byteLength || !timingSafeEqual(given, expected)) return null;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const { r, o, e } = (claims ?? {}) as { r?: unknown; o?: unknown; e?: unknown };
  if (typeof r !== 'string' || typeof o !== 'string' || typeof e !== 'number' || !Number.isSafeInteger(e)) return null;
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000);
  // expired, or expiring later than any token this app mints may: refused (the bound is checked, so it holds for any clock)
  if (!(nowSeconds < e && e <= nowSeconds + maxLifetime + CLOCK_SKEW_SECONDS)) return null;
  return { runId: r, resourceId: o, expiresAt: e };
}

/**
 * Options of {@link runTokenAuthorization}.
 *
 * @example
 * ```ts
 * import type { RunTokenAuthorizationOptions } from 'rxagent/durable';
 * const options: RunTokenAuthorizationOptions = { secret, tokenOf: (request) => request?.headers.get('x-run-token') ?? null };
 * ```
 */
export interface RunTokenAuthorizationOptions extends VerifyRunTokenOptions {
  /**
   * Where a request carries its token. Default: the `x-rxagent-run-token` header, else the
   * `?token=` query parameter (an `EventSource` cannot set headers).
   */
  tokenOf?: (request: Request | undefined) => string | null | undefined;
}

/** The token of a request: `x-rxagent-run-token`, else `?token=`. */
function defaultTokenOf(request: Request | undefined): string | null {
  if (request === undefined) return null;
  return request.headers.get(RUN_TOKEN_HEADER) ?? new URL(request.url, 'http://localhost').searchParams.get('token');
}

/**
 * A ready `authorize` for the readers and `cancel`: the request's run token must be valid
 * ({@link verifyRunToken}, with its `maxLifetimeSeconds`), for this run, and for its owner (`run.resourceId`; a run without an
 * owner is refused). Everything else is refused — answered as an unknown run (404).
 *
 * @example
 * ```ts
 * import { journalStreamResponse, runTokenAuthorization } from 'rxagent/durable';
 * const authorize = runTokenAuthorization({ secret: process.env.RUN_TOKEN_SECRET! });
 * export const GET = (request: Request, runId: string) => journalStreamResponse(journal, runId, { request, authorize });
 * ```
 */
export function runTokenAuthorization(options: RunTokenAuthorizationOptions): RunAuthorize {
  secretBytes('runTokenAuthorization', options.secret);
  maxLifetimeOf('runTokenAuthorization', options.maxLifetimeSeconds);
  const tokenOf = options.tokenOf ?? defaultTokenOf;
  return (run, request) => {
    const claims = verifyRunToken(tokenOf(request), options);
    return claims !== null && run.resourceId !== undefined && claims.runId === run.runId && claims.resourceId === run.resourceId;
  };
}
