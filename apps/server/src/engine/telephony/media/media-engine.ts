import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import {
  type LatchedInfo,
  MEDIA_WORKER_KIND,
  type MediaDirection,
  type MediaEngineOptions,
  type MediaEngineStats,
  MediaError,
  type MediaErrorCode,
  type MediaSessionResult,
  type PlayOutcome,
  type RemoteMedia,
  type StoppedRecording,
  type WorkerOutbound,
  type WorkerRequest,
} from './protocol';

export type {
  LatchedInfo,
  MediaDirection,
  MediaEngineOptions,
  MediaEngineStats,
  MediaSessionResult,
  PlayOutcome,
  RemoteMedia,
  StoppedRecording,
};
export { MediaError };

/**
 * Where the worker's code is. The production bundle builds `media-worker.js` next to `main.js`
 * (apps/server/build.mjs). Running from TypeScript source (tests, tsx), a worker gets no loader
 * from its parent and Node 20 cannot install ESM hooks inside one, so the worker registers tsx's
 * require hook itself and loads the `.ts` file through it.
 */
function createWorker(options: MediaEngineOptions): Worker {
  const workerData = { kind: MEDIA_WORKER_KIND, options };
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL('./media-worker.js', import.meta.url), { workerData });
  }
  const tsx = createRequire(import.meta.url).resolve('tsx/cjs/api');
  const entry = fileURLToPath(new URL('./media-worker.ts', import.meta.url));
  const source = `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry)});`;
  return new Worker(source, { eval: true, workerData });
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

export interface MediaSessionEvents {
  /** A key the far end pressed (RFC 4733), once per press. */
  dtmf: [digit: string];
  /** The caller's decoded audio (8 kHz mono, in order, silence for lost packets); only while forwarded. */
  audio: [pcm: Int16Array];
  /** No RTP from the far end for the configured time while sendrecv. */
  inactive: [info: { silentMs: number }];
  /** The far end's packets came from this address; replies go there from now on. */
  latched: [info: LatchedInfo];
}

/**
 * The media of one call, as the SIP user agent drives it: open, learn the far end from its
 * SDP (again on re-INVITE), play, listen, press keys, close.
 */
export class MediaSession extends EventEmitter<MediaSessionEvents> {
  private closing: Promise<MediaSessionResult> | null = null;

  constructor(
    private readonly engine: MediaEngine,
    readonly sessionId: number,
    readonly callId: string,
    /** The local RTP port to put in our SDP. */
    readonly localPort: number,
  ) {
    super();
  }

  async setRemote(remote: RemoteMedia): Promise<void> {
    await this.call({ op: 'setRemote', sessionId: this.sessionId, remote });
  }

  /** Our direction as our SDP states it: hold is sendonly (or inactive), and then nothing is expected. */
  async setDirection(direction: MediaDirection): Promise<void> {
    await this.call({ op: 'setDirection', sessionId: this.sessionId, direction });
  }

  /**
   * Queues 8 kHz mono 16-bit speech, sent one 20 ms packet per tick after what is already
   * queued; resolves when it was sent in full or cut short. Sending pauses while on hold.
   */
  play(pcm: Int16Array): Promise<PlayOutcome> {
    return this.call({ op: 'play', sessionId: this.sessionId, pcm }) as Promise<PlayOutcome>;
  }

  /** Barge-in: the next tick (within 20 ms) already sends silence; pending play() calls resolve interrupted. */
  async stopPlayback(): Promise<void> {
    await this.call({ op: 'stopPlayback', sessionId: this.sessionId });
  }

  /** Sends RFC 4733 events for `digits` (0-9 * # A-D); resolves once the last one ended. */
  async sendDtmf(digits: string): Promise<void> {
    await this.call({ op: 'sendDtmf', sessionId: this.sessionId, digits });
  }

  /** Turns the `audio` events on (for speech recognition) or off. */
  async setForwardAudio(on: boolean): Promise<void> {
    await this.call({ op: 'setForwardAudio', sessionId: this.sessionId, on });
  }

  /**
   * Finalises the recording now (the file is complete once this resolves); the media goes on
   * unrecorded. close() reports the same file. Used when a transfer bridges the caller to a
   * second leg: the assistant's call ends there, and so does its recording.
   */
  stopRecording(): Promise<StoppedRecording> {
    return this.call({ op: 'stopRecording', sessionId: this.sessionId }) as Promise<StoppedRecording>;
  }

  /** Ends a bridge made by MediaEngine.bridge(), on both sessions. Closing either ends it too. */
  async unbridge(): Promise<void> {
    await this.call({ op: 'unbridge', sessionId: this.sessionId });
  }

  /** Stops the media, frees the port and finalises the recording. Safe to call twice. */
  close(): Promise<MediaSessionResult> {
    this.closing ??= (
      this.call({ op: 'close', sessionId: this.sessionId }) as Promise<MediaSessionResult>
    ).finally(() => this.engine.forget(this.sessionId));
    return this.closing;
  }

  private call(request: WorkerRequest): Promise<unknown> {
    if (this.closing && request.op !== 'close') {
      return Promise.reject(new MediaError('NO_SUCH_SESSION', `media session of ${this.callId} is closed`));
    }
    return this.engine.request(request);
  }
}

export interface MediaEngineEvents {
  /** The worker died; every session of this engine is gone. */
  error: [err: Error];
}

/**
 * One media worker thread per process, owning the process's RTP port range. The SIP adapter
 * creates one at start-up and opens a session per call. Like a database pool it keeps the
 * process alive until close().
 */
export class MediaEngine extends EventEmitter<MediaEngineEvents> {
  private readonly pending = new Map<number, Pending>();
  private readonly sessions = new Map<number, MediaSession>();
  private nextRequestId = 1;
  private gone: Error | null = null;

  private constructor(private readonly worker: Worker) {
    super();
    worker.on('message', (message: WorkerOutbound) => this.onMessage(message));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) =>
      this.fail(new MediaError('WORKER_GONE', `media worker exited (code ${code})`)),
    );
  }

  static async start(options: MediaEngineOptions): Promise<MediaEngine> {
    const worker = createWorker(options);
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: WorkerOutbound) => {
        if (message.type === 'ready') {
          cleanup();
          resolve();
        } else if (message.type === 'failed') {
          cleanup();
          void worker.terminate();
          reject(new MediaError(message.error.code as MediaErrorCode, message.error.message));
        }
      };
      const onError = (err: Error) => {
        cleanup();
        reject(err);
      };
      const cleanup = () => {
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
    });
    return new MediaEngine(worker);
  }

  /**
   * Allocates an RTP port for one call, and starts its recording when asked. The recording file
   * opens in the background (a busy disk must not hold up the 200 OK); if it cannot be written,
   * the call goes on and close() says why in `recordingError`.
   */
  async open(options: {
    callId: string;
    /** Where to write the call's stereo WAV (caller left, assistant right); none when absent. */
    recordingPath?: string;
    /** Overrides the engine's inactivity timeout for this call. */
    inactivityTimeoutMs?: number;
  }): Promise<MediaSession> {
    const { sessionId, localPort } = (await this.request({
      op: 'open',
      callId: options.callId,
      recordingPath: options.recordingPath,
      inactivityTimeoutMs: options.inactivityTimeoutMs,
    })) as { sessionId: number; localPort: number };
    const session = new MediaSession(this, sessionId, options.callId, localPort);
    this.sessions.set(sessionId, session);
    return session;
  }

  /**
   * Joins two open sessions of this engine: each sends the other's received audio (after its
   * jitter buffer; G.711 is decoded and re-encoded, so PCMA and PCMU meet), RFC 4733 keys cross
   * where the other side agreed telephone-event, and speech still queued on either is dropped.
   * While bridged neither forwards `audio` or `dtmf` events (nobody is listening for the
   * assistant any more); `inactive` still fires. Ends with unbridge() or close() of either.
   */
  async bridge(a: MediaSession, b: MediaSession): Promise<void> {
    await this.request({ op: 'bridge', sessionId: a.sessionId, peerId: b.sessionId });
  }

  stats(): Promise<MediaEngineStats> {
    return this.request({ op: 'stats' }) as Promise<MediaEngineStats>;
  }

  /** Closes every session (recordings are finalised) and stops the worker. */
  async close(): Promise<void> {
    if (this.gone) return;
    await this.request({ op: 'shutdown' });
    this.gone = new MediaError('WORKER_GONE', 'media engine closed');
    await this.worker.terminate();
  }

  /** @internal */
  request(request: WorkerRequest): Promise<unknown> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextRequestId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id });
    });
  }

  /** @internal */
  forget(sessionId: number): void {
    this.sessions.delete(sessionId);
  }

  private onMessage(message: WorkerOutbound) {
    if (message.type === 'reply') {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.ok) pending.resolve(message.value);
      else pending.reject(new MediaError(message.error.code as MediaErrorCode, message.error.message));
      return;
    }
    if (message.type !== 'event') return;
    const session = this.sessions.get(message.sessionId);
    if (!session) return;
    const event = message.event;
    switch (event.type) {
      case 'dtmf':
        session.emit('dtmf', event.digit);
        break;
      case 'audio':
        session.emit('audio', event.pcm);
        break;
      case 'inactive':
        session.emit('inactive', { silentMs: event.silentMs });
        break;
      case 'latched': {
        const { type: _type, ...info } = event;
        session.emit('latched', info);
        break;
      }
    }
  }

  private fail(err: Error) {
    if (this.gone) return;
    this.gone =
      err instanceof MediaError ? err : new MediaError('WORKER_GONE', `media worker failed: ${err.message}`);
    for (const pending of this.pending.values()) pending.reject(this.gone);
    this.pending.clear();
    this.sessions.clear();
    if (this.listenerCount('error') > 0) this.emit('error', this.gone);
  }
}
