import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlowHttpClient, isPrivateAddress, PRIVATE_ADDRESS_REFUSED } from './http-client';
import type { FlowHttpRequest } from './types';

describe('isPrivateAddress', () => {
  it.each([
    ['10.1.2.3', true],
    ['127.0.0.1', true],
    ['0.0.0.0', true],
    ['169.254.169.254', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['100.64.0.1', true],
    ['100.127.255.255', true],
    ['100.128.0.1', false],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['8.8.8.8', false],
    ['114.114.114.114', false],
    ['::', true],
    ['::1', true],
    ['fe80::1', true],
    ['fe80::1%eth0', true],
    ['fd00:ec2::254', true],
    ['fc00::1', true],
    ['ff02::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:10.0.0.1', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::a00:1', true],
    ['64:ff9b::808:808', false],
    ['2002:c0a8:101::1', true],
    ['2001:4860:4860::8888', false],
    ['240e:1::1', false],
    ['not-an-ip', true],
  ])('%s → %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});

describe('createFlowHttpClient', () => {
  let server: http.Server;
  let other: http.Server;
  let base = '';
  let otherBase = '';
  const seen: Array<{ path: string; method: string; headers: http.IncomingHttpHeaders }> = [];

  const listen = async (handler: http.RequestListener) => {
    const s = http.createServer(handler);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return { s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
  };

  beforeAll(async () => {
    const b = await listen((req, res) => {
      seen.push({ path: req.url ?? '', method: req.method ?? '', headers: req.headers });
      req.resume();
      const path = req.url ?? '/';
      if (path === '/json')
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":{"b":[1,2]}}');
      else if (path === '/text') res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      else if (path === '/big')
        res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(300 * 1024));
      else if (path === '/see-other') res.writeHead(303, { location: '/json' }).end();
      else if (path === '/to-private') res.writeHead(302, { location: `${base}/json` }).end();
      else if (path === '/to-other') res.writeHead(307, { location: `${otherBase}/headers` }).end();
      else if (path === '/slow') setTimeout(() => res.writeHead(200).end('late'), 1000).unref();
      else res.writeHead(500).end('boom');
    });
    server = b.s;
    base = b.url;
    const o = await listen((req, res) => {
      seen.push({ path: `other${req.url}`, method: req.method ?? '', headers: req.headers });
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    other = o.s;
    otherBase = o.url;
  });
  afterAll(async () => {
    for (const s of [server, other]) {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });

  const request = (url: string, extra: Partial<FlowHttpRequest> = {}): FlowHttpRequest => ({
    method: 'GET',
    url,
    headers: {},
    body: null,
    timeoutMs: 2000,
    ...extra,
  });

  it('parses JSON by content type, keeps other bodies as text, reports status and time', async () => {
    const client = createFlowHttpClient({ allowPrivate: true });
    const json = await client(request(`${base}/json`));
    expect(json).toMatchObject({ ok: true, status: 200, body: { a: { b: [1, 2] } } });
    expect(json.ms).toBeGreaterThanOrEqual(0);
    expect(await client(request(`${base}/text`))).toMatchObject({ ok: true, body: 'hello' });
    expect(await client(request(`${base}/error`))).toMatchObject({
      ok: false,
      status: 500,
      error: 'HTTP 500',
    });
  });

  it('refuses a body over 256 KB', async () => {
    const client = createFlowHttpClient({ allowPrivate: true });
    expect(await client(request(`${base}/big`))).toMatchObject({
      ok: false,
      status: 200,
      error: '响应超过 256 KB',
    });
  });

  it('gives up at the timeout with a reason', async () => {
    const client = createFlowHttpClient({ allowPrivate: true });
    // The server answers after 1 s: only the timeout can make this a failure.
    const result = await client(request(`${base}/slow`, { timeoutMs: 100 }));
    expect(result).toMatchObject({ ok: false, status: null, error: '请求超时（100 ms）' });
  });

  it('follows redirects (303 turns a POST into a GET) and drops credentials for another origin', async () => {
    const client = createFlowHttpClient({ allowPrivate: true });
    seen.length = 0;
    const posted = await client(request(`${base}/see-other`, { method: 'POST', body: '{}' }));
    expect(posted).toMatchObject({ ok: true, body: { a: { b: [1, 2] } } });
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /see-other', 'GET /json']);
    seen.length = 0;
    await client(request(`${base}/to-other`, { headers: { authorization: 'Bearer secret', 'x-keep': '1' } }));
    expect(seen[0]?.headers.authorization).toBe('Bearer secret');
    expect(seen[1]?.path).toBe('other/headers');
    expect(seen[1]?.headers.authorization).toBeUndefined();
    expect(seen[1]?.headers['x-keep']).toBe('1');
  });

  it('refuses private and loopback hosts without sending anything', async () => {
    const client = createFlowHttpClient();
    seen.length = 0;
    for (const url of [
      `${base}/json`,
      `http://localhost:${new URL(base).port}/json`,
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/', // 127.0.0.1 written as one number
      'http://169.254.169.254/latest/meta-data/',
    ]) {
      expect(await client(request(url)), url).toMatchObject({
        ok: false,
        refused: true,
        error: PRIVATE_ADDRESS_REFUSED,
      });
    }
    expect(seen).toHaveLength(0);
  });

  it('refuses a name when any of its addresses is private (IPv4 or IPv6)', async () => {
    const addresses: Record<string, string[]> = {
      'mixed.example': ['93.184.216.34', '10.0.0.8'],
      'v6.example': ['2606:2800:220:1::1', 'fd12::1'],
    };
    const client = createFlowHttpClient({ resolve: async (host) => addresses[host] ?? [] });
    expect(await client(request('http://mixed.example/'))).toMatchObject({ refused: true });
    expect(await client(request('http://v6.example/'))).toMatchObject({ refused: true });
    expect(await client(request('http://nowhere.example/'))).toMatchObject({
      ok: false,
      error: '域名解析失败：nowhere.example',
    });
  });

  it('refuses a name that resolves public for the check and private for the connection (DNS rebinding)', async () => {
    let lookups = 0;
    const port = new URL(base).port;
    const client = createFlowHttpClient({
      // First answer public (the check), then this test server's loopback address (the connect).
      resolve: async () => (lookups++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']),
    });
    seen.length = 0;
    expect(await client(request(`http://rebind.example:${port}/json`))).toMatchObject({
      ok: false,
      refused: true,
      error: PRIVATE_ADDRESS_REFUSED,
    });
    expect(lookups).toBe(2);
    expect(seen).toHaveLength(0);
  });

  it('allow() lets chosen URLs through, and a redirect from one to a private address is refused', async () => {
    const client = createFlowHttpClient({
      allow: (url) => url.pathname === '/to-private' || url.pathname === '/text',
    });
    expect(await client(request(`${base}/text`))).toMatchObject({ ok: true, body: 'hello' });
    seen.length = 0;
    expect(await client(request(`${base}/to-private`))).toMatchObject({ refused: true });
    expect(seen.map((s) => s.path)).toEqual(['/to-private']);
  });

  it('rejects what is not an http(s) URL', async () => {
    const client = createFlowHttpClient({ allowPrivate: true });
    expect(await client(request('not a url'))).toMatchObject({ ok: false, error: '请求地址无效' });
    expect(await client(request('ftp://example.com/file'))).toMatchObject({
      ok: false,
      error: '请求地址须以 http:// 或 https:// 开头',
    });
  });
});
