/**
 * The audio of one synthesis as the vendor's socket delivers it, handed to the caller's
 * `for await` in order. Vendors send 16-bit little-endian PCM in frames of any byte length, so
 * an odd frame leaves half a sample behind: it is kept and joined to the next frame's first byte.
 */
export class PcmChunks {
  private readonly ready: Int16Array[] = [];
  /** The low byte of a sample whose high byte is still on the wire. */
  private carry: number | undefined;
  private state: { kind: 'open' } | { kind: 'ended' } | { kind: 'failed'; error: unknown } = {
    kind: 'open',
  };
  private wake: (() => void) | undefined;
  /** Bytes taken in so far (the half sample in `carry` included). */
  bytes = 0;

  get open(): boolean {
    return this.state.kind === 'open';
  }

  push(data: Uint8Array): void {
    if (this.state.kind !== 'open' || data.length === 0) return;
    this.bytes += data.length;
    let at = 0;
    const samples = new Int16Array((data.length + (this.carry === undefined ? 0 : 1)) >> 1);
    let n = 0;
    if (this.carry !== undefined) {
      samples[n++] = ((data[0] as number) << 8) | this.carry;
      at = 1;
      this.carry = undefined;
    }
    for (; at + 1 < data.length; at += 2) {
      samples[n++] = ((data[at + 1] as number) << 8) | (data[at] as number);
    }
    if (at < data.length) this.carry = data[at];
    if (n > 0) this.ready.push(samples.subarray(0, n));
    this.kick();
  }

  /** The vendor finished: what is queued is still handed out, then the iteration ends. */
  end(): void {
    if (this.state.kind !== 'open') return;
    this.state = { kind: 'ended' };
    this.kick();
  }

  /** The synthesis failed: queued audio is dropped and the iteration throws `error`. */
  fail(error: unknown): void {
    if (this.state.kind !== 'open') return;
    this.state = { kind: 'failed', error };
    this.ready.length = 0;
    this.kick();
  }

  /** Barge-in or hang-up: nothing more is handed out and the iteration ends without an error. */
  stop(): void {
    if (this.state.kind === 'failed') return;
    this.state = { kind: 'ended' };
    this.ready.length = 0;
    this.kick();
  }

  async *drain(): AsyncGenerator<Int16Array> {
    for (;;) {
      const next = this.ready.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.state.kind === 'failed') throw this.state.error;
      if (this.state.kind === 'ended') return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private kick() {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
