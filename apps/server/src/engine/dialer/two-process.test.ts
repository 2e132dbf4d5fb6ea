import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, seedUser } from '../../../test/helpers';
import { type DatabaseHandle, openDatabase } from '../../db/client';
import { projectLimits } from '../../db/schema';
import { VirtualClock } from '../clock';
import { Dialer } from './dialer';
import type { DialJob } from './ports';
import {
  callsOf,
  contactsOf,
  fakeDial,
  insertContacts,
  insertTask,
  taskState,
  testDialerStore,
  testSettings,
  waitFor,
} from './test-support';

const onPg = process.env.TEST_DB === 'pg';
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

describe('two dialer processes on one PostgreSQL database', () => {
  // PGlite is one process with one connection: there is no second process to race with.
  it.skipIf(!onPg)(
    'dial one task together: no contact twice for one attempt, project cap held across both (TEST_DB=pg only)',
    async () => {
      const first = await createTestDatabase();
      cleanup.push(() => first.close());
      // A second, independent connection pool to the same database: what another server process has.
      const url = new URL(process.env.TEST_DATABASE_URL!);
      const result = (await first.db.execute(sql`select current_database() as name`)) as unknown as {
        rows: Array<{ name: string }>;
      };
      url.pathname = `/${result.rows[0]!.name}`;
      const second: DatabaseHandle = await openDatabase({
        kind: 'postgres',
        url: url.toString(),
        poolSize: 4,
      });
      cleanup.push(() => second.close());

      const { projectId } = await seedUser(first.db, { email: 'two@example.com' });
      await first.db
        .update(projectLimits)
        .set({ hasBalance: true, balanceFen: 100_000, concurrentCallout: 6 })
        .where(sql`${projectLimits.projectId} = ${projectId}`);
      const taskId = await insertTask(
        first.db,
        projectId,
        testSettings({ concurrency: 10, retryRules: { no_answer: { maxRetries: 1, intervalMinutes: 2 } } }),
      );
      await insertContacts(first.db, projectId, taskId, 60);

      const clock = new VirtualClock({ startAt: Date.parse('2026-03-02T09:00:00+08:00') });
      cleanup.push(clock.autoAdvance());
      let n = 0;
      const fake = fakeDial(first.db, clock, () => ({
        endReason: n++ % 4 === 0 ? 'no_answer' : 'completed',
        durationMs: 20_000 + (n % 5) * 4000,
      }));
      const byProcess = new Map<string, number>();
      const dialers = ['A', 'B'].map((processId, i) => {
        const dialer = new Dialer({
          store: testDialerStore(i === 0 ? first : second),
          clock,
          processId,
          // Ticks interleave; a short tick makes the two race for the same rows as often as possible.
          tickMs: 200,
          dial: (job: DialJob) => {
            byProcess.set(processId, (byProcess.get(processId) ?? 0) + 1);
            return fake.dial(job);
          },
        });
        dialer.start();
        cleanup.push(() => dialer.kill());
        return dialer;
      });
      await waitFor(
        async () => (await taskState(first.db, taskId)) === 'completed',
        60_000,
        'the task to complete',
      );
      await Promise.all(dialers.map((d) => d.idle()));

      expect(new Set(fake.stats.dialled).size).toBe(fake.stats.dialled.length);
      expect(fake.stats.peakAll).toBeLessThanOrEqual(6);
      expect(fake.stats.peakAll).toBeGreaterThanOrEqual(5);
      // Both processes took part.
      expect(byProcess.get('A')).toBeGreaterThan(5);
      expect(byProcess.get('B')).toBeGreaterThan(5);
      const calls = await callsOf(first.db, taskId);
      for (const contact of await contactsOf(first.db, taskId)) {
        expect(['done', 'failed']).toContain(contact.status);
        expect(contact.attempts).toBeLessThanOrEqual(2);
        const own = calls.filter((c) => c.contactId === contact.id).map((c) => c.id);
        expect(own.sort()).toEqual(
          Array.from({ length: contact.attempts }, (_, i) => `${contact.id}.${i + 1}`),
        );
      }
    },
    90_000,
  );
});
