import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../test/helpers';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});
const start = async (env?: Record<string, string>) => {
  current = await createTestApp({ env });
  return current;
};

describe('health and envelope', () => {
  it('answers /healthz in the envelope with the database state', async () => {
    const { app } = await start();
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      success: true,
      status: 200,
      message: 'ok',
      msg: 'ok',
      error: null,
      data: { status: 'ok', database: 'ok' },
    });
  });

  it('answers 503 when the database is gone', async () => {
    const { app, database } = await start();
    await app.ready();
    await database.close();
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      success: false,
      code: 'SERVICE_UNAVAILABLE',
      message: '数据库不可用',
    });
  });

  it('answers an unknown API path with a 404 envelope, not the console', async () => {
    const { app } = await start();
    const res = await app.inject({ method: 'GET', url: '/api/does-not-exist?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      success: false,
      status: 404,
      data: null,
      message: '接口不存在：GET /api/does-not-exist',
      msg: '接口不存在：GET /api/does-not-exist',
      error: '接口不存在：GET /api/does-not-exist',
      code: 'NOT_FOUND',
    });
  });

  it('hides the internals of a 5xx and keeps them out of the answer', async () => {
    const { app } = await start();
    app.get('/api/boom', async () => {
      throw new Error('connection to 10.0.0.5 refused: password authentication failed');
    });
    const res = await app.inject({ method: 'GET', url: '/api/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('10.0.0.5');
    expect(res.json()).toMatchObject({
      success: false,
      status: 500,
      code: 'INTERNAL',
      message: '服务器内部错误',
    });
  });

  it('rejects malformed JSON with a Chinese message', async () => {
    const { app } = await start();
    const res = await app.inject({
      method: 'POST',
      url: '/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ success: false, message: '请求体不是合法的 JSON' });
  });

  it('compresses large answers', async () => {
    const { app } = await start();
    const res = await app.inject({
      method: 'GET',
      url: '/docs/json',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
  });
});

describe('API docs', () => {
  it('serves an OpenAPI 3.1 document generated from the contracts', async () => {
    const { app } = await start();
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/auth/login', '/api/user/current', '/healthz']),
    );
    const body = doc.paths['/auth/login'].post.requestBody.content['application/json'].schema;
    const ref = String(body.$ref).split('/').pop()!;
    expect(Object.keys(doc.components.schemas[ref].properties)).toEqual([
      'email',
      'phone',
      'password',
      'code',
    ]);
    const ui = await app.inject({ method: 'GET', url: '/docs/' });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toContain('text/html');
  });
});

describe('console hosting', () => {
  const makeDist = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callpilot-web-'));
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(
      path.join(dir, 'index.html'),
      '<!doctype html><title>控制台</title><div id="root"></div>',
    );
    fs.writeFileSync(path.join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');
    return dir;
  };

  it('serves index.html for any non-API GET path (SPA fallback)', async () => {
    const { app } = await start({ WEB_DIST: makeDist() });
    for (const url of ['/', '/dashboard', '/call-task/task-detail/42?back=1', '/login']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.body).toContain('<title>控制台</title>');
      expect(res.headers['cache-control']).toBe('no-cache');
    }
  });

  it('marks hashed assets immutable', async () => {
    const { app } = await start({ WEB_DIST: makeDist() });
    const res = await app.inject({ method: 'GET', url: '/assets/index-AbC123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toContain('immutable');
    expect(res.body).toBe('console.log(1)');
  });

  it('does not answer non-GET unknown paths with HTML', async () => {
    const { app } = await start({ WEB_DIST: makeDist() });
    const res = await app.inject({ method: 'POST', url: '/dashboard' });
    expect(res.statusCode).toBe(404);
    expect(res.json().success).toBe(false);
  });
});
