import { useQuery } from '@tanstack/react-query';
import { opendockClient } from '@/lib/request';
import type { OpenApiDocument } from '../utils/openapi';

/**
 * The open API's own OpenAPI 3.1 document, through the console's second client (prefix /opendock).
 * It is a plain JSON document, not an envelope, so it is read as a file. The route is public:
 * the console session token is not sent where only API keys belong.
 */
export async function getOpenApiDocument(): Promise<OpenApiDocument> {
  const { blob } = await opendockClient.getBlob('/v1/openapi.json', {
    withToken: false,
    showError: false,
  });
  const document = JSON.parse(await blob.text()) as Partial<OpenApiDocument> | null;
  if (!document || typeof document !== 'object' || typeof document.paths !== 'object') {
    throw new Error('接口文档格式不正确：缺少 paths');
  }
  return document as OpenApiDocument;
}

export function useOpenApiDocument() {
  return useQuery({
    queryKey: ['opendock', 'openapi'],
    queryFn: getOpenApiDocument,
    // It changes only with a server release.
    staleTime: 5 * 60_000,
  });
}
