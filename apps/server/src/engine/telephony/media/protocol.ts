import type { G711Codec } from './g711';

/** The shapes the media worker and its main-thread facade exchange, and the public media types. */

/** Marks the worker's data, so importing the worker file anywhere else never starts a worker loop. */
export const MEDIA_WORKER_KIND = 'callpilot-media-worker';

export type MediaDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

export interface RemoteMedia {
  /** Where to send, from the far end's SDP (c= and m=); replaced by latching on the first packets. */
  address: string;
  port: number;
  codec: G711Codec;
  /** The audio payload type to send with, in the far end's numbering. */
  payloadType: number;
  /** The telephone-event payload type to send with; null or absent when DTMF was not agreed. */
  telephoneEventPt?: number | null;
  /**
   * The payload types of our own SDP, which the far end's packets carry (RFC 3264 lets the two
   * numberings differ, typically for telephone-event). Default: the same as for sending.
   */
  receivePayloadType?: number;
  receiveTelephoneEventPt?: number | null;
  /**
   * The packet time the far end asked for. Packets are sent every 20 ms whatever it says (a=ptime
   * is advice, RFC 4566 §6, and every G.711 endpoint takes 20 ms); received packets may be any length.
   */
  ptime?: number;
}

/**
 * What real lines forward caller audio in (engine default 80 ms): every frame as it is played
 * out. A batch waits for its last frame before the VAD hears any of it, and that wait is on every
 * reply's critical path; `npm run bench -- speech` measured 40 ms batches 17 ms slower at p95.
 */
export const LINE_AUDIO_BATCH_MS = 20;

export interface MediaEngineOptions {
  /** The RTP port range of this process (even ports only; RTCP is not used). */
  rtpPortMin: number;
  rtpPortMax: number;
  /** Local address the RTP sockets bind to. Default 0.0.0.0. */
  bindAddress?: string;
  /** `inactive` fires after this long without RTP while sendrecv. Default 30 s. */
  inactivityTimeoutMs?: number;
  /** Caller audio is forwarded in batches of this much (a multiple of 20 ms). Default 80 ms. */
  audioBatchMs?: number;
  /** Jitter buffer cushion in 20 ms packets. Default 3. */
  jitterDepth?: number;
}

export interface PlayOutcome {
  playedMs: number;
  /** stopPlayback() or close() cut it short (or it never started). */
  interrupted: boolean;
}

export interface MediaSessionStats {
  /** RTP packets sent (audio, silence and telephone events). */
  sent: number;
  /** Valid packets accepted from the far end. */
  received: number;
  /** Caller audio frames missing at their turn (played as silence). */
  lost: number;
  late: number;
  duplicates: number;
  /** RFC 3550 interarrival jitter of the caller's audio. */
  jitterMs: number;
  /** Ticks of this session that ran a full period or more behind their deadline. */
  lateTicks: number;
  /** Datagrams that were not RTP, or carried a payload type the SDP did not agree. */
  discarded: number;
  /** Packets from somewhere other than the latched source. */
  foreign: number;
  dtmfReceived: number;
}

export interface MediaSessionResult {
  /** The stereo WAV (caller left, assistant right), or null when none was asked for or it failed. */
  recordingPath: string | null;
  /** Media time from setRemote() to close(). */
  durationMs: number;
  stats: MediaSessionStats;
  /** Why the recording is missing or incomplete, if it is. */
  recordingError?: string;
}

/** The recording as stopRecording() left it: finalised, or why there is none. */
export interface StoppedRecording {
  recordingPath: string | null;
  recordingError?: string;
}

export interface MediaEngineStats {
  sessions: number;
  portsInUse: number;
  portCapacity: number;
  ticks: number;
  lateTicks: number;
  latenessMeanMs: number;
  latenessP99Ms: number;
  latenessMaxMs: number;
  /** The worst lateness since the previous stats() call. */
  recentLatenessMaxMs: number;
  /** Time one tick spends on every session (receive, decode, record, send). */
  tickWorkMeanMs: number;
  tickWorkMaxMs: number;
  /** Share of the worker thread's time spent busy since it started, 0-1 (one core is 1). */
  eventLoopUtilization: number;
  /** The same since the previous stats() call. */
  recentEventLoopUtilization: number;
  /** CPU time of the whole process: main thread, media worker and libuv's pool together. */
  processCpuUserMs: number;
  processCpuSystemMs: number;
  /**
   * CPU time of the media worker thread alone, and the time it sat runnable waiting for a core
   * (what a busy machine adds to tick lateness), from Linux's /proc/thread-self/schedstat;
   * null elsewhere (Node has no per-thread figure before v23).
   */
  workerCpuMs: number | null;
  workerWaitMs: number | null;
  rssBytes: number;
  packetsSent: number;
  packetsReceived: number;
  packetsLost: number;
  /** RFC 3550 interarrival jitter over the open sessions that receive audio. */
  jitterMeanMs: number;
  jitterMaxMs: number;
}

export interface LatchedInfo {
  address: string;
  port: number;
  /** What the SDP said, for logging a NAT in between. */
  sdpAddress: string;
  sdpPort: number;
}

export type SessionEvent =
  | { type: 'dtmf'; digit: string }
  | { type: 'audio'; pcm: Int16Array }
  | { type: 'inactive'; silentMs: number }
  | ({ type: 'latched' } & LatchedInfo);

export type WorkerRequest =
  | { op: 'open'; callId: string; recordingPath?: string; inactivityTimeoutMs?: number }
  | { op: 'setRemote'; sessionId: number; remote: RemoteMedia }
  | { op: 'setDirection'; sessionId: number; direction: MediaDirection }
  | { op: 'play'; sessionId: number; pcm: Int16Array }
  | { op: 'stopPlayback'; sessionId: number }
  | { op: 'sendDtmf'; sessionId: number; digits: string }
  | { op: 'setForwardAudio'; sessionId: number; on: boolean }
  | { op: 'bridge'; sessionId: number; peerId: number }
  | { op: 'unbridge'; sessionId: number }
  | { op: 'stopRecording'; sessionId: number }
  | { op: 'close'; sessionId: number }
  | { op: 'stats' }
  | { op: 'shutdown' };

export type WorkerInbound = WorkerRequest & { id: number };

export type WorkerOutbound =
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: { message: string; code: string } }
  | { type: 'event'; sessionId: number; event: SessionEvent }
  | { type: 'ready' }
  | { type: 'failed'; error: { message: string; code: string } };

export type MediaErrorCode =
  | 'RTP_PORTS_EXHAUSTED'
  | 'RECORDING_FAILED'
  | 'NO_SUCH_SESSION'
  | 'BAD_ARGUMENT'
  | 'WORKER_GONE'
  | 'INTERNAL';

export class MediaError extends Error {
  constructor(
    readonly code: MediaErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'MediaError';
  }
}
