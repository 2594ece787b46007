import { z } from 'zod';
import { headerProblem, MAX_REQUEST_HEADERS } from './header-rules.js';

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Default `timeoutMs`: 30 s. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Largest `timeoutMs`: 5 min. */
export const MAX_TIMEOUT_MS = 300_000;
/** Default `maxResponseBytes`: 1 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Largest `maxResponseBytes`: 16 MiB (outputs above 256 KiB are spilled to the blob store by the runner). */
export const MAX_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * A JSON value, one level deep. Deliberately not z.json(): that is recursive and becomes a
 * `$ref` to root `$defs`, which breaks once start_job embeds this schema inside its own.
 */
export const JsonValueSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.unknown()),
  z.record(z.string(), z.unknown()),
]);

const HttpUrlSchema = z.url({ protocol: /^https?$/, error: 'must be an absolute http:// or https:// URL' });

const HeadersSchema = z.record(z.string(), z.string()).superRefine((headers, ctx) => {
  const names = Object.keys(headers);
  if (names.length > MAX_REQUEST_HEADERS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_REQUEST_HEADERS} headers` });
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    const problem = headerProblem(name, value);
    if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
    const lower = name.toLowerCase();
    if (seen.has(lower)) ctx.addIssue({ code: 'custom', path: [name], message: `${name} is given twice (header names ignore case)` });
    seen.add(lower);
  }
});

/** Input of `http.request`. Strict, so a misspelt field is an error rather than silently ignored. */
export const HttpRequestInputSchema = z
  .strictObject({
    method: z.enum(HTTP_METHODS).default('GET').describe('HTTP method. Default GET. GET and HEAD never change anything and are replayed freely.'),
    url: HttpUrlSchema.describe('Absolute http:// or https:// URL to call, e.g. "https://api.example.com/v1/orders".'),
    headers: HeadersSchema.optional().describe(
      'Extra request headers, e.g. {"Authorization": "Bearer …", "Accept": "application/json"}. Values are never logged. ' +
        'Host, Content-Length, Idempotency-Key (set by the job), Expect and hop-by-hop headers (Connection, Keep-Alive, ' +
        'Transfer-Encoding, TE, Trailer, Upgrade, Proxy-*) are rejected.',
    ),
    body: JsonValueSchema.optional().describe(
      'Request body. A string is sent exactly as given (set Content-Type yourself); any other JSON value is sent as JSON ' +
        'with Content-Type application/json unless you set one. Not allowed with GET or HEAD.',
    ),
    honoursIdempotencyKey: z
      .boolean()
      .default(false)
      .describe(
        'Set true only if the endpoint deduplicates requests by the Idempotency-Key header (as Stripe does): then a write ' +
          'is retried and replayed safely with the same key. Otherwise a write is "unsafe": it needs a person\'s approval and ' +
          'is never replayed blindly.',
      ),
    statusUrl: HttpUrlSchema.optional().describe(
      'For unsafe writes only: a URL that says whether the request took effect. After a crash the job GETs it with the same ' +
        'Idempotency-Key header (and your headers): HTTP 200 with a JSON body means it did (that response becomes the result), ' +
        '404 means it did not (the request is sent again). Any other answer stops the job for a person to decide.',
    ),
    timeoutMs: z
      .number()
      .int()
      .positive()
      .max(MAX_TIMEOUT_MS)
      .default(DEFAULT_TIMEOUT_MS)
      .describe(`Give up on the request (category timeout) after this many milliseconds. Default ${DEFAULT_TIMEOUT_MS}, max ${MAX_TIMEOUT_MS}.`),
    maxResponseBytes: z
      .number()
      .int()
      .positive()
      .max(MAX_MAX_RESPONSE_BYTES)
      .default(DEFAULT_MAX_RESPONSE_BYTES)
      .describe(
        `Read at most this many bytes of the response body; the rest is discarded and "truncated" is true. Default ` +
          `${DEFAULT_MAX_RESPONSE_BYTES} (1 MiB), max ${MAX_MAX_RESPONSE_BYTES}.`,
      ),
  })
  .superRefine((input, ctx) => {
    if (input.body !== undefined && (input.method === 'GET' || input.method === 'HEAD')) {
      ctx.addIssue({ code: 'custom', path: ['body'], message: `a ${input.method} request cannot have a body; use POST, PUT or PATCH` });
    }
  });
export type HttpRequestInput = z.output<typeof HttpRequestInputSchema>;

/** The response headers a result keeps: enough to act on, nothing that carries a session (no Set-Cookie). */
export const SAFE_RESPONSE_HEADERS = ['content-type', 'etag', 'location', 'retry-after'] as const;

/** Output of the `request` step, and the job result. */
export const HttpResponseSchema = z.object({
  status: z.number().int().describe('HTTP status code (2xx or 3xx; errors fail the job instead).'),
  headers: z
    .object({
      'content-type': z.string().optional(),
      etag: z.string().optional(),
      location: z.string().optional(),
      'retry-after': z.string().optional(),
    })
    .describe('Only these response headers are kept; absent ones are omitted.'),
  body: JsonValueSchema.describe('Parsed JSON when the response is JSON (application/json or +json) and complete; otherwise the UTF-8 text ("" when empty).'),
  truncated: z.boolean().describe('True when the body was longer than maxResponseBytes and was cut there (the body is then text).'),
});
export type HttpResponse = z.infer<typeof HttpResponseSchema>;
