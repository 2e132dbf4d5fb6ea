import { createHash, createHmac } from 'node:crypto';

/**
 * Tencent Cloud API 3.0 request signing, TC3-HMAC-SHA256 (签名方法 v3,
 * https://cloud.tencent.com/document/api/213/30654): a canonical request over the method, "/",
 * an empty query, the signed headers (content-type and host) and the body's SHA-256; a string to
 * sign scoped to the UTC date and the service; a key derived from "TC3" + SecretKey by date,
 * service and "tc3_request".
 */

export const TC3_ALGORITHM = 'TC3-HMAC-SHA256';

export interface Tc3SignInput {
  secretId: string;
  secretKey: string;
  /** The product, as in its host name: `sms` for sms.tencentcloudapi.com. */
  service: string;
  /** The Host header exactly as sent (with a port when the URL has one). */
  host: string;
  /** The Content-Type header exactly as sent. */
  contentType: string;
  /** The body exactly as sent. */
  payload: string;
  /** X-TC-Timestamp, seconds. */
  timestamp: number;
}

export interface Tc3Signature {
  canonicalRequest: string;
  stringToSign: string;
  credentialScope: string;
  signature: string;
  authorization: string;
}

export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

/** The UTC date of a timestamp: the docs warn that a local date fails around midnight. */
export const tc3Date = (timestamp: number) => new Date(timestamp * 1000).toISOString().slice(0, 10);

/** The hex signature of a string to sign, with the key derived for that date and service. */
export function tc3SignatureOf(
  secretKey: string,
  date: string,
  service: string,
  stringToSign: string,
): string {
  const secretDate = hmac(`TC3${secretKey}`, date);
  const secretService = hmac(secretDate, service);
  const secretSigning = hmac(secretService, 'tc3_request');
  return createHmac('sha256', secretSigning).update(stringToSign, 'utf8').digest('hex');
}

export function signTc3(input: Tc3SignInput): Tc3Signature {
  const signedHeaders = 'content-type;host';
  const canonicalHeaders = `content-type:${input.contentType.trim().toLowerCase()}\nhost:${input.host.trim().toLowerCase()}\n`;
  const canonicalRequest = ['POST', '/', '', canonicalHeaders, signedHeaders, sha256Hex(input.payload)].join(
    '\n',
  );
  const date = tc3Date(input.timestamp);
  const credentialScope = `${date}/${input.service}/tc3_request`;
  const stringToSign = [
    TC3_ALGORITHM,
    String(input.timestamp),
    credentialScope,
    sha256Hex(canonicalRequest),
  ].join('\n');
  const signature = tc3SignatureOf(input.secretKey, date, input.service, stringToSign);
  return {
    canonicalRequest,
    stringToSign,
    credentialScope,
    signature,
    authorization: `${TC3_ALGORITHM} Credential=${input.secretId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}
