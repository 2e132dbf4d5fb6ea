import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, testEnv } from '../../test/helpers';
import type { DatabaseHandle } from '../db/client';
import { outbox } from '../db/schema';
import { outboxFile, providersFromEnv } from './index';

let database: DatabaseHandle | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await database?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  database = undefined;
  dataDir = undefined;
});

describe('providers', () => {
  it('keeps e-mail and SMS in the development outbox (table and file) without logging bodies', async () => {
    database = await createTestDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'callpilot-providers-'));
    const logged: unknown[][] = [];
    const providers = providersFromEnv(testEnv({ DATA_DIR: dataDir }), database.db, {
      info: (...args: unknown[]) => void logged.push(args),
    } as never);
    await providers.email.send({ to: 'a@example.com', subject: '主题', text: '正文 123456' });
    await providers.sms.send({ to: '13800138000', text: '短信 654321' });

    const rows = await database.db.select().from(outbox);
    expect(rows.map((r) => [r.channel, r.recipient, r.subject, r.body])).toEqual(
      expect.arrayContaining([
        ['email', 'a@example.com', '主题', '正文 123456'],
        ['sms', '13800138000', '', '短信 654321'],
      ]),
    );
    const lines = fs
      .readFileSync(outboxFile(dataDir), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toMatchObject([
      { channel: 'email', recipient: 'a@example.com', body: '正文 123456' },
      { channel: 'sms', recipient: '13800138000', body: '短信 654321' },
    ]);
    expect(JSON.stringify(logged)).toContain(
      'message queued in development outbox (npm run admin -- outbox)',
    );
    expect(JSON.stringify(logged)).not.toMatch(/123456|654321/);
  });

  it('sends e-mail by SMTP when SMTP_URL is set, and then nothing goes to the outbox', async () => {
    database = await createTestDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'callpilot-providers-'));
    // Port 9 on loopback refuses the connection: the SMTP transport, not the outbox, was used.
    const providers = providersFromEnv(
      testEnv({ DATA_DIR: dataDir, SMTP_URL: 'smtp://127.0.0.1:9' }),
      database.db,
    );
    await expect(providers.email.send({ to: 'a@example.com', subject: 's', text: 't' })).rejects.toThrow();
    expect(await database.db.select().from(outbox)).toHaveLength(0);
    expect(fs.existsSync(outboxFile(dataDir))).toBe(false);
  });
});
