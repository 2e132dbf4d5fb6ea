// biome-ignore-all lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}.
// Issue #18 budget (短信管理): the sending worker, through a provider client, sends at the vendor's
// documented rate without exceeding it. The worker claims queued records from the embedded database
// and sends them through the real Aliyun client (signing and all) to the local server that speaks
// Aliyun's protocol; every request's arrival is stamped there. The busiest one-second window must
// stay at or under the rate (the vendor refuses what is over), and the whole run must use most of it
// (a pacer that is too timid wastes the account's throughput). Baseline, measured in the same run:
// the same sends with the client's rate set to the documented maximum (5,000/s), i.e. what this
// machine and the worker manage when the pacer does not hold them back: the paced rate is printed
// as a ratio of it.
import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../../apps/server/src/db/client';
import { projects, smsMessages, smsSignatures, smsTemplates } from '../../apps/server/src/db/schema';
import { createAliyunSmsClient } from '../../apps/server/src/modules/sms/providers/aliyun-sms';
import { startFakeAliyunSms } from '../../apps/server/src/modules/sms/providers/testing/aliyun-sms-server';
import { SmsSender } from '../../apps/server/src/modules/sms/sms-sender';
import { type BudgetResult, budget, fmtInt, fmtRatio, table } from './lib/report';

const MESSAGES = 1_500;
/** A sub-account's rate, below the documented 5,000/s so the pacer, not the machine, is the limit. */
const PACED_RATE = 100;
const DOCUMENTED_RATE = 5_000;
const KEY = { id: 'LTAI-bench', secret: 'bench-secret' };
const TEMPLATE_CODE = 'SMS_100001';

interface Run {
  label: string;
  rate: number;
  sent: number;
  wallMs: number;
  /** Most requests that arrived within any one second. */
  busiestSecond: number;
}

/** The most stamps within any window of `windowMs` (stamps sorted). */
function busiestWindow(stamps: number[], windowMs = 1000): number {
  let best = 0;
  let start = 0;
  for (let end = 0; end < stamps.length; end += 1) {
    while ((stamps[end] as number) - (stamps[start] as number) >= windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

async function run(label: string, rate: number): Promise<Run> {
  const fake = await startFakeAliyunSms({
    accessKeys: { [KEY.id]: KEY.secret },
    signatures: ['云呼科技'],
    templates: { [TEMPLATE_CODE]: '您的验证码为${code}，5分钟内有效。' },
  });
  const handle = await openDatabase({ kind: 'pglite', client: new PGlite() });
  const stamps: number[] = [];
  try {
    await handle.migrate();
    const db = handle.db;
    const projectId = randomUUID();
    await db.insert(projects).values({ id: projectId, name: 'bench-sms' });
    const signatureId = randomUUID();
    const templateId = randomUUID();
    await db.insert(smsSignatures).values({
      id: signatureId,
      projectId,
      name: '云呼科技',
      source: 'enterprise',
      status: 'approved',
      provider: 'aliyun',
    });
    await db.insert(smsTemplates).values({
      id: templateId,
      projectId,
      name: '验证码',
      type: 'verification',
      content: '您的验证码为${code}，5分钟内有效。',
      variables: ['code'],
      status: 'approved',
      provider: 'aliyun',
      providerRef: TEMPLATE_CODE,
    });
    const now = new Date();
    for (let i = 0; i < MESSAGES; i += 1000) {
      await db.insert(smsMessages).values(
        Array.from({ length: Math.min(1000, MESSAGES - i) }, (_, j) => ({
          id: randomUUID(),
          projectId,
          phone: `139${String(i + j).padStart(8, '0')}`,
          signatureId,
          signatureName: '云呼科技',
          templateId,
          templateName: '验证码',
          templateType: 'verification' as const,
          variables: { code: String(100000 + i + j) },
          content: `【云呼科技】您的验证码为${100000 + i + j}，5分钟内有效。`,
          provider: 'aliyun' as const,
          source: 'api' as const,
          sendAfter: now,
        })),
      );
    }
    const client = createAliyunSmsClient({
      credentials: { accessKeyId: KEY.id, accessKeySecret: KEY.secret },
      endpoint: { baseUrl: fake.baseUrl },
      allowPrivate: true,
      maxRequestsPerSecond: rate,
      fetchImpl: async (url, init) => {
        stamps.push(performance.now());
        return fetch(url, init);
      },
    });
    const sender = new SmsSender({
      db,
      clients: async () => client,
      log: { warn: (o: unknown) => console.warn(o), info: () => {} },
      batchSize: 500,
      concurrency: 64,
    });
    const started = performance.now();
    while ((await sender.runOnce()) > 0) {}
    const wallMs = performance.now() - started;
    const sent = fake.messages.length;
    return { label, rate, sent, wallMs, busiestSecond: busiestWindow(stamps.sort((a, b) => a - b)) };
  } finally {
    await handle.close();
    await fake.close();
  }
}

export async function smsRateBenchmark(): Promise<BudgetResult[]> {
  const baseline = await run('documented maximum (baseline)', DOCUMENTED_RATE);
  const paced = await run('paced sub-account', PACED_RATE);
  const perSecond = (r: Run) => (r.sent / r.wallMs) * 1000;
  console.log(
    table(
      ['run', 'rate limit', 'sent', 'wall', 'sent/s', 'busiest 1 s'],
      [baseline, paced].map((r) => [
        r.label,
        fmtInt(r.rate),
        fmtInt(r.sent),
        `${(r.wallMs / 1000).toFixed(2)} s`,
        fmtInt(perSecond(r)),
        fmtInt(r.busiestSecond),
      ]),
    ),
  );
  // What the pacer could have used: its rate, or less when this machine cannot even reach it.
  const reachable = Math.min(PACED_RATE, perSecond(baseline));
  const use = perSecond(paced) / reachable;
  return [
    budget(
      'SMS provider rate never exceeded',
      paced.sent === MESSAGES &&
        paced.busiestSecond <= PACED_RATE &&
        baseline.busiestSecond <= DOCUMENTED_RATE,
      `busiest second ${fmtInt(paced.busiestSecond)} of ${fmtInt(PACED_RATE)} allowed (baseline ${fmtInt(baseline.busiestSecond)} of ${fmtInt(DOCUMENTED_RATE)}), ${fmtInt(paced.sent)}/${fmtInt(MESSAGES)} sent`,
    ),
    budget(
      'SMS provider rate used',
      use >= 0.8,
      `${fmtInt(perSecond(paced))}/s paced = ${fmtRatio(use)} of the reachable ${fmtInt(reachable)}/s (allowed ${fmtInt(PACED_RATE)}/s; baseline unpaced ${fmtInt(perSecond(baseline))}/s)`,
    ),
  ];
}
