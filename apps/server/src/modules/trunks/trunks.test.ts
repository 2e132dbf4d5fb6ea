import { eq, sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser, testEnv } from '../../../test/helpers';
import { memberships, projectNumbers, projects, sipTrunks } from '../../db/schema';
import { loadAppSecret } from '../../lib/secret-box';
import type { SipTrunk, TrunkControl, TrunkLiveStatus } from '../../runtime/trunk-control';
import { trunkDirectory, UNREADABLE_PASSWORD } from './trunk-directory';

const PASSWORD = 'Carrier-Secret-7781';
const APP_SECRET = 'test-app-secret-0123456789abcdef-0123';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
let logs: string[] = [];
afterEach(async () => {
  await current?.app.close();
  current = undefined;
  logs = [];
});

async function setup(options: { trunks?: TrunkControl; captureLogs?: boolean } = {}) {
  current = await createTestApp({
    env: { APP_SECRET },
    // Everything the server logs, at every level, to prove the password never reaches it.
    logger: options.captureLogs
      ? { level: 'trace', stream: { write: (line: string) => logs.push(line) } }
      : false,
    trunks: options.trunks,
  });
  const { app, db } = current;
  const a = await seedUser(db, { email: 'owner@example.com' });
  const m = await seedUser(db, { email: 'member@example.com', project: null });
  await db.insert(memberships).values({ projectId: a.projectId, userId: m.userId, role: 'member' });
  const b = await seedUser(db, { email: 'other@example.com' });
  return {
    ...current,
    a,
    b,
    url: `/api/project/${a.projectId}/trunks`,
    numbers: `/api/project/${a.projectId}/numbers`,
    owner: await loginAs(app, 'owner@example.com'),
    member: await loginAs(app, 'member@example.com'),
    outsider: await loginAs(app, 'other@example.com'),
    directory: trunkDirectory(db, loadAppSecret(testEnv({ APP_SECRET }))),
  };
}

const registerTrunk = (over: Record<string, unknown> = {}) => ({
  name: '电信 SIP 中继',
  kind: 'register',
  registrar: 'SIP.Carrier.example.com:5060',
  username: '02160880000',
  password: PASSWORD,
  ...over,
});

const ipTrunk = (over: Record<string, unknown> = {}) => ({
  name: 'PBX 对接',
  kind: 'ip',
  signallingAddress: '203.0.113.10',
  peerAddresses: ['203.0.113.10', '198.51.100.0/24', '198.51.100.0/24', '2001:DB8::/32'],
  codecs: ['PCMU'],
  callerIdFormat: 'e164',
  maxConcurrent: 120,
  ...over,
});

const SIM_STATUS = {
  state: 'sip_off',
  detail: '服务器当前运行在模拟线路（TELEPHONY=sim）',
  registeredAt: null,
  optionsAt: null,
  optionsRttMs: null,
  optionsStatus: null,
  activeCalls: null,
};

describe('SIP trunks (线路管理)', () => {
  it('creates both kinds in one stored spelling, lists them page by page, and never gives the password back', async () => {
    const { app, db, url, owner } = await setup({ captureLogs: true });
    const bodies: string[] = [];
    const send = async (request: { method: 'GET' | 'POST' | 'PUT'; url: string; payload?: object }) => {
      const res = await app.inject({ ...request, headers: owner });
      bodies.push(res.body);
      return res;
    };

    const created = await send({ method: 'POST', url, payload: registerTrunk() });
    expect(created.statusCode, created.body).toBe(200);
    expect(created.json().data).toMatchObject({
      name: '电信 SIP 中继',
      kind: 'register',
      transport: 'udp',
      registrar: 'sip.carrier.example.com:5060',
      username: '02160880000',
      authUsername: '',
      hasPassword: true,
      passwordHint: '81',
      registerExpires: 300,
      outboundProxy: '',
      signallingAddress: '',
      peerAddresses: [],
      codecs: ['PCMA', 'PCMU'],
      callerIdFormat: 'national',
      maxConcurrent: 30,
      enabled: true,
      numberCount: 0,
      // The only carrier today is the simulated one, and the status says so.
      status: SIM_STATUS,
    });
    expect(created.json().data).not.toHaveProperty('password');
    const ip = await send({ method: 'POST', url, payload: ipTrunk() });
    expect(ip.json().data).toMatchObject({
      kind: 'ip',
      registrar: '',
      hasPassword: false,
      signallingAddress: '203.0.113.10',
      // Canonical, duplicates dropped.
      peerAddresses: ['203.0.113.10', '198.51.100.0/24', '2001:db8::/32'],
      codecs: ['PCMU'],
      callerIdFormat: 'e164',
      maxConcurrent: 120,
    });

    const first = (await send({ method: 'GET', url: `${url}?pageSize=1` })).json().data;
    expect(first).toMatchObject({ total: 2, page: 1, pageSize: 1 });
    expect(first.items.map((t: { name: string }) => t.name)).toEqual(['电信 SIP 中继']);
    const second = (await send({ method: 'GET', url: `${url}?pageSize=1&page=2` })).json().data;
    expect(second.items.map((t: { name: string }) => t.name)).toEqual(['PBX 对接']);

    const id = created.json().data.id;
    expect((await send({ method: 'GET', url: `${url}/${id}` })).json().data.registrar).toBe(
      'sip.carrier.example.com:5060',
    );
    const status = await send({ method: 'GET', url: `${url}/${id}/status` });
    expect(status.json().data).toEqual(SIM_STATUS);
    await send({ method: 'PUT', url: `${url}/${id}`, payload: registerTrunk({ name: '电信主线' }) });
    await send({ method: 'PUT', url: `${url}/${id}/enabled`, payload: { enabled: false } });

    for (const body of bodies) expect(body).not.toContain(PASSWORD);
    const [row] = await db.select().from(sipTrunks).where(eq(sipTrunks.id, id));
    expect(row?.passwordEncrypted).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(row?.passwordEncrypted).not.toContain(PASSWORD);
    // The capture works (requests were logged), and none of it holds the password.
    expect(logs.length).toBeGreaterThan(5);
    expect(logs.join('\n')).not.toContain(PASSWORD);
  });

  it('keeps the password when the field is left empty, replaces it when given, drops it with the kind', async () => {
    const { app, url, owner, directory } = await setup();
    const id = (await app.inject({ method: 'POST', url, headers: owner, payload: registerTrunk() })).json()
      .data.id;
    const { password: _omitted, ...withoutPassword } = registerTrunk();

    const renamed = await app.inject({
      method: 'PUT',
      url: `${url}/${id}`,
      headers: owner,
      payload: { ...withoutPassword, name: '电信主线', authUsername: 'auth-7781', registerExpires: 600 },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json().data).toMatchObject({ name: '电信主线', hasPassword: true, passwordHint: '81' });
    expect(await directory.get(id)).toMatchObject({
      password: PASSWORD,
      username: '02160880000',
      authUsername: 'auth-7781',
      registerExpires: 600,
      registrar: { host: 'sip.carrier.example.com', port: 5060, isIpv6: false },
    });
    await app.inject({
      method: 'PUT',
      url: `${url}/${id}`,
      headers: owner,
      payload: registerTrunk({ password: '' }),
    });
    expect((await directory.get(id))?.password).toBe(PASSWORD);

    const replaced = await app.inject({
      method: 'PUT',
      url: `${url}/${id}`,
      headers: owner,
      payload: registerTrunk({ password: 'short' }),
    });
    // Too short to hint at without giving it away.
    expect(replaced.json().data).toMatchObject({ hasPassword: true, passwordHint: '' });
    expect((await directory.get(id))?.password).toBe('short');

    const toIp = await app.inject({ method: 'PUT', url: `${url}/${id}`, headers: owner, payload: ipTrunk() });
    expect(toIp.json().data).toMatchObject({ kind: 'ip', registrar: '', username: '', hasPassword: false });
    expect(await directory.get(id)).toMatchObject({ password: '', registrar: null, authUsername: '' });
    // Back to 注册: nothing is stored any more, so a password is needed again.
    const noPassword = await app.inject({
      method: 'PUT',
      url: `${url}/${id}`,
      headers: owner,
      payload: withoutPassword,
    });
    expect(noPassword.statusCode).toBe(400);
    expect(noPassword.json().message).toBe('字段 password：注册线路须填写密码');
    expect((await app.inject({ method: 'GET', url: `${url}/${id}`, headers: owner })).json().data.kind).toBe(
      'ip',
    );
  });

  it('refuses each invalid field with a 400 naming the field and the rule, and stores nothing', async () => {
    const { app, db, url, owner } = await setup();
    const cases: [Record<string, unknown>, string][] = [
      [registerTrunk({ name: ' ' }), '请输入线路名称'],
      [registerTrunk({ kind: 'pstn' }), '线路类型须为 register（注册）或 ip（IP 对接）'],
      [registerTrunk({ transport: 'tls' }), '传输协议须为 udp 或 tcp'],
      [registerTrunk({ registrar: '' }), '字段 registrar：注册服务器：注册线路须填写，格式应为 主机[:端口]'],
      [registerTrunk({ registrar: 'sip.example.com/x' }), '注册服务器：格式应为 主机[:端口]'],
      [registerTrunk({ registrar: 'sip:sip.example.com' }), '注册服务器：请去掉 sip: 前缀'],
      [registerTrunk({ registrar: 'sip.example.com:70000' }), '注册服务器：端口须为 1 到 65535 之间的整数'],
      [registerTrunk({ registrar: '2001:db8::1' }), '注册服务器：IPv6 地址须写在方括号内'],
      [registerTrunk({ username: '' }), '字段 username：用户名：注册线路须填写'],
      [registerTrunk({ username: 'alice@example.com' }), '用户名：只能包含字母、数字和 - _ . + 等符号'],
      [registerTrunk({ authUsername: 'a b' }), '认证用户名：只能包含字母、数字和 - _ . + 等符号'],
      [registerTrunk({ password: undefined }), '字段 password：注册线路须填写密码'],
      [registerTrunk({ password: 'x'.repeat(129) }), '密码不能超过 128 个字符'],
      [registerTrunk({ registerExpires: 59 }), '注册有效期：须在 60 到 3600 秒之间'],
      [registerTrunk({ registerExpires: 3601 }), '注册有效期：须在 60 到 3600 秒之间'],
      [registerTrunk({ registerExpires: 300.5 }), '注册有效期：须为整数（秒）'],
      [registerTrunk({ outboundProxy: 'proxy..example.com' }), '出站代理：格式应为 主机[:端口]'],
      [ipTrunk({ signallingAddress: '' }), '字段 signallingAddress：信令地址：IP 对接线路须填写'],
      [ipTrunk({ signallingAddress: '999.1.1.1' }), '信令地址：999.1.1.1 不是有效的 IPv4 地址'],
      [ipTrunk({ peerAddresses: [] }), '字段 peerAddresses：对端地址：至少填写一个 IP 或网段（CIDR）'],
      [
        ipTrunk({ peerAddresses: ['pbx.example.com'] }),
        '字段 peerAddresses.0：对端地址：请填写 IP 或网段（CIDR）',
      ],
      [
        ipTrunk({ peerAddresses: ['10.0.0.1/24'] }),
        '对端地址：网段 10.0.0.1/24 的主机位不为 0，应写作 10.0.0.0/24',
      ],
      [ipTrunk({ peerAddresses: ['0.0.0.0/0'] }), '对端地址：不能放行所有地址'],
      [ipTrunk({ peerAddresses: ['10.0.0.0/33'] }), '对端地址：网段前缀须为 0 到 32 之间的整数'],
      [
        ipTrunk({ peerAddresses: Array.from({ length: 21 }, (_, i) => `10.0.0.${i}`) }),
        '对端地址：最多填写 20 个',
      ],
      [ipTrunk({ codecs: [] }), '语音编码：至少选择一种'],
      [ipTrunk({ codecs: ['G729'] }), '语音编码只支持 PCMA 和 PCMU'],
      [ipTrunk({ codecs: ['PCMA', 'PCMA'] }), '语音编码：不能重复'],
      [ipTrunk({ callerIdFormat: 'intl' }), '主叫号码格式须为 e164、national 或 raw'],
      [ipTrunk({ maxConcurrent: 0 }), '并发上限：须在 1 到 10000 之间'],
      [ipTrunk({ maxConcurrent: 10_001 }), '并发上限：须在 1 到 10000 之间'],
      [ipTrunk({ maxConcurrent: '30' }), '并发上限：须为整数'],
      [ipTrunk({ enabled: 'yes' }), '是否启用须为布尔值'],
    ];
    for (const [payload, message] of cases) {
      const res = await app.inject({ method: 'POST', url, headers: owner, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message, JSON.stringify(payload)).toContain(message);
    }
    expect(await db.select().from(sipTrunks)).toHaveLength(0);

    const id = (await app.inject({ method: 'POST', url, headers: owner, payload: registerTrunk() })).json()
      .data.id;
    const twin = await app.inject({
      method: 'POST',
      url,
      headers: owner,
      payload: ipTrunk({ name: '电信 SIP 中继' }),
    });
    expect(twin.statusCode).toBe(409);
    expect(twin.json().message).toBe('已存在同名的线路「电信 SIP 中继」');
    const badUpdate = await app.inject({
      method: 'PUT',
      url: `${url}/${id}`,
      headers: owner,
      payload: registerTrunk({ registrar: 'bad host' }),
    });
    expect(badUpdate.statusCode).toBe(400);
    const [row] = await db.select().from(sipTrunks);
    expect(row?.registrar).toBe('sip.carrier.example.com:5060');
    expect(await db.select().from(sipTrunks)).toHaveLength(1);
  });

  it('numbers go on a trunk; a trunk with numbers is not deleted, the refusal names them', async () => {
    const { app, db, a, url, numbers, owner } = await setup();
    const trunk = (await app.inject({ method: 'POST', url, headers: owner, payload: ipTrunk() })).json().data;
    const onTrunk = await app.inject({
      method: 'POST',
      url: numbers,
      headers: owner,
      payload: { number: '021-6088 0000', trunkId: trunk.id },
    });
    expect(onTrunk.statusCode, onTrunk.body).toBe(200);
    expect(onTrunk.json().data).toMatchObject({
      number: '02160880000',
      trunkId: trunk.id,
      trunkName: 'PBX 对接',
    });
    await app.inject({ method: 'POST', url: numbers, headers: owner, payload: { number: '13800138000' } });
    const moved = await app.inject({
      method: 'PUT',
      url: `${numbers}/13800138000`,
      headers: owner,
      payload: { trunkId: trunk.id },
    });
    expect(moved.json().data).toMatchObject({ trunkId: trunk.id, trunkName: 'PBX 对接', enabled: true });
    const list = (await app.inject({ method: 'GET', url: numbers, headers: owner })).json().data;
    expect(list.map((n: { number: string; trunkName: string }) => [n.number, n.trunkName])).toEqual([
      ['02160880000', 'PBX 对接'],
      ['13800138000', 'PBX 对接'],
    ]);
    expect((await app.inject({ method: 'GET', url, headers: owner })).json().data.items[0].numberCount).toBe(
      2,
    );
    const unknown = await app.inject({
      method: 'PUT',
      url: `${numbers}/13800138000`,
      headers: owner,
      payload: { trunkId: 'no-such-trunk' },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toBe('字段 trunkId：线路不存在，请在线路管理中选择本项目的线路');

    const refused = await app.inject({ method: 'DELETE', url: `${url}/${trunk.id}`, headers: owner });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toBe(
      '线路「PBX 对接」仍有号码 02160880000、13800138000 在使用，请先在号码管理中把这些号码改用其他线路或模拟线路后再删除',
    );
    // Label edits leave the trunk alone; null puts the number back on the simulated carrier.
    await app.inject({
      method: 'PUT',
      url: `${numbers}/02160880000`,
      headers: owner,
      payload: { label: '总机' },
    });
    expect(
      (await app.inject({ method: 'DELETE', url: `${url}/${trunk.id}`, headers: owner })).statusCode,
    ).toBe(409);
    for (const number of ['02160880000', '13800138000']) {
      const back = await app.inject({
        method: 'PUT',
        url: `${numbers}/${number}`,
        headers: owner,
        payload: { trunkId: null },
      });
      expect(back.json().data).toMatchObject({ trunkId: null, trunkName: null });
    }
    expect(
      (await app.inject({ method: 'DELETE', url: `${url}/${trunk.id}`, headers: owner })).statusCode,
    ).toBe(200);
    expect(await db.select().from(sipTrunks)).toHaveLength(0);
    expect(
      (await app.inject({ method: 'DELETE', url: `${url}/${trunk.id}`, headers: owner })).statusCode,
    ).toBe(404);

    // The database refuses it too, yet a project goes with its trunks and numbers.
    const again = (await app.inject({ method: 'POST', url, headers: owner, payload: ipTrunk() })).json().data;
    await app.inject({
      method: 'PUT',
      url: `${numbers}/13800138000`,
      headers: owner,
      payload: { trunkId: again.id },
    });
    await expect(db.delete(sipTrunks).where(eq(sipTrunks.id, again.id))).rejects.toThrow();
    await db.delete(projects).where(eq(projects.id, a.projectId));
    expect(await db.select().from(projectNumbers)).toHaveLength(0);
  });

  it('members read, only owners and admins write or test; another project can neither see nor borrow a trunk', async () => {
    const { app, db, b, url, owner, member, outsider } = await setup();
    const trunk = (await app.inject({ method: 'POST', url, headers: owner, payload: registerTrunk() })).json()
      .data;
    const read = await app.inject({ method: 'GET', url, headers: member });
    expect(read.json().data.items).toHaveLength(1);
    expect(read.body).not.toContain(PASSWORD);
    expect(
      (await app.inject({ method: 'GET', url: `${url}/${trunk.id}/status`, headers: member })).statusCode,
    ).toBe(200);

    const writes = [
      { method: 'POST' as const, url, payload: ipTrunk() },
      { method: 'PUT' as const, url: `${url}/${trunk.id}`, payload: registerTrunk({ name: '改' }) },
      { method: 'PUT' as const, url: `${url}/${trunk.id}/enabled`, payload: { enabled: false } },
      { method: 'POST' as const, url: `${url}/${trunk.id}/test-call`, payload: { number: '13800138000' } },
      { method: 'DELETE' as const, url: `${url}/${trunk.id}` },
    ];
    for (const request of writes) {
      const res = await app.inject({ ...request, headers: member });
      expect(res.statusCode, `${request.method} ${request.url}`).toBe(403);
      expect(res.json().message).toBe('仅项目所有者或管理员可以管理线路');
    }
    const reads = [
      { method: 'GET' as const, url },
      { method: 'GET' as const, url: `${url}/${trunk.id}` },
      { method: 'GET' as const, url: `${url}/${trunk.id}/status` },
    ];
    for (const request of [...reads, ...writes]) {
      const res = await app.inject({ ...request, headers: outsider });
      expect(res.statusCode, `${request.method} ${request.url}`).toBe(403);
      expect(res.body).not.toContain('电信');
    }
    // Through their own project, A's trunk id is simply not there...
    const theirs = `/api/project/${b.projectId}`;
    for (const request of [
      { method: 'GET' as const, url: `${theirs}/trunks/${trunk.id}` },
      { method: 'GET' as const, url: `${theirs}/trunks/${trunk.id}/status` },
      {
        method: 'PUT' as const,
        url: `${theirs}/trunks/${trunk.id}`,
        payload: registerTrunk({ name: '偷改' }),
      },
      { method: 'PUT' as const, url: `${theirs}/trunks/${trunk.id}/enabled`, payload: { enabled: false } },
      {
        method: 'POST' as const,
        url: `${theirs}/trunks/${trunk.id}/test-call`,
        payload: { number: '13800138000' },
      },
      { method: 'DELETE' as const, url: `${theirs}/trunks/${trunk.id}` },
    ]) {
      const res = await app.inject({ ...request, headers: outsider });
      expect(res.statusCode, `${request.method} ${request.url}`).toBe(404);
      expect(res.json().message).toBe('线路不存在');
    }
    // ...and cannot carry their numbers' calls.
    const borrowed = await app.inject({
      method: 'POST',
      url: `${theirs}/numbers`,
      headers: outsider,
      payload: { number: '13900139000', trunkId: trunk.id },
    });
    expect(borrowed.statusCode).toBe(400);
    expect(borrowed.json().message).toBe('字段 trunkId：线路不存在，请在线路管理中选择本项目的线路');
    await app.inject({
      method: 'POST',
      url: `${theirs}/numbers`,
      headers: outsider,
      payload: { number: '13900139000' },
    });
    const moved = await app.inject({
      method: 'PUT',
      url: `${theirs}/numbers/13900139000`,
      headers: outsider,
      payload: { trunkId: trunk.id },
    });
    expect(moved.statusCode).toBe(400);
    // The (project_id, trunk_id) reference holds even for a write that skips the service.
    await expect(
      db.execute(sql`update project_numbers set trunk_id = ${trunk.id} where project_id = ${b.projectId}`),
    ).rejects.toThrow();
    const [row] = await db.select().from(sipTrunks);
    expect(row).toMatchObject({ name: '电信 SIP 中继', enabled: true });
    expect((await db.select().from(projectNumbers)).map((n) => n.trunkId)).toEqual([null]);
  });

  it('测试呼叫 on the simulated carrier: an honest 409, after the usual 400 and 404', async () => {
    const { app, url, owner } = await setup();
    const trunk = (await app.inject({ method: 'POST', url, headers: owner, payload: registerTrunk() })).json()
      .data;
    const badNumber = await app.inject({
      method: 'POST',
      url: `${url}/${trunk.id}/test-call`,
      headers: owner,
      payload: { number: '138-0013' },
    });
    expect(badNumber.statusCode).toBe(400);
    expect(badNumber.json().message).toContain('被叫号码：只能包含数字（可用 + 开头），2 到 32 位');
    const missing = await app.inject({
      method: 'POST',
      url: `${url}/nope/test-call`,
      headers: owner,
      payload: { number: '13800138000' },
    });
    expect(missing.statusCode).toBe(404);
    const refused = await app.inject({
      method: 'POST',
      url: `${url}/${trunk.id}/test-call`,
      headers: owner,
      payload: { number: '13800138000' },
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.headers['content-type']).toContain('application/json');
    expect(refused.json()).toMatchObject({
      success: false,
      code: 'CONFLICT',
      message: '本服务器未启用 SIP 线路：服务器当前运行在模拟线路（TELEPHONY=sim），无法发起测试呼叫',
    });
  });
});

/** A SIP runtime as the port sees it: scripted status, and a test call that plays given steps. */
function scriptedControl() {
  const live = new Map<string, TrunkLiveStatus>();
  const changed: string[] = [];
  const dialled: { trunk: SipTrunk; number: string }[] = [];
  let release: () => void = () => {};
  let hold: Promise<void> = Promise.resolve();
  const control: TrunkControl = {
    unavailable: null,
    status: (id) => live.get(id) ?? null,
    changed: (id) => changed.push(id),
    async testCall(trunk, number, { onStep }) {
      dialled.push({ trunk, number });
      onStep({
        at: 0,
        direction: 'out',
        message: `INVITE sip:${number}@sip.carrier.example.com`,
        status: null,
        note: '',
      });
      onStep({ at: 12, direction: 'in', message: '401 Unauthorized', status: 401, note: '需要鉴权' });
      await hold;
      onStep({ at: 40, direction: 'in', message: '486 Busy Here', status: 486, note: '对方忙' });
      return { ok: false, message: '对方忙（486）' };
    },
  };
  return {
    control,
    live,
    changed,
    dialled,
    holdCalls() {
      hold = new Promise((resolve) => {
        release = resolve;
      });
    },
    release: () => release(),
  };
}

describe('trunks with a SIP runtime behind the port', () => {
  it('shows live status, else what the runtime stored, and says when a registration went stale', async () => {
    const sip = scriptedControl();
    const { app, db, url, owner, directory } = await setup({ trunks: sip.control });
    const reg = (await app.inject({ method: 'POST', url, headers: owner, payload: registerTrunk() })).json()
      .data;
    const ip = (await app.inject({ method: 'POST', url, headers: owner, payload: ipTrunk() })).json().data;
    expect(reg.status).toMatchObject({ state: 'unregistered', detail: null });
    expect(ip.status).toMatchObject({ state: 'unknown' });
    expect(sip.changed).toEqual([reg.id, ip.id]);
    const status = async (id: string) =>
      (await app.inject({ method: 'GET', url: `${url}/${id}/status`, headers: owner })).json().data;

    await directory.recordRegistration(reg.id, {
      state: 'failed',
      detail: '403 Forbidden（账号或密码错误）',
      at: new Date(),
    });
    await directory.recordOptions(ip.id, { at: new Date(), rttMs: 18, status: 200 });
    expect(await status(reg.id)).toMatchObject({
      state: 'failed',
      detail: '403 Forbidden（账号或密码错误）',
    });
    expect(await status(ip.id)).toMatchObject({ state: 'reachable', optionsRttMs: 18, optionsStatus: 200 });
    await directory.recordOptions(ip.id, { at: new Date(), rttMs: null, status: 408 });
    expect(await status(ip.id)).toMatchObject({ state: 'unreachable', detail: '对端无应答（OPTIONS 超时）' });

    const registeredAt = new Date(Date.now() - 10 * 60_000);
    await directory.recordRegistration(reg.id, { state: 'registered', detail: '', at: registeredAt });
    // 300 s expiry, not refreshed for 10 minutes: whoever registered it is gone.
    expect(await status(reg.id)).toMatchObject({
      state: 'unregistered',
      detail: '注册已过期，未见刷新（SIP 进程可能已停止）',
    });
    sip.live.set(reg.id, {
      registration: { state: 'registered', detail: '', at: registeredAt },
      options: null,
      activeCalls: 3,
    });
    expect(await status(reg.id)).toMatchObject({
      state: 'registered',
      registeredAt: registeredAt.toISOString(),
      activeCalls: 3,
    });
    const list = (await app.inject({ method: 'GET', url, headers: owner })).json().data.items;
    expect(list.map((t: { status: { state: string } }) => t.status.state)).toEqual([
      'registered',
      'unreachable',
    ]);

    await app.inject({
      method: 'PUT',
      url: `${url}/${reg.id}/enabled`,
      headers: owner,
      payload: { enabled: false },
    });
    expect(await status(reg.id)).toMatchObject({ state: 'disabled' });
    await app.inject({ method: 'DELETE', url: `${url}/${ip.id}`, headers: owner });
    expect(sip.changed).toEqual([reg.id, ip.id, reg.id, ip.id]);

    // A password sealed with another server secret: the runtime skips the trunk and the console says why.
    await app.inject({
      method: 'PUT',
      url: `${url}/${reg.id}/enabled`,
      headers: owner,
      payload: { enabled: true },
    });
    const stranger = trunkDirectory(db, 'another-secret-0123456789abcdef-xyz');
    expect(await stranger.enabled()).toEqual([]);
    sip.live.clear();
    expect(await status(reg.id)).toMatchObject({ state: 'failed', detail: UNREADABLE_PASSWORD });
  });

  it('streams each SIP step of a 测试呼叫; the runtime gets the password, the browser never does', async () => {
    const sip = scriptedControl();
    const { app, url, owner } = await setup({ trunks: sip.control, captureLogs: true });
    const trunk = (await app.inject({ method: 'POST', url, headers: owner, payload: registerTrunk() })).json()
      .data;
    const res = await app.inject({
      method: 'POST',
      url: `${url}/${trunk.id}/test-call`,
      headers: owner,
      payload: { number: '13800138000' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    const events = res.body
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    expect(events).toEqual([
      {
        type: 'step',
        step: expect.objectContaining({
          direction: 'out',
          message: 'INVITE sip:13800138000@sip.carrier.example.com',
        }),
      },
      { type: 'step', step: expect.objectContaining({ status: 401, note: '需要鉴权' }) },
      { type: 'step', step: expect.objectContaining({ status: 486, note: '对方忙' }) },
      { type: 'done', ok: false, message: '对方忙（486）' },
    ]);
    expect(sip.dialled[0]).toMatchObject({
      number: '13800138000',
      trunk: { password: PASSWORD, authUsername: '02160880000' },
    });
    expect(res.body).not.toContain(PASSWORD);
    expect(logs.join('\n')).not.toContain(PASSWORD);

    // One test call per trunk at a time; a disabled trunk is not dialled.
    sip.holdCalls();
    const first = app.inject({
      method: 'POST',
      url: `${url}/${trunk.id}/test-call`,
      headers: owner,
      payload: { number: '13800138000' },
    });
    await expect.poll(() => sip.dialled.length).toBe(2);
    const second = await app.inject({
      method: 'POST',
      url: `${url}/${trunk.id}/test-call`,
      headers: owner,
      payload: { number: '13800138001' },
    });
    expect(second.statusCode).toBe(409);
    expect(second.json().message).toBe('线路「电信 SIP 中继」正在进行测试呼叫，请等它结束');
    sip.release();
    expect((await first).statusCode).toBe(200);
    await app.inject({
      method: 'PUT',
      url: `${url}/${trunk.id}/enabled`,
      headers: owner,
      payload: { enabled: false },
    });
    const disabled = await app.inject({
      method: 'POST',
      url: `${url}/${trunk.id}/test-call`,
      headers: owner,
      payload: { number: '13800138000' },
    });
    expect(disabled.statusCode).toBe(409);
    expect(disabled.json().message).toBe('线路「电信 SIP 中继」已停用，启用后才能测试呼叫');
    expect(sip.dialled).toHaveLength(2);
  });
});
