import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../brain/openai-client';
import { type Clock, systemClock } from '../clock';
import {
  AliyunTokenCache,
  createToken,
  createTokenQuery,
  percentEncode,
  regionOf,
  signRpc,
  stringToSign,
} from './aliyun-token';
import { type FakeAliyunNls, startFakeAliyunNls } from './testing/aliyun-nls-server';

const AK_ID = 'LTAI5tTestAccessKeyId01';
const AK_SECRET = 'nlsSecret-9f8e7d6c5b4a3210zyxw';

let nls: FakeAliyunNls;
beforeAll(async () => {
  nls = await startFakeAliyunNls({ accessKeys: { [AK_ID]: AK_SECRET }, tokenTtlMs: 60 * 60_000 });
});
afterAll(() => nls.close());

const credentials = (over: { accessKeyId?: string; accessKeySecret?: string } = {}) => ({
  accessKeyId: AK_ID,
  accessKeySecret: AK_SECRET,
  tokenUrl: nls.tokenUrl,
  ...over,
});

async function refusal(promise: Promise<unknown>): Promise<ProviderError> {
  const err = await promise.then(
    () => {
      throw new Error('expected CreateToken to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  const provider = err as ProviderError;
  expect(provider.service).toBe('speech_recognition');
  expect(inspect(provider, { depth: 5 })).not.toContain(AK_SECRET);
  expect(JSON.stringify(provider)).not.toContain(AK_SECRET);
  return provider;
}

describe('POP RPC signature', () => {
  // The worked example of Alibaba Cloud's RPC signature document (DescribeRegions, testid/testsecret).
  const documented = {
    AccessKeyId: 'testid',
    Action: 'DescribeRegions',
    Format: 'XML',
    SignatureMethod: 'HMAC-SHA1',
    SignatureNonce: '3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf',
    SignatureVersion: '1.0',
    Timestamp: '2016-02-23T12:46:24Z',
    Version: '2014-05-26',
  };

  it('reproduces the documented string to sign and signature', () => {
    expect(stringToSign('GET', documented)).toBe(
      'GET&%2F&AccessKeyId%3Dtestid%26Action%3DDescribeRegions%26Format%3DXML%26SignatureMethod%3DHMAC-SHA1' +
        '%26SignatureNonce%3D3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf%26SignatureVersion%3D1.0' +
        '%26Timestamp%3D2016-02-23T12%253A46%253A24Z%26Version%3D2014-05-26',
    );
    expect(signRpc('GET', documented, 'testsecret')).toBe('OLeaidS1JvxuMvnyHOwuJ+uX5qY=');
  });

  it('encodes as POP does: only unreserved characters stay', () => {
    expect(percentEncode("a b*c~d!'()+/=:中")).toBe('a%20b%2Ac~d%21%27%28%29%2B%2F%3D%3A%E4%B8%AD');
  });

  it('takes the region from the token endpoint', () => {
    expect(regionOf('https://nls-meta.cn-beijing.aliyuncs.com/')).toBe('cn-beijing');
    expect(regionOf('https://nls-meta.cn-shanghai.aliyuncs.com/')).toBe('cn-shanghai');
    expect(regionOf('http://127.0.0.1:9000/')).toBe('cn-shanghai');
  });
});

describe('CreateToken', () => {
  it('sends a signed CreateToken request the server verifies, and returns the token and its expiry', async () => {
    const before = Date.now();
    const token = await createToken(credentials());

    expect(token.id).toMatch(/^[0-9a-f]{32}$/);
    expect(token.expiresAt).toBeGreaterThan(before + 59 * 60_000);
    const request = nls.tokenRequests.at(-1);
    expect(request?.status).toBe(200);
    expect(request?.token).toBe(token.id);
    expect(request?.params).toMatchObject({
      AccessKeyId: AK_ID,
      Action: 'CreateToken',
      Version: '2019-02-28',
      Format: 'JSON',
      RegionId: 'cn-shanghai',
      SignatureMethod: 'HMAC-SHA1',
      SignatureVersion: '1.0',
    });
    expect(request?.params.Timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(request?.params.SignatureNonce).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
    // The secret itself never travels.
    expect(JSON.stringify(request?.params)).not.toContain(AK_SECRET);
  });

  it('the server refuses a replayed nonce, as POP does', async () => {
    const query = createTokenQuery(credentials(), Date.now(), 'f0e1d2c3-b4a5-4968-8776-655443322110');
    const first = await fetch(`${nls.tokenUrl}?${query}`);
    const second = await fetch(`${nls.tokenUrl}?${query}`);
    expect(first.status).toBe(200);
    expect(second.status).toBe(400);
    expect(await second.json()).toMatchObject({ Code: 'SignatureNonceUsed' });
  });

  it('a wrong AccessKey Secret is an auth error naming the profile, without the secret', async () => {
    const wrong = 'nlsSecret-wrong-0000000000000000';
    const err = await refusal(createToken(credentials({ accessKeySecret: wrong })));
    expect(err.kind).toBe('auth');
    expect(err.upstreamStatus).toBe(400);
    expect(err.message).toContain('语音识别配置');
    expect(err.message).toContain('AccessKey Secret');
    expect(err.message).not.toContain(wrong);
    expect(nls.tokenRequests.at(-1)?.code).toBe('SignatureDoesNotMatch');
  });

  it('an unknown AccessKey ID is an auth error', async () => {
    const err = await refusal(createToken(credentials({ accessKeyId: 'LTAI5tNoSuchKey' })));
    expect(err.kind).toBe('auth');
    expect(err.upstreamStatus).toBe(404);
    expect(err.message).toContain('AccessKey ID');
    expect(nls.tokenRequests.at(-1)?.code).toBe('InvalidAccessKeyId.NotFound');
  });

  it('a clock far from the server is refused by the timestamp check', async () => {
    const skewed: Clock = { now: () => Date.now() - 20 * 60_000, sleep: systemClock.sleep };
    const err = await refusal(createToken(credentials(), { clock: skewed }));
    expect(err.kind).toBe('bad_request');
    expect(err.message).toContain('时钟');
    expect(nls.tokenRequests.at(-1)?.code).toBe('InvalidTimeStamp.Expired');
  });

  it('an unreachable endpoint is a network error', async () => {
    const err = await refusal(createToken({ ...credentials(), tokenUrl: 'http://127.0.0.1:1/' }));
    expect(err.kind).toBe('network');
  });
});

describe('token cache', () => {
  it('shares one token until shortly before it expires, and fetches once for concurrent callers', async () => {
    // The server keeps the same (simulated) time as the client, as a synchronised clock would.
    let now = Date.now();
    const clock: Clock = { now: () => now, sleep: systemClock.sleep };
    const server = await startFakeAliyunNls({
      accessKeys: { [AK_ID]: AK_SECRET },
      tokenTtlMs: 60 * 60_000,
      now: () => now,
    });
    try {
      const creds = { ...credentials(), tokenUrl: server.tokenUrl };
      const cache = new AliyunTokenCache(10 * 60_000);

      const [a, b] = await Promise.all([cache.get(creds, { clock }), cache.get(creds, { clock })]);
      expect(a.token).toBe(b.token);
      expect(server.tokenRequests).toHaveLength(1);

      now += 45 * 60_000;
      expect(await cache.get(creds, { clock })).toEqual({ token: a.token, cached: true });
      expect(server.tokenRequests).toHaveLength(1);

      // 60 min lifetime, refreshed 10 min before the end.
      now += 6 * 60_000;
      const refreshed = await cache.get(creds, { clock });
      expect(refreshed.cached).toBe(false);
      expect(refreshed.token).not.toBe(a.token);
      expect(server.tokenRequests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it('forgets a token the gateway refused, and keeps pairs apart', async () => {
    const cache = new AliyunTokenCache();
    const first = await cache.get(credentials());
    cache.invalidate(credentials(), first.token);
    const second = await cache.get(credentials());
    expect(second.cached).toBe(false);
    expect(second.token).not.toBe(first.token);

    // Same id, another secret: not the same entry (and here, a refused one).
    await refusal(cache.get(credentials({ accessKeySecret: 'another-secret-value' })));
    expect((await cache.get(credentials())).token).toBe(second.token);
  });
});
