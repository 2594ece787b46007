import { describe, it, expect } from 'vitest';
import { JobIdSchema, PrincipalIdSchema, TenantIdSchema, newJobId, newRequestId, newWorkerId } from './ids.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const JOB_ID = /^job_[0-9a-hjkmnp-tv-z]{26}$/;

/** Independent decoder: the first 48 bits of the body are the creation time in ms. */
function timeOf(id: string): number {
  const body = id.slice('job_'.length);
  let bits = 0n;
  for (const ch of body.slice(0, 10)) bits = (bits << 5n) | BigInt(ALPHABET.indexOf(ch));
  return Number(bits >> 2n); // 10 chars = 50 bits; the top 48 are the timestamp
}

describe('newJobId', () => {
  it('is job_ followed by 26 Crockford base32 characters, with no ":"', () => {
    const id = newJobId();
    expect(id).toMatch(JOB_ID);
    expect(id).toHaveLength(30);
    expect(id).not.toContain(':');
    for (const ch of id.slice(4)) expect(ALPHABET).toContain(ch);
  });

  it('round-trips through JobIdSchema unchanged', () => {
    for (let i = 0; i < 100; i++) {
      const id = newJobId();
      const parsed = JobIdSchema.safeParse(id);
      expect(parsed.success).toBe(true);
      expect(parsed.data).toBe(id);
    }
  });

  it('encodes the creation time in its first 48 bits', () => {
    const now = Date.UTC(2025, 5, 1, 12, 0, 0, 123);
    expect(timeOf(newJobId(now))).toBe(now);
    expect(timeOf(newJobId(0))).toBe(0);
    expect(timeOf(newJobId(2 ** 48 - 1))).toBe(2 ** 48 - 1);
    const before = Date.now();
    const t = timeOf(newJobId());
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(Date.now());
  });

  it('gives 10,000 distinct ids, even within the same millisecond', () => {
    const now = Date.now();
    const ids = new Set<string>();
    for (let i = 0; i < 10_000; i++) ids.add(newJobId(now));
    expect(ids.size).toBe(10_000);
    const mixed = new Set(Array.from({ length: 10_000 }, () => newJobId()));
    expect(mixed.size).toBe(10_000);
  });

  it('sorts by creation time as plain strings', () => {
    const times = [0, 1, 31, 32, 1_000, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 2 ** 48 - 1];
    const ids = times.map((t) => newJobId(t));
    const shuffled = [...ids].reverse();
    expect([...shuffled].sort()).toEqual(ids);
    for (let i = 1; i < ids.length; i++) expect((ids[i - 1] as string) < (ids[i] as string)).toBe(true);
  });

  it('ids from successive milliseconds sort in order', () => {
    const start = 1_750_000_000_000;
    const ids = Array.from({ length: 1_000 }, (_, i) => newJobId(start + i));
    expect([...ids].sort()).toEqual(ids);
  });

  it('is unguessable: two ids from the same ms differ in their random part', () => {
    const a = newJobId(42);
    const b = newJobId(42);
    expect(a.slice(0, 13)).toBe(b.slice(0, 13)); // job_ + 9 chars of pure timestamp
    expect(a).not.toBe(b);
  });
});

describe('JobIdSchema', () => {
  const good = newJobId();
  const body = good.slice(4);

  it.each([
    ['empty', ''],
    ['prefix only', 'job_'],
    ['too short', `job_${body.slice(1)}`],
    ['too long', `job_${body}0`],
    ['wrong prefix', `req_${body}`],
    ['no underscore', `job${body}`],
    ['upper-case prefix', `JOB_${body}`],
    ['upper-case body', `job_${body.toUpperCase().replace(/[0-9]/g, 'A')}`],
    ['contains ":"', `job_${body.slice(0, 25)}:`],
    ['colon-joined', `${good}:x`],
    ['excluded letter i', `job_${'i'.repeat(26)}`],
    ['excluded letter l', `job_${'l'.repeat(26)}`],
    ['excluded letter o', `job_${'o'.repeat(26)}`],
    ['excluded letter u', `job_${'u'.repeat(26)}`],
    ['leading space', ` ${good}`],
    ['trailing newline', `${good}\n`],
    ['SQL', `job_'; drop table jobs;--xxxxx`],
  ])('rejects %s', (_what, value) => {
    const r = JobIdSchema.safeParse(value);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toMatch(/job id/);
  });

  it.each([[123], [null], [undefined], [{}]])('rejects non-string %j', (value) => {
    expect(JobIdSchema.safeParse(value).success).toBe(false);
  });

  it('accepts a well-formed id', () => {
    expect(JobIdSchema.parse(`job_${'0'.repeat(26)}`)).toBe(`job_${'0'.repeat(26)}`);
    expect(JobIdSchema.parse(good)).toBe(good);
  });
});

describe('other ids', () => {
  it('newRequestId is req_ + 26 chars', () => {
    expect(newRequestId()).toMatch(/^req_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(newRequestId()).not.toBe(newRequestId());
  });

  it('newWorkerId strips unsafe hostname characters and never contains ":"', () => {
    const id = newWorkerId('host:name.example.com', 1234);
    expect(id).not.toContain(':');
    expect(id).toMatch(/^wrk_hostnameexamplecom_1234_[0-9a-hjkmnp-tv-z]+$/);
    expect(newWorkerId('h', 1)).not.toBe(newWorkerId('h', 1));
  });

  it('TenantIdSchema accepts slugs and rejects anything unsafe in keys', () => {
    expect(TenantIdSchema.parse('acme-1.prod_x')).toBe('acme-1.prod_x');
    for (const bad of ['', 'Acme', 'a:b', 'a b', '-lead', 'x'.repeat(65), 'a*']) {
      expect(TenantIdSchema.safeParse(bad).success).toBe(false);
    }
  });

  it('PrincipalIdSchema rejects spaces, colons, empty and over-long ids', () => {
    expect(PrincipalIdSchema.parse('user@example.com')).toBe('user@example.com');
    for (const bad of ['', 'a b', 'a:b', 'x'.repeat(129)]) expect(PrincipalIdSchema.safeParse(bad).success).toBe(false);
  });
});
