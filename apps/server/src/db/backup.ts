import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { acquireDataDirLock, DataDirInUseError, pgliteDir } from './client';

/** A backup or restore that cannot be done, with the reason the operator reads. */
export class BackupError extends Error {}

/**
 * The embedded database is copied only while no server holds it: PGlite has no online backup, and a
 * copy of files that a running server is writing is not a database anyone can open again.
 */
function lockForBackup(dataDir: string, what: 'backup' | 'restore'): () => void {
  try {
    return acquireDataDirLock(dataDir);
  } catch (err) {
    if (!(err instanceof DataDirInUseError)) throw err;
    throw new BackupError(
      `a server (pid ${err.holder}) is running on DATA_DIR ${dataDir}; stop it before ${what}: ` +
        (what === 'backup'
          ? 'a copy taken while it writes would not be consistent'
          : 'it would keep writing to the database being replaced'),
    );
  }
}

const hasDatabase = (dir: string) => fs.existsSync(path.join(dir, 'PG_VERSION'));

/** Writes the embedded database of `dataDir` to `file` (a gzipped tarball of its data directory). */
export async function backupEmbedded(dataDir: string, file: string): Promise<{ bytes: number }> {
  if (fs.existsSync(file)) throw new BackupError(`${file} already exists; choose a new file name`);
  const release = lockForBackup(dataDir, 'backup');
  try {
    if (!hasDatabase(pgliteDir(dataDir))) {
      throw new BackupError(`there is no embedded database in DATA_DIR ${dataDir}`);
    }
    const client = await PGlite.create(pgliteDir(dataDir));
    let dump: Blob;
    try {
      dump = await client.dumpDataDir('gzip');
    } finally {
      await client.close();
    }
    const bytes = Buffer.from(await dump.arrayBuffer());
    // Written beside the target and renamed, so a full disk or a crash never leaves a file that
    // looks like a backup but is cut short.
    const partial = `${file}.partial`;
    fs.writeFileSync(partial, bytes);
    fs.renameSync(partial, file);
    return { bytes: bytes.length };
  } finally {
    release();
  }
}

/**
 * Replaces the embedded database of `dataDir` with the one in `file`. The backup is loaded and
 * opened in a directory of its own first; only a database that opened and has this product's
 * tables takes the place of the current one, which is kept beside it.
 */
export async function restoreEmbedded(dataDir: string, file: string): Promise<{ previous: string | null }> {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    throw new BackupError(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const release = lockForBackup(dataDir, 'restore');
  const target = pgliteDir(dataDir);
  const staging = `${target}.restoring`;
  try {
    fs.rmSync(staging, { recursive: true, force: true });
    try {
      const client = await PGlite.create({ dataDir: staging, loadDataDir: new Blob([bytes]) });
      try {
        await client.query('select count(*) from users');
      } finally {
        await client.close();
      }
    } catch {
      throw new BackupError(`${file} is not a backup made by "npm run admin -- backup"`);
    }
    let previous: string | null = null;
    if (fs.existsSync(target)) {
      previous = `${target}.before-restore-${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}`;
      fs.renameSync(target, previous);
    }
    fs.renameSync(staging, target);
    return { previous };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
    release();
  }
}
