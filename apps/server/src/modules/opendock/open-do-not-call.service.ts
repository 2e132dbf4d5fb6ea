import { normalizeMainlandPhone, type OpenDoNotCallAddResult } from '@callpilot/contracts';
import { and, eq, inArray } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { doNotCall } from '../../db/schema';
import { addToDoNotCall } from '../do-not-call/do-not-call.service';

/**
 * Puts numbers on the project's do-not-call list as the console's 加入免打扰 does, one number at
 * a time through the same service (so each fires what an addition fires, e.g. the
 * contact.opted_out webhook, marked as coming from the open API). Numbers already listed keep
 * their first reason and source; malformed ones are answered, not stored.
 */
export async function addManyToDoNotCall(
  db: Database,
  projectId: string,
  phones: string[],
  reason: string,
): Promise<OpenDoNotCallAddResult> {
  const rejected: OpenDoNotCallAddResult['rejected'] = [];
  const wanted: string[] = [];
  phones.forEach((raw, index) => {
    const phone = normalizeMainlandPhone(raw.trim());
    if (!phone) rejected.push({ index, phone: raw, message: '号码格式不正确' });
    else if (!wanted.includes(phone)) wanted.push(phone);
  });
  const listed =
    wanted.length === 0
      ? new Set<string>()
      : new Set(
          (
            await db
              .select({ phone: doNotCall.phone })
              .from(doNotCall)
              .where(and(eq(doNotCall.projectId, projectId), inArray(doNotCall.phone, wanted)))
          ).map((row) => row.phone),
        );
  const added: string[] = [];
  const existing: string[] = [];
  for (const phone of wanted) {
    if (listed.has(phone)) {
      existing.push(phone);
      continue;
    }
    await addToDoNotCall(db, projectId, phone, 'manual', reason, { source: 'api' });
    added.push(phone);
  }
  return { added, existing, rejected };
}
