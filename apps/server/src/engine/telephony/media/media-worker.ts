import type dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { RtpSession } from './media-session';
import { PortPool } from './port-pool';
import {
  MEDIA_WORKER_KIND,
  type MediaEngineOptions,
  type MediaEngineStats,
  MediaError,
  type SessionEvent,
  type WorkerInbound,
  type WorkerOutbound,
  type WorkerRequest,
} from './protocol';
import { DeadlineScheduler } from './scheduler';
import { OpeningWavWriter, StereoWavWriter } from './wav-writer';

const PERIOD_MS = 20;

interface Entry {
  session: RtpSession;
  socket: dgram.Socket;
  port: number;
}

/**
 * The media worker: owns every RTP socket of the process and one deadline scheduler that steps
 * all sessions each 20 ms. Kept off the main thread so that database work, JSON and speech
 * recognition there never delay a packet.
 */
class MediaWorker {
  private readonly sessions = new Map<number, Entry>();
  private readonly pool: PortPool;
  private readonly scheduler: DeadlineScheduler;
  private nextSessionId = 1;
  private readonly eluStart = performance.eventLoopUtilization();
  private eluLast = this.eluStart;
  private tickWorkSum = 0;
  private tickWorkMax = 0;
  private tickCount = 0;
  private readonly totals = { sent: 0, received: 0, lost: 0 };

  constructor(
    private readonly port: MessagePort,
    private readonly options: MediaEngineOptions,
  ) {
    this.pool = new PortPool({
      min: options.rtpPortMin,
      max: options.rtpPortMax,
      bindAddress: options.bindAddress,
    });
    this.scheduler = new DeadlineScheduler((_tick, lateness) => this.tick(lateness >= PERIOD_MS), {
      periodMs: PERIOD_MS,
    });
    this.scheduler.start();
    port.on('message', (message: WorkerInbound) => {
      void this.handle(message);
    });
  }

  private post(message: WorkerOutbound, transfer?: ArrayBuffer[]) {
    this.port.postMessage(message, transfer);
  }

  private tick(late: boolean) {
    const started = performance.now();
    for (const entry of this.sessions.values()) entry.session.tick(started, late);
    const work = performance.now() - started;
    this.tickCount++;
    this.tickWorkSum += work;
    if (work > this.tickWorkMax) this.tickWorkMax = work;
  }

  private async handle(message: WorkerInbound) {
    try {
      const value = await this.dispatch(message, (result) =>
        this.post({ type: 'reply', id: message.id, ok: true, value: result }),
      );
      if (value !== DEFERRED) this.post({ type: 'reply', id: message.id, ok: true, value });
    } catch (err) {
      const code = err instanceof MediaError ? err.code : 'INTERNAL';
      this.post({
        type: 'reply',
        id: message.id,
        ok: false,
        error: { code, message: err instanceof Error ? err.message : String(err) },
      });
    }
  }

  private entry(sessionId: number): Entry {
    const entry = this.sessions.get(sessionId);
    if (!entry) throw new MediaError('NO_SUCH_SESSION', `no media session ${sessionId}`);
    return entry;
  }

  /** Returns the reply value, or DEFERRED when `reply` will be called later (playback, DTMF). */
  private async dispatch(request: WorkerRequest, reply: (value: unknown) => void): Promise<unknown> {
    const now = performance.now();
    switch (request.op) {
      case 'open':
        return this.open(request);
      case 'setRemote':
        this.entry(request.sessionId).session.setRemote(request.remote, now);
        return null;
      case 'setDirection':
        this.entry(request.sessionId).session.setDirection(request.direction, now);
        return null;
      case 'play':
        if (!(request.pcm instanceof Int16Array))
          throw new MediaError('BAD_ARGUMENT', 'play needs an Int16Array');
        this.entry(request.sessionId).session.play(request.pcm, reply);
        return DEFERRED;
      case 'stopPlayback':
        this.entry(request.sessionId).session.stopPlayback();
        return null;
      case 'sendDtmf':
        this.entry(request.sessionId).session.sendDtmf(String(request.digits), () => reply(null));
        return DEFERRED;
      case 'setForwardAudio':
        this.entry(request.sessionId).session.setForwardAudio(Boolean(request.on));
        return null;
      case 'bridge':
        this.entry(request.sessionId).session.bridge(this.entry(request.peerId).session);
        return null;
      case 'unbridge':
        this.entry(request.sessionId).session.unbridge();
        return null;
      case 'stopRecording':
        return this.entry(request.sessionId).session.stopRecording();
      case 'close':
        return this.close(request.sessionId);
      case 'stats':
        return this.stats();
      case 'shutdown':
        await Promise.all([...this.sessions.keys()].map((id) => this.close(id)));
        this.scheduler.stop();
        return null;
    }
  }

  private async open({
    callId,
    recordingPath,
    inactivityTimeoutMs,
  }: {
    callId: string;
    recordingPath?: string;
    inactivityTimeoutMs?: number;
  }) {
    const { port, socket } = await this.pool.allocate();
    // The file opens while the call is answered; a failure shows in the close result.
    const recorder = recordingPath ? new OpeningWavWriter(StereoWavWriter.open(recordingPath)) : null;
    const sessionId = this.nextSessionId++;
    const session = new RtpSession(
      {
        callId: String(callId),
        recorder,
        inactivityTimeoutMs: inactivityTimeoutMs ?? this.options.inactivityTimeoutMs,
        audioBatchMs: this.options.audioBatchMs,
        jitterDepth: this.options.jitterDepth,
      },
      (packet, toPort, address) => {
        // A send error (an unreachable far end) must not become an 'error' event that kills
        // the worker; the inactivity timer and the signalling notice a dead call.
        socket.send(packet, toPort, address, ignoreSendError);
      },
      (event: SessionEvent, transfer?: ArrayBuffer[]) =>
        this.post({ type: 'event', sessionId, event }, transfer),
    );
    socket.on('message', (datagram, rinfo) => {
      session.receive(datagram, rinfo.address, rinfo.port, performance.now());
    });
    socket.on('error', () => {});
    this.sessions.set(sessionId, { session, socket, port });
    return { sessionId, localPort: port };
  }

  private async close(sessionId: number) {
    const entry = this.entry(sessionId);
    this.sessions.delete(sessionId);
    const result = await entry.session.close();
    entry.socket.close();
    this.pool.release(entry.port);
    this.totals.sent += result.stats.sent;
    this.totals.received += result.stats.received;
    this.totals.lost += result.stats.lost;
    return result;
  }

  private stats(): MediaEngineStats {
    const elu = performance.eventLoopUtilization();
    const overall = performance.eventLoopUtilization(elu, this.eluStart);
    const recent = performance.eventLoopUtilization(elu, this.eluLast);
    this.eluLast = elu;
    const cpu = process.cpuUsage();
    const scheduler = this.scheduler.stats;
    let sent = this.totals.sent;
    let received = this.totals.received;
    let lost = this.totals.lost;
    let jitterSum = 0;
    let jitterMax = 0;
    let receiving = 0;
    for (const { session } of this.sessions.values()) {
      const stats = session.stats;
      sent += stats.sent;
      received += stats.received;
      lost += stats.lost;
      if (stats.received > 0) {
        receiving++;
        jitterSum += stats.jitterMs;
        jitterMax = Math.max(jitterMax, stats.jitterMs);
      }
    }
    return {
      sessions: this.sessions.size,
      portsInUse: this.pool.used,
      portCapacity: this.pool.capacity,
      ticks: scheduler.ticks,
      lateTicks: scheduler.lateTicks,
      latenessMeanMs: scheduler.latenessMeanMs,
      latenessP99Ms: scheduler.latenessP99Ms,
      latenessMaxMs: scheduler.latenessMaxMs,
      recentLatenessMaxMs: this.scheduler.takeWindowMaxMs(),
      tickWorkMeanMs: this.tickCount ? this.tickWorkSum / this.tickCount : 0,
      tickWorkMaxMs: this.tickWorkMax,
      eventLoopUtilization: overall.utilization,
      recentEventLoopUtilization: recent.utilization,
      processCpuUserMs: cpu.user / 1000,
      processCpuSystemMs: cpu.system / 1000,
      ...threadCpu(),
      rssBytes: process.memoryUsage.rss(),
      packetsSent: sent,
      packetsReceived: received,
      packetsLost: lost,
      jitterMeanMs: receiving ? jitterSum / receiving : 0,
      jitterMaxMs: jitterMax,
    };
  }
}

/** This thread's time on a CPU and waiting for one, in ms; read in the thread it describes. */
function threadCpu(): { workerCpuMs: number | null; workerWaitMs: number | null } {
  try {
    const [runNs, waitNs] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    if (Number.isFinite(runNs) && Number.isFinite(waitNs)) {
      return { workerCpuMs: (runNs as number) / 1e6, workerWaitMs: (waitNs as number) / 1e6 };
    }
  } catch {
    // Not Linux, or a kernel without scheduler statistics.
  }
  return { workerCpuMs: null, workerWaitMs: null };
}

const DEFERRED = Symbol('deferred');
const ignoreSendError = () => {};

if (parentPort && workerData?.kind === MEDIA_WORKER_KIND) {
  const port = parentPort;
  try {
    new MediaWorker(port, workerData.options as MediaEngineOptions);
    port.postMessage({ type: 'ready' } satisfies WorkerOutbound);
  } catch (err) {
    port.postMessage({
      type: 'failed',
      error: {
        code: err instanceof MediaError ? err.code : 'INTERNAL',
        message: err instanceof Error ? err.message : String(err),
      },
    } satisfies WorkerOutbound);
  }
}
