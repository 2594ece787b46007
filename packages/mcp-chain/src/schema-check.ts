import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation';
import { canonicalJson, sha256Hex } from '@stepwise/shared';

/** sha256 of the canonical JSON of a tool's inputSchema: equal hashes mean an unchanged schema. */
export function schemaHash(schema: unknown): string {
  return sha256Hex(canonicalJson(schema ?? null));
}

export type ArgumentsCheck = { valid: true } | { valid: false; message: string };

/**
 * Validates tool arguments against a tool's JSON Schema (draft 2020-12 / 07, as MCP servers
 * publish them), with the SDK's own validator. A fresh validator each time: two versions of one
 * schema may carry the same `$id`, which a shared instance would refuse to compile twice.
 * A schema the validator cannot compile counts as valid (the server validates anyway).
 */
export function checkArguments(schema: unknown, args: unknown): ArgumentsCheck {
  let validate;
  try {
    validate = new AjvJsonSchemaValidator().getValidator(schema as JsonSchemaType);
  } catch {
    return { valid: true };
  }
  const r = validate(args);
  return r.valid ? { valid: true } : { valid: false, message: r.errorMessage };
}

/**
 * What changed between two schemas, as short lines a person can read (`- properties.text`,
 * `+ properties.message`, `~ required: ["text"] → ["message"]`). At most `limit` lines.
 */
export function diffSchemas(before: unknown, after: unknown, limit = 40): string[] {
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, path: string) => {
    if (out.length >= limit) return;
    if (canonicalJson(a ?? null) === canonicalJson(b ?? null)) return;
    const objects = isRecord(a) && isRecord(b);
    if (!objects) {
      out.push(`~ ${path || '(root)'}: ${short(a)} → ${short(b)}`);
      return;
    }
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const p = path ? `${path}.${k}` : k;
      if (!Object.hasOwn(a, k)) out.push(`+ ${p}: ${short(b[k])}`);
      else if (!Object.hasOwn(b, k)) out.push(`- ${p}`);
      else walk(a[k], b[k], p);
      if (out.length >= limit) return;
    }
  };
  walk(before, after, '');
  return out;
}

function short(v: unknown): string {
  const s = canonicalJson(v ?? null);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
