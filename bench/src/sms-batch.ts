// Issue #18 budget (批量发送): a 100,000-row list uploaded and committed — parsed, previewed (phone
// check, do-not-disturb, daily cap, every text composed) and every accepted row queued as an SMS
// record — in ≤ 30 s, on PGlite and on PostgreSQL. The baseline is the task contact import of the
// same file in the same run (parse, preview, commit), the bulk path the batch reuses. Both run
// in-process on the service functions the routes call, so only the work itself is measured.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is the SMS template variable syntax.
import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { and, count, eq } from 'drizzle-orm';
import { type DatabaseHandle, openDatabase } from '../../apps/server/src/db/client';
import {
  callTasks,
  projects,
  smsMessages,
  smsSignatures,
  smsTemplates,
} from '../../apps/server/src/db/schema';
import { commitBatchUpload, createBatchUpload } from '../../apps/server/src/modules/sms/sms-batches.service';
import { parseContactFile } from '../../apps/server/src/modules/tasks/import-parse';
import { commitImport, createImport } from '../../apps/server/src/modules/tasks/import-staging';
import { startPostgres } from './lib/pg';
import { type Scope, tempDir, withScope } from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtRatio, skipped, table } from './lib/report';

const ROWS = 100_000;
const BUDGET_MS = 30_000;
/** 10:00 China time: a notification template is queued at once whatever the hour, this keeps it fixed. */
const NOW = new Date('2026-11-24T02:00:00.000Z');

/** 100,000 distinct mobile numbers, a name and an amount: both flows read the same bytes. */
function listFile(): Buffer {
  const lines = ['手机号,姓名,金额'];
  for (let i = 0; i < ROWS; i++) lines.push(`1${5_000_000_000 + i},客户${i},${(i % 997) + 1}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf8');
}

interface Run {
  label: string;
  smsMs: number;
  importMs: number;
  queued: number;
  imported: number;
}

async function runOn(label: string, handle: DatabaseHandle, dataDir: string, file: Buffer): Promise<Run> {
  await handle.migrate();
  const { db } = handle;
  const projectId = randomUUID();
  await db.insert(projects).values({ id: projectId, name: 'bench 短信' });
  const signatureId = randomUUID();
  const templateId = randomUUID();
  const taskId = randomUUID();
  await db
    .insert(smsSignatures)
    .values({ id: signatureId, projectId, name: '云呼科技', source: 'enterprise', status: 'approved' });
  await db.insert(smsTemplates).values({
    id: templateId,
    projectId,
    name: '订单确认',
    type: 'notification',
    content: '尊敬的${name}，您的订单金额${amount}元已确认，如有疑问请致电客服。',
    variables: ['name', 'amount'],
    status: 'approved',
  });
  await db.insert(callTasks).values({ id: taskId, projectId, name: 'bench 导入', settings: {} });

  // Baseline first, so the batch does not profit from a warmer cache than the import had.
  const importStarted = performance.now();
  const importSheet = await parseContactFile('名单.csv', file);
  const importPreview = await createImport(db, projectId, taskId, '名单.csv', importSheet);
  const imported = await commitImport(db, projectId, taskId, importPreview.importId, importPreview.mapping);
  const importMs = performance.now() - importStarted;

  const smsStarted = performance.now();
  const context = { db, dataDir, now: NOW };
  const sheet = await parseContactFile('名单.csv', file);
  const preview = await createBatchUpload(context, projectId, { signatureId, templateId }, '名单.csv', sheet);
  const batch = await commitBatchUpload(context, projectId, preview.uploadId, preview.mapping, null);
  const smsMs = performance.now() - smsStarted;

  const [row] = await db
    .select({ n: count() })
    .from(smsMessages)
    .where(and(eq(smsMessages.batchId, batch.id), eq(smsMessages.status, 'queued')));
  await db.delete(projects).where(eq(projects.id, projectId));
  return { label, smsMs, importMs, queued: row?.n ?? 0, imported: imported.added };
}

function verdicts(run: Run): BudgetResult[] {
  const complete = run.queued === ROWS && run.imported === ROWS;
  return [
    budget(
      `sms-batch ${run.label}: ${fmtInt(ROWS)} rows uploaded and queued ≤ ${fmtMs(BUDGET_MS)}`,
      complete && run.smsMs <= BUDGET_MS,
      `${fmtMs(run.smsMs)} (${fmtInt(run.queued)} queued; task import of the same file ${fmtMs(run.importMs)}, ` +
        `${fmtRatio(run.smsMs / run.importMs)} of it)`,
    ),
  ];
}

export async function smsBatchBenchmark(): Promise<BudgetResult[]> {
  const file = listFile();
  const runs: Run[] = [];
  const results: BudgetResult[] = [];
  await withScope(async (scope: Scope) => {
    const client = await PGlite.create();
    const pglite = await openDatabase({ kind: 'pglite', client });
    try {
      const run = await runOn('PGlite', pglite, tempDir(scope, 'sms-pglite'), file);
      runs.push(run);
      results.push(...verdicts(run));
    } finally {
      await pglite.close();
    }

    let url: string;
    try {
      url = (await startPostgres(scope)).url;
    } catch (err) {
      results.push(skipped('sms-batch PostgreSQL', err instanceof Error ? err.message : String(err)));
      return;
    }
    const postgres = await openDatabase({ kind: 'postgres', url });
    try {
      const run = await runOn('PostgreSQL', postgres, tempDir(scope, 'sms-pg'), file);
      runs.push(run);
      results.push(...verdicts(run));
    } finally {
      await postgres.close();
    }
  });
  console.log(
    table(
      ['database', 'batch upload + commit', 'task import (baseline)', 'ratio'],
      runs.map((r) => [r.label, fmtMs(r.smsMs), fmtMs(r.importMs), fmtRatio(r.smsMs / r.importMs)]),
    ),
  );
  return results;
}
