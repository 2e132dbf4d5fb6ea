/** The product's own mark, embedded so the shell never waits on an image request. */
export function DefaultLogo({ className }: { className?: string }) {
  return (
    <svg viewBox="0 0 32 32" role="img" aria-label="智能语音外呼平台" className={className}>
      <rect width="32" height="32" rx="8" fill="#4D8EFF" />
      <path
        d="M11.5 8.5c.8-.4 1.8-.1 2.2.7l1.6 3.3c.3.7.2 1.5-.4 2l-1.3 1.1a10 10 0 0 0 4.8 4.8l1.1-1.3c.5-.6 1.3-.7 2-.4l3.3 1.6c.8.4 1.1 1.4.7 2.2l-.8 1.6c-.6 1.1-1.9 1.7-3.1 1.4A15.5 15.5 0 0 1 8.5 12.4c-.3-1.2.3-2.5 1.4-3.1z"
        fill="#fff"
      />
    </svg>
  );
}
