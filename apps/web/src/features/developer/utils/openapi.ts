import { API_KEY_RESOURCE_LABELS, apiKeyResource } from '@callpilot/contracts';
import { type JsonSchema, pointerResolver, type RefResolver, resolveSchema } from './json-schema';

// The parts of an OpenAPI 3.1 document the docs page reads; anything else in it is ignored.

export type OpenApiParameter = {
  $ref?: string;
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  deprecated?: boolean;
  schema?: JsonSchema;
  example?: unknown;
};

type MediaType = { schema?: JsonSchema; example?: unknown };

export type OpenApiOperation = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  deprecated?: boolean;
  parameters?: OpenApiParameter[];
  requestBody?: {
    $ref?: string;
    required?: boolean;
    description?: string;
    content?: Record<string, MediaType>;
  };
  responses?: Record<string, { $ref?: string; description?: string; content?: Record<string, MediaType> }>;
  security?: Record<string, string[]>[];
  'x-scope'?: string;
  'x-description'?: string;
};

export type OpenApiDocument = {
  openapi?: string;
  info?: { title?: string; description?: string; version?: string };
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
  security?: Record<string, string[]>[];
};

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export type ApiParameter = {
  name: string;
  in: OpenApiParameter['in'];
  required: boolean;
  description: string;
  schema: JsonSchema;
  example?: unknown;
};

export type ApiOperation = {
  /** `METHOD /path`: stable across document versions, used in the page's URL. */
  key: string;
  method: HttpMethod;
  path: string;
  tag: string;
  summary: string;
  description: string;
  deprecated: boolean;
  /** The key scope the route needs (`calls:write`); null when any valid key (or none) will do. */
  scope: string | null;
  /** Reachable without a key (the document itself, for one). */
  isPublic: boolean;
  parameters: ApiParameter[];
  body: { contentType: string; schema: JsonSchema; required: boolean; description: string } | null;
  responses: { status: string; description: string; schema: JsonSchema | null }[];
};

export type ApiTagGroup = { tag: string; description: string; operations: ApiOperation[] };

export const UNTAGGED = '其他';

const refOf = <T extends { $ref?: string }>(value: T | undefined, resolve: RefResolver): T | undefined =>
  value?.$ref ? ({ ...(resolve(value.$ref) as T | undefined), ...value } as T) : value;

/** Every operation of the document, in its order, with references into components resolved. */
export function listOperations(document: OpenApiDocument): ApiOperation[] {
  const resolve = pointerResolver(document);
  const operations: ApiOperation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!item || typeof item !== 'object') continue;
    const shared = (item.parameters as OpenApiParameter[] | undefined) ?? [];
    for (const method of HTTP_METHODS) {
      const operation = item[method] as OpenApiOperation | undefined;
      if (!operation || typeof operation !== 'object') continue;
      operations.push(toApiOperation(document, resolve, path, method, operation, shared));
    }
  }
  return operations;
}

function toApiOperation(
  document: OpenApiDocument,
  resolve: RefResolver,
  path: string,
  method: HttpMethod,
  operation: OpenApiOperation,
  shared: OpenApiParameter[],
): ApiOperation {
  // An operation's own parameter overrides a path-level one of the same name and place.
  const byPlace = new Map<string, OpenApiParameter>();
  for (const raw of [...shared, ...(operation.parameters ?? [])]) {
    const parameter = refOf(raw, resolve);
    if (parameter?.name) byPlace.set(`${parameter.in}:${parameter.name}`, parameter);
  }
  const inOrder: Record<OpenApiParameter['in'], number> = { path: 0, query: 1, header: 2, cookie: 3 };
  const parameters = [...byPlace.values()]
    .map<ApiParameter>((parameter) => ({
      name: parameter.name,
      in: parameter.in,
      required: parameter.in === 'path' || Boolean(parameter.required),
      description: parameter.description ?? resolveSchema(parameter.schema, resolve).description ?? '',
      schema: parameter.schema ?? {},
      ...(parameter.example !== undefined ? { example: parameter.example } : {}),
    }))
    .sort((a, b) => inOrder[a.in] - inOrder[b.in]);

  const requestBody = refOf(operation.requestBody, resolve);
  const [contentType, media] = Object.entries(requestBody?.content ?? {})[0] ?? [];
  const body =
    contentType && media
      ? {
          contentType,
          schema:
            media.example !== undefined ? { ...media.schema, example: media.example } : (media.schema ?? {}),
          required: Boolean(requestBody?.required),
          description: requestBody?.description ?? '',
        }
      : null;

  const responses = Object.entries(operation.responses ?? {}).map(([status, raw]) => {
    const response = refOf(raw, resolve);
    const json = response?.content?.['application/json'] ?? Object.values(response?.content ?? {})[0];
    return { status, description: response?.description ?? '', schema: json?.schema ?? null };
  });

  const security = operation.security ?? document.security ?? [];
  return {
    key: `${method.toUpperCase()} ${path}`,
    method,
    path,
    tag: operation.tags?.[0] ?? UNTAGGED,
    summary: operation.summary ?? '',
    // The route's own text; `description` also carries the scope and samples appended for swagger-ui.
    description: operation['x-description'] ?? operation.description ?? '',
    deprecated: Boolean(operation.deprecated),
    scope: typeof operation['x-scope'] === 'string' && operation['x-scope'] ? operation['x-scope'] : null,
    // `security: []` (or an empty requirement) is OpenAPI's way of saying "no credentials".
    isPublic: security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0),
    parameters,
    body,
    responses,
  };
}

/** Operations grouped by their first tag, in the document's tag order, then first appearance. */
export function groupByTag(document: OpenApiDocument, operations: ApiOperation[]): ApiTagGroup[] {
  const described = new Map((document.tags ?? []).map((tag) => [tag.name, tag.description ?? '']));
  const order = [...described.keys()];
  const groups = new Map<string, ApiTagGroup>();
  for (const operation of operations) {
    let group = groups.get(operation.tag);
    if (!group) {
      group = { tag: operation.tag, description: described.get(operation.tag) ?? '', operations: [] };
      groups.set(operation.tag, group);
    }
    group.operations.push(operation);
  }
  const rank = (tag: string) => {
    const index = order.indexOf(tag);
    return index === -1 ? order.length : index;
  };
  return [...groups.values()].sort((a, b) => rank(a.tag) - rank(b.tag));
}

/** Whether an operation matches the search box (path, summary, tag, method, scope). */
export function matchesSearch(operation: ApiOperation, search: string): boolean {
  const needle = search.trim().toLowerCase();
  if (!needle) return true;
  return [operation.key, operation.summary, operation.tag, operation.description, operation.scope ?? '']
    .join('\n')
    .toLowerCase()
    .includes(needle);
}

/** `calls:write` → 通话（发起单通外呼） · 读写; unknown scopes are shown as written. */
export function scopeLabel(scope: string): string {
  const [resource, access] = scope.split(':');
  const parsed = apiKeyResource.safeParse(resource);
  if (!parsed.success) return scope;
  const accessLabel = access === 'write' ? '读写' : access === 'read' ? '只读' : access;
  return `${API_KEY_RESOURCE_LABELS[parsed.data]} · ${accessLabel}`;
}

/** The `data` of a success envelope `{ success, status, data, … }`, or the schema itself. */
export function envelopeData(schema: JsonSchema | null, resolve: RefResolver): JsonSchema | null {
  if (!schema) return null;
  const resolved = resolveSchema(schema, resolve);
  const properties = resolved.properties;
  if (properties && 'success' in properties && 'data' in properties) return properties.data ?? null;
  return schema;
}
