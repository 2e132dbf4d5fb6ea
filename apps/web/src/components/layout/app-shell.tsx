import { type Layout, type LayoutChangedMeta, useDefaultLayout, usePanelRef } from 'react-resizable-panels';
import { Outlet } from 'react-router';
import { ResizableHandle, ResizablePanel, ResizablePanelGroup } from '@/components/ui/resizable';
import { useSidebarStore } from '@/stores/local-values';
import { AppSidebar } from './app-sidebar';
import { ProjectGuard } from './project-guard';
import { useShellSession } from './use-shell-session';

// Percentages of the window width (section 9 of the spec).
export const SIDEBAR_DEFAULT_SIZE = 15;
export const SIDEBAR_COLLAPSED_SIZE = 10;
export const SIDEBAR_MIN_SIZE = 4;
export const SIDEBAR_MAX_SIZE = 20;
export const SIDEBAR_COLLAPSED_THRESHOLD = 13;

const GROUP_ID = 'app-shell';
const SIDEBAR_PANEL_ID = 'sidebar';
const CONTENT_PANEL_ID = 'content';

export function AppShell() {
  const collapsed = useSidebarStore((state) => state.collapsed);
  const size = useSidebarStore((state) => state.size);
  const setCollapsed = useSidebarStore((state) => state.setCollapsed);
  const setSize = useSidebarStore((state) => state.setSize);
  useShellSession();
  const sidebarRef = usePanelRef();
  const savedLayout = useDefaultLayout({
    id: GROUP_ID,
    panelIds: [SIDEBAR_PANEL_ID, CONTENT_PANEL_ID],
    storage: localStorage,
  });

  const initialSize = collapsed ? SIDEBAR_COLLAPSED_SIZE : (size ?? SIDEBAR_DEFAULT_SIZE);

  function handleLayoutChanged(layout: Layout, meta: LayoutChangedMeta) {
    savedLayout.onLayoutChanged(layout, meta);
    const sidebarSize = layout[SIDEBAR_PANEL_ID];
    // Only a drag or a key press is the user choosing a width; mount and window resizes are not.
    if (!meta.isUserInteraction || typeof sidebarSize !== 'number') return;
    setSize(sidebarSize);
    setCollapsed(sidebarSize < SIDEBAR_COLLAPSED_THRESHOLD);
  }

  function toggleCollapsed() {
    const next = !collapsed;
    const nextSize = next ? SIDEBAR_COLLAPSED_SIZE : SIDEBAR_DEFAULT_SIZE;
    setCollapsed(next);
    setSize(nextSize);
    // Strings are percentages in react-resizable-panels 4; numbers would be pixels.
    sidebarRef.current?.resize(String(nextSize));
  }

  return (
    <ResizablePanelGroup
      id={GROUP_ID}
      orientation="horizontal"
      className="h-screen bg-gray-50"
      defaultLayout={savedLayout.defaultLayout}
      onLayoutChange={savedLayout.onLayoutChange}
      onLayoutChanged={handleLayoutChanged}
    >
      <ResizablePanel
        id={SIDEBAR_PANEL_ID}
        panelRef={sidebarRef}
        defaultSize={String(initialSize)}
        minSize={String(SIDEBAR_MIN_SIZE)}
        maxSize={String(SIDEBAR_MAX_SIZE)}
        className="bg-white"
      >
        <AppSidebar collapsed={collapsed} onToggleCollapsed={toggleCollapsed} />
      </ResizablePanel>
      <ResizableHandle />
      <ResizablePanel id={CONTENT_PANEL_ID} className="min-w-0">
        <div className="h-full overflow-auto">
          <ProjectGuard>
            <Outlet />
          </ProjectGuard>
        </div>
      </ResizablePanel>
    </ResizablePanelGroup>
  );
}
