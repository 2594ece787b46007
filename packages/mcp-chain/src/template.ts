/**
 * The chain's template syntax: `{{steps.<id>.<path>}}` inside an argument string refers to the
 * result of an earlier step (the downstream `CallToolResult`: `content`, `structuredContent`,
 * `isError`). A path is dot-separated keys, with numbers (or `[n]`) indexing arrays:
 * `{{steps.read.structuredContent.content}}`, `{{steps.list.content[0].text}}`.
 *
 * Nothing is evaluated: a template is parsed into a step id and a list of keys, and resolving it
 * only walks own properties of plain data. Text like `{{name}}` that does not start with
 * `steps.` is left alone, so mustache files can be written verbatim.
 */

export type PathKey = string | number;

export interface TemplateRef {
  /** The referenced chain step. */
  step: string;
  /** Keys below that step's result. */
  path: PathKey[];
  /** The template as written, for messages. */
  source: string;
}

export type Segment = { kind: 'text'; text: string } | { kind: 'ref'; ref: TemplateRef };

/** A template that does not parse, with why. */
export class TemplateSyntaxError extends Error {
  constructor(
    readonly source: string,
    reason: string,
  ) {
    super(`${source}: ${reason}`);
    this.name = 'TemplateSyntaxError';
  }
}

const OPEN = /\{\{\s*steps\./g;
const STEP_ID = /^[a-z0-9][a-z0-9_-]{0,63}/;
const KEY = /^[^.[\]{}\s]+/;
const INDEX = /^\[(\d{1,9})\]/;
const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

/**
 * Splits a string into literal text and template references.
 * @throws TemplateSyntaxError for a `{{steps.` that is not a well-formed reference.
 */
export function parseTemplate(value: string): Segment[] {
  const segments: Segment[] = [];
  let last = 0;
  OPEN.lastIndex = 0;
  for (let m = OPEN.exec(value); m !== null; m = OPEN.exec(value)) {
    const start = m.index;
    const close = value.indexOf('}}', start);
    if (close === -1) throw new TemplateSyntaxError(value.slice(start, start + 60), 'no closing "}}"');
    const source = value.slice(start, close + 2);
    const body = value.slice(start + 2, close).trim();
    segments.push(...(start > last ? [{ kind: 'text' as const, text: value.slice(last, start) }] : []));
    segments.push({ kind: 'ref', ref: parseRef(body, source) });
    last = close + 2;
    OPEN.lastIndex = last;
  }
  if (last < value.length) segments.push({ kind: 'text', text: value.slice(last) });
  return segments;
}

function parseRef(body: string, source: string): TemplateRef {
  let rest = body.slice('steps.'.length);
  const id = STEP_ID.exec(rest);
  if (!id) throw new TemplateSyntaxError(source, 'expected a step id after "steps."');
  rest = rest.slice(id[0].length);
  const path: PathKey[] = [];
  while (rest.length > 0) {
    const index = INDEX.exec(rest);
    if (index) {
      path.push(Number(index[1]));
      rest = rest.slice(index[0].length);
      continue;
    }
    if (rest[0] !== '.') throw new TemplateSyntaxError(source, `unexpected "${rest[0]}"`);
    const key = KEY.exec(rest.slice(1));
    if (!key) throw new TemplateSyntaxError(source, 'empty key after "."');
    if (FORBIDDEN_KEYS.has(key[0])) throw new TemplateSyntaxError(source, `"${key[0]}" cannot be read`);
    path.push(/^\d{1,9}$/.test(key[0]) ? Number(key[0]) : key[0]);
    rest = rest.slice(1 + key[0].length);
  }
  return { step: id[0], path, source };
}

/** Every template reference in a JSON value (strings anywhere inside it), with where it sits. */
export function findRefs(value: unknown, at: PathKey[] = []): { at: PathKey[]; ref: TemplateRef }[] {
  if (typeof value === 'string') return parseTemplate(value).flatMap((s) => (s.kind === 'ref' ? [{ at, ref: s.ref }] : []));
  if (Array.isArray(value)) return value.flatMap((v, i) => findRefs(v, [...at, i]));
  if (isRecord(value)) return Object.entries(value).flatMap(([k, v]) => findRefs(v, [...at, k]));
  return [];
}

/** Walks `path` through own properties of plain objects and arrays; undefined when it leads nowhere. */
export function walkPath(root: unknown, path: readonly PathKey[]): unknown {
  let cur: unknown = root;
  for (const key of path) {
    if (Array.isArray(cur) && typeof key === 'number') cur = cur[key];
    else if (isRecord(cur) && Object.hasOwn(cur, String(key))) cur = cur[String(key)];
    else return undefined;
  }
  return cur;
}

/** A reference that resolved to nothing: the earlier step's result has no such path. */
export class UnresolvedTemplateError extends Error {
  constructor(
    readonly ref: TemplateRef,
    readonly at: PathKey[],
  ) {
    super(`${ref.source} (at arguments.${at.join('.') || '(root)'}) resolved to nothing: step "${ref.step}" has no value there`);
    this.name = 'UnresolvedTemplateError';
  }
}

/**
 * Replaces every template in `value` (recursively) by what it refers to. A string that is
 * exactly one template becomes the raw value (object, number, …); a template embedded in text
 * becomes text (JSON for objects and arrays).
 * @param resultOf the result of an earlier step by id (may load it from the blob store).
 * @throws UnresolvedTemplateError when a path leads nowhere.
 */
export async function resolveTemplates(value: unknown, resultOf: (step: string) => Promise<unknown>, at: PathKey[] = []): Promise<unknown> {
  if (typeof value === 'string') {
    const segments = parseTemplate(value);
    if (!segments.some((s) => s.kind === 'ref')) return value;
    const resolved = await Promise.all(
      segments.map(async (s) => {
        if (s.kind === 'text') return s.text;
        const v = walkPath(await resultOf(s.ref.step), s.ref.path);
        if (v === undefined) throw new UnresolvedTemplateError(s.ref, at);
        return v;
      }),
    );
    if (segments.length === 1) return resolved[0];
    return resolved.map((v) => (typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))).join('');
  }
  if (Array.isArray(value)) return Promise.all(value.map((v, i) => resolveTemplates(v, resultOf, [...at, i])));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await resolveTemplates(v, resultOf, [...at, k]);
    return out;
  }
  return value;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
