import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from '../db/client';

export interface Relay {
  /** Tells every other process; this one handles its own events directly. */
  send(payload: string): void;
  stop(): Promise<void>;
}

const SEPARATOR = '\u0001';

/**
 * Fans live events out to the other server processes through Postgres LISTEN/NOTIFY, so a
 * console connected to one process sees calls dialled by another. The embedded database is one
 * process by construction, so there it is a no-op and costs no queries.
 */
export async function startRelay(
  database: Pick<DatabaseHandle, 'kind' | 'listen' | 'notify'>,
  channel: string,
  onRemote: (payload: string) => void,
  onError: (err: unknown) => void = () => {},
): Promise<Relay> {
  if (database.kind !== 'postgres') return { send() {}, stop: async () => {} };
  const origin = randomUUID();
  const unlisten = await database.listen(channel, (message) => {
    const at = message.indexOf(SEPARATOR);
    if (at < 0 || message.slice(0, at) === origin) return;
    try {
      onRemote(message.slice(at + 1));
    } catch (err) {
      onError(err);
    }
  });
  let stopped = false;
  // One at a time: two NOTIFYs on two pooled connections may commit, and arrive, in either order.
  let queue = Promise.resolve();
  return {
    send(payload) {
      if (stopped) return;
      // NOTIFY payloads are limited to 8,000 bytes: callers send references, not documents.
      queue = queue.then(() => database.notify(channel, `${origin}${SEPARATOR}${payload}`)).catch(onError);
    },
    async stop() {
      stopped = true;
      await unlisten().catch(onError);
    },
  };
}
