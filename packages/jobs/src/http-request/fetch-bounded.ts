import { StepwiseError } from '@stepwise/shared';
import { requestLabel } from './request-label.js';

export interface BoundedRequest {
  method: string;
  url: string;
  headers: Readonly<Record<string, string>>;
  body?: string;
  /** Whole exchange, body included, in ms. */
  timeoutMs: number;
  /** Body bytes kept; the rest is discarded unread. */
  maxResponseBytes: number;
  /** The step's signal: cancellation, step timeout, lease loss, shutdown. */
  signal: AbortSignal;
}

export interface BoundedResponse {
  status: number;
  headers: Headers;
  /** The body decoded as UTF-8 (invalid bytes become U+FFFD). */
  text: string;
  truncated: boolean;
}

/**
 * One fetch whose response body is read up to `maxResponseBytes`, so a huge or endless body
 * costs bounded memory. A truncated body never ends in half a UTF-8 character.
 *
 * @throws `signal.reason` when the step's signal fired (the runner then knows why it stopped).
 * @throws StepwiseError `http_request_timeout` (category timeout) after `timeoutMs`.
 * @throws whatever fetch throws for network failures (a TypeError with a `cause` carrying
 *   ECONNREFUSED, ECONNRESET…), left for the runner's classifyError to map to `transient`.
 */
export async function fetchBounded(req: BoundedRequest): Promise<BoundedResponse> {
  req.signal.throwIfAborted();
  const timeout = new AbortController();
  const timer = setTimeout(() => {
    timeout.abort(
      new StepwiseError('http_request_timeout', 'timeout', `${requestLabel(req.method, req.url)}: no complete response within ${req.timeoutMs} ms.`, {
        details: { timeoutMs: req.timeoutMs },
      }),
    );
  }, req.timeoutMs);
  try {
    const res = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      ...(req.body === undefined ? {} : { body: req.body }),
      signal: AbortSignal.any([req.signal, timeout.signal]),
    });
    const { bytes, truncated } = await readBounded(res.body, req.maxResponseBytes);
    // stream: true holds back an incomplete trailing character instead of emitting U+FFFD for it.
    const text = new TextDecoder('utf-8').decode(bytes, { stream: truncated });
    return { status: res.status, headers: res.headers, text, truncated };
  } catch (e: unknown) {
    // The step's own signal wins: a runner timeout or a cancel must surface as itself.
    if (req.signal.aborted) throw req.signal.reason;
    if (timeout.signal.aborted) throw timeout.signal.reason;
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

async function readBounded(body: ReadableStream<Uint8Array> | null, limit: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks, size), truncated: false };
    if (size + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - size));
      // Stop the download; a failure to cancel changes nothing about what we already have.
      await reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(chunks, limit), truncated: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
}
