/**
 * Retries a write that must not be lost (a call's end, a contact's outcome) while the database is
 * briefly unreachable, as during a PostgreSQL restart (a second or two): real time, whatever the
 * engine's clock, since it waits on a real server. Gives up after about 15 s with the last error.
 */
export async function persistently<T>(
  write: () => Promise<T>,
  delaysMs = [250, 500, 1000, 2000, 4000, 8000],
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      const delay = delaysMs[attempt];
      if (delay === undefined) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
