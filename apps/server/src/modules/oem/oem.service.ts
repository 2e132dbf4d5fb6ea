import type { OemInfo } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { oemConfigs } from '../../db/schema';

/** Host names are stored lower-cased; an unknown or switched-off host shows the product's own brand. */
export async function getOemInfo(db: Database, host: string): Promise<OemInfo> {
  const [row] = await db.select().from(oemConfigs).where(eq(oemConfigs.host, host.toLowerCase())).limit(1);
  if (!row?.enabled) return { status: false, name: '', logo: '' };
  return { status: true, name: row.name, logo: row.logo };
}
