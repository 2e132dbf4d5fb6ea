import { exampleOf, type JsonSchema, type RefResolver, resolveSchema } from './json-schema';
import type { ApiOperation, ApiParameter } from './openapi';

/**
 * Code samples (curl, Node fetch, Python requests) generated from one operation of the OpenAPI
 * document: the base URL is where the console runs, the key comes from the environment, the body
 * is an example built from the schema. What is generated here is what the user copies.
 */

export const API_KEY_ENV = 'CALLPILOT_API_KEY';

type FormField = { name: string; value: string; file: boolean };

export type SampleRequest = {
  method: string;
  /** Origin + path with path parameters filled in, without the query string. */
  url: string;
  query: [string, unknown][];
  /** The operation takes an Idempotency-Key header: the samples send a fresh one. */
  idempotent: boolean;
  body: { kind: 'json'; value: unknown } | { kind: 'form'; fields: FormField[] } | null;
};

const IDEMPOTENCY_HEADER = 'idempotency-key';
const SAMPLE_FILE = '产品手册.pdf';

/** The value a parameter gets in a sample; undefined leaves an optional one out. */
function parameterValue(parameter: ApiParameter, resolve: RefResolver): unknown {
  if (parameter.example !== undefined) return parameter.example;
  const schema = resolveSchema(parameter.schema, resolve);
  if (schema.example !== undefined) return schema.example;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  // Required: the request is not valid without it, so the sample makes one up.
  return parameter.required ? exampleOf(parameter.schema, resolve, parameter.name) : undefined;
}

const isFileSchema = (schema: JsonSchema) =>
  schema.format === 'binary' || (schema as { contentMediaType?: string }).contentMediaType !== undefined;

export function sampleRequest(operation: ApiOperation, resolve: RefResolver, origin: string): SampleRequest {
  let path = operation.path;
  const query: [string, unknown][] = [];
  for (const parameter of operation.parameters) {
    if (parameter.in === 'path') {
      const value = parameter.example ?? resolveSchema(parameter.schema, resolve).example;
      // Without an example the placeholder stays visible ({callId}) for the reader to replace.
      if (value !== undefined) path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
    } else if (parameter.in === 'query') {
      const value = parameterValue(parameter, resolve);
      if (value !== undefined && value !== null && value !== '') query.push([parameter.name, value]);
    }
  }
  const idempotent = operation.parameters.some(
    (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === IDEMPOTENCY_HEADER,
  );
  let body: SampleRequest['body'] = null;
  if (operation.body) {
    if (operation.body.contentType.startsWith('multipart/')) {
      const schema = resolveSchema(operation.body.schema, resolve);
      const required = new Set(schema.required ?? []);
      const fields = Object.entries(schema.properties ?? {})
        .filter(([name, property]) => required.has(name) || isFileSchema(resolveSchema(property, resolve)))
        .map(([name, property]) => {
          const resolved = resolveSchema(property, resolve);
          return isFileSchema(resolved)
            ? { name, value: SAMPLE_FILE, file: true }
            : { name, value: String(exampleOf(property, resolve, name)), file: false };
        });
      body = {
        kind: 'form',
        fields: fields.length > 0 ? fields : [{ name: 'file', value: SAMPLE_FILE, file: true }],
      };
    } else {
      body = { kind: 'json', value: exampleOf(operation.body.schema, resolve) };
    }
  }
  return { method: operation.method.toUpperCase(), url: `${origin}${path}`, query, idempotent, body };
}

const queryString = (query: SampleRequest['query']) =>
  query.length === 0
    ? ''
    : `?${query.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`).join('&')}`;

/** Lines after the first indented by `indent`, for a value written inside a call. */
const indentRest = (text: string, indent: string) => text.split('\n').join(`\n${indent}`);

// ---------------------------------------------------------------------------------------------
// curl
// ---------------------------------------------------------------------------------------------

/** Single-quoted for the shell: nothing inside is expanded; a quote closes, escapes and reopens. */
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export function curlSample(request: SampleRequest): string {
  const url = `${request.url}${queryString(request.query)}`;
  const lines = [`curl ${request.method === 'GET' ? '' : `-X ${request.method} `}"${url}"`];
  lines.push(`-H "Authorization: Bearer $${API_KEY_ENV}"`);
  if (request.idempotent) lines.push('-H "Idempotency-Key: $(uuidgen)"');
  if (request.body?.kind === 'json') {
    lines.push(`-H "Content-Type: application/json"`);
    lines.push(`-d ${indentRest(shellQuote(JSON.stringify(request.body.value, null, 2)), '  ')}`);
  } else if (request.body?.kind === 'form') {
    for (const field of request.body.fields) {
      lines.push(`-F ${shellQuote(`${field.name}=${field.file ? '@' : ''}${field.value}`)}`);
    }
  }
  return lines.join(' \\\n  ');
}

// ---------------------------------------------------------------------------------------------
// Node (fetch, Node 18+)
// ---------------------------------------------------------------------------------------------

const jsString = (text: string) =>
  `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`;

const jsKey = (key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? key : jsString(key));

const isPrimitive = (value: unknown) => value === null || typeof value !== 'object';

/** A JavaScript literal in the style of the project's own code: single quotes, trailing commas. */
export function jsLiteral(value: unknown, indent = ''): string {
  if (typeof value === 'string') return jsString(value);
  if (value === null || value === undefined) return 'null';
  if (typeof value !== 'object') return String(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const flat = `[${value.map((item) => jsLiteral(item)).join(', ')}]`;
    if (value.every(isPrimitive) && flat.length <= 60) return flat;
    return `[\n${value.map((item) => `${inner}${jsLiteral(item, inner)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([key, item]) => `${inner}${jsKey(key)}: ${jsLiteral(item, inner)},`).join('\n')}\n${indent}}`;
}

export function nodeSample(request: SampleRequest): string {
  const imports = [`// Node 18+，保存为 .mjs 后运行`];
  if (request.idempotent) imports.push(`import { randomUUID } from 'node:crypto';`);
  if (request.body?.kind === 'form') imports.push(`import { readFile } from 'node:fs/promises';`);

  const headers = [`    Authorization: \`Bearer \${process.env.${API_KEY_ENV}}\`,`];
  if (request.idempotent) headers.push(`    'Idempotency-Key': randomUUID(),`);

  const prelude: string[] = [];
  let bodyLine: string | null = null;
  if (request.body?.kind === 'json') {
    headers.push(`    'Content-Type': 'application/json',`);
    bodyLine = `  body: JSON.stringify(${jsLiteral(request.body.value, '  ')}),`;
  } else if (request.body?.kind === 'form') {
    prelude.push('const form = new FormData();');
    for (const field of request.body.fields) {
      prelude.push(
        field.file
          ? `form.append(${jsString(field.name)}, new Blob([await readFile(${jsString(field.value)})]), ${jsString(field.value)});`
          : `form.append(${jsString(field.name)}, ${jsString(field.value)});`,
      );
    }
    bodyLine = '  body: form,';
  }

  const options = [
    ...(request.method === 'GET' ? [] : [`  method: '${request.method}',`]),
    '  headers: {',
    ...headers,
    '  },',
    ...(bodyLine ? [bodyLine] : []),
  ];
  return [
    ...imports,
    '',
    ...(prelude.length > 0 ? [...prelude, ''] : []),
    `const response = await fetch(${jsString(`${request.url}${queryString(request.query)}`)}, {`,
    ...options,
    '});',
    'console.log(response.status, await response.json());',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Python (requests)
// ---------------------------------------------------------------------------------------------

// JSON's string syntax is Python's too (the escapes \" \\ \n \uXXXX mean the same).
const pyString = (text: string) => JSON.stringify(text);

/** A Python literal: double quotes, True/False/None, four-space indents, trailing commas. */
export function pyLiteral(value: unknown, indent = ''): string {
  if (typeof value === 'string') return pyString(value);
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value !== 'object') return String(value);
  const inner = `${indent}    `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const flat = `[${value.map((item) => pyLiteral(item)).join(', ')}]`;
    if (value.every(isPrimitive) && flat.length <= 60) return flat;
    return `[\n${value.map((item) => `${inner}${pyLiteral(item, inner)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([key, item]) => `${inner}${pyString(key)}: ${pyLiteral(item, inner)},`).join('\n')}\n${indent}}`;
}

export function pythonSample(request: SampleRequest): string {
  const imports = ['import os'];
  if (request.idempotent) imports.push('import uuid');
  const headers = [`        "Authorization": f"Bearer {os.environ['${API_KEY_ENV}']}",`];
  if (request.idempotent) headers.push('        "Idempotency-Key": str(uuid.uuid4()),');

  const args = [`    ${pyString(request.url)},`];
  if (request.query.length > 0)
    args.push(`    params=${pyLiteral(Object.fromEntries(request.query), '    ')},`);
  args.push('    headers={', ...headers, '    },');
  if (request.body?.kind === 'json') {
    args.push(`    json=${pyLiteral(request.body.value, '    ')},`);
  } else if (request.body?.kind === 'form') {
    const files = request.body.fields.filter((field) => field.file);
    const data = request.body.fields.filter((field) => !field.file);
    if (data.length > 0) {
      args.push(
        `    data=${pyLiteral(Object.fromEntries(data.map((field) => [field.name, field.value])), '    ')},`,
      );
    }
    args.push(
      '    files={',
      ...files.map((field) => `        ${pyString(field.name)}: open(${pyString(field.value)}, "rb"),`),
      '    },',
    );
  }
  args.push('    timeout=30,');
  return [
    ...imports,
    '',
    'import requests',
    '',
    `response = requests.${request.method.toLowerCase()}(`,
    ...args,
    ')',
    'print(response.status_code, response.json())',
  ].join('\n');
}
