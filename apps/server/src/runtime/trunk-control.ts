import type {
  CallerIdFormat,
  HostPort,
  TrunkCodec,
  TrunkKind,
  TrunkTestStep,
  TrunkTransport,
} from '@callpilot/contracts';

/**
 * A trunk as the SIP runtime needs it: parsed addresses and the decrypted password. Built by the
 * trunks module (modules/trunks/trunk-directory.ts) and handed only to the SIP runtime; it must
 * never be serialised into a response or a log line.
 */
export interface SipTrunk {
  id: string;
  projectId: string;
  name: string;
  kind: TrunkKind;
  transport: TrunkTransport;
  /** Register trunks only. */
  registrar: HostPort | null;
  username: string;
  /** The digest username: the auth username when set, else the username. */
  authUsername: string;
  password: string;
  registerExpires: number;
  outboundProxy: HostPort | null;
  /** IP trunks only: where INVITEs go. */
  signallingAddress: HostPort | null;
  /** IP trunks only: canonical IPs and CIDR ranges inbound INVITEs are accepted from. */
  peerAddresses: string[];
  codecs: TrunkCodec[];
  callerIdFormat: CallerIdFormat;
  maxConcurrent: number;
  enabled: boolean;
}

/** What the SIP runtime of this process knows about a trunk right now. */
export interface TrunkLiveStatus {
  registration: {
    state: 'unregistered' | 'registering' | 'registered' | 'failed';
    /** The carrier's reason when it failed (status line, Reason header). */
    detail: string;
    at: Date | null;
  } | null;
  options: { at: Date; rttMs: number | null; status: number } | null;
  activeCalls: number;
}

export interface TrunkTestOutcome {
  ok: boolean;
  /** Chinese, shown as is: how the call ended (接通后已挂断, 对方忙, 鉴权失败...). */
  message: string;
}

/**
 * The port between the trunk management (HTTP) and the SIP runtime, which implements it once it
 * exists. Until then, and whenever TELEPHONY=sim, the simulated carrier's control answers.
 */
export interface TrunkControl {
  /**
   * Why no trunk can work on this server (shown to users as the trunks' status), or null when
   * the SIP runtime runs here.
   */
  readonly unavailable: string | null;
  /**
   * Why this process cannot place a 测试呼叫 although trunks work in the deployment (an API
   * process whose workers run the lines), or null/absent when it can.
   */
  readonly testCallRefusal?: string | null;
  /** Live status from this process's SIP runtime; null when it has none (the stored columns then). */
  status(trunkId: string): TrunkLiveStatus | null;
  /**
   * 测试呼叫: dials `number` through the trunk, reporting each SIP step as it happens; resolves
   * with the outcome. Hangs up when `signal` aborts (the user closed the dialog).
   */
  testCall(
    trunk: SipTrunk,
    number: string,
    options: { onStep: (step: TrunkTestStep) => void; signal: AbortSignal },
  ): Promise<TrunkTestOutcome>;
  /**
   * A trunk was created, changed, enabled, disabled or deleted: the SIP runtime reloads it (the
   * trunk directory answers null once it is gone) and registers, re-registers or unregisters.
   * Called after the write is committed, in the process that wrote it.
   */
  changed(trunkId: string): void;
}

export const SIM_TELEPHONY_REASON = '服务器当前运行在模拟线路（TELEPHONY=sim）';

export class TrunkControlUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrunkControlUnavailableError';
  }
}

/**
 * The simulated carrier carries every call: no trunk registers, none can be dialled. It says so
 * rather than pretending: the status names the reason, a test call is refused.
 */
export function simTrunkControl(): TrunkControl {
  return {
    unavailable: SIM_TELEPHONY_REASON,
    status: () => null,
    testCall: async () => {
      throw new TrunkControlUnavailableError(SIM_TELEPHONY_REASON);
    },
    changed: () => {},
  };
}
