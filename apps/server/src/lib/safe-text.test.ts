import { describe, expect, it } from 'vitest';
import { assertSafeText, textProblem } from './safe-text';

const messageOf = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
};

describe('text PostgreSQL would refuse', () => {
  it('finds NUL and unpaired surrogates, and lets paired ones (emoji) and other controls through', () => {
    expect(textProblem('a\u0000b')).toBe('nul');
    expect(textProblem('x\ud800y')).toBe('surrogate');
    expect(textProblem('\udc00')).toBe('surrogate');
    expect(textProblem('x\ud800')).toBe('surrogate');
    expect(textProblem('笑 😀 \u0001\t')).toBeUndefined();
  });

  it('names the path of the first bad string or key, as validation messages do', () => {
    const body = { name: '张三', config: { openingLine: '您好\u0000', endCallPhrases: ['再见', 'x\ud800'] } };
    expect(messageOf(() => assertSafeText(body))).toBe('字段 config.openingLine：不能包含控制字符 NUL');
    expect(messageOf(() => assertSafeText({ phrases: ['再见', 'x\ud800'] }))).toBe(
      '字段 phrases.1：包含无效的 Unicode 字符',
    );
    expect(messageOf(() => assertSafeText({ variables: { 'k\u0000': 'v' } }))).toBe(
      '字段 variables：键名不能包含控制字符 NUL',
    );
    expect(messageOf(() => assertSafeText({ '\udc00': 1 }))).toBe('请求体：键名包含无效的 Unicode 字符');
    expect(messageOf(() => assertSafeText('a\u0000'))).toBe('请求体：不能包含控制字符 NUL');
    expect(messageOf(() => assertSafeText('a\u0000', 'projectId'))).toBe(
      '字段 projectId：不能包含控制字符 NUL',
    );
    expect(messageOf(() => assertSafeText({ name: '正常 😀', n: 1, list: [null, true] }))).toBeUndefined();
  });

  it('walks a body nested deeper than the call stack allows', () => {
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(messageOf(() => assertSafeText(deep))).toMatch(/^字段 (0\.)+0?…：不能包含控制字符 NUL$/);
  });
});
