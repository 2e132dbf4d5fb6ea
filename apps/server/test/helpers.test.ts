import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { users } from '../src/db/schema';
import { verifyPassword } from '../src/modules/auth/password';
import { createTestDatabase, hashOnce, PASSWORD, seedUser } from './helpers';

/** The test database helper reuses PGlite instances; a test must still get a fresh database. */
describe('test databases', () => {
  it('hands out an empty database after another was closed, and the closed one refuses queries', async () => {
    const first = await createTestDatabase();
    await seedUser(first.db, { email: 'first@example.com' });
    await first.close();
    await expect(first.db.select().from(users)).rejects.toThrow();

    const second = await createTestDatabase();
    try {
      expect(await second.db.select().from(users)).toEqual([]);
      await seedUser(second.db, { email: 'first@example.com' });
      expect(await second.db.$count(users)).toBe(1);
    } finally {
      await second.close();
    }
  });

  it('gives a database whose schema a test changed to nobody else', async () => {
    const first = await createTestDatabase();
    await first.db.execute(sql`create table left_behind (id int)`);
    await first.close();
    const second = await createTestDatabase();
    try {
      await expect(second.db.execute(sql`select * from left_behind`)).rejects.toThrow();
    } finally {
      await second.close();
    }
  });

  it('seeds passwords that the product verifies, and refuses wrong ones', async () => {
    const hash = await hashOnce(PASSWORD);
    expect(await verifyPassword(PASSWORD, hash)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}x`, hash)).toBe(false);
  });
});
