import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The file operations a local store writes with: the real ones, or a test's failing disk. */
export interface RecordingFs {
  mkdir(dir: string, options: { recursive: true }): Promise<unknown>;
  writeFile(file: string, data: Buffer): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  rm(file: string, options: { force: true }): Promise<void>;
}

const nodeFs: RecordingFs = { mkdir, writeFile, rename, rm };

/** What /healthz shows of the store: whether its last write got through, and if not why. */
export interface RecordingStoreHealth {
  ok: boolean;
  /** 磁盘已满 while writes fail for want of space; null while they succeed. */
  reason: string | null;
  /** When the failing began. */
  since: string | null;
}

export const DISK_FULL = '磁盘已满';

/** ENOSPC, and EDQUOT (a quota is a full disk to this process). */
const isDiskFull = (err: unknown) => {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
};

/** Why a recording could not be kept, in words the call record shows. */
export function recordingFailureReason(err: unknown): string {
  if (isDiskFull(err)) return `${DISK_FULL}，录音未能保存`;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return '录音目录不可写，录音未能保存';
  if (code === 'EIO') return '磁盘读写出错，录音未能保存';
  return '录音生成失败';
}

/** Where call recordings live: local disk by default, S3-compatible storage later, same interface. */
export interface RecordingStore {
  put(key: string, data: Buffer): Promise<void>;
  /** Size in bytes, or null when there is no such recording. */
  size(key: string): Promise<number | null>;
  /** The bytes of `key`; `range` is inclusive at both ends, as in an HTTP Range header. */
  stream(key: string, range?: { start: number; end: number }): NodeJS.ReadableStream;
  delete(key: string): Promise<void>;
  health(): RecordingStoreHealth;
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
  private state: RecordingStoreHealth = { ok: true, reason: null, since: null };

  constructor(
    dir: string,
    private readonly fs: RecordingFs = nodeFs,
  ) {
    this.root = path.resolve(dir);
  }

  health(): RecordingStoreHealth {
    return { ...this.state };
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
    // Written aside and renamed, so a reader never streams a half-written file.
    const temporary = `${file}.${process.pid}.${Date.now()}.part`;
    try {
      await this.fs.mkdir(path.dirname(file), { recursive: true });
      await this.fs.writeFile(temporary, data);
      await this.fs.rename(temporary, file);
    } catch (err) {
      // A full disk keeps what was written of the part file: give the space back.
      await this.fs.rm(temporary, { force: true }).catch(() => {});
      if (isDiskFull(err)) {
        this.state = { ok: false, reason: DISK_FULL, since: this.state.since ?? new Date().toISOString() };
      }
      throw err;
    }
    // A write that got through shows the space is back.
    if (!this.state.ok) this.state = { ok: true, reason: null, since: null };
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
