import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Where call recordings live: local disk by default, S3-compatible storage later, same interface. */
export interface RecordingStore {
  put(key: string, data: Buffer): Promise<void>;
  /** Size in bytes, or null when there is no such recording. */
  size(key: string): Promise<number | null>;
  /** The bytes of `key`; `range` is inclusive at both ends, as in an HTTP Range header. */
  stream(key: string, range?: { start: number; end: number }): NodeJS.ReadableStream;
  delete(key: string): Promise<void>;
}

const KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

/**
 * Keys are relative paths like `<projectId>/<callId>.wav`. Anything that could climb out of the
 * recordings directory (`..`, an absolute path, a backslash, a drive letter) is refused outright
 * rather than normalised, since a key that needs normalising did not come from this server.
 */
export function assertRecordingKey(key: string): void {
  if (!KEY_PATTERN.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`invalid recording key: ${JSON.stringify(key)}`);
  }
}

export class LocalRecordingStore implements RecordingStore {
  private readonly root: string;

  constructor(dir: string) {
    this.root = path.resolve(dir);
  }

  private pathOf(key: string): string {
    assertRecordingKey(key);
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep))
      throw new Error(`invalid recording key: ${JSON.stringify(key)}`);
    return full;
  }

  async put(key: string, data: Buffer): Promise<void> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    // Written aside and renamed, so a reader never streams a half-written file.
    const temporary = `${file}.${process.pid}.${Date.now()}.part`;
    await writeFile(temporary, data);
    await rename(temporary, file);
  }

  async size(key: string): Promise<number | null> {
    try {
      const info = await stat(this.pathOf(key));
      return info.isFile() ? info.size : null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  stream(key: string, range?: { start: number; end: number }): NodeJS.ReadableStream {
    return createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : undefined);
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}
