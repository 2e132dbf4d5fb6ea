import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from '../db/client';
import { type Relay, startRelay } from '../lib/relay';
import { CALL_LEASE_MS, type CallRepository } from '../modules/calls/call-repository';

interface LiveCall {
  projectId: string;
  direction: 'inbound' | 'outbound';
  /** 挂断 from the console: the simulated party hangs up, or a ringing call is cancelled. */
  hangUp: () => void;
}

/** How long a 挂断 asked of another process waits for that process to say it has the call. */
const HANGUP_ACK_MS = 3000;

/**
 * The calls this process is running. It renews their leases (so the one orphan rule knows they
 * are alive), and carries 挂断 to whichever process runs a call: locally at once, otherwise over
 * LISTEN/NOTIFY, answered by the process that has it.
 */
export class LiveCalls {
  private readonly calls = new Map<string, LiveCall>();
  private readonly waiting = new Map<string, (found: boolean) => void>();
  private relay: Relay | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly repository: CallRepository,
    private readonly onError: (err: unknown) => void,
  ) {}

  async start(database: Pick<DatabaseHandle, 'kind' | 'listen' | 'notify'>): Promise<void> {
    this.relay = await startRelay(
      database,
      'call_control',
      (payload) => {
        const [verb, id, ref] = payload.split(' ');
        if (verb === 'hangup' && id && ref && this.hangUpHere(id)) this.relay?.send(`ack ${ref}`);
        if (verb === 'ack' && id) this.waiting.get(id)?.(true);
      },
      this.onError,
    );
    // Renewed three times per lease: one slow renewal never makes a live call look orphaned.
    this.timer = setInterval(() => {
      this.repository.renewLeases([...this.calls.keys()]).catch(this.onError);
    }, CALL_LEASE_MS / 3);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.relay?.stop();
    this.relay = null;
    for (const resolve of this.waiting.values()) resolve(false);
  }

  /** Tracks a call while `running` lasts. */
  add(callId: string, call: LiveCall, running: Promise<unknown>): void {
    this.calls.set(callId, call);
    void running.finally(() => this.calls.delete(callId)).catch(() => {});
  }

  /** The project of a call running here, for log lines that know only the call. */
  projectOf(callId: string): string | null {
    return this.calls.get(callId)?.projectId ?? null;
  }

  /** Calls running here now by direction (the in-flight gauge reads this at each scrape). */
  inFlight(): Record<'inbound' | 'outbound', number> {
    const counts = { inbound: 0, outbound: 0 };
    for (const call of this.calls.values()) counts[call.direction]++;
    return counts;
  }

  private hangUpHere(callId: string): boolean {
    const call = this.calls.get(callId);
    if (!call) return false;
    call.hangUp();
    return true;
  }

  /** 挂断 wherever the call runs; false when no process has it. */
  async hangUp(callId: string): Promise<boolean> {
    if (this.hangUpHere(callId)) return true;
    const relay = this.relay;
    if (!relay) return false;
    const ref = randomUUID();
    const found = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), HANGUP_ACK_MS);
      this.waiting.set(ref, (value) => {
        clearTimeout(timer);
        resolve(value);
      });
    });
    relay.send(`hangup ${callId} ${ref}`);
    try {
      return await found;
    } finally {
      this.waiting.delete(ref);
    }
  }
}
