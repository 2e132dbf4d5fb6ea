/**
 * SIP message parser and serializer (RFC 3261 §7, §18.3, §20, §25).
 *
 * Works on bytes: Content-Length counts octets, and a body carrying Chinese text (UTF-8, three
 * bytes per character) must frame exactly, which JS string lengths (UTF-16 units) would get wrong.
 * Parsing never throws: the input comes from the network, and the caller needs to know whether a
 * 400 can be answered or the message must be dropped silently.
 */

export type SipMessage = SipRequest | SipResponse;

export interface SipRequest {
  method: string;
  uri: string;
  version: string;
  headers: SipHeaders;
  body: Buffer;
}

export interface SipResponse {
  status: number;
  reason: string;
  version: string;
  headers: SipHeaders;
  body: Buffer;
}

export type ParseFailure = {
  ok: false;
  reason: string;
  /**
   * A request whose start line and Via, From, To, Call-ID and CSeq parsed: a 400 can be built
   * and routed back. Never true for responses, which are not answered.
   */
  respondable: boolean;
  /** What could be read (headers, no body), for logging and for building the 400. */
  partial?: SipMessage;
};

export type ParseResult = { ok: true; message: SipMessage } | ParseFailure;

export type SipParams = Map<string, string | null>;

export const isRequest = (message: SipMessage): message is SipRequest => 'method' in message;

const COMPACT_FORMS = new Map<string, string>([
  ['i', 'Call-ID'],
  ['m', 'Contact'],
  ['e', 'Content-Encoding'],
  ['l', 'Content-Length'],
  ['c', 'Content-Type'],
  ['f', 'From'],
  ['s', 'Subject'],
  ['k', 'Supported'],
  ['t', 'To'],
  ['v', 'Via'],
  ['o', 'Event'],
  ['r', 'Refer-To'],
  ['b', 'Referred-By'],
  ['u', 'Allow-Events'],
  ['x', 'Session-Expires'],
  ['a', 'Accept-Contact'],
  ['j', 'Reject-Contact'],
  ['d', 'Request-Disposition'],
  ['y', 'Identity'],
  ['n', 'Identity-Info'],
]);

// Names whose usual spelling is not plain Title-Case (Call-ID, CSeq, WWW-Authenticate...).
const CANONICAL_NAMES = new Map<string, string>(
  [
    'Call-ID',
    'CSeq',
    'WWW-Authenticate',
    'MIME-Version',
    'Min-SE',
    'RAck',
    'RSeq',
    'SIP-ETag',
    'SIP-If-Match',
    'P-Asserted-Identity',
    'P-Preferred-Identity',
    'Remote-Party-ID',
  ].map((name) => [name.toLowerCase(), name]),
);

/**
 * Headers whose grammar is a comma-separated list, so `Via: a, b` means two Vias. Only these are
 * split: for any other header a comma may be part of the value (Date, WWW-Authenticate,
 * Authorization, User-Agent, extension headers whose grammar we cannot know).
 */
const LIST_HEADERS = new Set(
  [
    'Accept',
    'Accept-Contact',
    'Accept-Encoding',
    'Accept-Language',
    'Alert-Info',
    'Allow',
    'Allow-Events',
    'Call-Info',
    'Contact',
    'Content-Encoding',
    'Content-Language',
    'Diversion',
    'Error-Info',
    'History-Info',
    'In-Reply-To',
    'P-Asserted-Identity',
    'P-Preferred-Identity',
    'Path',
    'Proxy-Require',
    'Reason',
    'Record-Route',
    'Reject-Contact',
    'Request-Disposition',
    'Require',
    'Route',
    'Security-Client',
    'Security-Server',
    'Security-Verify',
    'Service-Route',
    'Supported',
    'Unsupported',
    'Via',
    'Warning',
  ].map((name) => name.toLowerCase()),
);

// Headers a request may carry once only (RFC 3261 §20 table): a second one makes the message ambiguous.
const SINGLE_HEADERS = ['Call-ID', 'CSeq', 'From', 'To', 'Max-Forwards', 'Content-Length', 'Content-Type'];

const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+\-.]*$/;
const HOSTNAME = /^[A-Za-z0-9\-.]+$/;
const IPV6 = /^\[[0-9A-Fa-f:.]+\]$/;
const DIGITS = /^[0-9]+$/;
const MAX_CSEQ = 2 ** 32 - 1;

/** Expands compact forms and gives the spelling a header is written with. */
export function canonicalHeaderName(name: string): string {
  const lower = name.toLowerCase();
  const expanded = COMPACT_FORMS.get(lower);
  if (expanded) return expanded;
  const known = CANONICAL_NAMES.get(lower);
  if (known) return known;
  return lower.replace(
    /(^|-)([a-z])/g,
    (_match, dash: string, letter: string) => dash + letter.toUpperCase(),
  );
}

export interface SipHeader {
  name: string;
  value: string;
}

/** Headers in wire order; one entry per value, so list headers split into several entries. */
export class SipHeaders {
  private readonly list: SipHeader[] = [];

  constructor(entries: Iterable<readonly [string, string]> = []) {
    for (const [name, value] of entries) this.append(name, value);
  }

  /** The first value, as the topmost Via or the single From. */
  get(name: string): string | undefined {
    const key = canonicalHeaderName(name);
    return this.list.find((header) => header.name === key)?.value;
  }

  getAll(name: string): string[] {
    const key = canonicalHeaderName(name);
    return this.list.filter((header) => header.name === key).map((header) => header.value);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  append(name: string, value: string): this {
    this.list.push({ name: canonicalHeaderName(name), value });
    return this;
  }

  /** Replaces every value of a header, keeping its position if it was present. */
  set(name: string, value: string): this {
    const key = canonicalHeaderName(name);
    const index = this.list.findIndex((header) => header.name === key);
    this.delete(key);
    if (index < 0) this.list.push({ name: key, value });
    else this.list.splice(index, 0, { name: key, value });
    return this;
  }

  delete(name: string): this {
    const key = canonicalHeaderName(name);
    for (let i = this.list.length - 1; i >= 0; i--) if (this.list[i]!.name === key) this.list.splice(i, 1);
    return this;
  }

  /** Replaces the first value only (the topmost Via), appending when the header is absent. */
  setFirst(name: string, value: string): this {
    const key = canonicalHeaderName(name);
    const header = this.list.find((entry) => entry.name === key);
    if (header) header.value = value;
    else this.list.push({ name: key, value });
    return this;
  }

  /** Prepends, as a proxy adds its own Via on top. */
  prepend(name: string, value: string): this {
    this.list.unshift({ name: canonicalHeaderName(name), value });
    return this;
  }

  entries(): readonly SipHeader[] {
    return this.list;
  }

  [Symbol.iterator](): Iterator<SipHeader> {
    return this.list[Symbol.iterator]();
  }

  clone(): SipHeaders {
    return new SipHeaders(this.list.map((header) => [header.name, header.value] as const));
  }
}

// ---------------------------------------------------------------------------------------------
// Small lexical helpers shared by the header parsers.

const isSpace = (char: string | undefined) => char === ' ' || char === '\t';

/** Splits on `separator` outside quoted strings and angle brackets (URIs in <> may hold commas). */
export function splitOutside(value: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (quoted) {
      if (char === '\\') i++;
      else if (char === '"') quoted = false;
    } else if (char === '"') quoted = true;
    else if (char === '<') depth++;
    else if (char === '>') depth = Math.max(0, depth - 1);
    else if (char === separator && depth === 0) {
      parts.push(value.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(value.slice(start));
  return parts;
}

/** Reads a quoted-string starting at `start` (on the opening quote); null when unterminated. */
function readQuoted(text: string, start: number): { value: string; end: number } | null {
  let value = '';
  for (let i = start + 1; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\') {
      if (i + 1 >= text.length) return null;
      value += text[++i];
    } else if (char === '"') return { value, end: i + 1 };
    else value += char;
  }
  return null;
}

/** Percent-decodes as UTF-8; null on a broken escape, which makes the URI malformed. */
function percentDecode(text: string): string | null {
  if (!text.includes('%')) return text;
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '%') {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return null;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      for (const byte of Buffer.from(char, 'utf8')) bytes.push(byte);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Parses `;name=value;flag` header or URI parameters. Names are lowercased (they compare
 * case-insensitively); quoted values are unquoted. Null on an empty name (`;;`), as in RFC 4475
 * badinv01.
 */
export function parseParams(text: string, decode = false): SipParams | null {
  const params: SipParams = new Map();
  const trimmed = text.trim();
  if (trimmed === '') return params;
  if (!trimmed.startsWith(';')) return null;
  for (const part of splitOutside(trimmed.slice(1), ';')) {
    const equals = part.indexOf('=');
    const rawName = (equals < 0 ? part : part.slice(0, equals)).trim();
    if (!TOKEN.test(rawName)) return null;
    const name = decode ? percentDecode(rawName) : rawName;
    if (name === null) return null;
    if (equals < 0) {
      params.set(name.toLowerCase(), null);
      continue;
    }
    const rawValue = part.slice(equals + 1).trim();
    let value: string | null;
    if (rawValue.startsWith('"')) {
      const quoted = readQuoted(rawValue, 0);
      if (!quoted || quoted.end !== rawValue.length) return null;
      value = quoted.value;
    } else {
      if (rawValue === '' || /[\s"]/.test(rawValue)) return null;
      value = decode ? percentDecode(rawValue) : rawValue;
    }
    if (value === null) return null;
    params.set(name.toLowerCase(), value);
  }
  return params;
}

/** Case-insensitive parameter lookup: undefined when absent, null when present without a value. */
export function getParam(params: SipParams, name: string): string | null | undefined {
  return params.get(name.toLowerCase());
}

export function hasParam(params: SipParams, name: string): boolean {
  return params.has(name.toLowerCase());
}

// ---------------------------------------------------------------------------------------------
// URIs (RFC 3261 §19.1, RFC 3966 for tel:).

export interface SipUri {
  scheme: 'sip' | 'sips' | 'tel';
  /** Percent-decoded; for tel: the number. */
  user?: string;
  password?: string;
  /** Empty for tel:. IPv6 keeps its brackets so host:port stays unambiguous. */
  host: string;
  port?: number;
  params: SipParams;
  headers: Map<string, string>;
}

function parseHostPort(text: string): { host: string; port?: number } | null {
  let host: string;
  let rest: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return null;
    host = text.slice(0, close + 1);
    rest = text.slice(close + 1);
    if (!IPV6.test(host)) return null;
  } else {
    const colon = text.indexOf(':');
    host = colon < 0 ? text : text.slice(0, colon);
    rest = colon < 0 ? '' : text.slice(colon);
    if (!HOSTNAME.test(host)) return null;
  }
  if (rest === '') return { host };
  const portText = rest.slice(1).trim();
  if (!rest.startsWith(':') || !DIGITS.test(portText) || portText.length > 5) return null;
  const port = Number(portText);
  if (port > 65535) return null;
  return { host, port };
}

/** Parses sip:, sips: and tel: URIs; null for other schemes (answer 416) or malformed ones. */
export function parseUri(text: string): SipUri | null {
  const colon = text.indexOf(':');
  if (colon < 0) return null;
  const scheme = text.slice(0, colon).toLowerCase();
  let rest = text.slice(colon + 1);
  if (/[\s<>"]/.test(rest)) return null;

  if (scheme === 'tel') {
    const semicolon = rest.indexOf(';');
    const number = semicolon < 0 ? rest : rest.slice(0, semicolon);
    const params = parseParams(semicolon < 0 ? '' : rest.slice(semicolon), true);
    if (!/^\+?[0-9A-Fa-f*#\-.()]+$/.test(number) || !params) return null;
    return { scheme: 'tel', user: number, host: '', params, headers: new Map() };
  }
  if (scheme !== 'sip' && scheme !== 'sips') return null;

  const uri: SipUri = { scheme, host: '', params: new Map(), headers: new Map() };
  // A user part may itself hold ';', '?' and ',' (RFC 4475 intmeth), so the '@' is found first.
  const at = rest.indexOf('@');
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const passwordAt = userinfo.indexOf(':');
    const user = percentDecode(passwordAt < 0 ? userinfo : userinfo.slice(0, passwordAt));
    if (user === null || user === '') return null;
    uri.user = user;
    if (passwordAt >= 0) {
      const password = percentDecode(userinfo.slice(passwordAt + 1));
      if (password === null) return null;
      uri.password = password;
    }
  }
  const question = rest.indexOf('?');
  const headersText = question < 0 ? '' : rest.slice(question + 1);
  if (question >= 0) rest = rest.slice(0, question);
  const semicolon = rest.indexOf(';');
  const hostPort = parseHostPort(semicolon < 0 ? rest : rest.slice(0, semicolon));
  if (!hostPort) return null;
  uri.host = hostPort.host;
  if (hostPort.port !== undefined) uri.port = hostPort.port;
  const params = parseParams(semicolon < 0 ? '' : rest.slice(semicolon), true);
  if (!params) return null;
  uri.params = params;
  if (headersText !== '') {
    for (const pair of headersText.split('&')) {
      const equals = pair.indexOf('=');
      if (equals <= 0) return null;
      const name = percentDecode(pair.slice(0, equals));
      const value = percentDecode(pair.slice(equals + 1));
      if (name === null || value === null) return null;
      uri.headers.set(name, value);
    }
  }
  return uri;
}

// Characters each URI part may carry unescaped (RFC 3261 §25.1: user-unreserved, param-unreserved).
const USER_SAFE = /[A-Za-z0-9\-_.!~*'()&=+$,;?/]/;
const PARAM_SAFE = /[A-Za-z0-9\-_.!~*'()[\]/:&+$]/;
const escapeWith = (safe: RegExp) => (text: string) =>
  [...Buffer.from(text, 'utf8')]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return byte < 0x80 && safe.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
const escapeUser = escapeWith(USER_SAFE);
const escapeParam = escapeWith(PARAM_SAFE);

export function formatUri(uri: SipUri): string {
  const params = [...uri.params].map(([name, value]) =>
    value === null ? `;${escapeParam(name)}` : `;${escapeParam(name)}=${escapeParam(value)}`,
  );
  if (uri.scheme === 'tel') return `tel:${uri.user ?? ''}${params.join('')}`;
  let text = `${uri.scheme}:`;
  if (uri.user !== undefined) {
    text += escapeUser(uri.user);
    if (uri.password !== undefined) text += `:${escapeUser(uri.password)}`;
    text += '@';
  }
  text += uri.host;
  if (uri.port !== undefined) text += `:${uri.port}`;
  text += params.join('');
  if (uri.headers.size > 0) {
    text += `?${[...uri.headers].map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&')}`;
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// Header value grammars.

export interface NameAddr {
  displayName?: string;
  /** The URI as written: any scheme, since To/From may carry ones we do not speak (RFC 4475 unksm). */
  uri: string;
  params: SipParams;
}

/**
 * Parses name-addr (`"Display" <uri>;tag=x`, `Display <uri>`) and addr-spec (`uri;tag=x`) forms.
 * In addr-spec form every `;` belongs to the header, not to the URI (RFC 3261 §20.10).
 * `Contact: *` (REGISTER removing all bindings) is not an address: callers check for it first.
 */
export function parseNameAddr(text: string): NameAddr | null {
  const value = text.trim();
  let displayName: string | undefined;
  let uri: string;
  let rest: string;
  let cursor = 0;
  if (value.startsWith('"')) {
    const quoted = readQuoted(value, 0);
    if (!quoted) return null;
    displayName = quoted.value;
    cursor = quoted.end;
    while (isSpace(value[cursor])) cursor++;
    if (value[cursor] !== '<') return null;
  }
  const open = value.indexOf('<', cursor);
  if (open >= 0) {
    if (displayName === undefined) {
      const name = value.slice(0, open).trim();
      if (/["<>]/.test(name)) return null;
      if (name !== '') displayName = name.replace(/\s+/g, ' ');
    }
    const close = value.indexOf('>', open);
    if (close < 0) return null;
    uri = value.slice(open + 1, close).trim();
    rest = value.slice(close + 1);
  } else {
    const end = value.search(/[;\s]/);
    uri = end < 0 ? value : value.slice(0, end);
    rest = end < 0 ? '' : value.slice(end);
    if (/[?,"]/.test(uri)) return null;
  }
  const colon = uri.indexOf(':');
  if (colon <= 0 || !SCHEME.test(uri.slice(0, colon)) || /\s/.test(uri)) return null;
  const params = parseParams(rest);
  if (!params) return null;
  return displayName === undefined ? { uri, params } : { displayName, uri, params };
}

export interface Via {
  /** e.g. `SIP/2.0`. */
  protocol: string;
  /** Upper-case: UDP, TCP, TLS, WS, WSS, SCTP. */
  transport: string;
  host: string;
  port?: number;
  params: SipParams;
  branch?: string;
  received?: string;
  /** `true` when present without a value, as a client asks for it (RFC 3581). */
  rport?: number | true;
}

export function parseVia(text: string): Via | null {
  const match = /^([^\s/]+)[ \t]*\/[ \t]*([^\s/]+)[ \t]*\/[ \t]*([^\s/;]+)[ \t]+([^;]+)(.*)$/.exec(
    text.trim(),
  );
  if (!match) return null;
  const [, name, version, transport, sentBy, paramsText] = match;
  if (!TOKEN.test(name!) || !TOKEN.test(version!) || !TOKEN.test(transport!)) return null;
  const hostPort = parseHostPort(sentBy!.trim().replace(/[ \t]*:[ \t]*/, ':'));
  const params = parseParams(paramsText!);
  if (!hostPort || !params) return null;
  const via: Via = {
    protocol: `${name!.toUpperCase()}/${version}`,
    transport: transport!.toUpperCase(),
    host: hostPort.host,
    params,
  };
  if (hostPort.port !== undefined) via.port = hostPort.port;
  const branch = params.get('branch');
  if (branch === null) return null;
  if (branch !== undefined) via.branch = branch;
  const received = params.get('received');
  if (received === null) return null;
  if (received !== undefined) via.received = received;
  if (params.has('rport')) {
    const rport = params.get('rport');
    if (rport === null || rport === undefined) via.rport = true;
    else if (DIGITS.test(rport) && rport.length <= 5 && Number(rport) <= 65535) via.rport = Number(rport);
    else return null;
  }
  return via;
}

/**
 * Writes a Via value. `branch`, `received` and `rport` are taken from the fields when set (they
 * win over `params`), so a transport can stamp them without touching the other parameters,
 * whose order is kept.
 */
export function formatVia(via: Via): string {
  const params: SipParams = new Map(via.params);
  if (via.branch !== undefined) params.set('branch', via.branch);
  if (via.received !== undefined) params.set('received', via.received);
  if (via.rport !== undefined) params.set('rport', via.rport === true ? null : String(via.rport));
  const port = via.port === undefined ? '' : `:${via.port}`;
  let text = `${via.protocol}/${via.transport} ${via.host}${port}`;
  for (const [name, value] of params) {
    if (value === null) text += `;${name}`;
    else if (/^[^\s";,\\]+$/.test(value)) text += `;${name}=${value}`;
    else text += `;${name}="${value.replace(/["\\]/g, (char) => `\\${char}`)}"`;
  }
  return text;
}

export interface CSeq {
  seq: number;
  method: string;
}

const CSEQ_SYNTAX = /^([0-9]+)[ \t]+([^\s]+)$/;

/** Null when malformed or when the number does not fit 32 bits (RFC 3261 §8.1.1.5). */
export function parseCSeq(text: string): CSeq | null {
  const match = CSEQ_SYNTAX.exec(text.trim());
  if (!match || !TOKEN.test(match[2]!) || match[1]!.length > 12) return null;
  const seq = Number(match[1]);
  if (seq > MAX_CSEQ) return null;
  return { seq, method: match[2]! };
}

// ---------------------------------------------------------------------------------------------
// Framing and parsing.

const CR = 0x0d;
const LF = 0x0a;

/**
 * Where the header section ends: index of the blank line's start and of the body. Bare LF line
 * ends are accepted as well, since some devices send them (RFC 3261 §7.5 asks for tolerance).
 */
function findHeaderEnd(
  buffer: Buffer,
  from: number,
  to: number,
): { headEnd: number; bodyStart: number } | null {
  for (let i = buffer.indexOf(LF, from); i >= 0 && i < to; i = buffer.indexOf(LF, i + 1)) {
    if (i + 1 < to && buffer[i + 1] === LF) return { headEnd: i + 1, bodyStart: i + 2 };
    if (i + 2 < to && buffer[i + 1] === CR && buffer[i + 2] === LF)
      return { headEnd: i + 1, bodyStart: i + 3 };
  }
  return null;
}

/** Skips CRLFs before a start line (RFC 3261 §7.5) and keep-alives (RFC 5626 §3.5.1). */
function skipBlankLines(buffer: Buffer, from: number, to: number): number {
  let i = from;
  while (i < to && (buffer[i] === CR || buffer[i] === LF)) i++;
  return i;
}

/** Splits the header section into logical lines, unfolding continuation lines (§7.3.1). */
function unfoldLines(head: string): { lines: string[]; problem?: string } {
  const lines: string[] = [];
  for (const raw of head.split(/\r?\n/)) {
    if (raw === '') continue;
    if (isSpace(raw[0])) {
      if (lines.length <= 1) return { lines, problem: 'continuation line without a header' };
      lines[lines.length - 1] += ` ${raw.trim()}`;
    } else lines.push(raw);
  }
  return { lines };
}

interface Head {
  startLine: string;
  headers: SipHeaders;
  problems: string[];
}

function parseHead(buffer: Buffer, start: number, headEnd: number): Head {
  const { lines, problem } = unfoldLines(buffer.toString('utf8', start, headEnd));
  const problems = problem ? [problem] : [];
  const headers = new SipHeaders();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = colon < 0 ? '' : line.slice(0, colon).trimEnd();
    if (!TOKEN.test(name)) {
      problems.push(`malformed header line "${line.slice(0, 40)}"`);
      continue;
    }
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    const canonical = canonicalHeaderName(name);
    if (LIST_HEADERS.has(canonical.toLowerCase())) {
      const parts = splitOutside(value, ',')
        .map((part) => part.trim())
        .filter((part) => part !== '');
      if (parts.length === 0) headers.append(canonical, '');
      for (const part of parts) headers.append(canonical, part);
    } else headers.append(canonical, value);
  }
  return { startLine: lines[0] ?? '', headers, problems };
}

type StartLine =
  | { kind: 'request'; method: string; uri: string; version: string }
  | { kind: 'response'; status: number; reason: string; version: string };

function parseStartLine(line: string): StartLine | string {
  const response = /^SIP\/([0-9]+\.[0-9]+) ([0-9]{3})(?: (.*))?$/i.exec(line);
  if (response) {
    const status = Number(response[2]);
    if (status < 100 || status > 699) return `invalid status code ${status}`;
    return { kind: 'response', status, reason: response[3] ?? '', version: `SIP/${response[1]}` };
  }
  const parts = line.split(' ');
  if (parts.length !== 3) return 'malformed request line';
  const [method, uri, version] = parts as [string, string, string];
  if (!TOKEN.test(method)) return 'malformed method';
  const colon = uri.indexOf(':');
  if (colon <= 0 || !SCHEME.test(uri.slice(0, colon)) || /[\s<>"]/.test(uri)) return 'malformed Request-URI';
  if (!/^SIP\/[0-9]+\.[0-9]+$/i.test(version)) return 'malformed SIP version';
  return { kind: 'request', method, uri, version: version.toUpperCase() };
}

/** Why the headers a 400 needs are missing or unusable; undefined when a response can be built. */
function responseHeadersProblem(headers: SipHeaders): string | undefined {
  const topVia = headers.get('Via');
  if (topVia === undefined) return 'missing Via';
  if (!parseVia(topVia)) return 'malformed Via';
  for (const name of ['From', 'To']) {
    const value = headers.get(name);
    if (value === undefined) return `missing ${name}`;
    if (!parseNameAddr(value)) return `malformed ${name}`;
  }
  const callId = headers.get('Call-ID');
  if (callId === undefined) return 'missing Call-ID';
  if (callId === '' || /\s/.test(callId)) return 'malformed Call-ID';
  const cseq = headers.get('CSeq');
  if (cseq === undefined) return 'missing CSeq';
  // An out-of-range number is still copied into the 400 verbatim, so syntax is enough here.
  if (!CSEQ_SYNTAX.test(cseq)) return 'malformed CSeq';
  return undefined;
}

/** The first problem that makes a message with usable response headers invalid. */
function semanticProblem(message: SipMessage): string | undefined {
  const { headers } = message;
  for (const name of SINGLE_HEADERS) if (headers.getAll(name).length > 1) return `more than one ${name}`;
  for (const via of headers.getAll('Via')) if (!parseVia(via)) return 'malformed Via';
  const cseq = parseCSeq(headers.get('CSeq') ?? '');
  if (!cseq) return 'CSeq number out of range';
  if (isRequest(message)) {
    if (cseq.method !== message.method) return 'CSeq method does not match the request method';
    const maxForwards = headers.get('Max-Forwards');
    if (maxForwards !== undefined && (!DIGITS.test(maxForwards) || Number(maxForwards) > 255)) {
      return 'invalid Max-Forwards';
    }
    const scheme = message.uri.slice(0, message.uri.indexOf(':')).toLowerCase();
    if ((scheme === 'sip' || scheme === 'sips') && !parseUri(message.uri)) return 'malformed Request-URI';
  }
  return undefined;
}

/** Content-Length as a number, undefined when absent, or a problem. */
function contentLengthOf(headers: SipHeaders): number | undefined | string {
  const values = headers.getAll('Content-Length');
  if (values.length === 0) return undefined;
  if (new Set(values).size > 1) return 'conflicting Content-Length';
  const text = values[0]!;
  if (!DIGITS.test(text)) return 'invalid Content-Length';
  if (text.replace(/^0+(?=.)/, '').length > 9) return 'Content-Length too large';
  return Number(text);
}

type Mode = 'datagram' | 'stream';

function parseBytes(buffer: Buffer, mode: Mode): ParseResult {
  const start = skipBlankLines(buffer, 0, buffer.length);
  if (start >= buffer.length) return { ok: false, reason: 'empty message', respondable: false };
  const end = findHeaderEnd(buffer, start, buffer.length);
  const headEnd = end?.headEnd ?? buffer.length;
  const bodyStart = end?.bodyStart ?? buffer.length;
  const head = parseHead(buffer, start, headEnd);
  const startLine = parseStartLine(head.startLine);
  if (typeof startLine === 'string') return { ok: false, reason: startLine, respondable: false };

  const { headers } = head;
  const partial: SipMessage =
    startLine.kind === 'request'
      ? {
          method: startLine.method,
          uri: startLine.uri,
          version: startLine.version,
          headers,
          body: Buffer.alloc(0),
        }
      : {
          status: startLine.status,
          reason: startLine.reason,
          version: startLine.version,
          headers,
          body: Buffer.alloc(0),
        };
  const missing = responseHeadersProblem(headers);
  const respondable = startLine.kind === 'request' && missing === undefined;
  const fail = (reason: string): ParseFailure => ({ ok: false, reason, respondable, partial });

  // Without the blank line the datagram was cut short: its last header may be cut too, so no
  // answer is built from it; the sender retransmits.
  if (!end) return { ok: false, reason: 'no blank line after the headers', respondable: false, partial };
  if (head.problems.length > 0) return fail(head.problems[0]!);
  if (missing) return fail(missing);
  const contentLength = contentLengthOf(headers);
  if (typeof contentLength === 'string') return fail(contentLength);
  const available = buffer.length - bodyStart;
  if (contentLength === undefined && mode === 'stream') return fail('missing Content-Length on a stream');
  if (contentLength !== undefined && contentLength > available) {
    return fail(`Content-Length ${contentLength} exceeds the ${available} bytes received`);
  }
  // Copied: the caller may reuse its buffer (the stream framer does), and extra bytes are dropped (§18.3).
  const body = Buffer.from(buffer.subarray(bodyStart, bodyStart + (contentLength ?? available)));
  const message: SipMessage = { ...partial, body };
  const problem = semanticProblem(message);
  if (problem) return fail(problem);
  return { ok: true, message };
}

/**
 * Parses one datagram (UDP). Bytes beyond Content-Length are discarded; a Content-Length larger
 * than what arrived makes the message malformed (RFC 3261 §18.3). Without Content-Length the body
 * runs to the end of the datagram.
 */
export function parse(buffer: Buffer): ParseResult {
  try {
    return parseBytes(buffer, 'datagram');
  } catch (error) {
    // Defence in depth: a parser bug must cost one dropped message, never the process.
    return { ok: false, reason: `parser error: ${(error as Error).message}`, respondable: false };
  }
}

export interface StreamFramer {
  push(chunk: Buffer): void;
  /** Bytes held while waiting for the rest of a message. */
  readonly buffered: number;
  /** True after a framing error: the stream cannot be resynchronised and should be closed. */
  readonly broken: boolean;
}

export interface StreamFramerOptions {
  /** Largest message (headers and body) held before giving up; 64 KiB by default. */
  maxMessageBytes?: number;
  /** A double-CRLF keep-alive ping arrived (RFC 5626 §3.5.1): the transport answers with CRLF. */
  onKeepAlive?: () => void;
}

/**
 * Frames messages out of a byte stream (TCP, TLS) by Content-Length, which streams require.
 * Chunks may split anywhere. A message that frames but does not parse is reported and skipped;
 * a framing error (no Content-Length, oversize) breaks the framer, because the position of the
 * next message is then unknown.
 */
export function createStreamFramer(
  onMessage: (message: SipMessage) => void,
  onError: (failure: ParseFailure) => void,
  options: StreamFramerOptions = {},
): StreamFramer {
  const maxBytes = options.maxMessageBytes ?? 64 * 1024;
  let buffer = Buffer.alloc(4096);
  // Bytes [offset, length) are unread; compacting once per push keeps many small messages in one
  // chunk linear instead of shifting the rest after each of them.
  let offset = 0;
  let length = 0;
  // Where the search for the blank line resumes, so byte-by-byte input stays linear.
  let scanned = 0;
  let broken = false;
  let blanks = '';

  const breakWith = (failure: ParseFailure) => {
    broken = true;
    offset = 0;
    length = 0;
    onError(failure);
  };

  const consume = (count: number) => {
    offset += count;
    scanned = offset;
  };

  const drain = () => {
    while (!broken && offset < length) {
      const start = skipBlankLines(buffer, offset, length);
      if (start > offset) {
        // Kept across pushes: a ping may arrive one byte per segment.
        blanks = (blanks + buffer.toString('latin1', offset, start)).slice(-4);
        if (blanks === '\r\n\r\n') {
          blanks = '';
          options.onKeepAlive?.();
        }
        consume(start - offset);
        continue;
      }
      blanks = '';
      const end = findHeaderEnd(buffer, Math.max(offset, scanned - 2), length);
      if (!end) {
        scanned = length;
        if (length - offset > maxBytes)
          breakWith({ ok: false, reason: 'message too large', respondable: false });
        return;
      }
      const head = parseHead(buffer, offset, end.headEnd);
      const contentLength = contentLengthOf(head.headers);
      if (contentLength === undefined || typeof contentLength === 'string') {
        const failure = parseBytes(Buffer.from(buffer.subarray(offset, end.bodyStart)), 'stream');
        breakWith(
          failure.ok
            ? { ok: false, reason: 'missing Content-Length on a stream', respondable: false }
            : { ...failure, respondable: false },
        );
        return;
      }
      const total = end.bodyStart - offset + contentLength;
      if (total > maxBytes) {
        breakWith({ ok: false, reason: 'message too large', respondable: false });
        return;
      }
      // Not advancing `scanned` here: the blank line just found must be found again next time.
      if (length - offset < total) return;
      const result = parse(buffer.subarray(offset, offset + total));
      consume(total);
      if (result.ok) onMessage(result.message);
      else onError(result);
    }
  };

  return {
    push(chunk: Buffer) {
      if (broken || chunk.length === 0) return;
      if (offset > 0) {
        buffer.copyWithin(0, offset, length);
        length -= offset;
        scanned = Math.max(0, scanned - offset);
        offset = 0;
      }
      if (length + chunk.length > buffer.length) {
        const grown = Buffer.alloc(Math.max(buffer.length * 2, length + chunk.length));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      chunk.copy(buffer, length);
      length += chunk.length;
      drain();
    },
    get buffered() {
      return length - offset;
    },
    get broken() {
      return broken;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Serializing.

/**
 * Writes a message with CRLF line ends, canonical header names and a byte-accurate
 * Content-Length (always present: streams require it and it costs nothing on UDP).
 */
export function serialize(message: SipMessage): Buffer {
  const startLine = isRequest(message)
    ? `${message.method} ${message.uri} ${message.version}`
    : `${message.version} ${message.status} ${message.reason}`;
  const lines = [startLine];
  const contentLength = `Content-Length: ${message.body.length}`;
  let lengthWritten = false;
  for (const { name, value } of message.headers) {
    const canonical = canonicalHeaderName(name);
    if (canonical === 'Content-Length') {
      if (!lengthWritten) lines.push(contentLength);
      lengthWritten = true;
      continue;
    }
    // A value copied from hostile input (a display name, say) must not inject header lines.
    lines.push(`${canonical}: ${value.replace(/[\r\n]+/g, ' ')}`);
  }
  if (!lengthWritten) lines.push(contentLength);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), message.body]);
}
