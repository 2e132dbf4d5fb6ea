/**
 * SIP dialogs (RFC 3261 §12): the state two user agents share for one call — Call-ID and tags,
 * CSeq spaces, the remote target and the route set — and the in-dialog requests built from it.
 *
 * Route sets: a UAC takes the Record-Route of the response in reverse order, a UAS the
 * Record-Route of the request in order (§12.1.1, §12.1.2). Requests follow loose routing when
 * the first route carries `lr`; a strict router (no `lr`) is handled per §12.2.1.1 since old
 * carrier SBCs in China still behave like that.
 */
import { randomUUID } from 'node:crypto';
import {
  type CSeq,
  getParam,
  SipHeaders as Headers,
  parseCSeq,
  parseNameAddr,
  parseUri,
  type SipHeaders,
  type SipRequest,
  type SipResponse,
  type SipUri,
} from './message';
import { createResponse, newBranch, newTag } from './transaction';
import type { SipEndpoint, SipProtocol } from './transport';

export type SipTransportName = SipProtocol;

/** Where a request goes next: the resolved host of a Route or Request-URI. */
export type SipDestination = SipEndpoint;

export { newBranch, newTag };
export const newCallId = (host: string) => `${randomUUID()}@${host}`;

/** The destination a URI names (RFC 3263 without SRV/NAPTR: host, port or 5060, transport param). */
export function uriDestination(uri: SipUri, fallback: SipTransportName = 'udp'): SipDestination {
  const transport = getParam(uri.params, 'transport');
  const protocol: SipTransportName =
    typeof transport === 'string' && transport.toLowerCase() === 'tcp' ? 'tcp' : fallback;
  const address = uri.host.startsWith('[') ? uri.host.slice(1, -1) : uri.host;
  return { protocol, address, port: uri.port ?? 5060 };
}

export const tagOf = (headerValue: string | undefined): string | undefined => {
  if (!headerValue) return undefined;
  const tag = parseNameAddr(headerValue)?.params.get('tag');
  return typeof tag === 'string' ? tag : undefined;
};

/** The URI inside a Contact/From/To/Route value, or undefined when it does not parse. */
export const uriOf = (headerValue: string | undefined): string | undefined =>
  headerValue ? parseNameAddr(headerValue)?.uri : undefined;

export const cseqOf = (message: SipRequest | SipResponse): CSeq | null =>
  parseCSeq(message.headers.get('CSeq') ?? '');

/** Copies a header value with its tag set (From/To of in-dialog requests). */
export function withTag(headerValue: string, tag: string): string {
  if (tagOf(headerValue) !== undefined) return headerValue;
  return `${headerValue};tag=${tag}`;
}

/**
 * A response to `request` (§8.2.6): Via, From, To, Call-ID and CSeq copied, To tagged when the
 * UAS creates or holds a dialog. Record-Route is copied for responses that establish one (§12.1.1).
 */
export function buildResponse(
  request: SipRequest,
  status: number,
  reason: string,
  options: { toTag?: string; headers?: Iterable<readonly [string, string]>; body?: Buffer } = {},
): SipResponse {
  const response = createResponse(request, status, reason, options.toTag);
  const { headers } = response;
  if (status > 100 && status < 300 && (request.method === 'INVITE' || request.method === 'SUBSCRIBE')) {
    for (const route of request.headers.getAll('Record-Route')) headers.append('Record-Route', route);
  }
  for (const [name, value] of options.headers ?? []) headers.append(name, value);
  response.body = options.body ?? Buffer.alloc(0);
  headers.set('Content-Length', String(response.body.length));
  return response;
}

export type DialogState = 'early' | 'confirmed' | 'terminated';

export interface DialogRequestOptions {
  headers?: Iterable<readonly [string, string]>;
  body?: Buffer;
  contentType?: string;
  /** ACK and CANCEL reuse the INVITE's number; every other request takes the next one. */
  cseq?: number;
}

/** A request ready for the transaction layer (which prepends its Via), with where it must be sent. */
export interface OutgoingRequest {
  request: SipRequest;
  destination: SipDestination;
}

export class Dialog {
  state: DialogState;
  readonly callId: string;
  readonly localTag: string;
  remoteTag: string;
  /** From (as UAC) or To (as UAS) of the dialog-creating request, without our tag. */
  readonly localAddress: string;
  readonly remoteAddress: string;
  localSeq: number;
  remoteSeq: number | null;
  remoteTarget: string;
  readonly routeSet: readonly string[];
  readonly transport: SipTransportName;

  private constructor(init: {
    state: DialogState;
    callId: string;
    localTag: string;
    remoteTag: string;
    localAddress: string;
    remoteAddress: string;
    localSeq: number;
    remoteSeq: number | null;
    remoteTarget: string;
    routeSet: string[];
    transport: SipTransportName;
  }) {
    this.state = init.state;
    this.callId = init.callId;
    this.localTag = init.localTag;
    this.remoteTag = init.remoteTag;
    this.localAddress = init.localAddress;
    this.remoteAddress = init.remoteAddress;
    this.localSeq = init.localSeq;
    this.remoteSeq = init.remoteSeq;
    this.remoteTarget = init.remoteTarget;
    this.routeSet = init.routeSet;
    this.transport = init.transport;
  }

  get id(): string {
    return dialogKey(this.callId, this.localTag, this.remoteTag);
  }

  /** §12.1.2: our INVITE and a response with a To tag (1xx → early, 2xx → confirmed). */
  static asUac(request: SipRequest, response: SipResponse, transport: SipTransportName): Dialog | null {
    const remoteTag = tagOf(response.headers.get('To'));
    const localTag = tagOf(request.headers.get('From'));
    const cseq = cseqOf(request);
    const target = uriOf(response.headers.get('Contact'));
    if (!remoteTag || !localTag || !cseq) return null;
    return new Dialog({
      state: response.status >= 200 ? 'confirmed' : 'early',
      callId: request.headers.get('Call-ID') ?? '',
      localTag,
      remoteTag,
      localAddress: request.headers.get('From') ?? '',
      remoteAddress: response.headers.get('To') ?? '',
      localSeq: cseq.seq,
      remoteSeq: null,
      // A 1xx without Contact still makes an early dialog; its target is the Request-URI then.
      remoteTarget: target ?? request.uri,
      routeSet: response.headers.getAll('Record-Route').reverse(),
      transport,
    });
  }

  /** §12.1.1: an INVITE we answer with a To tag of our choosing. */
  static asUas(request: SipRequest, localTag: string, transport: SipTransportName): Dialog | null {
    const remoteTag = tagOf(request.headers.get('From'));
    const cseq = cseqOf(request);
    const target = uriOf(request.headers.get('Contact'));
    if (remoteTag === undefined || !cseq || !target) return null;
    return new Dialog({
      state: 'early',
      callId: request.headers.get('Call-ID') ?? '',
      localTag,
      remoteTag,
      localAddress: withTag(request.headers.get('To') ?? '', localTag),
      remoteAddress: request.headers.get('From') ?? '',
      // Random start, as §8.1.1.5 suggests, keeps a restarted process from colliding with itself.
      localSeq: Math.floor(Math.random() * 10_000),
      remoteSeq: cseq.seq,
      remoteTarget: target,
      routeSet: request.headers.getAll('Record-Route'),
      transport,
    });
  }

  /** A target refresh (re-INVITE, UPDATE, or their 2xx) may move the remote party (§12.2). */
  refreshTarget(message: SipRequest | SipResponse): void {
    const target = uriOf(message.headers.get('Contact'));
    if (target) this.remoteTarget = target;
  }

  /**
   * §12.2.2: an in-dialog request with a CSeq lower than the last one is out of order (answer
   * 500); returns false then. ACK and CANCEL carry the INVITE's number and are not checked.
   */
  acceptRemoteSeq(request: SipRequest): boolean {
    if (request.method === 'ACK' || request.method === 'CANCEL') return true;
    const cseq = cseqOf(request);
    if (!cseq) return false;
    if (this.remoteSeq !== null && cseq.seq <= this.remoteSeq) return false;
    this.remoteSeq = cseq.seq;
    return true;
  }

  /** §12.2.1.1: a request inside this dialog and where to send it. */
  createRequest(method: string, options: DialogRequestOptions = {}): OutgoingRequest {
    const seq = options.cseq ?? ++this.localSeq;
    const headers = new Headers();
    const routes = [...this.routeSet];
    let uri = this.remoteTarget;
    const first = routes[0];
    const firstUri = first ? parseUri(uriOf(first) ?? '') : null;
    if (first && firstUri && !firstUri.params.has('lr')) {
      // Strict router: it becomes the Request-URI and the remote target the last route.
      uri = uriOf(first) ?? uri;
      routes.shift();
      routes.push(`<${this.remoteTarget}>`);
    }
    headers.append('Max-Forwards', '70');
    for (const route of routes) headers.append('Route', route);
    headers.append('From', withTag(this.localAddress, this.localTag));
    headers.append('To', withTag(this.remoteAddress, this.remoteTag));
    headers.append('Call-ID', this.callId);
    headers.append('CSeq', `${seq} ${method}`);
    for (const [name, value] of options.headers ?? []) headers.append(name, value);
    const body = options.body ?? Buffer.alloc(0);
    if (body.length > 0 && options.contentType) headers.set('Content-Type', options.contentType);
    headers.set('Content-Length', String(body.length));
    const request: SipRequest = { method, uri, version: 'SIP/2.0', headers, body };
    const nextHop = parseUri(first ? (uriOf(first) ?? '') : uri) ?? parseUri(uri);
    if (!nextHop) throw new Error(`dialog target is not a SIP URI: ${uri}`);
    return { request, destination: uriDestination(nextHop, this.transport) };
  }
}

export const dialogKey = (callId: string, localTag: string, remoteTag: string) =>
  `${callId}\u0000${localTag}\u0000${remoteTag}`;

/** The dialog an incoming in-dialog request belongs to: our tag is in To, theirs in From. */
export function incomingDialogKey(request: SipRequest): string | null {
  const localTag = tagOf(request.headers.get('To'));
  const remoteTag = tagOf(request.headers.get('From'));
  const callId = request.headers.get('Call-ID');
  if (!localTag || remoteTag === undefined || !callId) return null;
  return dialogKey(callId, localTag, remoteTag);
}

/** A fresh out-of-dialog request (INVITE, OPTIONS, REGISTER...) per §8.1.1. */
export function createRequest(
  method: string,
  uri: string,
  fields: {
    from: string;
    to: string;
    callId: string;
    cseq: number;
    contact?: string;
    headers?: Iterable<readonly [string, string]>;
    body?: Buffer;
    contentType?: string;
    routes?: readonly string[];
  },
): SipRequest {
  const headers: SipHeaders = new Headers();
  headers.append('Max-Forwards', '70');
  for (const route of fields.routes ?? []) headers.append('Route', route);
  headers.append('From', fields.from);
  headers.append('To', fields.to);
  headers.append('Call-ID', fields.callId);
  headers.append('CSeq', `${fields.cseq} ${method}`);
  if (fields.contact) headers.append('Contact', fields.contact);
  for (const [name, value] of fields.headers ?? []) headers.append(name, value);
  const body = fields.body ?? Buffer.alloc(0);
  if (body.length > 0 && fields.contentType) headers.set('Content-Type', fields.contentType);
  headers.set('Content-Length', String(body.length));
  return { method, uri, version: 'SIP/2.0', headers, body };
}
