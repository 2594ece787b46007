/**
 * How errors name a request: method, origin and path. The query string is left out because it
 * often carries tokens, and error messages are stored and shown to the assistant.
 */
export function requestLabel(method: string, url: string): string {
  const u = new URL(url);
  return `${method} ${u.origin}${u.pathname}`;
}
