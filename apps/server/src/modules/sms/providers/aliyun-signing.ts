import { createHash, createHmac } from 'node:crypto';

/**
 * Alibaba Cloud's V3 request signature (ACS3-HMAC-SHA256), as help.aliyun.com "V3版本请求体&签名机制"
 * (https://help.aliyun.com/zh/sdk/product-overview/v3-request-structure-and-signature) defines it:
 *
 *   CanonicalRequest = METHOD \n CanonicalURI \n CanonicalQueryString \n CanonicalHeaders \n
 *                      SignedHeaders \n HexEncode(SHA256(body))
 *   StringToSign     = "ACS3-HMAC-SHA256" \n HexEncode(SHA256(CanonicalRequest))
 *   Signature        = HexEncode(HMAC-SHA256(AccessKeySecret, StringToSign))
 *
 * Signed headers are `host`, `content-type` and every `x-acs-*` header, lower-cased, sorted, values
 * trimmed. RPC-style APIs (Dysmsapi is one) use `/` as the canonical URI and carry their parameters
 * in the query string. The document's worked example is reproduced in aliyun-signing.test.ts.
 */

export const ACS3_ALGORITHM = 'ACS3-HMAC-SHA256';

/** RFC 3986 as the document asks: only A-Z a-z 0-9 - _ . ~ stay; a space is %20, `*` is %2A. */
export function acsPercentEncode(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Parameters sorted by name, names and values encoded, joined with `=` and `&`. */
export function canonicalQueryString(params: Record<string, string>): string {
  return Object.keys(params)
    .sort(byteOrder)
    .map((name) => `${acsPercentEncode(name)}=${acsPercentEncode(params[name] as string)}`)
    .join('&');
}

export const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

export interface Acs3Request {
  method: string;
  /** `/` for RPC-style APIs. */
  path: string;
  query: Record<string, string>;
  /** Every header to send; the ones the signature covers are picked from these. */
  headers: Record<string, string>;
  /** The hex SHA-256 of the body (also sent as x-acs-content-sha256). */
  hashedPayload: string;
}

const isSignedHeader = (name: string) =>
  name === 'host' || name === 'content-type' || name.startsWith('x-acs-');

/** The canonical request and the signed-header list for `request`. */
export function canonicalRequest(request: Acs3Request): { canonical: string; signedHeaders: string } {
  const headers = Object.entries(request.headers)
    .map(([name, value]) => [name.toLowerCase(), value.trim()] as const)
    .filter(([name]) => isSignedHeader(name))
    .sort(([a], [b]) => byteOrder(a, b));
  const signedHeaders = headers.map(([name]) => name).join(';');
  const canonicalPath = request.path
    .split('/')
    .map((segment) => acsPercentEncode(decodeURIComponent(segment)))
    .join('/');
  const canonical = [
    request.method.toUpperCase(),
    canonicalPath || '/',
    canonicalQueryString(request.query),
    headers.map(([name, value]) => `${name}:${value}\n`).join(''),
    signedHeaders,
    request.hashedPayload,
  ].join('\n');
  return { canonical, signedHeaders };
}

export function acs3StringToSign(canonical: string): string {
  return `${ACS3_ALGORITHM}\n${sha256Hex(canonical)}`;
}

export function acs3Signature(request: Acs3Request, accessKeySecret: string): string {
  const { canonical } = canonicalRequest(request);
  return createHmac('sha256', accessKeySecret).update(acs3StringToSign(canonical)).digest('hex');
}

/** The Authorization header's value for `request`. */
export function acs3Authorization(
  request: Acs3Request,
  accessKeyId: string,
  accessKeySecret: string,
): string {
  const { signedHeaders } = canonicalRequest(request);
  return `${ACS3_ALGORITHM} Credential=${accessKeyId},SignedHeaders=${signedHeaders},Signature=${acs3Signature(request, accessKeySecret)}`;
}

/** ISO 8601 in UTC to the second, the only form x-acs-date takes. */
export const acsDate = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
