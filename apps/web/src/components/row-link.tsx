import type { MouseEvent, ReactNode } from 'react';
import { Link } from 'react-router';

/**
 * A list row's way into a detail page: a real link, so ctrl-click or a middle click opens it in a
 * new tab. `onFollow` runs whichever way it is followed (a list saves its filters and page for the
 * way back; local storage is shared, so a new tab's 返回 finds them too).
 */
export function RowLink({
  to,
  onFollow,
  className,
  children,
}: {
  to: string;
  onFollow?: () => void;
  className?: string;
  children: ReactNode;
}) {
  // A middle click fires auxclick, not click.
  const onAuxClick = (event: MouseEvent) => {
    if (event.button === 1) onFollow?.();
  };
  return (
    <Link to={to} className={className} onClick={() => onFollow?.()} onAuxClick={onAuxClick}>
      {children}
    </Link>
  );
}
