import type { CallEvent } from '@callpilot/contracts';

type Listener = (event: CallEvent) => void;

export const callIdOf = (event: CallEvent) => ('call' in event ? event.call.id : event.callId);

/**
 * Live call events of this process, per project. The SSE endpoint subscribes here; later
 * issues hang webhooks and SMS follow-up on the same events. Calls run in the process that
 * serves the console today; when workers run elsewhere they will relay through LISTEN/NOTIFY.
 */
export class CallEventHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Set by the runtime when other processes must hear this one's events (see lib/relay.ts). */
  relay: ((projectId: string, event: CallEvent) => void) | null = null;

  publish(projectId: string, event: CallEvent): void {
    this.relay?.(projectId, event);
    this.deliver(projectId, event);
  }

  /** To this process's subscribers only: events relayed from another process arrive here. */
  deliver(projectId: string, event: CallEvent): void {
    for (const listener of this.listeners.get(projectId) ?? []) {
      try {
        listener(event);
      } catch {
        // One broken subscriber (a closed socket) must not stop the call or the others.
      }
    }
  }

  /** Subscribes to a project's events, or one call's; returns the unsubscribe function. */
  subscribe(projectId: string, listener: Listener, callId?: string): () => void {
    const wrapped: Listener = callId ? (e) => callIdOf(e) === callId && listener(e) : listener;
    const set = this.listeners.get(projectId) ?? new Set<Listener>();
    this.listeners.set(projectId, set);
    set.add(wrapped);
    return () => {
      set.delete(wrapped);
      if (set.size === 0) this.listeners.delete(projectId);
    };
  }

  listenerCount(projectId: string): number {
    return this.listeners.get(projectId)?.size ?? 0;
  }
}
