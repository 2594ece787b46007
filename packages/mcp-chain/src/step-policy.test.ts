import { describe, expect, it } from 'vitest';
import { callPolicy } from './step-policy.js';

const server = (over: Partial<{ approval: 'default' | 'never' | 'always'; tools: Record<string, { effect?: 'none' | 'idempotent' | 'unsafe'; approval?: 'required' | 'none' }> }> = {}) => ({
  approval: over.approval ?? 'default',
  tools: over.tools ?? {},
});

describe('callPolicy (DESIGN §12)', () => {
  it('maps annotations the way real servers combine them', () => {
    // server-filesystem read_text_file
    expect(callPolicy({ annotations: { readOnlyHint: true } }, server(), 't', 'default')).toEqual({ effect: 'none', approval: 'none', destructive: false });
    // server-filesystem write_file: destructive AND idempotent
    expect(callPolicy({ annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: true } }, server(), 't', 'default')).toEqual({
      effect: 'idempotent',
      approval: 'required',
      destructive: true,
    });
    // server-memory create_entities: neither read-only nor idempotent, not destructive
    expect(callPolicy({ annotations: { readOnlyHint: false, idempotentHint: false, destructiveHint: false } }, server(), 't', 'default')).toEqual({
      effect: 'unsafe',
      approval: 'none',
      destructive: false,
    });
  });

  it('treats a tool without annotations as MCP does: may write, may destroy', () => {
    expect(callPolicy({}, server(), 't', 'default')).toEqual({ effect: 'unsafe', approval: 'required', destructive: true });
  });

  it('lets a chain opt out of the destructive default only', () => {
    const destructive = { annotations: { destructiveHint: true } };
    expect(callPolicy(destructive, server(), 't', 'skip_destructive').approval).toBe('none');
    expect(callPolicy(destructive, server({ approval: 'always' }), 't', 'skip_destructive').approval).toBe('required');
    expect(callPolicy(destructive, server({ tools: { t: { approval: 'required' } } }), 't', 'skip_destructive').approval).toBe('required');
  });

  it('lets config override both questions, per server and per tool', () => {
    const destructive = { annotations: { destructiveHint: true } };
    expect(callPolicy(destructive, server({ approval: 'never' }), 't', 'default').approval).toBe('none');
    expect(callPolicy({ annotations: { readOnlyHint: true } }, server({ approval: 'always' }), 't', 'default').approval).toBe('required');
    expect(callPolicy(destructive, server({ tools: { t: { approval: 'none', effect: 'idempotent' } } }), 't', 'default')).toMatchObject({
      effect: 'idempotent',
      approval: 'none',
    });
    expect(callPolicy({ annotations: { readOnlyHint: true } }, server({ tools: { other: { effect: 'unsafe' } } }), 't', 'default').effect).toBe('none');
  });
});
