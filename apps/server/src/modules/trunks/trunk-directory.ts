import net from 'node:net';
import { type HostPort, parseHostPort } from '@callpilot/contracts';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { projectNumbers, sipTrunks } from '../../db/schema';
import { type AppSecret, decryptSecret, SecretBoxError } from '../../lib/secret-box';
import type { SipTrunk, TrunkLiveStatus } from '../../runtime/trunk-control';
import type { TrunkRow } from './trunks.service';

/** Written on a trunk whose password this server cannot open, so the console says what to do. */
export const UNREADABLE_PASSWORD = '线路密码无法解密（服务器密钥已更换），请在线路管理中重新填写密码';

const hostPortOrNull = (value: string): HostPort | null => {
  if (!value) return null;
  const parsed = parseHostPort(value, '');
  return parsed.ok ? parsed.value : null;
};

function toSipTrunk(row: TrunkRow, password: string): SipTrunk {
  return {
    id: row.id,
    projectId: row.projectId,
    name: row.name,
    kind: row.kind,
    transport: row.transport,
    registrar: hostPortOrNull(row.registrar),
    username: row.username,
    authUsername: row.authUsername || row.username,
    password,
    registerExpires: row.registerExpires,
    outboundProxy: hostPortOrNull(row.outboundProxy),
    signallingAddress: hostPortOrNull(row.signallingAddress),
    peerAddresses: row.peerAddresses,
    codecs: row.codecs,
    callerIdFormat: row.callerIdFormat,
    maxConcurrent: row.maxConcurrent,
    enabled: row.enabled,
  };
}

/**
 * The SIP runtime's view of the trunks table: trunks with their passwords decrypted (the only
 * place that happens), the trunk a number dials through, and the status columns it alone writes.
 */
export function trunkDirectory(db: Database, secret: AppSecret) {
  /** The trunk with its password, or null when the password cannot be opened (marked as failed). */
  async function resolve(row: TrunkRow): Promise<SipTrunk | null> {
    if (!row.passwordEncrypted) return toSipTrunk(row, '');
    try {
      return toSipTrunk(row, decryptSecret(secret, row.passwordEncrypted));
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      await directory.recordRegistration(row.id, {
        state: 'failed',
        detail: UNREADABLE_PASSWORD,
        at: new Date(),
      });
      return null;
    }
  }

  const directory = {
    resolve,

    /** Every enabled trunk of every project: what the SIP runtime registers and accepts calls from. */
    async enabled(): Promise<SipTrunk[]> {
      const rows = await db.select().from(sipTrunks).where(eq(sipTrunks.enabled, true));
      const trunks = await Promise.all(rows.map(resolve));
      return trunks.filter((t): t is SipTrunk => t !== null);
    },

    /** One trunk, enabled or not; null when it is gone (deleted) or its password cannot be opened. */
    async get(trunkId: string): Promise<SipTrunk | null> {
      const [row] = await db.select().from(sipTrunks).where(eq(sipTrunks.id, trunkId)).limit(1);
      return row ? resolve(row) : null;
    },

    /**
     * The trunk a project's number places and receives calls through; null for a number on the
     * simulated carrier or not the project's.
     */
    async forNumber(projectId: string, number: string): Promise<SipTrunk | null> {
      const [row] = await db
        .select({ trunk: sipTrunks })
        .from(projectNumbers)
        .innerJoin(sipTrunks, eq(sipTrunks.id, projectNumbers.trunkId))
        .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.number, number)))
        .limit(1);
      return row ? resolve(row.trunk) : null;
    },

    /** A REGISTER transaction ended (or started): what the console shows after a restart or from another process. */
    async recordRegistration(trunkId: string, registration: NonNullable<TrunkLiveStatus['registration']>) {
      await db
        .update(sipTrunks)
        .set({ regStatus: registration.state, regDetail: registration.detail, regAt: registration.at })
        .where(eq(sipTrunks.id, trunkId));
    },

    /** An OPTIONS ping was answered (or timed out: status 408). */
    async recordOptions(trunkId: string, options: NonNullable<TrunkLiveStatus['options']>) {
      await db
        .update(sipTrunks)
        .set({ optionsAt: options.at, optionsRttMs: options.rttMs, optionsStatus: options.status })
        .where(eq(sipTrunks.id, trunkId));
    },
  };
  return directory;
}

export type TrunkDirectory = ReturnType<typeof trunkDirectory>;

/**
 * Which IP trunk an inbound INVITE's source address belongs to; null means refuse it (403). One
 * BlockList per trunk, built once per trunk set, so a packet costs a few lookups, not a parse.
 */
export function peerMatcher(trunks: readonly SipTrunk[]): (address: string) => SipTrunk | null {
  const lists = trunks
    .filter((t) => t.enabled && t.kind === 'ip')
    .map((trunk) => {
      const list = new net.BlockList();
      for (const entry of trunk.peerAddresses) {
        const [address = '', prefix] = entry.split('/');
        const family = net.isIPv6(address) ? 'ipv6' : 'ipv4';
        if (prefix === undefined) list.addAddress(address, family);
        else list.addSubnet(address, Number(prefix), family);
      }
      return { trunk, list };
    });
  return (address) => {
    const family = net.isIPv6(address) ? 'ipv6' : net.isIPv4(address) ? 'ipv4' : null;
    if (!family) return null;
    return lists.find(({ list }) => list.check(address, family))?.trunk ?? null;
  };
}
