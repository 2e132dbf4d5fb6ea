import { currentUser, envelope } from '@callpilot/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSerializerCompiler } from './serializer';

const compile = (schema: z.ZodType, verify: boolean) =>
  createSerializerCompiler({ verify })({ schema, method: 'GET', url: '/x', httpStatus: '200' }) as (
    data: unknown,
  ) => string;

describe('response serializer', () => {
  const schema = z.object({ id: z.string(), nickname: z.string(), tags: z.array(z.string()).nullable() });

  it('writes only the properties the schema names, in production and under verification', () => {
    for (const verify of [false, true]) {
      const out = compile(schema, verify)({ id: 'a', nickname: '李四', tags: null, passwordHash: 'x' });
      expect(JSON.parse(out)).toEqual({ id: 'a', nickname: '李四', tags: null });
      expect(out).not.toContain('passwordHash');
    }
  });

  it('under verification refuses data that breaks the contract instead of coercing it', () => {
    const bad = { id: 1, nickname: '李四', tags: [] };
    expect(() => compile(schema, true)(bad)).toThrow();
    // Production trusts the handlers (the suite runs verified): the fast path coerces.
    expect(JSON.parse(compile(schema, false)(bad))).toEqual({ id: '1', nickname: '李四', tags: [] });
  });

  it('compiles the real current-user envelope (named nested schemas) to the fast path', () => {
    const project = {
      id: 'p1',
      name: '演示',
      company: '星河',
      industry: '电信',
      disabled: false,
      role: 'owner',
    };
    const me = {
      isOwnerOrAdmin: true,
      role: 'owner',
      id: 'u1',
      email: 'a@example.com',
      displayName: '张三',
      profile: '',
    };
    const answer = (data: object) => ({
      success: true,
      status: 200,
      data,
      message: 'ok',
      msg: 'ok',
      error: null,
    });
    const good = answer({
      ...me,
      passwordHash: '$argon2id$secret',
      projects: [{ ...project, apiKey: 'sk-1' }],
    });
    const out = compile(envelope(currentUser), true)(good);
    expect(JSON.parse(out)).toEqual(answer({ ...me, projects: [project] }));
    expect(out).not.toMatch(/argon2|sk-1/);
    // Only fast-json-stringify coerces; zod would throw. So production really takes the fast path.
    const wrongType = answer({ ...me, id: 7, projects: [] });
    expect(JSON.parse(compile(envelope(currentUser), false)(wrongType)).data.id).toBe('7');
  });
});
