import { create } from 'zustand';

// These keys hold bare JSON values (true, 15, ["/a"]) as the spec lists them, not a persist
// envelope, so each is a tiny store that reads its key once and writes it on every change.

export const SIDEBAR_COLLAPSED_KEY = 'sidebar-collapsed';
export const SIDEBAR_SIZE_KEY = 'sidebar-size';
export const HISTORY_PATHS_KEY = 'historyPathArray';
export const HISTORY_LIMIT = 10;

function read<T>(key: string, isValid: (value: unknown) => value is T, fallback: T): T {
  try {
    const raw = localStorage.getItem(key);
    if (raw === null) return fallback;
    const value: unknown = JSON.parse(raw);
    return isValid(value) ? value : fallback;
  } catch {
    return fallback;
  }
}

function write(key: string, value: unknown): void {
  localStorage.setItem(key, JSON.stringify(value));
}

const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isPathList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

type SidebarState = {
  collapsed: boolean;
  /** undefined until the user has resized once: the shell then uses its default size. */
  size: number | undefined;
  setCollapsed: (collapsed: boolean) => void;
  setSize: (size: number) => void;
};

export const useSidebarStore = create<SidebarState>()((set) => ({
  collapsed: read(SIDEBAR_COLLAPSED_KEY, isBoolean, false),
  size: read<number | undefined>(SIDEBAR_SIZE_KEY, isNumber, undefined),
  setCollapsed: (collapsed) => {
    write(SIDEBAR_COLLAPSED_KEY, collapsed);
    set({ collapsed });
  },
  setSize: (size) => {
    write(SIDEBAR_SIZE_KEY, size);
    set({ size });
  },
}));

/** Appends a path, skipping a repeat of the newest one, keeping the last HISTORY_LIMIT (newest last). */
export function appendHistoryPath(paths: readonly string[], path: string): string[] {
  if (paths.at(-1) === path) return [...paths];
  return [...paths, path].slice(-HISTORY_LIMIT);
}

type HistoryState = {
  paths: string[];
  pushPath: (path: string) => void;
};

export const useHistoryStore = create<HistoryState>()((set, get) => ({
  paths: read(HISTORY_PATHS_KEY, isPathList, []).slice(-HISTORY_LIMIT),
  pushPath: (path) => {
    const paths = appendHistoryPath(get().paths, path);
    write(HISTORY_PATHS_KEY, paths);
    set({ paths });
  },
}));
