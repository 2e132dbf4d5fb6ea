import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inArray } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, loginAs, seedUser, testEnv } from '../../test/helpers';
import { buildApp } from '../app';
import type { DatabaseHandle } from '../db/client';
import { calls, callTurns } from '../db/schema';
import type { RecordingFs } from '../engine/recording/store';

/**
 * Two processes with recording workers on one database (two apps here, as on PostgreSQL behind a
 * load balancer): each pending recording is mixed by exactly one of them, and a mix claimed by a
 * process that died is taken up again once its claim runs out.
 */
let database: DatabaseHandle | undefined;
let dataDir: string | undefined;
const apps: Awaited<ReturnType<typeof buildApp>>[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  await database?.close();
  database = undefined;
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function pendingCall(
  db: DatabaseHandle['db'],
  projectId: string,
  claim?: { owner: string; until: Date },
  source: 'mix' | 'line' = 'mix',
) {
  const id = randomUUID();
  const startedAt = new Date(Date.now() - 60_000);
  await db.insert(calls).values({
    id,
    projectId,
    direction: 'outbound',
    callerNumber: '02160880000',
    calleeNumber: '13800000000',
    assistantId: null,
    assistantName: '回访助手',
    assistantVersion: null,
    status: 'ended',
    endReason: 'completed',
    hangupBy: 'assistant',
    startedAt,
    answeredAt: startedAt,
    endedAt: new Date(),
    recording: 'pending',
    recordingSource: source,
    recordingLeaseOwner: claim?.owner ?? null,
    recordingLeaseUntil: claim?.until ?? null,
  });
  await db.insert(callTurns).values([
    { callId: id, index: 0, speaker: 'assistant', text: '您好，这里是星河宽带。', startMs: 0, endMs: 1500 },
    { callId: id, index: 1, speaker: 'callee', text: '你好。', startMs: 2000, endMs: 2600 },
  ]);
  return id;
}

describe('recording worker leases', () => {
  it('mixes each pending recording exactly once across two processes, and retakes a dead claim', async () => {
    database = await createTestDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recording-leases-'));
    const { projectId } = await seedUser(database.db, { email: 'rec@example.com' });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await pendingCall(database.db, projectId));
    // Claimed by a process that died long ago: its lease ran out.
    ids.push(
      await pendingCall(database.db, projectId, { owner: 'all-dead', until: new Date(Date.now() - 1000) }),
    );
    // Claimed by a live process just now: nobody else may take it.
    const held = await pendingCall(database.db, projectId, {
      owner: 'all-alive',
      until: new Date(Date.now() + 600_000),
    });

    const puts = new Map<string, string[]>();
    for (let i = 0; i < 2; i++) {
      const app = await buildApp({ database, env: testEnv({ DATA_DIR: dataDir }), logger: false });
      const store = app.runtime.recordings;
      const put = store.put.bind(store);
      vi.spyOn(store, 'put').mockImplementation(async (key, data) => {
        puts.set(key, [...(puts.get(key) ?? []), app.runtime.processId]);
        return put(key, data);
      });
      apps.push(app);
    }
    await Promise.all(apps.map((app) => app.ready()));
    await Promise.all(apps.map((app) => app.runtime.drainRecordings()));
    await Promise.all(apps.map((app) => app.runtime.drainRecordings()));

    const rows = await database.db
      .select()
      .from(calls)
      .where(inArray(calls.id, [...ids, held]));
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of ids) {
      expect(byId.get(id)).toMatchObject({ recording: 'ready', recordingLeaseOwner: null });
      expect(puts.get(`${projectId}/${id}.wav`)).toHaveLength(1);
    }
    expect(byId.get(held)).toMatchObject({ recording: 'pending', recordingLeaseOwner: 'all-alive' });
    expect(puts.has(`${projectId}/${held}.wav`)).toBe(false);
  }, 60_000);
});

describe('recording worker and a real line’s WAV', () => {
  /** The media worker's file while the call runs: sizes 0 until it closes it. */
  const wavHeader = (dataBytes: number) => {
    const header = Buffer.alloc(44);
    header.write('RIFF', 0, 'ascii');
    header.writeUInt32LE(36 + dataBytes, 4);
    header.write('WAVEfmt ', 8, 'ascii');
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20);
    header.writeUInt16LE(2, 22);
    header.writeUInt32LE(8000, 24);
    header.writeUInt32LE(32000, 28);
    header.writeUInt16LE(4, 32);
    header.writeUInt16LE(16, 34);
    header.write('data', 36, 'ascii');
    header.writeUInt32LE(dataBytes, 40);
    return header;
  };

  it('stores the whole call when the record ends before the media worker has closed the file', async () => {
    database = await createTestDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recording-line-'));
    const { projectId } = await seedUser(database.db, { email: 'line@example.com' });
    const id = await pendingCall(database.db, projectId);
    const file = path.join(dataDir, 'line-recordings', `${id}.wav`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const second = Buffer.alloc(32_000, 7);
    fs.writeFileSync(file, Buffer.concat([wavHeader(0), second]));

    const app = await buildApp({ database, env: testEnv({ DATA_DIR: dataDir }), logger: false });
    apps.push(app);
    await app.ready();
    const drained = app.runtime.drainRecordings();
    // The media worker writes the call's last second and its sizes a moment later.
    await new Promise((r) => setTimeout(r, 400));
    fs.writeFileSync(file, Buffer.concat([wavHeader(64_000), second, second]));
    await drained;

    const [row] = await database.db
      .select()
      .from(calls)
      .where(inArray(calls.id, [id]));
    expect(row).toMatchObject({ recording: 'ready', recordingDurationMs: 2000 });
    const stored = fs.readFileSync(path.join(dataDir, 'recordings', `${projectId}/${id}.wav`));
    expect(stored.length).toBe(44 + 64_000);
    expect(stored.readUInt32LE(40)).toBe(64_000);
    expect(fs.existsSync(file)).toBe(false);
  }, 60_000);

  it('marks a real line’s call without its WAV as having no recording, never a re-enactment', async () => {
    database = await createTestDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recording-line-missing-'));
    const { projectId } = await seedUser(database.db, { email: 'line-missing@example.com' });
    const line = await pendingCall(database.db, projectId, undefined, 'line');
    const simulated = await pendingCall(database.db, projectId);

    const app = await buildApp({ database, env: testEnv({ DATA_DIR: dataDir }), logger: false });
    apps.push(app);
    await app.ready();
    await app.runtime.drainRecordings();

    const rows = await database.db
      .select()
      .from(calls)
      .where(inArray(calls.id, [line, simulated]));
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(line)).toMatchObject({
      recording: 'failed',
      recordingKey: null,
      recordingError: '线路录音文件缺失',
    });
    expect(fs.existsSync(path.join(dataDir, 'recordings', `${projectId}/${line}.wav`))).toBe(false);
    // The same transcript on the simulated carrier is mixed as ever.
    expect(byId.get(simulated)).toMatchObject({ recording: 'ready' });
  }, 60_000);
});

describe('a recording disk that is full', () => {
  /**
   * The real file operations, except that while `full` every write goes to /dev/full: the kernel
   * answers ENOSPC exactly as a full disk does, with no mount needed.
   */
  function fillableDisk() {
    const disk = { full: false };
    const port: RecordingFs = {
      mkdir: (dir, options) => fs.promises.mkdir(dir, options),
      rename: (from, to) => fs.promises.rename(from, to),
      rm: (file, options) => fs.promises.rm(file, options),
      writeFile: async (file, data) => {
        if (!disk.full) return fs.promises.writeFile(file, data);
        // What a full disk leaves: the part file exists, its write fails.
        await fs.promises.writeFile(file, '');
        await fs.promises.writeFile('/dev/full', data);
      },
    };
    return { disk, port };
  }

  it('keeps the call, marks its recording failed with the reason, shows 磁盘已满 on /healthz until a write succeeds', async () => {
    database = await createTestDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recording-disk-full-'));
    const { projectId } = await seedUser(database.db, { email: 'disk@example.com' });
    const { disk, port } = fillableDisk();
    const app = await buildApp({
      database,
      env: testEnv({ DATA_DIR: dataDir }),
      logger: false,
      recordingFs: port,
    });
    apps.push(app);
    await app.ready();
    const health = async () => {
      const res = await app.inject({ method: 'GET', url: '/healthz' });
      return { code: res.statusCode, data: res.json().data };
    };
    expect((await health()).data).toMatchObject({ status: 'ok', recordings: { ok: true, reason: null } });

    disk.full = true;
    const id = await pendingCall(database.db, projectId);
    await app.runtime.drainRecordings();

    const auth = await loginAs(app, 'disk@example.com');
    const detail = await app.inject({
      method: 'GET',
      url: `/api/project/${projectId}/calls/${id}`,
      headers: auth,
    });
    expect(detail.statusCode).toBe(200);
    expect(detail.json().data).toMatchObject({
      status: 'ended',
      endReason: 'completed',
      recording: 'failed',
      recordingError: '磁盘已满，录音未能保存',
    });
    expect(detail.json().data.turns.map((t: { text: string }) => t.text)).toEqual([
      '您好，这里是星河宽带。',
      '你好。',
    ]);
    // Nothing half-written is left taking space.
    const projectDir = path.join(dataDir, 'recordings', projectId);
    expect(fs.existsSync(projectDir) ? fs.readdirSync(projectDir) : []).toEqual([]);
    const degraded = await health();
    // Still 200: the process serves and calls go on; restarting it frees no space.
    expect(degraded.code).toBe(200);
    expect(degraded.data).toMatchObject({
      status: 'degraded',
      database: 'ok',
      recordings: { ok: false, reason: '磁盘已满' },
    });
    expect(Date.parse(degraded.data.recordings.since)).not.toBeNaN();

    // Space is freed: the next recording is stored and the state clears.
    disk.full = false;
    const next = await pendingCall(database.db, projectId);
    await app.runtime.drainRecordings();
    const [row] = await database.db
      .select()
      .from(calls)
      .where(inArray(calls.id, [next]));
    expect(row).toMatchObject({ recording: 'ready' });
    expect(fs.existsSync(path.join(projectDir, `${next}.wav`))).toBe(true);
    expect((await health()).data).toMatchObject({
      status: 'ok',
      recordings: { ok: true, reason: null, since: null },
    });
  }, 60_000);
});

describe('migration 0025', () => {
  it('moves the reason of a recording that failed before it from recording_key to recording_error', async () => {
    database = await createTestDatabase();
    const { projectId } = await seedUser(database.db, { email: 'legacy@example.com' });
    const failed = await pendingCall(database.db, projectId);
    const ready = await pendingCall(database.db, projectId);
    // How 0024 and before stored them.
    await database.db
      .update(calls)
      .set({ recording: 'failed', recordingKey: '磁盘已满，录音未能保存', recordingError: null })
      .where(inArray(calls.id, [failed]));
    await database.db
      .update(calls)
      .set({ recording: 'ready', recordingKey: `${projectId}/${ready}.wav` })
      .where(inArray(calls.id, [ready]));
    const migration = fs.readFileSync(
      path.join(import.meta.dirname, '../../drizzle/0025_recording_error.sql'),
      'utf8',
    );
    const backfill = migration.split('--> statement-breakpoint').find((part) => part.includes('UPDATE'))!;
    await database.db.execute(backfill);
    const rows = await database.db
      .select({ id: calls.id, key: calls.recordingKey, error: calls.recordingError })
      .from(calls)
      .where(inArray(calls.id, [failed, ready]));
    expect(new Map(rows.map((r) => [r.id, r]))).toEqual(
      new Map([
        [failed, { id: failed, key: null, error: '磁盘已满，录音未能保存' }],
        [ready, { id: ready, key: `${projectId}/${ready}.wav`, error: null }],
      ]),
    );
  });
});
