import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/helpers';
import type { DatabaseHandle } from '../../db/client';
import { projectLimits, projects } from '../../db/schema';
import { assertWithinLimit } from './limits';

let database: DatabaseHandle;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

async function project(limits: Partial<typeof projectLimits.$inferInsert> | null) {
  const id = randomUUID();
  await database.db.insert(projects).values({ id, name: 'p' });
  if (limits) await database.db.insert(projectLimits).values({ projectId: id, ...limits });
  return id;
}

describe('assertWithinLimit', () => {
  it('lets everything through while hasBalance is false, whatever the limits', async () => {
    const id = await project({ hasBalance: false, assistantLimit: 0 });
    await expect(assertWithinLimit(database.db, id, 'assistant', 1000)).resolves.toBeUndefined();
    const bare = await project(null);
    await expect(assertWithinLimit(database.db, bare, 'ttsClone', 5)).resolves.toBeUndefined();
  });

  it('caps the count at the limit when hasBalance is true', async () => {
    const id = await project({ hasBalance: true, assistantLimit: 2, knowledgeLimit: 1 });
    await expect(assertWithinLimit(database.db, id, 'assistant', 1)).resolves.toBeUndefined();
    await expect(assertWithinLimit(database.db, id, 'assistant', 2)).rejects.toMatchObject({
      statusCode: 403,
      code: 'LIMIT_REACHED',
      message: '智能小助手数量已达上限（2 个），请联系销售提升额度',
    });
    await expect(assertWithinLimit(database.db, id, 'knowledge', 1)).rejects.toMatchObject({
      message: '知识库数量已达上限（1 个），请联系销售提升额度',
    });
  });

  it('treats a zero limit as a feature that is not open', async () => {
    const id = await project({ hasBalance: true, assistantLimit: 5 });
    await expect(assertWithinLimit(database.db, id, 'ttsClone', 0)).rejects.toMatchObject({
      statusCode: 403,
      code: 'LIMIT_REACHED',
      message: '声音克隆功能未开通，请联系销售开通',
    });
  });
});
