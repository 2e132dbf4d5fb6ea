import type { ComponentProps } from 'react';
import { Group, Panel, Separator } from 'react-resizable-panels';
import { cn } from '@/lib/utils';

/** Handle hit areas: wide enough for a finger, narrow enough not to steal mouse clicks. */
export const RESIZE_HIT_AREAS = { coarse: 15, fine: 5 } as const;

export function ResizablePanelGroup({ className, ...props }: ComponentProps<typeof Group>) {
  return (
    <Group
      resizeTargetMinimumSize={RESIZE_HIT_AREAS}
      className={cn('flex h-full w-full data-[orientation=vertical]:flex-col', className)}
      {...props}
    />
  );
}

export const ResizablePanel = Panel;

export function ResizableHandle({ className, ...props }: ComponentProps<typeof Separator>) {
  return (
    <Separator
      className={cn(
        'relative flex w-px items-center justify-center bg-gray-200 transition-colors hover:bg-[#4D8EFF] data-[separator=active]:bg-[#4D8EFF]',
        className,
      )}
      {...props}
    />
  );
}
