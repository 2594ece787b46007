import { describe, expect, it } from 'vitest';
import { findRefs, parseTemplate, resolveTemplates, TemplateSyntaxError, UnresolvedTemplateError, walkPath } from './template.js';

const results: Record<string, unknown> = {
  read: { content: [{ type: 'text', text: 'hello' }], structuredContent: { content: 'hello', lines: 3, meta: { tags: ['a', 'b'] } } },
  list: { content: [{ type: 'text', text: '[FILE] a.txt' }] },
};
const resultOf = async (id: string) => results[id];

describe('templates', () => {
  it('parses references with dotted keys and array indices, leaving other text alone', () => {
    expect(parseTemplate('A {{ steps.read.structuredContent.meta.tags[1] }} and {{name}}')).toEqual([
      { kind: 'text', text: 'A ' },
      { kind: 'ref', ref: { step: 'read', path: ['structuredContent', 'meta', 'tags', 1], source: '{{ steps.read.structuredContent.meta.tags[1] }}' } },
      { kind: 'text', text: ' and {{name}}' },
    ]);
    expect(parseTemplate('{{steps.list.content.0.text}}')).toEqual([{ kind: 'ref', ref: { step: 'list', path: ['content', 0, 'text'], source: '{{steps.list.content.0.text}}' } }]);
    expect(parseTemplate('no templates')).toEqual([{ kind: 'text', text: 'no templates' }]);
  });

  it('rejects malformed references and prototype keys', () => {
    expect(() => parseTemplate('{{steps.read.content')).toThrow(TemplateSyntaxError);
    expect(() => parseTemplate('{{steps.}}')).toThrow(/expected a step id/);
    expect(() => parseTemplate('{{steps.read..x}}')).toThrow(/empty key/);
    expect(() => parseTemplate('{{steps.read.__proto__.x}}')).toThrow(/cannot be read/);
    expect(() => parseTemplate('{{steps.read.constructor}}')).toThrow(/cannot be read/);
  });

  it('finds references anywhere in an arguments object, with their location', () => {
    const refs = findRefs({ path: '/out/{{steps.list.content.0.text}}', nested: [{ v: '{{steps.read.structuredContent}}' }], n: 3 });
    expect(refs.map((r) => ({ at: r.at, step: r.ref.step }))).toEqual([
      { at: ['path'], step: 'list' },
      { at: ['nested', 0, 'v'], step: 'read' },
    ]);
  });

  it('a whole-string template yields the raw value; an embedded one yields text', async () => {
    const args = {
      obj: '{{steps.read.structuredContent.meta}}',
      num: '{{steps.read.structuredContent.lines}}',
      text: 'got {{steps.read.structuredContent.content}} x{{steps.read.structuredContent.lines}} {{steps.read.structuredContent.meta.tags}}',
      keep: ['{{steps.read.content[0].text}}', 7, null],
    };
    expect(await resolveTemplates(args, resultOf)).toEqual({
      obj: { tags: ['a', 'b'] },
      num: 3,
      text: 'got hello x3 ["a","b"]',
      keep: ['hello', 7, null],
    });
  });

  it('a path that leads nowhere is an error naming the template and where it sits', async () => {
    const e = await resolveTemplates({ a: { b: '{{steps.read.structuredContent.missing}}' } }, resultOf).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UnresolvedTemplateError);
    expect((e as Error).message).toMatch(/\{\{steps\.read\.structuredContent\.missing\}\} \(at arguments\.a\.b\) resolved to nothing/);
  });

  it('walks own properties only', () => {
    expect(walkPath({ a: [1, { b: 2 }] }, ['a', 1, 'b'])).toBe(2);
    expect(walkPath({}, ['toString'])).toBeUndefined();
    expect(walkPath({ a: 'str' }, ['a', 'length'])).toBeUndefined();
  });
});
