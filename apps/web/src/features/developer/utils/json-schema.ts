/**
 * Reading JSON Schema (as zod's toJSONSchema and the server's OpenAPI document write it) for
 * people: a field list with types and descriptions, and an example value built from examples,
 * defaults, enums and formats. The docs page and the webhook event catalogue both use it.
 */

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  format?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  deprecated?: boolean;
};

/** Resolves `$ref`s against the document that holds the schema (`#/components/schemas/…`). */
export type RefResolver = (ref: string) => JsonSchema | undefined;

export const noRefs: RefResolver = () => undefined;

/** A resolver for local JSON pointers (`#/a/b`) into `root`. */
export function pointerResolver(root: unknown): RefResolver {
  return (ref) => {
    if (!ref.startsWith('#/')) return undefined;
    let node: unknown = root;
    for (const raw of ref.slice(2).split('/')) {
      const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      if (typeof node !== 'object' || node === null) return undefined;
      node = (node as Record<string, unknown>)[part];
    }
    return typeof node === 'object' && node !== null ? (node as JsonSchema) : undefined;
  };
}

// Deep enough for any real body; a self-referencing schema stops here instead of looping.
const MAX_DEPTH = 6;

/** The schema behind `$ref`s, with its own description kept when the target has none. */
export function resolveSchema(schema: JsonSchema | undefined, resolve: RefResolver, depth = 0): JsonSchema {
  if (!schema) return {};
  if (!schema.$ref || depth > MAX_DEPTH) return schema;
  const { $ref, ...rest } = schema;
  const target = resolveSchema(resolve($ref), resolve, depth + 1);
  return { ...target, ...rest };
}

const isNullSchema = (schema: JsonSchema) =>
  schema.type === 'null' || (schema.const === null && schema.type === undefined);

/** A nullable schema (`anyOf [X, null]`, `type: [x, 'null']`) split into X and whether null is allowed. */
export function unwrapNullable(
  schema: JsonSchema,
  resolve: RefResolver,
): { schema: JsonSchema; nullable: boolean } {
  const resolved = resolveSchema(schema, resolve);
  const variants = resolved.anyOf ?? resolved.oneOf;
  if (variants) {
    const others = variants.filter((variant) => !isNullSchema(resolveSchema(variant, resolve)));
    if (others.length === 1 && others.length < variants.length) {
      const { anyOf: _a, oneOf: _o, ...outer } = resolved;
      return { schema: { ...resolveSchema(others[0], resolve), ...outer }, nullable: true };
    }
  }
  if (Array.isArray(resolved.type) && resolved.type.includes('null')) {
    const types = resolved.type.filter((type) => type !== 'null');
    return { schema: { ...resolved, type: types.length === 1 ? types[0] : types }, nullable: true };
  }
  return { schema: resolved, nullable: false };
}

/** allOf parts joined into one object schema (properties and required lists merged). */
function mergeAllOf(schema: JsonSchema, resolve: RefResolver): JsonSchema {
  if (!schema.allOf) return schema;
  const { allOf, ...rest } = schema;
  const parts = allOf.map((part) => mergeAllOf(resolveSchema(part, resolve), resolve));
  // The outer schema's own keywords win over its parts'; properties and required add up.
  return Object.assign({}, ...parts, rest, {
    properties: Object.assign({}, ...parts.map((part) => part.properties), rest.properties),
    required: [...(rest.required ?? []), ...parts.flatMap((part) => part.required ?? [])],
  }) as JsonSchema;
}

const typeOf = (schema: JsonSchema): string | undefined => {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  if (schema.const !== undefined) return typeof schema.const;
  if (schema.enum) return typeof schema.enum[0];
  return undefined;
};

const literal = (value: unknown) => JSON.stringify(value);

/** A short type for a table cell: `string (date-time)`, `"A" | "B"`, `array<string>`, `… | null`. */
export function typeLabel(schema: JsonSchema | undefined, resolve: RefResolver, depth = 0): string {
  const { schema: inner, nullable } = unwrapNullable(schema ?? {}, resolve);
  const label = baseTypeLabel(mergeAllOf(inner, resolve), resolve, depth);
  return nullable ? `${label} | null` : label;
}

function baseTypeLabel(schema: JsonSchema, resolve: RefResolver, depth: number): string {
  if (schema.const !== undefined) return literal(schema.const);
  if (schema.enum) {
    return schema.enum.length <= 8
      ? schema.enum.map(literal).join(' | ')
      : `${typeOf(schema)}（${schema.enum.length} 种取值）`;
  }
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants && depth < MAX_DEPTH) {
    return [...new Set(variants.map((variant) => typeLabel(variant, resolve, depth + 1)))].join(' | ');
  }
  const type = typeOf(schema);
  if (type === 'array') {
    return depth < MAX_DEPTH ? `array<${typeLabel(schema.items, resolve, depth + 1)}>` : 'array';
  }
  if (type === 'object' && !schema.properties && typeof schema.additionalProperties === 'object') {
    return `object<string, ${typeLabel(schema.additionalProperties, resolve, depth + 1)}>`;
  }
  if (type === 'string' && schema.format) return `string (${schema.format})`;
  return type ?? 'any';
}

export type SchemaField = {
  /** Dotted path from the top (`counts.total`, `items[].phone`). */
  name: string;
  type: string;
  required: boolean;
  description: string;
  /** What is worth knowing besides the type (length, range, default, an example), in Chinese. */
  hints: string[];
};

function hintsOf(schema: JsonSchema): string[] {
  const hints: string[] = [];
  const within = (min: number | undefined, max: number | undefined, unit: string) => {
    // zod writes JavaScript's safe-integer range on every integer: no rule a reader needs.
    const lower = min !== undefined && min > -1e15 ? min : undefined;
    const upper = max !== undefined && max < 1e15 ? max : undefined;
    if (lower !== undefined && upper !== undefined) hints.push(`${lower}–${upper}${unit}`);
    else if (lower !== undefined && lower > 0) hints.push(`至少 ${lower}${unit}`);
    else if (upper !== undefined) hints.push(`最多 ${upper}${unit}`);
  };
  const type = typeOf(schema);
  if (type === 'string') within(schema.minLength, schema.maxLength, ' 个字符');
  if (type === 'integer' || type === 'number') within(schema.minimum, schema.maximum, '');
  if (type === 'array') within(schema.minItems, schema.maxItems, ' 项');
  const isScalar = (value: unknown) => value !== undefined && (value === null || typeof value !== 'object');
  if (isScalar(schema.default)) hints.push(`默认 ${literal(schema.default)}`);
  const example = schema.example ?? schema.examples?.[0];
  if (isScalar(example)) hints.push(`示例 ${literal(example)}`);
  return hints;
}

/** The hints of a parameter's or field's schema (nullable and `$ref` looked through). */
export function schemaHints(schema: JsonSchema | undefined, resolve: RefResolver): string[] {
  return hintsOf(unwrapNullable(schema ?? {}, resolve).schema);
}

/** The object inside a field, when a reader should see its own fields (objects, arrays of objects). */
function nestedObject(
  schema: JsonSchema,
  resolve: RefResolver,
): { schema: JsonSchema; suffix: string } | null {
  const inner = mergeAllOf(unwrapNullable(schema, resolve).schema, resolve);
  if (inner.properties) return { schema: inner, suffix: '.' };
  if (typeOf(inner) === 'array' && inner.items) {
    const item = mergeAllOf(unwrapNullable(inner.items, resolve).schema, resolve);
    if (item.properties) return { schema: item, suffix: '[].' };
  }
  return null;
}

/**
 * Every field of an object schema, nested objects flattened with dotted names. `describe` fills
 * in a description the schema does not carry (keyed by the dotted name).
 */
export function schemaFields(
  schema: JsonSchema | undefined,
  resolve: RefResolver,
  describe: (name: string) => string | undefined = () => undefined,
  prefix = '',
  depth = 0,
): SchemaField[] {
  const object = mergeAllOf(unwrapNullable(schema ?? {}, resolve).schema, resolve);
  if (!object.properties || depth > MAX_DEPTH) return [];
  const required = new Set(object.required ?? []);
  return Object.entries(object.properties).flatMap(([key, property]) => {
    const name = `${prefix}${key}`;
    const resolved = unwrapNullable(property, resolve).schema;
    const field: SchemaField = {
      name,
      type: typeLabel(property, resolve),
      required: required.has(key),
      description: resolved.description ?? property.description ?? describe(name) ?? '',
      hints: hintsOf(resolved),
    };
    const nested = nestedObject(property, resolve);
    return nested
      ? [field, ...schemaFields(nested.schema, resolve, describe, `${name}${nested.suffix}`, depth + 1)]
      : [field];
  });
}

const STRING_FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '2026-03-01T08:00:00.000Z',
  date: '2026-03-01',
  time: '08:00:00',
  email: 'user@example.com',
  uri: 'https://example.com/webhooks/callpilot',
  url: 'https://example.com/webhooks/callpilot',
  uuid: '3f2b8c1e-5a7d-4e9f-8b6a-1c2d3e4f5a6b',
  ipv4: '203.0.113.7',
  ipv6: '2001:db8::1',
};

function stringExample(schema: JsonSchema, key: string): string {
  if (schema.format && STRING_FORMAT_EXAMPLES[schema.format]) return STRING_FORMAT_EXAMPLES[schema.format]!;
  // A phone number is the one string the open API cannot take as "string".
  if (/phone/i.test(key)) return '13800138000';
  if (/callerNumber/i.test(key)) return '02160881001';
  if (/url$/i.test(key)) return STRING_FORMAT_EXAMPLES.url!;
  return 'string';
}

/** What the schema says to use, in that order: example, examples, default, const, enum. */
function declaredExample(schema: JsonSchema): { value: unknown } | null {
  if (schema.example !== undefined) return { value: schema.example };
  if (schema.examples?.length) return { value: schema.examples[0] };
  if (schema.default !== undefined) return { value: schema.default };
  if (schema.const !== undefined) return { value: schema.const };
  if (schema.enum?.length) return { value: schema.enum[0] };
  return null;
}

const hasOwnExample = (schema: JsonSchema, resolve: RefResolver) => {
  const resolved = resolveSchema(schema, resolve);
  return resolved.example !== undefined || Boolean(resolved.examples?.length);
};

/**
 * An example value for the schema. An object shows its required fields and the optional ones that
 * carry an example (all of them when that leaves nothing), so a sample body is short but valid.
 */
export function exampleOf(
  schema: JsonSchema | undefined,
  resolve: RefResolver,
  key = '',
  depth = 0,
): unknown {
  const resolved = mergeAllOf(resolveSchema(schema, resolve), resolve);
  const declared = declaredExample(resolved);
  if (declared) return declared.value;
  if (depth > MAX_DEPTH) return null;
  const variants = resolved.anyOf ?? resolved.oneOf;
  if (variants?.length) {
    const first = variants.find((variant) => !isNullSchema(resolveSchema(variant, resolve))) ?? variants[0];
    return exampleOf(first, resolve, key, depth + 1);
  }
  const type = Array.isArray(resolved.type)
    ? resolved.type.find((candidate) => candidate !== 'null')
    : typeOf(resolved);
  switch (type) {
    case 'object': {
      const properties = Object.entries(resolved.properties ?? {});
      if (properties.length === 0) {
        const values =
          typeof resolved.additionalProperties === 'object' ? resolved.additionalProperties : null;
        return values ? { key: exampleOf(values, resolve, 'key', depth + 1) } : {};
      }
      const required = new Set(resolved.required ?? []);
      const chosen = properties.filter(
        ([name, property]) => required.has(name) || hasOwnExample(property, resolve),
      );
      return Object.fromEntries(
        (chosen.length > 0 ? chosen : properties).map(([name, property]) => [
          name,
          exampleOf(property, resolve, name, depth + 1),
        ]),
      );
    }
    case 'array':
      return resolved.items ? [exampleOf(resolved.items, resolve, key.replace(/s$/, ''), depth + 1)] : [];
    case 'integer':
    case 'number': {
      const minimum =
        resolved.minimum !== undefined && resolved.minimum > -1e15 ? resolved.minimum : undefined;
      return minimum ?? 1;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return stringExample(resolved, key);
    default:
      return null;
  }
}
