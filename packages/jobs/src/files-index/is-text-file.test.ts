import { describe, expect, it } from 'vitest';
import { isTextFile, SNIFF_BYTES } from './is-text-file.js';

const text = (s: string): Buffer => Buffer.from(s, 'utf8');

describe('isTextFile', () => {
  it('accepts known text extensions and names without NUL bytes', () => {
    expect(isTextFile('src/a.ts', text('export {};'))).toBe(true);
    expect(isTextFile('Dockerfile', text('FROM node:20'))).toBe(true);
    expect(isTextFile('empty.txt', new Uint8Array())).toBe(true);
  });

  it('rejects binary extensions and NUL bytes in the sniffed head', () => {
    expect(isTextFile('logo.png', text('plain'))).toBe(false);
    expect(isTextFile('a.txt', Buffer.from([0x61, 0, 0x62]))).toBe(false);
  });

  it('only sniffs the first 8 KiB', () => {
    const late = Buffer.concat([Buffer.alloc(SNIFF_BYTES, 'a'), Buffer.from([0])]);
    expect(isTextFile('a.txt', late)).toBe(true);
  });

  it('decides unknown extensions by UTF-8 validity', () => {
    expect(isTextFile('bin/run', text('#!/bin/sh\necho ✓\n'))).toBe(true);
    expect(isTextFile('notes.xyz', Buffer.from([0xc3, 0x28, 0x41]))).toBe(false);
    // A multi-byte character cut off by the sniff window is still valid.
    expect(isTextFile('notes.xyz', text('ok ✓').subarray(0, 4))).toBe(true);
  });
});
