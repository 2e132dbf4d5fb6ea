import { and, asc, eq, lte, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import {
  callStatsDirty,
  callStatsHourly,
  calls,
  knowledgeSegmentHitsHourly,
  knowledgeStatsHourly,
} from '../../db/schema';
import { recomputeHour } from './rollup';
import { PROJECT_TOTAL } from './rollup-knowledge';

/** Calls end in bursts (a task's batch, a busy hour): a fresh mark waits this long for its neighbours. */
const DEBOUNCE_MS = 2_000;
const POLL_MS = 5_000;
/** Project-hours recomputed per pass before the worker yields. */
const BATCH = 50;

export interface RollupWorkerOptions {
  log?: { warn: (obj: object, msg: string) => void };
  debounceMs?: number;
  pollMs?: number;
}

/**
 * Keeps the report rollups current: claims dirty project-hours (SKIP LOCKED, so several engine
 * processes on one PostgreSQL share the work) and recomputes each in its own transaction. Runs
 * where the engine runs; woken by the call repository's marks and by a poll for other processes'.
 */
export class RollupWorker {
  private timer: NodeJS.Timeout | null = null;
  private dueAt = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;

  constructor(
    private readonly db: Database,
    private readonly options: RollupWorkerOptions = {},
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await markMissingHours(this.db);
    this.schedule(0);
  }

  /** A mark was made in this process: run once its debounce has passed. */
  wake(): void {
    if (!this.stopped) this.schedule(this.options.debounceMs ?? DEBOUNCE_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Runs in `ms` unless a run is already due sooner: a steady stream of marks must not starve it. */
  private schedule(ms: number) {
    const due = Date.now() + ms;
    if (this.timer && this.dueAt <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.dueAt = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.kick();
    }, ms);
    this.timer.unref();
  }

  private kick(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          while (
            !this.stopped &&
            (await processDirty(this.db, this.options.debounceMs ?? DEBOUNCE_MS, BATCH)) > 0
          );
        } while (this.again && !this.stopped);
      } catch (err) {
        this.options.log?.warn({ err }, 'report rollup failed');
      } finally {
        this.running = null;
        if (!this.stopped) this.schedule(this.options.pollMs ?? POLL_MS);
      }
    })();
    return this.running;
  }
}

/**
 * Recomputes up to `limit` dirty project-hours marked at least `debounceMs` ago, each in one
 * transaction that holds its mark's row lock (a mark made meanwhile waits, then marks again).
 * Returns how many it did. Tests call it with debounce 0 to settle the rollups.
 */
export async function processDirty(
  db: Database,
  debounceMs = 0,
  limit = Number.POSITIVE_INFINITY,
): Promise<number> {
  let done = 0;
  while (done < limit) {
    const did = await db.transaction(async (tx) => {
      const [mark] = await tx
        .select()
        .from(callStatsDirty)
        .where(lte(callStatsDirty.markedAt, sql`now() - make_interval(secs => ${debounceMs / 1000})`))
        .orderBy(asc(callStatsDirty.markedAt))
        .limit(1)
        .for('update', { skipLocked: true });
      if (!mark) return false;
      await recomputeHour(tx, mark.projectId, mark.hour);
      await tx
        .delete(callStatsDirty)
        .where(and(eq(callStatsDirty.projectId, mark.projectId), eq(callStatsDirty.hour, mark.hour)));
      return true;
    });
    if (!did) break;
    done += 1;
  }
  return done;
}

/**
 * Marks the hours that have ended calls but no rollup and no mark: an upgrade from a version
 * without reports, or history written around the repository (the demo's). Also the hours whose
 * knowledge rollup predates the project's own row (PROJECT_TOTAL), which the knowledge figures read,
 * or its segment hits.
 */
export async function markMissingHours(db: Database, projectId?: string): Promise<void> {
  const hour = sql`date_trunc('hour', ${calls.startedAt} at time zone 'UTC') at time zone 'UTC'`;
  await db.execute(sql`
    insert into ${callStatsDirty} (project_id, hour)
    select distinct ${calls.projectId}, ${hour} from ${calls}
    where ${calls.status} = 'ended'
      ${projectId ? sql`and ${calls.projectId} = ${projectId}` : sql``}
      and not exists (
        select 1 from ${callStatsHourly} h where h.project_id = ${calls.projectId} and h.hour = ${hour}
      )
    on conflict do nothing
  `);
  await db.execute(sql`
    insert into ${callStatsDirty} (project_id, hour)
    select distinct k.project_id, k.hour from ${knowledgeStatsHourly} k
    where k.knowledge_base_id <> ${PROJECT_TOTAL}
      ${projectId ? sql`and k.project_id = ${projectId}` : sql``}
      and not exists (
        select 1 from ${knowledgeStatsHourly} p
        where p.project_id = k.project_id and p.hour = k.hour and p.knowledge_base_id = ${PROJECT_TOTAL}
      )
    on conflict do nothing
  `);
  // Hours whose answers predate the segment-hit rollup (常用分段).
  await db.execute(sql`
    insert into ${callStatsDirty} (project_id, hour)
    select distinct k.project_id, k.hour from ${knowledgeStatsHourly} k
    where k.knowledge_base_id = ${PROJECT_TOTAL} and k.hits > 0
      ${projectId ? sql`and k.project_id = ${projectId}` : sql``}
      and not exists (
        select 1 from ${knowledgeSegmentHitsHourly} s where s.project_id = k.project_id and s.hour = k.hour
      )
    on conflict do nothing
  `);
}

/** Marks every hour with calls (tests' rebuild, an operator's repair). */
export async function markAllHours(db: Database, projectId: string): Promise<void> {
  await db.execute(sql`
    insert into ${callStatsDirty} (project_id, hour)
    select distinct ${calls.projectId}, date_trunc('hour', ${calls.startedAt} at time zone 'UTC') at time zone 'UTC'
    from ${calls} where ${calls.projectId} = ${projectId}
    on conflict (project_id, hour) do update set marked_at = now()
  `);
}
