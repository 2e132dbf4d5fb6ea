import { DeveloperCopyButton } from './developer-copy-button';

/** Code or JSON to read and copy: monospace, scrolls sideways, a 复制 button in the corner. */
export function DeveloperCodeBlock({
  code,
  label,
  maxHeight = 420,
}: {
  code: string;
  /** Names the block for screen readers (and tests): "curl 示例", "示例负载". */
  label: string;
  maxHeight?: number;
}) {
  return (
    <figure className="relative m-0" aria-label={label}>
      <pre
        className="m-0 overflow-auto rounded-md bg-gray-900 p-4 pr-20 font-mono text-xs leading-5 text-gray-100"
        style={{ maxHeight }}
      >
        <code>{code}</code>
      </pre>
      <DeveloperCopyButton
        text={code}
        size="small"
        ariaLabel={`复制${label}`}
        className="!absolute right-2 top-2"
      />
    </figure>
  );
}
