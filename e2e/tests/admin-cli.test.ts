// biome-ignore-all lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { login, repoRoot, startServer, stopServer, tempDir } from '../support/server';

const dataDir = tempDir('cli');
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const admin = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(repoRoot, 'apps/server/dist/admin.js'), ...args], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    timeout: 60_000,
  });

describe('npm run admin', () => {
  // A dozen CLI runs, each opening the embedded database and migrating it, then a server start:
  // minutes on a loaded 2-core machine, not a hang.
  it('creates users and projects on a fresh data directory, and the server then lets them in', {
    timeout: 180_000,
  }, async () => {
    const owner = admin(
      'user:create',
      '--email',
      'Boss@Example.com',
      '--password',
      'owner-pass-1',
      '--project',
      '华南外呼',
    );
    expect(owner.status, owner.stderr).toBe(0);
    expect(owner.stdout).toMatch(/created user boss@example.com with new project "华南外呼" \(.+\) as owner/);

    const member = admin(
      'user:create',
      '--email',
      'agent@example.com',
      '--password',
      'agent-pass-1',
      '--name',
      '坐席小王',
      '--project',
      '华南外呼',
    );
    expect(member.status, member.stderr).toBe(0);
    expect(member.stdout).toContain('joining project "华南外呼"');
    expect(member.stdout).toContain('as member');

    const list = admin('users');
    expect(list.stdout).toContain('boss@example.com\tboss\t华南外呼\towner');
    expect(list.stdout).toContain('agent@example.com\t坐席小王\t华南外呼\tmember');

    const disabled = admin('project:update', '--owner', 'boss@example.com', '--disabled', 'true');
    expect(disabled.status, disabled.stderr).toBe(0);

    const limits = admin(
      'project:update',
      '--owner',
      'boss@example.com',
      '--has-balance',
      'true',
      '--assistant-limit',
      '3',
      '--knowledge-limit',
      '2',
      '--tts-clone-limit',
      '0',
      '--concurrent-callin',
      '5',
      '--concurrent-callout',
      '20',
      '--balance',
      '150000',
    );
    expect(limits.status, limits.stderr).toBe(0);
    expect(limits.stdout).toContain('"assistantLimit":3');
    expect(limits.stdout).toContain('"balanceFen":150000');

    const logoFile = path.join(dataDir, 'logo.png');
    fs.writeFileSync(logoFile, Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(64)]));
    const oem = admin('oem:set', '--host', 'Call.Partner.CN', '--name', '伙伴外呼', '--logo', logoFile);
    expect(oem.status, oem.stderr).toBe(0);
    expect(oem.stdout).toContain('white-label on for call.partner.cn: name "伙伴外呼"');
    const oldBrand = admin('oem:set', '--host', 'old.partner.cn', '--name', '旧品牌', '--off');
    expect(oldBrand.status, oldBrand.stderr).toBe(0);
    expect(oldBrand.stdout).toContain('white-label off for old.partner.cn');

    const server = await startServer({ DATA_DIR: dataDir, DEMO: 'off' });
    try {
      // While the server holds the embedded database, the CLI says so instead of corrupting it.
      const busy = admin('users');
      expect(busy.status).toBe(1);
      expect(busy.stderr).toContain('is in use by another server process');

      const token = await login(server.url, 'agent@example.com', 'agent-pass-1');
      const me = await fetch(`${server.url}/api/user/current`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await me.json()) as {
        data: { isOwnerOrAdmin: boolean; projects: { name: string; disabled: boolean }[] };
      };
      expect(body.data.isOwnerOrAdmin).toBe(false);
      expect(body.data.projects).toMatchObject([{ name: '华南外呼', disabled: true }]);

      // Limits and balance set by the CLI, readable while the project is disabled.
      const projectId = (body.data.projects[0] as unknown as { id: string }).id;
      const headers = { authorization: `Bearer ${token}` };
      const limit = await (
        await fetch(`${server.url}/api/project/${projectId}/balance-limit`, { headers })
      ).json();
      expect(limit.data).toEqual({
        assistantLimit: 3,
        knowledgeLimit: 2,
        ttsCloneLimit: 0,
        hasBalance: true,
        concurrentCallin: 5,
        concurrentCallout: 20,
      });
      const balance = await (
        await fetch(`${server.url}/api/project/${projectId}/balance`, { method: 'POST', headers })
      ).json();
      expect(balance.data).toEqual({ balanceFen: 150000, hasBalance: true });

      const brand = await (await fetch(`${server.url}/api/oem/call.partner.cn`)).json();
      expect(brand.data).toMatchObject({ status: true, name: '伙伴外呼' });
      expect(brand.data.logo).toMatch(/^data:image\/png;base64,/);
      const off = await (await fetch(`${server.url}/api/oem/old.partner.cn`)).json();
      expect(off.data).toEqual({ status: false, name: '', logo: '' });

      // A forgotten password while the server runs: the operator reads the code from the outbox file.
      const sent = await fetch(`${server.url}/api/user/send_code`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'agent@example.com' }),
      });
      expect(sent.status).toBe(200);
      const box = admin('outbox', '--to', 'Agent@Example.com');
      expect(box.status, box.stderr).toBe(0);
      expect(box.stderr).toContain('in use by the running server');
      expect(box.stdout).toContain('email\tagent@example.com');
      const code = /验证码为 (\d{6})/.exec(box.stdout)?.[1];
      expect(code).toMatch(/^\d{6}$/);
      const reset = await fetch(`${server.url}/api/user/reset_pwd`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ target: 'agent@example.com', code, password: 'agent-pass-2' }),
      });
      expect(reset.status).toBe(200);
      expect((await fetch(`${server.url}/api/user/current`, { headers })).status).toBe(401);
      await login(server.url, 'agent@example.com', 'agent-pass-2');
    } finally {
      await stopServer(server);
    }

    // With the server stopped, the outbox is read from the database, newest first.
    const stored = admin('outbox');
    expect(stored.status, stored.stderr).toBe(0);
    expect(stored.stderr).toBe('');
    expect(stored.stdout).toContain('email\tagent@example.com');
    expect(admin('outbox', '--to', 'nobody@example.com').stdout).toContain(
      'no messages to nobody@example.com',
    );
  });

  it('rejects bad arguments with a clear message, changing nothing', { timeout: 120_000 }, () => {
    const textFile = path.join(dataDir, 'logo.txt');
    fs.writeFileSync(textFile, 'not an image');
    const bigFile = path.join(dataDir, 'big.png');
    fs.writeFileSync(
      bigFile,
      Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(201 * 1024)]),
    );
    const cases: [string[], string][] = [
      [['user:create', '--password', 'owner-pass-1'], 'missing --email'],
      [['user:create', '--email', 'x@example.com', '--password', 'short'], '密码至少 8 位'],
      [['user:create', '--email', 'boss@example.com', '--password', 'owner-pass-1'], 'already exists'],
      [
        ['user:create', '--email', 'y@example.com', '--password', 'owner-pass-1', '--role', 'king'],
        '--role must be',
      ],
      [
        ['project:update', '--owner', 'boss@example.com', '--disabled', 'maybe'],
        '--disabled must be true or false',
      ],
      [['user:create', '--frobnicate'], 'Unknown option'],
      [
        ['project:update', '--owner', 'boss@example.com', '--assistant-limit', 'many'],
        '--assistant-limit must be a non-negative whole number',
      ],
      [['project:update', '--owner', 'boss@example.com', '--balance=-5'], '--balance must be a non-negative'],
      [
        ['project:update', '--owner', 'boss@example.com', '--has-balance', 'yes'],
        '--has-balance must be true or false',
      ],
      [['project:update', '--owner', 'boss@example.com'], 'nothing to change'],
      [['project:update', '--owner', 'nobody@example.com', '--balance', '1'], 'owns no project'],
      [['oem:set', '--name', '品牌'], 'missing --host'],
      [['oem:set', '--host', 'new.partner.cn'], 'missing --name'],
      [['oem:set', '--host', 'bad host!', '--name', '品牌'], '--host must be a host name'],
      [['oem:set', '--host', 'a.cn', '--name', '品牌', '--logo', '/no/such/logo.png'], 'cannot read'],
      [
        ['oem:set', '--host', 'a.cn', '--name', '品牌', '--logo', textFile],
        'is not a png, jpeg, gif, webp or svg',
      ],
      [['oem:set', '--host', 'a.cn', '--name', '品牌', '--logo', bigFile], 'the limit is 200 KB'],
      [['outbox', '--frobnicate'], 'Unknown option'],
      [['no-such-command'], 'unknown command'],
    ];
    for (const [args, message] of cases) {
      const r = admin(...args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toContain(message);
    }
    const list = admin('users');
    expect(list.stdout).not.toContain('x@example.com');
    expect(list.stdout).not.toContain('y@example.com');
    expect(admin('oem:set', '--host', 'a.cn', '--off').stderr).toContain('missing --name');
  });
  it('decides SMS signatures and templates waiting for review (sms:review)', {
    timeout: 180_000,
  }, async () => {
    const smsDir = tempDir('cli-sms');
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [path.join(repoRoot, 'apps/server/dist/admin.js'), ...args], {
        env: { ...process.env, DATA_DIR: smsDir, LOG_LEVEL: 'warn' },
        encoding: 'utf8',
        timeout: 60_000,
      });
    try {
      expect(run('user:create', '--email', 'sms@example.com', '--password', 'sms-pass-1').status).toBe(0);
      expect(run('sms:review').stdout).toContain('nothing is waiting for review');

      // The project prepares and submits a template and a signature while the server runs.
      type Item = { id: string; status: string; rejectReason: string | null };
      const connect = async (url: string) => {
        const headers = { authorization: `Bearer ${await login(url, 'sms@example.com', 'sms-pass-1')}` };
        const me = (await (await fetch(`${url}/api/user/current`, { headers })).json()) as {
          data: { projects: { id: string }[] };
        };
        const base = `${url}/api/project/${me.data.projects[0]?.id}/sms`;
        return async (method: string, path: string, body?: unknown | FormData): Promise<Item> => {
          const json = body !== undefined && !(body instanceof FormData);
          const res = await fetch(`${base}${path}`, {
            method,
            headers: { ...headers, ...(json ? { 'content-type': 'application/json' } : {}) },
            body: json ? JSON.stringify(body) : (body as FormData | undefined),
          });
          const answer = (await res.json()) as { data: Item; message: string };
          if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${answer.message}`);
          return answer.data;
        };
      };
      let server = await startServer({ DATA_DIR: smsDir, DEMO: 'off' });
      let templateId = '';
      let signatureId = '';
      try {
        const api = await connect(server.url);
        templateId = (
          await api('POST', '/templates', {
            name: '到店提醒',
            type: 'notification',
            content: '您预约的${service}将于${time}开始，请准时到店。',
          })
        ).id;
        expect((await api('POST', `/templates/${templateId}/submit`)).status).toBe('reviewing');
        signatureId = (await api('POST', '/signatures', { name: '云呼科技', source: 'enterprise' })).id;
        const form = new FormData();
        form.append('file', new Blob([Buffer.from('%PDF-1.4 license')]), '营业执照.pdf');
        await api('POST', `/signatures/${signatureId}/proof`, form);
        expect((await api('POST', `/signatures/${signatureId}/submit`)).status).toBe('reviewing');
      } finally {
        await stopServer(server);
      }

      // The operator lists what waits and decides, with the server stopped (embedded database).
      const waiting = run('sms:review');
      expect(waiting.status, waiting.stderr).toBe(0);
      expect(waiting.stdout).toContain(`signature\t${signatureId}`);
      expect(waiting.stdout).toContain(`template\t${templateId}`);
      expect(waiting.stdout).toContain('您预约的${service}将于${time}开始');
      const missingReason = run('sms:review', '--template', templateId);
      expect(missingReason.status).toBe(1);
      expect(missingReason.stderr).toContain('give either --approve or --reject REASON');
      const rejected = run('sms:review', '--template', templateId, '--reject', '请补充门店名称');
      expect(rejected.status, rejected.stderr).toBe(0);
      expect(rejected.stdout).toContain('rejected: 请补充门店名称');
      expect(run('sms:review', '--signature', signatureId, '--approve').stdout).toContain('approved');
      const again = run('sms:review', '--signature', signatureId, '--approve');
      expect(again.status).toBe(1);
      expect(again.stderr).toContain('签名不在审核中（当前：已通过）');

      // The project sees the decisions.
      server = await startServer({ DATA_DIR: smsDir, DEMO: 'off' });
      try {
        const api = await connect(server.url);
        expect(await api('GET', `/templates/${templateId}`)).toMatchObject({
          status: 'rejected',
          rejectReason: '请补充门店名称',
        });
        expect((await api('GET', `/signatures/${signatureId}`)).status).toBe('approved');
      } finally {
        await stopServer(server);
      }
    } finally {
      fs.rmSync(smsDir, { recursive: true, force: true });
    }
  });

  it('backs up the embedded database and restores it, and refuses both while the server runs', {
    // About ten opens of the embedded database (CLI runs and server starts): minutes on a loaded machine.
    timeout: 300_000,
  }, async () => {
    const dir = tempDir('cli-backup');
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [path.join(repoRoot, 'apps/server/dist/admin.js'), ...args], {
        env: { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'warn' },
        encoding: 'utf8',
        timeout: 90_000,
      });
    const backup = path.join(dir, '..', `${path.basename(dir)}-backup.tar.gz`);
    try {
      expect(run('user:create', '--email', 'kept@example.com', '--password', 'kept-pass-1').status).toBe(0);

      let server = await startServer({ DATA_DIR: dir, DEMO: 'off' });
      try {
        const busy = run('backup', backup);
        expect(busy.status).toBe(1);
        expect(busy.stderr).toContain(`is running on DATA_DIR ${dir}; stop it before backup`);
        expect(fs.existsSync(backup)).toBe(false);
      } finally {
        await stopServer(server);
      }

      const made = run('backup', backup);
      expect(made.status, made.stderr).toBe(0);
      expect(made.stdout).toContain(`backed up the database of ${dir} to ${backup}`);
      expect(made.stdout).toContain('recordings');
      expect(run('backup', backup).stderr).toContain(`${backup} already exists`);

      // Changes after the backup: a new user, and the kept user's password changed.
      expect(run('user:create', '--email', 'later@example.com', '--password', 'later-pass-1').status).toBe(0);
      expect(
        run('user:set-password', '--email', 'kept@example.com', '--password', 'changed-pass-1').status,
      ).toBe(0);

      const garbage = path.join(dir, 'not-a-backup.tar.gz');
      fs.writeFileSync(garbage, 'not a database');
      const refused = run('restore', garbage);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('is not a backup made by "npm run admin -- backup"');

      server = await startServer({ DATA_DIR: dir, DEMO: 'off' });
      try {
        const busy = run('restore', backup);
        expect(busy.status).toBe(1);
        expect(busy.stderr).toContain('stop it before restore');
        // Neither refused restore touched the current data.
        await login(server.url, 'later@example.com', 'later-pass-1');
      } finally {
        await stopServer(server);
      }

      const restored = run('restore', backup);
      expect(restored.status, restored.stderr).toBe(0);
      expect(restored.stdout).toMatch(/the previous database is kept in .*pglite\.before-restore-/);

      // The server opens the restored database: as it was at the backup, the later changes gone.
      server = await startServer({ DATA_DIR: dir, DEMO: 'off' });
      try {
        await login(server.url, 'kept@example.com', 'kept-pass-1');
        await expect(login(server.url, 'kept@example.com', 'changed-pass-1')).rejects.toThrow('login failed');
        await expect(login(server.url, 'later@example.com', 'later-pass-1')).rejects.toThrow('login failed');
      } finally {
        await stopServer(server);
      }

      const onPostgres = spawnSync(
        process.execPath,
        [path.join(repoRoot, 'apps/server/dist/admin.js'), 'backup', backup],
        {
          env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', LOG_LEVEL: 'warn' },
          encoding: 'utf8',
          timeout: 30_000,
        },
      );
      expect(onPostgres.status).toBe(1);
      expect(onPostgres.stderr).toContain('with DATABASE_URL use pg_dump');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(backup, { force: true });
    }
  });
});
