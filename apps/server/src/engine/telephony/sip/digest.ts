/**
 * HTTP Digest authentication as SIP uses it (RFC 3261 §22, §25.1; RFC 2617; RFC 7616; RFC 8760).
 *
 * Client side: parse the `WWW-Authenticate` (401, from the far UA or registrar) and
 * `Proxy-Authenticate` (407, from a proxy) challenges and build the matching `Authorization` /
 * `Proxy-Authorization` values. A `DigestAuthenticator` keeps one entry per realm so that later
 * requests (BYE, re-INVITE, REGISTER refreshes) are sent with credentials straight away, each with
 * the next nonce-count (RFC 7616 §3.4: a reused nonce must never repeat an nc).
 *
 * Server side (the tests that play a carrier, a fake registrar): format challenges and verify
 * the answers.
 *
 * Not supported, by choice: `userhash` and `username*` (RFC 7616 §3.4.4, §4): SIP trunks never
 * ask for them and RFC 8760 leaves them out of SIP; the plain username is sent.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type DigestAlgorithm =
  | 'MD5'
  | 'MD5-sess'
  | 'SHA-256'
  | 'SHA-256-sess'
  | 'SHA-512-256'
  | 'SHA-512-256-sess';
export type DigestQop = 'auth' | 'auth-int';
export type ChallengeKind = 'www' | 'proxy';

const HASHES: Record<string, string> = { md5: 'md5', 'sha-256': 'sha256', 'sha-512-256': 'sha512-256' };

export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque?: string;
  /** As the server spelled it when it named one; MD5 when it did not (RFC 2617 §3.2.1). */
  algorithm: DigestAlgorithm;
  /** Whether the challenge named the algorithm: the answer repeats it only then, as RFC 2617 clients do. */
  algorithmGiven: boolean;
  /** Empty when the challenge has no qop (RFC 2069 compatibility: no cnonce, no nc). */
  qop: DigestQop[];
  /** The nonce expired but the last credentials were right: retry with the new nonce (§3.2.1). */
  stale: boolean;
}

/**
 * Splits `Digest a=b, c="d,e"` into the scheme and its auth-params (names lowercased, quoted
 * values unescaped). Null when the syntax is broken, so a garbled challenge is not half-answered.
 */
function parseAuthParams(value: string): { scheme: string; params: Map<string, string> } | null {
  const text = value.trim();
  const schemeMatch = /^([A-Za-z0-9\-._~+!#$%&'*^`|]+)(?:[ \t]+|$)/.exec(text);
  if (!schemeMatch) return null;
  const params = new Map<string, string>();
  let i = schemeMatch[0].length;
  while (i < text.length) {
    const nameMatch = /^[ \t,]*([A-Za-z0-9\-._~+!#$%&'*^`|]+)[ \t]*=[ \t]*/.exec(text.slice(i));
    if (!nameMatch) {
      if (/^[ \t,]*$/.test(text.slice(i))) break;
      return null;
    }
    i += nameMatch[0].length;
    let paramValue = '';
    if (text[i] === '"') {
      let closed = false;
      for (i++; i < text.length; i++) {
        const char = text[i]!;
        if (char === '\\' && i + 1 < text.length) paramValue += text[++i];
        else if (char === '"') {
          closed = true;
          i++;
          break;
        } else paramValue += char;
      }
      if (!closed) return null;
    } else {
      const tokenMatch = /^[^\s,"]*/.exec(text.slice(i))!;
      paramValue = tokenMatch[0];
      i += paramValue.length;
    }
    const separator = /^[ \t]*(,|$)/.exec(text.slice(i));
    if (!separator) return null;
    i += separator[0].length;
    params.set(nameMatch[1]!.toLowerCase(), paramValue);
  }
  return { scheme: schemeMatch[1]!, params };
}

function normaliseAlgorithm(name: string | undefined): DigestAlgorithm | null {
  if (name === undefined) return 'MD5';
  const known: DigestAlgorithm[] = [
    'MD5',
    'MD5-sess',
    'SHA-256',
    'SHA-256-sess',
    'SHA-512-256',
    'SHA-512-256-sess',
  ];
  return known.find((algorithm) => algorithm.toLowerCase() === name.toLowerCase()) ?? null;
}

/**
 * Parses one `WWW-Authenticate` / `Proxy-Authenticate` value. Null for another scheme, a missing
 * realm or nonce, an algorithm we cannot compute (e.g. AKAv1-MD5), or a qop list that offers
 * neither auth nor auth-int: answering those would only earn another 401.
 */
export function parseChallenge(value: string): DigestChallenge | null {
  const parsed = parseAuthParams(value);
  if (parsed?.scheme.toLowerCase() !== 'digest') return null;
  const { params } = parsed;
  const realm = params.get('realm');
  const nonce = params.get('nonce');
  if (realm === undefined || nonce === undefined || nonce === '') return null;
  const algorithm = normaliseAlgorithm(params.get('algorithm'));
  if (!algorithm) return null;
  let qop: DigestQop[] = [];
  const qopText = params.get('qop');
  if (qopText !== undefined) {
    const offered = qopText.split(',').map((option) => option.trim().toLowerCase());
    qop = (['auth', 'auth-int'] as const).filter((option) => offered.includes(option));
    if (qop.length === 0) return null;
  }
  const challenge: DigestChallenge = {
    realm,
    nonce,
    algorithm,
    algorithmGiven: params.has('algorithm'),
    qop,
    stale: params.get('stale')?.toLowerCase() === 'true',
  };
  const opaque = params.get('opaque');
  if (opaque !== undefined) challenge.opaque = opaque;
  return challenge;
}

const quote = (text: string) => `"${text.replace(/(["\\])/g, '\\$1')}"`;

/** Formats a challenge, for the tests and fakes that play the server. */
export function formatChallenge(challenge: {
  realm: string;
  nonce: string;
  opaque?: string;
  algorithm?: DigestAlgorithm;
  qop?: DigestQop[];
  stale?: boolean;
}): string {
  const parts = [`realm=${quote(challenge.realm)}`, `nonce=${quote(challenge.nonce)}`];
  if (challenge.opaque !== undefined) parts.push(`opaque=${quote(challenge.opaque)}`);
  if (challenge.algorithm) parts.push(`algorithm=${challenge.algorithm}`);
  // The qop list is quoted in a challenge (RFC 7616 §3.3), unlike the single qop of an answer.
  if (challenge.qop && challenge.qop.length > 0) parts.push(`qop=${quote(challenge.qop.join(','))}`);
  if (challenge.stale) parts.push('stale=TRUE');
  return `Digest ${parts.join(', ')}`;
}

function hashOf(algorithm: DigestAlgorithm): (text: string | Buffer) => string {
  const name = HASHES[algorithm.toLowerCase().replace(/-sess$/, '')]!;
  return (text) => createHash(name).update(text).digest('hex');
}

export interface DigestInput {
  algorithm: DigestAlgorithm;
  username: string;
  password: string;
  realm: string;
  nonce: string;
  method: string;
  /** The digest-uri: the Request-URI of the request, as written on its start line. */
  uri: string;
  /** Undefined for the RFC 2069 form. */
  qop?: DigestQop;
  /** Eight hex digits, as sent. */
  nc?: string;
  cnonce?: string;
  /** Hashed for auth-int; the empty body when the request has none. */
  body?: Buffer | string;
}

/** The `response` value: KD(H(A1), ...) of RFC 7616 §3.4.1, or RFC 2069's form without qop. */
export function computeDigestResponse(input: DigestInput): string {
  const hash = hashOf(input.algorithm);
  let ha1 = hash(`${input.username}:${input.realm}:${input.password}`);
  if (input.algorithm.endsWith('-sess')) ha1 = hash(`${ha1}:${input.nonce}:${input.cnonce ?? ''}`);
  const a2 =
    input.qop === 'auth-int'
      ? `${input.method}:${input.uri}:${hash(input.body ?? '')}`
      : `${input.method}:${input.uri}`;
  const ha2 = hash(a2);
  if (input.qop === undefined) return hash(`${ha1}:${input.nonce}:${ha2}`);
  return hash(`${ha1}:${input.nonce}:${input.nc}:${input.cnonce}:${input.qop}:${ha2}`);
}

/**
 * Formats the credentials as RFC 3261 §25.1 writes them: username, realm, nonce, uri, response,
 * cnonce and opaque quoted; algorithm, qop and nc bare tokens (some registrars reject `qop="auth"`).
 */
function formatCredentials(fields: {
  username: string;
  realm: string;
  nonce: string;
  uri: string;
  response: string;
  algorithm?: DigestAlgorithm;
  cnonce?: string;
  opaque?: string;
  qop?: DigestQop;
  nc?: string;
}): string {
  const parts = [
    `username=${quote(fields.username)}`,
    `realm=${quote(fields.realm)}`,
    `nonce=${quote(fields.nonce)}`,
    `uri=${quote(fields.uri)}`,
    `response=${quote(fields.response)}`,
  ];
  if (fields.algorithm) parts.push(`algorithm=${fields.algorithm}`);
  if (fields.cnonce !== undefined) parts.push(`cnonce=${quote(fields.cnonce)}`);
  if (fields.opaque !== undefined) parts.push(`opaque=${quote(fields.opaque)}`);
  if (fields.qop) parts.push(`qop=${fields.qop}`, `nc=${fields.nc}`);
  return `Digest ${parts.join(', ')}`;
}

export interface DigestCredentials {
  username: string;
  password: string;
  /** Answer only this realm: a trunk's password is not offered to whoever challenges. */
  realm?: string;
}

export interface AuthorizationHeader {
  name: 'Authorization' | 'Proxy-Authorization';
  value: string;
}

export type ChallengeOutcome =
  | { ok: true }
  | { ok: false; reason: 'no_usable_challenge' | 'realm_not_ours' | 'credentials_rejected' };

interface CacheEntry {
  kind: ChallengeKind;
  challenge: DigestChallenge;
  nc: number;
  /** The sess-A1 is bound to the first cnonce used with the nonce (RFC 2617 §3.2.2.2). */
  sessCnonce?: string;
}

const cacheKey = (kind: ChallengeKind, realm: string) => `${kind}\u0000${realm}`;

/**
 * One account's digest state: the challenges seen per realm and their nonce counts. A UA keeps
 * one per trunk registration or per outgoing call and asks it for headers on every request.
 */
export class DigestAuthenticator {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly newCnonce: () => string;
  // A true private field: a logger serialising the authenticator (or a UA holding it) never sees the password.
  readonly #credentials: DigestCredentials;

  constructor(credentials: DigestCredentials, options: { cnonce?: () => string } = {}) {
    this.#credentials = { ...credentials };
    this.newCnonce = options.cnonce ?? (() => randomBytes(12).toString('hex'));
  }

  /**
   * Takes the challenges of a 401 (`www`) or 407 (`proxy`) answer to a request. `retried` says
   * whether that request was itself the retry that answered a fresh challenge: a new challenge
   * then means the password is wrong, unless the server flags the nonce as merely stale
   * (RFC 3261 §22.2 asks not to resend rejected credentials). A request sent with cached
   * credentials (a BYE, a REGISTER refresh) is not a retry: the server may just want a new nonce.
   */
  onChallenge(kind: ChallengeKind, headerValues: readonly string[], retried: boolean): ChallengeOutcome {
    const chosen = new Map<string, DigestChallenge>();
    // The server lists challenges most preferred first (RFC 8760 §2.4): keep the first we can answer per realm.
    for (const value of headerValues) {
      const challenge = parseChallenge(value);
      if (challenge && !chosen.has(challenge.realm)) chosen.set(challenge.realm, challenge);
    }
    if (chosen.size === 0) return { ok: false, reason: 'no_usable_challenge' };
    const wanted = this.#credentials.realm;
    if (wanted !== undefined && !chosen.has(wanted)) return { ok: false, reason: 'realm_not_ours' };
    for (const challenge of chosen.values()) {
      if (wanted !== undefined && challenge.realm !== wanted) continue;
      const key = cacheKey(kind, challenge.realm);
      if (retried && this.entries.has(key) && !challenge.stale) {
        this.entries.delete(key);
        return { ok: false, reason: 'credentials_rejected' };
      }
      this.entries.set(key, { kind, challenge, nc: 0 });
    }
    return { ok: true };
  }

  /** Whether credentials are cached for any realm, i.e. a request would carry them. */
  get hasCredentials(): boolean {
    return this.entries.size > 0;
  }

  /**
   * The Authorization / Proxy-Authorization headers for a request, one per cached realm, each
   * with the next nonce-count. `uri` is the Request-URI; `body` is needed only for auth-int.
   */
  authorize(request: { method: string; uri: string; body?: Buffer | string }): AuthorizationHeader[] {
    const headers: AuthorizationHeader[] = [];
    for (const entry of this.entries.values()) {
      const { challenge } = entry;
      // auth protects the same fields as auth-int bar the body, and every server that offers auth-int offers auth.
      const qop: DigestQop | undefined = challenge.qop.includes('auth') ? 'auth' : challenge.qop[0];
      const sess = challenge.algorithm.endsWith('-sess');
      let cnonce: string | undefined;
      if (sess) {
        entry.sessCnonce ??= this.newCnonce();
        cnonce = entry.sessCnonce;
      } else if (qop) cnonce = this.newCnonce();
      let nc: string | undefined;
      if (qop) {
        entry.nc += 1;
        nc = entry.nc.toString(16).padStart(8, '0');
      }
      const response = computeDigestResponse({
        algorithm: challenge.algorithm,
        username: this.#credentials.username,
        password: this.#credentials.password,
        realm: challenge.realm,
        nonce: challenge.nonce,
        method: request.method,
        uri: request.uri,
        qop,
        nc,
        cnonce,
        body: request.body,
      });
      headers.push({
        name: entry.kind === 'www' ? 'Authorization' : 'Proxy-Authorization',
        value: formatCredentials({
          username: this.#credentials.username,
          realm: challenge.realm,
          nonce: challenge.nonce,
          uri: request.uri,
          response,
          algorithm: challenge.algorithmGiven ? challenge.algorithm : undefined,
          cnonce,
          opaque: challenge.opaque,
          qop,
          nc,
        }),
      });
    }
    return headers;
  }

  /** Forgets every realm, e.g. when the trunk's password changes. */
  clear(): void {
    this.entries.clear();
  }
}

// ---------------------------------------------------------------------------------------------
// Server side.

export interface ParsedCredentials {
  username: string;
  realm: string;
  nonce: string;
  uri: string;
  response: string;
  algorithm: DigestAlgorithm;
  opaque?: string;
  qop?: DigestQop;
  nc?: string;
  cnonce?: string;
}

/** Parses an `Authorization` / `Proxy-Authorization` value; null when a required field is missing. */
export function parseCredentials(value: string): ParsedCredentials | null {
  const parsed = parseAuthParams(value);
  if (parsed?.scheme.toLowerCase() !== 'digest') return null;
  const { params } = parsed;
  const username = params.get('username');
  const realm = params.get('realm');
  const nonce = params.get('nonce');
  const uri = params.get('uri');
  const response = params.get('response');
  const algorithm = normaliseAlgorithm(params.get('algorithm'));
  if (username === undefined || realm === undefined || nonce === undefined) return null;
  if (uri === undefined || response === undefined || !algorithm) return null;
  const credentials: ParsedCredentials = { username, realm, nonce, uri, response, algorithm };
  const qop = params.get('qop')?.toLowerCase();
  if (qop !== undefined) {
    if (qop !== 'auth' && qop !== 'auth-int') return null;
    const nc = params.get('nc');
    const cnonce = params.get('cnonce');
    if (nc === undefined || !/^[0-9a-fA-F]{8}$/.test(nc) || cnonce === undefined) return null;
    Object.assign(credentials, { qop, nc, cnonce });
  }
  if (algorithm.endsWith('-sess') && credentials.cnonce === undefined) {
    const cnonce = params.get('cnonce');
    if (cnonce === undefined) return null;
    credentials.cnonce = cnonce;
  }
  const opaque = params.get('opaque');
  if (opaque !== undefined) credentials.opaque = opaque;
  return credentials;
}

export type VerifyResult =
  | { ok: true; username: string; nc?: number }
  | {
      ok: false;
      reason:
        | 'malformed'
        | 'wrong_realm'
        | 'unknown_user'
        | 'stale_nonce'
        | 'uri_mismatch'
        | 'wrong_response';
    };

/**
 * Checks an `Authorization` value against the request it came with. The caller owns nonces:
 * `nonceValid` says whether it issued this one and it has not expired (answer `stale_nonce` with
 * a fresh challenge carrying stale=true); replayed nonce-counts are the caller's to reject
 * with the returned `nc`.
 */
export function verifyCredentials(
  value: string,
  request: { method: string; uri?: string; body?: Buffer | string },
  server: {
    realm: string;
    password: (username: string) => string | undefined;
    nonceValid?: (nonce: string) => boolean;
  },
): VerifyResult {
  const credentials = parseCredentials(value);
  if (!credentials) return { ok: false, reason: 'malformed' };
  if (credentials.realm !== server.realm) return { ok: false, reason: 'wrong_realm' };
  const password = server.password(credentials.username);
  if (password === undefined) return { ok: false, reason: 'unknown_user' };
  if (request.uri !== undefined && credentials.uri !== request.uri)
    return { ok: false, reason: 'uri_mismatch' };
  const expected = computeDigestResponse({
    algorithm: credentials.algorithm,
    username: credentials.username,
    password,
    realm: credentials.realm,
    nonce: credentials.nonce,
    method: request.method,
    uri: credentials.uri,
    qop: credentials.qop,
    nc: credentials.nc,
    cnonce: credentials.cnonce,
    body: request.body,
  });
  const given = Buffer.from(credentials.response.toLowerCase());
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected))) {
    return { ok: false, reason: 'wrong_response' };
  }
  // Checked after the response so that stale=true is only claimed to a client whose password is right.
  if (server.nonceValid && !server.nonceValid(credentials.nonce)) return { ok: false, reason: 'stale_nonce' };
  return credentials.nc === undefined
    ? { ok: true, username: credentials.username }
    : { ok: true, username: credentials.username, nc: Number.parseInt(credentials.nc, 16) };
}
