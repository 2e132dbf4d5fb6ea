import { AppError } from './errors';

/**
 * PostgreSQL refuses two things a JSON string or a URL can carry: the NUL character (in text and
 * jsonb alike) and a UTF-16 surrogate without its pair (jsonb rejects the `\ud800` escape that
 * JSON.stringify writes for it; text silently turns it into U+FFFD). Refused at the database they
 * surface as 500s after part of a request may have run, so input is held to this at the door.
 */
export type TextProblem = 'nul' | 'surrogate';

const SUSPECT = /[\0\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function textProblem(text: string): TextProblem | undefined {
  // Nearly every string has neither; emoji (valid pairs) are the only ones that look twice.
  if (!SUSPECT.test(text)) return undefined;
  if (text.includes('\0')) return 'nul';
  return LONE_SURROGATE.test(text) ? 'surrogate' : undefined;
}

export const textProblemRule: Record<TextProblem, string> = {
  nul: '不能包含控制字符 NUL',
  surrogate: '包含无效的 Unicode 字符',
};

// A path through a deeply nested body (or a long key) is cut: the message is for a person.
const MAX_SHOWN_PATH = 120;

const invalidText = (field: string, rule: string) => {
  const shown = field.length > MAX_SHOWN_PATH ? `${field.slice(0, MAX_SHOWN_PATH)}…` : field;
  return new AppError(400, 'VALIDATION_FAILED', shown ? `字段 ${shown}：${rule}` : `请求体：${rule}`);
};

/**
 * Walks a parsed value (a JSON body, the query, path parameters) and refuses the first string or
 * object key that PostgreSQL would, naming its path as the validation messages do
 * (`字段 config.openingLine：…`). Iterative, so a deeply nested body cannot exhaust the stack.
 */
export function assertSafeText(value: unknown, root = ''): void {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      const problem = textProblem(node);
      if (problem) throw invalidText(path, textProblemRule[problem]);
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], join(path, String(i))]);
    } else if (node !== null && typeof node === 'object' && !Buffer.isBuffer(node)) {
      const entries = Object.entries(node);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const problem = textProblem(key);
        // The key itself is not repeated in the message: it is the unprintable part.
        if (problem) throw invalidText(path, `键名${textProblemRule[problem]}`);
        stack.push([child, join(path, key)]);
      }
    }
  }
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
