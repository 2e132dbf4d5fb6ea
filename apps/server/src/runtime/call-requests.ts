import type {
  FlowTestCallRequest,
  SimPersona,
  TestCallRequest,
  TestInboundCallRequest,
} from '@callpilot/contracts';
import { eq, sql } from 'drizzle-orm';
import type { Database, DatabaseHandle } from '../db/client';
import { callRequests } from '../db/schema';
import { type Relay, startRelay } from '../lib/relay';

/**
 * A single call the open API asked for (POST /opendock/v1/calls), already checked by the process
 * that took the request: the assistant's published version resolved, the numbers normalised.
 */
export interface ApiCallPayload {
  assistantId: string;
  version: number;
  callerNumber: string;
  calleeNumber: string;
  variables: Record<string, string>;
  /** The simulated carrier's callee; absent: the carrier's realistic mix (or a real line). */
  persona?: SimPersona;
}

export type CallRequest =
  | { id: string; projectId: string; kind: 'test'; payload: TestCallRequest }
  | { id: string; projectId: string; kind: 'inbound_test'; payload: TestInboundCallRequest }
  | { id: string; projectId: string; kind: 'flow_test'; payload: FlowTestCallRequest & { flowId: string } }
  | { id: string; projectId: string; kind: 'api_call'; payload: ApiCallPayload };

const POLL_MS = 2000;

/**
 * Calls asked for by a process without the engine (ROLE=api), run by the first engine process
 * (ROLE=worker or all) that claims them. A NOTIFY wakes the engines at once; they also poll, so a
 * request made while none listened is still taken.
 */
export class CallRequestQueue {
  private relay: Relay | null = null;
  private timer: NodeJS.Timeout | null = null;
  private draining: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Engine side: run each claimed request. */
  async serve(
    database: Pick<DatabaseHandle, 'kind' | 'listen' | 'notify'>,
    run: (request: CallRequest) => Promise<void>,
  ): Promise<void> {
    const drain = () => {
      if (this.stopped || this.draining) return;
      this.draining = (async () => {
        for (;;) {
          const request = await this.claim();
          if (!request) return;
          run(request).catch(this.onError);
        }
      })()
        .catch(this.onError)
        .finally(() => {
          this.draining = null;
        });
    };
    this.relay = await startRelay(database, 'call_requests', drain, this.onError);
    this.timer = setInterval(drain, POLL_MS);
    this.timer.unref();
    drain();
  }

  /** API side. */
  async connect(database: Pick<DatabaseHandle, 'kind' | 'listen' | 'notify'>): Promise<void> {
    this.relay = await startRelay(database, 'call_requests', () => {}, this.onError);
  }

  async submit(request: CallRequest): Promise<void> {
    await this.db.insert(callRequests).values(request);
    this.relay?.send(request.id);
  }

  /** Takes a request back if no engine claimed it yet; false when one did. */
  async withdraw(id: string): Promise<boolean> {
    const rows = await this.db
      .delete(callRequests)
      .where(eq(callRequests.id, id))
      .returning({ id: callRequests.id });
    return rows.length > 0;
  }

  private async claim(): Promise<CallRequest | null> {
    const rows = await this.db
      .delete(callRequests)
      .where(
        eq(
          callRequests.id,
          sql`(select ${callRequests.id} from ${callRequests} order by ${callRequests.createdAt} limit 1 for update skip locked)`,
        ),
      )
      .returning();
    const row = rows[0];
    return row
      ? ({ id: row.id, projectId: row.projectId, kind: row.kind, payload: row.payload } as CallRequest)
      : null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.relay?.stop();
    await this.draining?.catch(() => {});
  }
}
