import { type ApiKeyResource, errorEnvelope } from '@callpilot/contracts';

/**
 * What every open-API route declares beside its own schemas: the API-key security scheme (named
 * as the open API's OpenAPI document names it), the error answers a caller can meet, and the
 * scope the key-auth plugin checks (plugins/api-key-auth.ts).
 */
export const openSecurity = [{ ApiKeyAuth: [] }];

export const openFailures = {
  400: errorEnvelope,
  401: errorEnvelope,
  403: errorEnvelope,
  404: errorEnvelope,
  409: errorEnvelope,
  429: errorEnvelope,
};

export const scope = (resource: ApiKeyResource, access: 'read' | 'write') => ({
  apiScope: { resource, access },
});
