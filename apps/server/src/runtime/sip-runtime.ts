import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import os from 'node:os';
import { type AssistantVoice, END_REASON_LABELS, type TrunkTestStep } from '@callpilot/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../engine/clock';
import { wavToPcm } from '../engine/speech/resample';
import type { SpeechSynthesizer } from '../engine/speech/types';
import { loadVad } from '../engine/speech/vad';
import { MediaEngine } from '../engine/telephony/media/media-engine';
import { LINE_AUDIO_BATCH_MS } from '../engine/telephony/media/protocol';
import { outcomeOfFinalResponse } from '../engine/telephony/sip/causes';
import { Registration } from '../engine/telephony/sip/registration';
import { createSipAdapter, type SipAdapter, type SipRoute } from '../engine/telephony/sip/sip-adapter';
import { createSipStack } from '../engine/telephony/sip/stack';
import type { SipEndpoint } from '../engine/telephony/sip/transport';
import type {
  LegMedia,
  OriginateRequest,
  OriginateResult,
  TelephonyAdapter,
} from '../engine/telephony/types';
import type { Env } from '../env';
import { peerMatcher, type TrunkDirectory } from '../modules/trunks/trunk-directory';
import { createInviteScreen } from './sip-screen';
import type { SipTrunk, TrunkControl, TrunkLiveStatus } from './trunk-control';

const OPTIONS_INTERVAL_MS = 30_000;
/** While draining, how often the calls still up are counted in the log. */
const DRAIN_REPORT_MS = 5_000;

export interface SipRuntime {
  readonly adapter: SipAdapter;
  readonly control: TrunkControl;
  /** Outbound calls: through the caller number's trunk when it has one, else the simulator. */
  route(sim: TelephonyAdapter): TelephonyAdapter;
  legMedia(
    voice: Pick<AssistantVoice, 'voiceId' | 'speed' | 'volume'>,
    recognizer: LegMedia['recognizer'],
  ): LegMedia;
  stats(): Record<string, number>;
  /** Register trunks of this process by registration state (a trunk not yet reported is unregistered). */
  registrationStates(): Record<string, number>;
  /**
   * True once draining began: OPTIONS (Kamailio's health pings) and new INVITEs get 503, so the
   * proxy sends new calls elsewhere while the calls in progress run to their end.
   */
  readonly draining: boolean;
  /** Starts draining (there is no way back but a restart); logs the calls left until none is. */
  drain(reason: string): void;
  stop(): Promise<void>;
}

/** The first non-internal IPv4 address: what a carrier on the LAN reaches us at without NAT. */
function guessExternalHost(bound: string): string {
  if (bound !== '0.0.0.0' && bound !== '::') return bound;
  for (const entries of Object.values(os.networkInterfaces())) {
    const found = entries?.find((entry) => entry.family === 'IPv4' && !entry.internal);
    if (found) return found.address;
  }
  return '127.0.0.1';
}

const hostPortEndpoint = (
  target: { host: string; port: number | null },
  protocol: 'udp' | 'tcp',
): SipEndpoint => ({ protocol, address: target.host, port: target.port ?? 5060 });

/** What a provisional response means to someone testing a line. */
function provisionalNote(status: number): string {
  if (status === 100) return '线路已受理';
  if (status === 180) return '对方振铃';
  if (status === 181) return '呼叫正在转移';
  if (status === 182) return '排队等待';
  if (status === 183) return '呼叫进展（早期媒体）';
  return '呼叫进展';
}

/** What a final failure response means, in the words of the call records' end reasons. */
function failureNote(status: number): string {
  if (status === 401 || status === 407) return '鉴权失败，请检查用户名和密码';
  if (status === 403) return '线路拒绝了呼叫';
  const outcome = outcomeOfFinalResponse(status, '').outcome;
  return outcome === 'failed' ? '呼叫失败' : END_REASON_LABELS[outcome];
}

/** The number as the trunk wants it (numbers are stored in national form: 021…, 138…). */
export function formatForTrunk(number: string, format: SipTrunk['callerIdFormat']): string {
  if (format !== 'e164' || !/^\d+$/.test(number)) return number;
  return `+86${number.startsWith('0') ? number.slice(1) : number}`;
}

export function routeOf(trunk: SipTrunk, from: string, to: string): SipRoute | null {
  const target =
    trunk.kind === 'register' ? (trunk.outboundProxy ?? trunk.registrar) : trunk.signallingAddress;
  const domain = trunk.kind === 'register' ? trunk.registrar?.host : trunk.signallingAddress?.host;
  if (!target || !domain) return null;
  return {
    trunkId: trunk.id,
    destination: hostPortEndpoint(target, trunk.transport),
    domain,
    callerId: formatForTrunk(from, trunk.callerIdFormat),
    callee: formatForTrunk(to, trunk.callerIdFormat),
    credentials:
      trunk.kind === 'register' ? { username: trunk.authUsername, password: trunk.password } : undefined,
    codecs: trunk.codecs,
  };
}

/**
 * Real phone lines in this process: the SIP stack on SIP_PORT, the media worker on the RTP
 * range, the VAD, trunk registrations and OPTIONS pings, inbound screening by trunk address.
 */
export async function startSipRuntime(options: {
  env: Env;
  clock: Clock;
  log: FastifyBaseLogger;
  directory: TrunkDirectory;
  synthesizer: () => SpeechSynthesizer;
  recordingDir: string;
  /** The project of a call this process runs: SIP log lines about a call name both. */
  projectOf?: (callId: string) => string | null;
  /** Every INVITE's final status, both ways (the INVITE outcome metrics). */
  onInviteFinal?: (direction: 'inbound' | 'outbound', status: number | null) => void;
}): Promise<SipRuntime> {
  const { env, clock, log, directory } = options;
  const port = env.SIP_PORT;
  const externalHost = env.SIP_EXTERNAL_HOST ?? guessExternalHost(env.SIP_HOST);

  let trunks: SipTrunk[] = [];
  let matchPeer = peerMatcher([]);
  /** Registrar and proxy addresses of register trunks: INVITEs to a registered contact come from there. */
  let registrarAddresses = new Map<string, SipTrunk>();
  let draining = false;
  const screening = createInviteScreen({
    clock,
    proxies: env.SIP_PROXY ?? [],
    trunkFor: (address) => matchPeer(address) ?? registrarAddresses.get(address) ?? null,
    draining: () => draining,
  });

  async function reloadTrunks() {
    trunks = await directory.enabled();
    matchPeer = peerMatcher(trunks);
    const addresses = new Map<string, SipTrunk>();
    for (const trunk of trunks) {
      if (trunk.kind !== 'register') continue;
      for (const target of [trunk.registrar, trunk.outboundProxy]) {
        if (!target) continue;
        const resolved = await lookup(target.host, { all: true }).catch(() => []);
        for (const { address } of resolved) addresses.set(address, trunk);
      }
    }
    registrarAddresses = addresses;
  }

  const stack = await createSipStack({
    host: env.SIP_HOST,
    port,
    protocols: ['udp', 'tcp'],
    advertisedHost: externalHost,
    clock,
    logger: log,
    // Kamailio moves a call to the next worker when this one says nothing for 1.5 s: the 100
    // Trying leaves as soon as the INVITE is read, so the whole margin goes to a loaded process.
    tryingDelayMs: env.SIP_PROXY ? 0 : undefined,
    agent: {
      userAgent: 'CallPilot',
      screen: screening.screen,
      draining: () => draining,
      onInviteFinal: options.onInviteFinal,
    },
  });
  const media = await MediaEngine.start({
    rtpPortMin: env.RTP_PORT_MIN,
    rtpPortMax: env.RTP_PORT_MAX,
    bindAddress: env.SIP_HOST,
    audioBatchMs: LINE_AUDIO_BATCH_MS,
  });
  const vad = await loadVad();

  const legMedia = (
    voice: Pick<AssistantVoice, 'voiceId' | 'speed' | 'volume'>,
    recognizer: LegMedia['recognizer'],
  ): LegMedia => ({
    synthesize: async (text, speed) => {
      const speech = await options.synthesizer().synthesize(text, { ...voice, speed: voice.speed * speed });
      return wavToPcm(speech.audio, 8000);
    },
    recognizer,
  });
  const adapter = createSipAdapter({
    stack,
    media,
    vad,
    clock,
    mediaAddress: externalHost,
    recordingDir: options.recordingDir,
    defaultMedia: () => legMedia({ voiceId: 'cmn', speed: 1, volume: 80 }, null),
    // An inbound call's transfer leg goes out through the trunk the call came in on, straight
    // to it (as outbound calls do), with the number the caller dialled as the caller-ID.
    inboundRoute: ({ source, request, ourNumber }) => {
      const caller = screening.callerAddress(request, source);
      const trunk = caller ? (matchPeer(caller) ?? registrarAddresses.get(caller) ?? null) : null;
      return trunk ? routeOf(trunk, ourNumber, ourNumber) : null;
    },
    onError: (err, context, callId) =>
      log.warn(
        { err, context, callId, projectId: callId ? (options.projectOf?.(callId) ?? null) : null },
        'sip call step failed',
      ),
  });

  const registrations = new Map<string, Registration>();
  const live = new Map<string, TrunkLiveStatus>();
  const liveOf = (trunkId: string): TrunkLiveStatus => {
    let status = live.get(trunkId);
    if (!status) {
      status = { registration: null, options: null, activeCalls: 0 };
      live.set(trunkId, status);
    }
    return status;
  };

  function register(trunk: SipTrunk) {
    registrations
      .get(trunk.id)
      ?.stop()
      .catch(() => undefined);
    registrations.delete(trunk.id);
    if (trunk.kind !== 'register' || !trunk.enabled || !trunk.registrar) return;
    const registration = new Registration(stack.port, {
      destination: hostPortEndpoint(trunk.outboundProxy ?? trunk.registrar, trunk.transport),
      domain: trunk.registrar.host,
      username: trunk.username,
      authUsername: trunk.authUsername,
      password: trunk.password,
      expires: trunk.registerExpires,
      contact: stack.agent.contact(),
      onStatus: (status) => {
        const registrationStatus = { state: status.state, detail: status.detail, at: new Date(status.at) };
        liveOf(trunk.id).registration = registrationStatus;
        directory
          .recordRegistration(trunk.id, registrationStatus)
          .catch((err: unknown) => log.warn({ err }, 'trunk status not saved'));
      },
    });
    registrations.set(trunk.id, registration);
    registration.start();
  }

  async function ping(trunk: SipTrunk) {
    if (trunk.kind !== 'ip' || !trunk.signallingAddress) return;
    const destination = hostPortEndpoint(trunk.signallingAddress, trunk.transport);
    const uri = `sip:${trunk.signallingAddress.host}:${destination.port}`;
    const result = await stack.agent.ping(uri, destination, `<sip:ping@${externalHost}>`);
    const ok = result.status < 300 || result.status === 405;
    const options = {
      at: new Date(clock.now()),
      rttMs: ok ? Math.round(result.rttMs) : null,
      status: result.status,
    };
    liveOf(trunk.id).options = options;
    await directory.recordOptions(trunk.id, options).catch(() => undefined);
  }

  let pinging = false;
  /**
   * All at once: an unreachable peer takes 32 s (Timer F) to answer for, and in turn it would
   * hold back every trunk after it. A round still waiting on one skips the next.
   */
  async function pingAll() {
    if (pinging) return;
    pinging = true;
    try {
      await Promise.all(trunks.map((trunk) => ping(trunk).catch(() => undefined)));
    } finally {
      pinging = false;
    }
  }

  await reloadTrunks();
  for (const trunk of trunks) register(trunk);
  void pingAll().catch(() => undefined);
  const pinger = setInterval(() => void pingAll().catch(() => undefined), OPTIONS_INTERVAL_MS);
  pinger.unref();
  let drainReport: NodeJS.Timeout | undefined;

  const control: TrunkControl = {
    unavailable: null,
    status: (trunkId) => live.get(trunkId) ?? null,
    async testCall(trunk, number, { onStep, signal }) {
      const started = clock.now();
      const step = (
        direction: TrunkTestStep['direction'],
        message: string,
        status: number | null,
        note: string,
      ) => onStep({ at: clock.now() - started, direction, message, status, note });
      const caller = trunk.username || 'callpilot';
      const route = routeOf(trunk, caller, number);
      if (!route) return { ok: false, message: '线路地址不完整，请检查注册服务器或对端地址' };
      step('out', `INVITE sip:${route.callee}@${route.domain}`, null, '发起呼叫');
      let finalResponse = false;
      const result = await adapter.originate({
        // Unique even when two trunks are tested in the same millisecond: the leg and media are keyed by it.
        callId: `trunk-test-${randomUUID()}`,
        from: caller,
        to: number,
        sip: route,
        signal,
        ringTimeoutMs: 30_000,
        record: false,
        onProvisional: (status, reason) => step('in', `${status} ${reason}`, status, provisionalNote(status)),
        onFinalResponse: (status, reason) => {
          finalResponse = true;
          step('in', `${status} ${reason}`, status, status < 300 ? '对方已接听' : failureNote(status));
        },
      });
      if (!result.answered) {
        const label = END_REASON_LABELS[result.outcome];
        const detail = result.detail ?? label;
        // Without a final response (timeout, network, our CANCEL) no step above says what happened.
        if (!finalResponse) step('info', detail, null, '呼叫未接通');
        return { ok: false, message: result.outcome === 'failed' ? detail : `${label}，${detail}` };
      }
      const { leg } = result;
      // The user closed the dialog: hang up now rather than after the announcement.
      const hangUpOnAbort = () => void leg.hangup().catch(() => undefined);
      signal.addEventListener('abort', hangUpOnAbort, { once: true });
      if (signal.aborted) hangUpOnAbort();
      try {
        step('info', '播放测试语音', null, '');
        await leg.say('这是一通线路测试电话，即将挂断。', { interruptible: false });
        if (leg.ended?.by === 'remote') {
          step('in', 'BYE', null, '对方已挂断');
          return { ok: true, message: '接通，对方已挂断' };
        }
        await leg.hangup();
        step('out', 'BYE', null, '测试完成，已挂断');
        return { ok: true, message: '接通后已挂断' };
      } finally {
        signal.removeEventListener('abort', hangUpOnAbort);
        // A synthesis failure must not leave the far end's phone off the hook.
        if (!leg.ended) await leg.hangup().catch(() => undefined);
      }
    },
    changed(trunkId) {
      void (async () => {
        await reloadTrunks();
        const trunk = await directory.get(trunkId);
        if (trunk?.enabled) {
          register(trunk);
          // A new or edited trunk shows whether its peer answers now, not at the next round.
          void ping(trunk).catch(() => undefined);
        } else {
          await registrations.get(trunkId)?.stop();
          registrations.delete(trunkId);
        }
      })().catch((err: unknown) => log.warn({ err, trunkId }, 'trunk reload failed'));
    },
  };

  return {
    adapter,
    control,
    legMedia,
    route(sim) {
      return {
        kind: 'sip',
        onInbound: () => () => {},
        close: async () => {},
        async originate(request: OriginateRequest): Promise<OriginateResult> {
          const trunk = request.projectId ? await directory.forNumber(request.projectId, request.from) : null;
          if (!trunk) return sim.originate(request);
          const route = routeOf(trunk, request.from, request.to);
          if (!route || !trunk.enabled) {
            return {
              answered: false,
              outcome: 'failed',
              ringMs: 0,
              detail: `线路「${trunk.name}」未启用或地址不完整`,
            };
          }
          return adapter.originate({ ...request, sip: route });
        },
      };
    },
    registrationStates() {
      const states: Record<string, number> = {};
      for (const trunkId of registrations.keys()) {
        const state = live.get(trunkId)?.registration?.state ?? 'unregistered';
        states[state] = (states[state] ?? 0) + 1;
      }
      return states;
    },
    stats: () => ({
      ...stack.stats(),
      legs: adapter.activeLegs,
      /** Enabled trunks loaded (a trunk saved a moment ago appears once its reload finished). */
      trunks: trunks.length,
      ...screening.counters,
      draining: draining ? 1 : 0,
    }),
    get draining() {
      return draining;
    },
    drain(reason) {
      if (draining) return;
      draining = true;
      log.info({ reason, calls: adapter.activeLegs }, 'SIP draining: OPTIONS and new INVITEs answered 503');
      const report = () => {
        if (adapter.activeLegs > 0) {
          log.info({ calls: adapter.activeLegs }, 'SIP draining: calls still in progress');
          return;
        }
        clearInterval(drainReport);
        log.info('SIP drained: no call in progress, the process can stop');
      };
      drainReport = setInterval(report, DRAIN_REPORT_MS);
      drainReport.unref();
    },
    async stop() {
      clearInterval(pinger);
      clearInterval(drainReport);
      await adapter.close();
      await Promise.all([...registrations.values()].map((r) => r.stop().catch(() => undefined)));
      await media.close();
      await stack.close();
    },
  };
}
