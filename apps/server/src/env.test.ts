import { describe, expect, it } from 'vitest';
import { EnvError, parseEnv } from './env';

const fails = (vars: Record<string, string>) => {
  try {
    parseEnv(vars);
  } catch (err) {
    if (err instanceof EnvError) return err.lines;
    throw err;
  }
  throw new Error('expected parseEnv to fail');
};

describe('parseEnv', () => {
  it('applies the documented defaults', () => {
    const env = parseEnv({}, '/srv/app');
    expect(env.PORT).toBe(3000);
    expect(env.dataDir).toBe('/srv/app/data');
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env.demoEnabled).toBe(true);
    expect(env.demoEmail).toBe('demo@example.com');
  });

  it('names each bad variable on its own line', () => {
    const lines = fails({ PORT: 'abc', LOG_LEVEL: 'loud', DEMO_EMAIL: 'not-an-email' });
    expect(lines).toHaveLength(3);
    expect(lines.find((l) => l.includes('PORT'))).toMatch(
      /^Invalid environment variable PORT: .*\(got "abc"\)$/,
    );
    expect(lines.some((l) => l.startsWith('Invalid environment variable LOG_LEVEL'))).toBe(true);
    expect(lines.some((l) => l.startsWith('Invalid environment variable DEMO_EMAIL'))).toBe(true);
  });

  it('rejects an out-of-range port', () => {
    expect(fails({ PORT: '70000' })[0]).toContain('PORT');
  });

  it('never echoes a database URL back, since it may carry a password', () => {
    const [line] = fails({ DATABASE_URL: 'mysql://user:hunter2@db/x' });
    expect(line).toContain('DATABASE_URL');
    expect(line).not.toContain('hunter2');
  });

  it('turns the demo off on PostgreSQL unless DEMO_EMAIL is set', () => {
    expect(parseEnv({ DATABASE_URL: 'postgres://u@h/db' }).demoEnabled).toBe(false);
    expect(parseEnv({ DATABASE_URL: 'postgres://u@h/db', DEMO_EMAIL: 'Boss@Example.com' })).toMatchObject({
      demoEnabled: true,
      demoEmail: 'boss@example.com',
    });
    expect(parseEnv({ DEMO: 'off' }).demoEnabled).toBe(false);
  });

  it('runs real lines only when asked, with a usable RTP range', () => {
    expect(parseEnv({}).TELEPHONY).toBe('sim');
    expect(parseEnv({ TELEPHONY: 'sip' })).toMatchObject({
      TELEPHONY: 'sip',
      SIP_PORT: 5060,
      RTP_PORT_MIN: 20000,
    });
    expect(fails({ TELEPHONY: 'pstn' })).toEqual([
      'Invalid environment variable TELEPHONY: must be sim or sip (got "pstn")',
    ]);
    // An API process of a SIP deployment says so in the console, though it runs no lines itself.
    expect(parseEnv({ TELEPHONY: 'sip', ROLE: 'api', DATABASE_URL: 'postgres://u@h/db' }).TELEPHONY).toBe(
      'sip',
    );
    expect(fails({ RTP_PORT_MIN: '30000', RTP_PORT_MAX: '30000' })[0]).toMatch(
      /RTP_PORT_MAX: must be above RTP_PORT_MIN/,
    );
  });

  it("reads SIP_PROXY as Kamailio's IP addresses, with or without a port, and names a bad one", () => {
    expect(parseEnv({}).SIP_PROXY).toBeUndefined();
    expect(parseEnv({ SIP_PROXY: '10.0.0.10' }).SIP_PROXY).toEqual([{ host: '10.0.0.10', port: null }]);
    expect(parseEnv({ SIP_PROXY: '10.0.0.10:5060, [fd00::10]:5070,fd00::11' }).SIP_PROXY).toEqual([
      { host: '10.0.0.10', port: 5060 },
      { host: 'fd00::10', port: 5070 },
      { host: 'fd00::11', port: null },
    ]);
    for (const bad of ['kamailio.internal', '10.0.0.10:0', '10.0.0.300', '10.0.0.10,', '[10.0.0.10]:5060']) {
      const [line] = fails({ SIP_PROXY: bad });
      expect(line, bad).toMatch(/^Invalid environment variable SIP_PROXY: must be Kamailio's IP address/);
      expect(line).toContain(`(got ${JSON.stringify(bad)})`);
    }
  });

  it('keeps call flows off private addresses unless FLOW_HTTP_ALLOW_PRIVATE says otherwise', () => {
    expect(parseEnv({}).FLOW_HTTP_ALLOW_PRIVATE).toBe(false);
    expect(parseEnv({ FLOW_HTTP_ALLOW_PRIVATE: 'true' }).FLOW_HTTP_ALLOW_PRIVATE).toBe(true);
    expect(parseEnv({ FLOW_HTTP_ALLOW_PRIVATE: '0' }).FLOW_HTTP_ALLOW_PRIVATE).toBe(false);
    expect(fails({ FLOW_HTTP_ALLOW_PRIVATE: 'sometimes' })[0]).toMatch(
      /^Invalid environment variable FLOW_HTTP_ALLOW_PRIVATE: must be one of true, false/,
    );
  });
});
