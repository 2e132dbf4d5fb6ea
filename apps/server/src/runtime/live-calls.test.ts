import { describe, expect, it } from 'vitest';
import type { CallRepository } from '../modules/calls/call-repository';
import { LiveCalls } from './live-calls';

describe('live calls', () => {
  it('names the project of a call while it runs here, and forgets it when it ends', async () => {
    // Not started: no lease renewals, no relay, so no repository is needed.
    const live = new LiveCalls({} as CallRepository, () => {});
    let end!: () => void;
    const running = new Promise<void>((resolve) => {
      end = resolve;
    });
    live.add('call-1', { projectId: 'p-1', direction: 'outbound', hangUp: () => {} }, running);
    expect(live.projectOf('call-1')).toBe('p-1');
    expect(live.projectOf('call-2')).toBeNull();
    expect(live.inFlight()).toEqual({ inbound: 0, outbound: 1 });
    end();
    await running;
    await new Promise((resolve) => setImmediate(resolve));
    expect(live.projectOf('call-1')).toBeNull();
    expect(live.inFlight()).toEqual({ inbound: 0, outbound: 0 });
  });
});
