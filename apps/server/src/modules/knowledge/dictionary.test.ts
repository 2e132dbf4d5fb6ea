import { describe, expect, it } from 'vitest';
import { BUILTIN_TERMS } from './dictionary';

describe('the built-in 口语词典', () => {
  it('gives every spoken word one meaning: no variant under two standards, none that is a standard itself', () => {
    const owner = new Map<string, string[]>();
    for (const { standard, variants } of BUILTIN_TERMS)
      for (const v of variants) owner.set(v.toLowerCase(), [...(owner.get(v.toLowerCase()) ?? []), standard]);
    const standards = new Set(BUILTIN_TERMS.map((t) => t.standard.toLowerCase()));
    const conflicts = [...owner].filter(([v, s]) => s.length > 1 || standards.has(v));
    expect(conflicts).toEqual([]);
    expect(standards.size).toBe(BUILTIN_TERMS.length);
  });
});
