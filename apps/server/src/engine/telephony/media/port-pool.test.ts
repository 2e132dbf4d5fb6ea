import dgram from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { PortPool } from './port-pool';

const randomEvenBase = () => 40000 + 2 * Math.floor(Math.random() * 5000);

const occupy = (port: number) =>
  new Promise<dgram.Socket>((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => resolve(socket));
  });

describe('PortPool', () => {
  it('hands out even ports, skips one another program holds, and fails clearly when exhausted', async () => {
    const base = randomEvenBase();
    const squatter = await occupy(base + 2);
    const pool = new PortPool({ min: base - 1, max: base + 5, bindAddress: '127.0.0.1' });
    expect(pool.capacity).toBe(3);
    try {
      const a = await pool.allocate();
      const b = await pool.allocate();
      expect([a.port, b.port]).toEqual([base, base + 4]);
      expect(pool.used).toBe(2);
      await expect(pool.allocate()).rejects.toMatchObject({
        code: 'RTP_PORTS_EXHAUSTED',
        message: expect.stringContaining(`${base - 1}-${base + 5}`),
      });

      a.socket.close();
      pool.release(a.port);
      const again = await pool.allocate();
      expect(again.port).toBe(base);
      again.socket.close();
      b.socket.close();
    } finally {
      squatter.close();
    }
  });

  it('refuses a range without an even port or outside the unprivileged ports', () => {
    expect(() => new PortPool({ min: 30001, max: 30001 })).toThrow(/no even port/);
    expect(() => new PortPool({ min: 80, max: 100 })).toThrow(/invalid RTP port range/);
    expect(() => new PortPool({ min: 30010, max: 30000 })).toThrow(/invalid RTP port range/);
  });
});
