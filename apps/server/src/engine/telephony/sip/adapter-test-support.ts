import { systemClock } from '../../clock';
import { loadVad, type Vad } from '../../speech/vad';
import { MediaEngine } from '../media/media-engine';
import { createSipAdapter, type LegMedia, type SipAdapter } from './sip-adapter';
import { freePortRange, LOOPBACK, PORT_BANDS } from './sipp-test-support';
import { createSipStack, type SipStack, type SipStackOptions } from './stack';

export interface LoopbackAdapter {
  stack: SipStack;
  engine: MediaEngine;
  vad: Vad;
  adapter: SipAdapter;
  close(): Promise<void>;
}

/**
 * Tests only: the SIP adapter as a worker runs it, on loopback: a UDP SIP stack on a port the
 * kernel picks, a media worker on a free RTP range, real VAD. `close` stops all three.
 */
export async function startLoopbackAdapter(options: {
  /** RFC 3261 timers, shortened so transactions end within a test. */
  timers: Pick<SipStackOptions, 't1' | 't2' | 't4' | 'timerD'>;
  rtpPorts: number;
  recordingDir: string;
  defaultMedia: () => LegMedia;
}): Promise<LoopbackAdapter> {
  const stack = await createSipStack({ host: LOOPBACK, port: 0, protocols: ['udp'], ...options.timers });
  let engine: MediaEngine | undefined;
  let vad: Vad;
  try {
    const rtpBase = await freePortRange(options.rtpPorts, { band: PORT_BANDS.rtp });
    engine = await MediaEngine.start({
      rtpPortMin: rtpBase,
      rtpPortMax: rtpBase + options.rtpPorts - 1,
      bindAddress: LOOPBACK,
    });
    vad = await loadVad();
  } catch (error) {
    await engine?.close();
    await stack.close();
    throw error;
  }
  const media = engine;
  const adapter = createSipAdapter({
    stack,
    media,
    vad,
    clock: systemClock,
    mediaAddress: LOOPBACK,
    recordingDir: options.recordingDir,
    defaultMedia: options.defaultMedia,
  });
  return {
    stack,
    engine: media,
    vad,
    adapter,
    async close() {
      await adapter.close();
      await media.close();
      await stack.close();
    },
  };
}
