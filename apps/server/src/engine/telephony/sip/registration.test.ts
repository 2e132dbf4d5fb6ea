import { afterEach, describe, expect, it } from 'vitest';
import { buildResponse, cseqOf } from './dialog';
import { formatChallenge, verifyCredentials } from './digest';
import type { SipRequest } from './message';
import { Registration, type RegistrationStatus } from './registration';
import { createSipStack, type SipStack } from './stack';
import { createSipTimers } from './timers';
import { createTransactionLayer } from './transaction';
import { createSipTransport, type SipTransport } from './transport';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A registrar that challenges with digest (qop=auth), may demand a minimum expiry, and grants. */
async function fakeRegistrar(rules: {
  password: string;
  minExpires?: number;
  grant?: (asked: number) => number;
}) {
  const transport: SipTransport = await createSipTransport({
    host: '127.0.0.1',
    port: 0,
    protocols: ['udp'],
  });
  const layer = createTransactionLayer({ transport, timers: createSipTimers(), t1: 20, t2: 160, t4: 50 });
  closers.push(async () => {
    layer.close();
    await transport.close();
  });
  const seen: SipRequest[] = [];
  let nonce = 0;
  layer.onRequest((request, tx) => {
    seen.push(request);
    const authorization = request.headers.get('Authorization');
    const verdict = authorization
      ? verifyCredentials(authorization, request, {
          realm: 'carrier.example.cn',
          password: () => rules.password,
        })
      : null;
    if (!verdict?.ok) {
      const challenge = buildResponse(request, 401, 'Unauthorized', {
        toTag: 'reg',
        headers: [
          [
            'WWW-Authenticate',
            formatChallenge({ realm: 'carrier.example.cn', nonce: `n${++nonce}`, qop: ['auth'] }),
          ],
        ],
      });
      tx.respond(challenge);
      return;
    }
    const asked = Number(request.headers.get('Expires'));
    if (rules.minExpires && asked > 0 && asked < rules.minExpires) {
      tx.respond(
        buildResponse(request, 423, 'Interval Too Brief', {
          toTag: 'reg',
          headers: [['Min-Expires', String(rules.minExpires)]],
        }),
      );
      return;
    }
    const granted = rules.grant ? rules.grant(asked) : asked;
    const contact = request.headers.get('Contact') ?? '';
    tx.respond(
      buildResponse(request, 200, 'OK', {
        toTag: 'reg',
        headers: [['Contact', `${contact};expires=${granted}`]],
      }),
    );
  });
  return { port: transport.local.port, seen };
}

async function client(
  registrar: { port: number },
  options: { password: string; expires: number },
  onStatus: (status: RegistrationStatus) => void,
) {
  const stack: SipStack = await createSipStack({
    host: '127.0.0.1',
    port: 0,
    protocols: ['udp'],
    t1: 20,
    t2: 160,
    t4: 50,
  });
  closers.push(() => stack.close());
  const registration = new Registration(stack.port, {
    destination: { protocol: 'udp', address: '127.0.0.1', port: registrar.port },
    domain: 'carrier.example.cn',
    username: '02160881000',
    password: options.password,
    expires: options.expires,
    contact: stack.agent.contact(),
    onStatus,
  });
  closers.push(() => registration.stop());
  return registration;
}

const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('trunk registration', () => {
  it('answers the digest challenge, registers, and refreshes on the same Call-ID before expiry', async () => {
    const registrar = await fakeRegistrar({ password: 's3cret', grant: () => 2 });
    const statuses: RegistrationStatus[] = [];
    const registration = await client(registrar, { password: 's3cret', expires: 300 }, (s) =>
      statuses.push(s),
    );
    registration.start();
    await until(() => registration.status.state === 'registered');
    // Granted 2 s: the refresh goes out after about 1 s, with credentials straight away.
    await until(() => registrar.seen.filter((r) => r.headers.has('Authorization')).length >= 2, 4000);
    const authorised = registrar.seen.filter((r) => r.headers.has('Authorization'));
    expect(new Set(registrar.seen.map((r) => r.headers.get('Call-ID'))).size).toBe(1);
    const seqs = registrar.seen.map((r) => cseqOf(r)!.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(authorised[1]!.headers.get('Authorization')).toContain('nc=');
    expect(statuses.map((s) => s.state)).toContain('registered');
    expect(statuses.some((s) => s.state === 'failed')).toBe(false);
  });

  it('raises its expiry to the registrar’s Min-Expires after 423', async () => {
    const registrar = await fakeRegistrar({ password: 'pw', minExpires: 600 });
    const registration = await client(registrar, { password: 'pw', expires: 60 }, () => {});
    registration.start();
    await until(() => registration.status.state === 'registered');
    expect(registrar.seen.at(-1)!.headers.get('Expires')).toBe('600');
    expect(registration.status.expiresAt! - Date.now()).toBeGreaterThan(590_000);
  });

  it('reports a wrong password as failed with a reason, without looping on the challenge', async () => {
    const registrar = await fakeRegistrar({ password: 'right' });
    const registration = await client(registrar, { password: 'wrong', expires: 300 }, () => {});
    registration.start();
    await until(() => registration.status.state === 'failed');
    expect(registration.status.detail).toContain('认证失败');
    // One bare REGISTER and one answer to the challenge: the rejected credentials are not resent.
    expect(registrar.seen).toHaveLength(2);
  });

  it('reports an unreachable registrar as failed', async () => {
    const registration = await client({ port: 9 }, { password: 'x', expires: 300 }, () => {});
    registration.start();
    await until(() => registration.status.state === 'failed', 8000);
    expect(registration.status.detail).toMatch(/超时|无法连接/);
  });
});
