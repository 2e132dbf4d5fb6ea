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
  it('creates users and projects on a fresh data directory, and the server then lets them in', async () => {
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
    } finally {
      await stopServer(server);
    }
  });

  it('rejects bad arguments with a clear message, changing nothing', () => {
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
  });
});
