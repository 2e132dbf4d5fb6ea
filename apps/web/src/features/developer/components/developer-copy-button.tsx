import { Button, type ButtonProps } from 'antd';
import { useEffect, useState } from 'react';
import { toast } from 'sonner';
import { copyText } from '../utils/copy-text';

// Long enough to read, short enough that a second copy says so again.
const COPIED_MS = 2000;

/** 复制, which says 已复制 once the text is on the clipboard. `text` may be fetched on demand. */
export function DeveloperCopyButton({
  text,
  label = '复制',
  ariaLabel,
  ...button
}: {
  text: string | (() => Promise<string>);
  label?: string;
  ariaLabel?: string;
} & Omit<ButtonProps, 'onClick' | 'children'>) {
  const [copied, setCopied] = useState(false);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), COPIED_MS);
    return () => clearTimeout(timer);
  }, [copied]);

  const copy = async () => {
    setBusy(true);
    try {
      await copyText(typeof text === 'string' ? text : await text());
      setCopied(true);
    } catch (error) {
      // A failed fetch was reported by the request client; a refused clipboard is reported here.
      if (error instanceof Error && error.name !== 'RequestError') toast.error(error.message || '复制失败');
    } finally {
      setBusy(false);
    }
  };

  return (
    <Button {...button} loading={busy} aria-label={ariaLabel} onClick={() => void copy()}>
      {copied ? '已复制' : label}
    </Button>
  );
}
