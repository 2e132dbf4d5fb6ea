import { cn } from '@/lib/utils';

/** The product's fixed avatar palette (17 colours); a name always maps to the same one. */
export const AVATAR_PALETTE = [
  '#4D8EFF',
  '#FF5656',
  '#F7A200',
  '#22B07D',
  '#7B61FF',
  '#00B8D9',
  '#FF7A45',
  '#EB2F96',
  '#2F54EB',
  '#13C2C2',
  '#52C41A',
  '#FA8C16',
  '#722ED1',
  '#1890FF',
  '#A0D911',
  '#F5222D',
  '#8C8C8C',
] as const;

/** A stable string hash (djb2), so colours do not change between sessions or builds. */
function hashText(text: string): number {
  let hash = 5381;
  for (const char of text) {
    hash = (hash * 33 + (char.codePointAt(0) ?? 0)) >>> 0;
  }
  return hash;
}

export function avatarColor(name: string): string {
  return AVATAR_PALETTE[hashText(name) % AVATAR_PALETTE.length] ?? AVATAR_PALETTE[0];
}

const CHINESE_CHARACTER = /^[\u3400-\u9fff\uf900-\ufaff]/u;

/**
 * The first Chinese character for a Chinese name, the two initials of a two-word name,
 * else the first two letters, upper-cased.
 */
export function avatarInitials(name: string): string {
  const text = name.trim();
  if (!text) return '';
  const chinese = CHINESE_CHARACTER.exec(text);
  if (chinese) return chinese[0];
  const words = text.split(/\s+/);
  if (words.length === 2) {
    return words
      .map((word) => Array.from(word)[0])
      .join('')
      .toUpperCase();
  }
  return Array.from(text).slice(0, 2).join('').toUpperCase();
}

export function Avatar({ name, className }: { name: string; className?: string }) {
  return (
    <span
      aria-hidden="true"
      data-testid="avatar"
      className={cn(
        'inline-flex size-8 shrink-0 select-none items-center justify-center rounded-full text-sm font-medium text-white',
        className,
      )}
      style={{ backgroundColor: avatarColor(name) }}
    >
      {avatarInitials(name)}
    </span>
  );
}
