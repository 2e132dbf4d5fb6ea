/**
 * Pieces of the hostile-input walk (hostile-input.test.ts): plausible values for a JSON schema of
 * the served OpenAPI document, and the hostile mutations of a request. The walk is driven by the
 * document, so a route added later is covered without being listed anywhere.
 */

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
};

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export interface OpenApiOperation {
  security?: unknown[];
  parameters?: { in: 'path' | 'query' | 'header'; name: string; required?: boolean; schema?: JsonSchema }[];
  requestBody?: { content: Record<string, { schema?: JsonSchema }> };
}

const today = () =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Shanghai' }).format(new Date()).slice(0, 10);

/** Strings that satisfy the patterns the contracts use (phones, times, dates, numbers). */
const PATTERN_CANDIDATES = () => [
  '13800138000',
  '02160880000',
  today(),
  '09:00',
  'abc',
  'a1',
  '1',
  'fuzz@example.com',
];

/**
 * A plausible value for a schema: defaults, the first enum member, the fixture named like the
 * field (an assistantId is a real assistant), otherwise the smallest value of the right type.
 */
export function sampleFor(
  doc: OpenApiDocument,
  schema: JsonSchema | undefined,
  name: string,
  fixture: (name: string) => unknown,
  depth = 0,
): unknown {
  if (!schema || depth > 12) return undefined;
  const s = resolve(doc, schema);
  const named = fixture(name);
  if (named !== undefined) return named;
  const options = s.anyOf ?? s.oneOf;
  if (options) {
    const first = options.find((o) => resolve(doc, o).type !== 'null') ?? options[0];
    return sampleFor(doc, first, name, fixture, depth + 1);
  }
  if (s.allOf)
    return sampleFor(doc, Object.assign({}, ...s.allOf.map((o) => resolve(doc, o))), name, fixture);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type ?? (s.properties ? 'object' : undefined)) {
    case 'string': {
      if (typeof s.default === 'string') return s.default;
      if (s.format === 'date') return today();
      if (s.format === 'date-time') return new Date().toISOString();
      if (s.format === 'uri' || s.format === 'url') return 'http://127.0.0.1:9/v1';
      if (s.format === 'email') return 'fuzz@example.com';
      if (s.pattern) {
        const re = new RegExp(s.pattern, 'u');
        const hit = PATTERN_CANDIDATES().find((c) => re.test(c));
        if (hit) return hit;
      }
      return (s.minLength ?? 0) > 2 ? 'x'.repeat(s.minLength!) : '测试';
    }
    case 'integer':
    case 'number': {
      if (typeof s.default === 'number') return s.default;
      return Math.min(Math.max(s.minimum ?? 1, 1), s.maximum ?? Number.MAX_SAFE_INTEGER);
    }
    case 'boolean':
      return typeof s.default === 'boolean' ? s.default : true;
    case 'null':
      return null;
    case 'array': {
      const item = sampleFor(doc, s.items, `${name}[]`, fixture, depth + 1);
      return item === undefined ? [] : Array.from({ length: Math.max(s.minItems ?? 1, 1) }, () => item);
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, prop] of Object.entries(s.properties ?? {})) {
        const value = sampleFor(doc, prop, key, fixture, depth + 1);
        if (value !== undefined) out[key] = value;
      }
      // A record (variables, retry rules) gets one entry, so its keys and values are walked too.
      if (!s.properties && typeof s.additionalProperties === 'object') {
        const keys = s.propertyNames ? resolve(doc, s.propertyNames).enum : undefined;
        const value = sampleFor(doc, s.additionalProperties, name, fixture, depth + 1);
        if (value !== undefined) out[String(keys?.[0] ?? 'k')] = value;
      }
      return out;
    }
    default:
      return s.default;
  }
}

export function resolve(doc: OpenApiDocument, schema: JsonSchema): JsonSchema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.split('/').pop()!;
  const { $ref: _ref, ...rest } = schema;
  return { ...resolve(doc, doc.components?.schemas?.[name] ?? {}), ...rest };
}

type Path = (string | number)[];

/** Every leaf of a JSON value, and every object in it, with their paths. */
export function nodes(value: unknown, path: Path = []): { path: Path; value: unknown }[] {
  const out = [{ path, value }];
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...nodes(v, [...path, i]));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...nodes(v, [...path, k]));
  }
  return out;
}

export function setAt(value: unknown, path: Path, next: unknown): unknown {
  if (path.length === 0) return next;
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1]!] = next;
  return copy;
}

export const HUGE = 'x'.repeat(100_000);

/** Mutations of one JSON body: each string poisoned, each leaf of the wrong type, odd keys. */
export function bodyMutations(body: unknown): { label: string; body: unknown }[] {
  const out: { label: string; body: unknown }[] = [];
  // Objects last: an unknown key is dropped by validation, so such a request may succeed, and it
  // must not take a unique name before the poisoned values had their turn.
  const objects: { label: string; body: unknown }[] = [];
  for (const { path, value } of nodes(body)) {
    const at = path.join('.') || '(body)';
    if (typeof value === 'string') {
      out.push({ label: `${at}=NUL`, body: setAt(body, path, `${value}\u0000x`) });
      out.push({ label: `${at}=lone surrogate`, body: setAt(body, path, `x\ud800${value}`) });
      out.push({ label: `${at}=huge`, body: setAt(body, path, HUGE) });
      out.push({ label: `${at}=number`, body: setAt(body, path, 12345) });
    } else if (typeof value === 'number') {
      out.push({ label: `${at}=string`, body: setAt(body, path, '12abc') });
      out.push({ label: `${at}=huge number`, body: setAt(body, path, 1e308) });
    } else if (typeof value === 'boolean') {
      out.push({ label: `${at}=string`, body: setAt(body, path, 'yes') });
    } else if (Array.isArray(value)) {
      out.push({ label: `${at}=string`, body: setAt(body, path, 'x') });
      out.push({ label: `${at}=NUL item`, body: setAt(body, path, ['\u0000']) });
    } else if (value && typeof value === 'object') {
      objects.push({ label: `${at}=array`, body: setAt(body, path, []) });
      objects.push({ label: `${at} + NUL key`, body: setAt(body, path, { ...value, 'k\u0000': 'v' }) });
      objects.push({ label: `${at} + surrogate key`, body: setAt(body, path, { ...value, '\udc00k': 'v' }) });
    } else if (value === null) {
      out.push({ label: `${at}=string`, body: setAt(body, path, 'x\u0000') });
    }
  }
  return [...out, ...objects];
}

/** Raw (already percent-encoded) hostile values for a path segment or a query parameter. */
export const HOSTILE_SEGMENTS: [label: string, raw: string][] = [
  ['NUL', '%00'],
  ['encoded lone surrogate', '%ED%A0%80'],
  ['broken percent', '%E4%B8'],
  ['huge', 'x'.repeat(400)],
  ['traversal', '..%2F..%2Fetc%2Fpasswd'],
  ['injection', encodeURIComponent("' OR 1=1 --")],
];

export const HOSTILE_QUERY_VALUES: [label: string, raw: string][] = [
  ['NUL', '%00'],
  ['encoded lone surrogate', '%ED%A0%80'],
  ['broken percent', '%E4%B8'],
  ['huge', 'x'.repeat(20_000)],
  ['injection', encodeURIComponent("' OR 1=1 --")],
  ['wrong type', 'abc'],
  ['overflow', '1e999'],
];

/** Multipart bodies a broken or hostile client sends. */
export function hostileMultiparts(): { label: string; headers: Record<string, string>; payload: Buffer }[] {
  const boundary = '----fuzz7MA4YWxkTrZu0gW';
  const type = { 'content-type': `multipart/form-data; boundary=${boundary}` };
  const part = (filename: string, content = 'hello') =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
        `Content-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`,
    );
  return [
    {
      label: 'multipart without boundary',
      headers: { 'content-type': 'multipart/form-data' },
      payload: part('a.txt'),
    },
    {
      label: 'multipart truncated part',
      headers: type,
      payload: Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhel`,
      ),
    },
    {
      label: 'multipart truncated headers',
      headers: type,
      payload: Buffer.from(`--${boundary}\r\nContent-Disposition: form-da`),
    },
    { label: 'multipart garbage', headers: type, payload: Buffer.from('not a multipart body at all') },
    { label: 'multipart NUL in file name', headers: type, payload: part('a\u0000.txt') },
    { label: 'multipart NUL file name only', headers: type, payload: part('\u0000') },
    { label: 'multipart NUL in content', headers: type, payload: part('a.txt', 'x\u0000y') },
    {
      label: 'multipart invalid UTF-8 file name',
      headers: type,
      payload: Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="`),
        Buffer.from([0xed, 0xa0, 0x80, 0xff]),
        Buffer.from(`.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`),
      ]),
    },
  ];
}

/** Text a 4xx must never show a user: stack frames, SQL, driver and library errors, file paths. */
export const LEAKS = [
  /\bat .+:\d+:\d+/,
  /\bError:/,
  /\b(select\s.+\sfrom|insert\s+into|delete\s+from|update\s+\S+\s+set)\b/i,
  /failed query|syntax error|violates|invalid byte sequence|unsupported unicode|invalid input syntax/i,
  /\b(relation|column) "/i,
  /pglite|postgres|drizzle|busboy|node_modules|\/work\/|\/apps\/server\//i,
];
