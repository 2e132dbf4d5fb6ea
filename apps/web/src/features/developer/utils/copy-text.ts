/**
 * Puts `text` on the clipboard. The Clipboard API exists only in secure contexts (https or
 * localhost); a console reached over plain http on a LAN falls back to a selected textarea.
 */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  try {
    if (!document.execCommand('copy')) throw new Error('复制失败，请手动选择文本复制');
  } finally {
    area.remove();
  }
}
