/**
 * A trunk's registration (RFC 3261 §10): REGISTER with digest credentials, refreshed before it
 * expires, 423 Interval Too Brief answered with the registrar's Min-Expires, failures retried
 * with a growing wait. One Call-ID and From tag for the life of the binding, CSeq increasing,
 * as §10.2.4 asks, so the registrar sees refreshes rather than new registrations.
 */
import { createRequest, newCallId, newTag, type SipDestination, uriOf } from './dialog';
import { DigestAuthenticator } from './digest';
import { parseNameAddr, type SipResponse } from './message';
import type { SipTransactionPort } from './user-agent';

export type RegistrationState = 'unregistered' | 'registering' | 'registered' | 'failed';

export interface RegistrationStatus {
  state: RegistrationState;
  /** The registrar's answer when it refused us ("403 Forbidden"), or what went wrong. */
  detail: string;
  at: number;
  /** When the binding runs out (registered only). */
  expiresAt: number | null;
}

export interface RegistrationOptions {
  /** Where REGISTER goes: the registrar, or the outbound proxy in front of it. */
  destination: SipDestination;
  /** The registrar's domain: Request-URI sip:<domain>, address of record sip:<user>@<domain>. */
  domain: string;
  username: string;
  authUsername?: string;
  password: string;
  /** Requested binding lifetime in seconds. */
  expires: number;
  /** The Contact we register (our advertised address). */
  contact: string;
  onStatus?: (status: RegistrationStatus) => void;
}

const RETRY_FIRST_MS = 30_000;
const RETRY_MAX_MS = 300_000;

export class Registration {
  private readonly callId: string;
  private readonly fromTag = newTag();
  private cseq = 0;
  private expires: number;
  private cancelTimer: () => void = () => {};
  private retryMs = RETRY_FIRST_MS;
  private stopped = false;
  private readonly auth: DigestAuthenticator;
  status: RegistrationStatus;

  constructor(
    private readonly port: SipTransactionPort,
    private readonly options: RegistrationOptions,
  ) {
    this.callId = newCallId(port.contactHost);
    this.expires = options.expires;
    this.auth = new DigestAuthenticator({
      username: options.authUsername || options.username,
      password: options.password,
    });
    this.status = { state: 'unregistered', detail: '', at: port.timers.now(), expiresAt: null };
  }

  start(): void {
    this.stopped = false;
    this.send(this.expires, false);
  }

  /** Removes the binding (Expires: 0) and stops refreshing; resolves when the registrar answered. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer();
    if (this.status.state !== 'registered') {
      this.report('unregistered', '');
      return;
    }
    await new Promise<void>((resolve) => this.send(0, false, resolve));
    this.report('unregistered', '');
  }

  private report(state: RegistrationState, detail: string, expiresAt: number | null = null) {
    this.status = { state, detail, at: this.port.timers.now(), expiresAt };
    this.options.onStatus?.(this.status);
  }

  private schedule(ms: number) {
    this.cancelTimer();
    this.cancelTimer = this.port.timers.set(ms, () => this.send(this.expires, false));
  }

  private retryLater(detail: string) {
    this.report('failed', detail);
    if (this.stopped) return;
    this.schedule(this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  private send(expires: number, retried: boolean, done?: () => void) {
    const { domain, username } = this.options;
    const aor = `<sip:${username}@${domain}>`;
    const uri = `sip:${domain}`;
    this.cseq++;
    const request = createRequest('REGISTER', uri, {
      from: `${aor};tag=${this.fromTag}`,
      to: aor,
      callId: this.callId,
      cseq: this.cseq,
      contact: this.options.contact,
      headers: [['Expires', String(expires)]],
    });
    for (const header of this.auth.authorize({ method: 'REGISTER', uri })) {
      request.headers.append(header.name, header.value);
    }
    if (expires > 0 && this.status.state !== 'registered') this.report('registering', '');
    this.port.request(request, this.options.destination, {
      onResponse: (response) => {
        if (response.status < 200) return;
        if (done) return done();
        this.onFinal(response, expires, retried);
      },
      onFailure: (kind) => {
        if (done) return done();
        this.retryLater(kind === 'timeout' ? '注册服务器无响应（超时）' : '无法连接注册服务器');
      },
    });
  }

  private onFinal(response: SipResponse, expires: number, retried: boolean) {
    const { status } = response;
    if (status === 401 || status === 407) {
      const kind = status === 401 ? 'www' : 'proxy';
      const header = status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate';
      const outcome = this.auth.onChallenge(kind, response.headers.getAll(header), retried);
      if (outcome.ok) return this.send(expires, true);
      return this.retryLater(
        outcome.reason === 'credentials_rejected'
          ? `${status} 认证失败：用户名或密码错误`
          : `${status} ${response.reason}`,
      );
    }
    if (status === 423) {
      const minimum = Number(response.headers.get('Min-Expires'));
      if (Number.isFinite(minimum) && minimum > expires && minimum <= 86_400) {
        this.expires = minimum;
        return this.send(minimum, retried);
      }
      return this.retryLater(`423 ${response.reason}`);
    }
    if (status >= 300) return this.retryLater(`${status} ${response.reason}`);
    const granted = grantedExpiry(response, this.options.contact) ?? expires;
    if (granted <= 0) return this.retryLater('注册服务器未接受绑定（有效期为 0）');
    this.retryMs = RETRY_FIRST_MS;
    const now = this.port.timers.now();
    this.report('registered', '', now + granted * 1000);
    // Refresh ahead of expiry: most of the interval, but at least 5 s before the end.
    this.schedule(Math.max(1000, Math.min(granted * 850, granted * 1000 - 5000)));
  }
}

/** The lifetime the registrar granted our Contact: its expires param, else the Expires header. */
function grantedExpiry(response: SipResponse, contact: string): number | null {
  const ours = uriOf(contact);
  for (const value of response.headers.getAll('Contact')) {
    const address = parseNameAddr(value);
    if (!address || (ours && address.uri !== ours)) continue;
    const param = address.params.get('expires');
    if (typeof param === 'string' && /^\d+$/.test(param)) return Number(param);
  }
  const header = response.headers.get('Expires');
  return header && /^\d+$/.test(header.trim()) ? Number(header) : null;
}
