import { cleanup, configure } from '@testing-library/react';
import { afterEach } from 'vitest';

// jsdom has no matchMedia; antd's responsive grid (used by Form) subscribes to it on mount.
if (!window.matchMedia) {
  window.matchMedia = (query: string) =>
    ({
      matches: false,
      media: query,
      onchange: null,
      addEventListener: () => {},
      removeEventListener: () => {},
      addListener: () => {},
      removeListener: () => {},
      dispatchEvent: () => false,
    }) as MediaQueryList;
}

// jsdom has no ResizeObserver either; antd's Tabs, Table and TextArea observe their own size.
if (typeof window.ResizeObserver === 'undefined') {
  window.ResizeObserver = class {
    observe() {}
    unobserve() {}
    disconnect() {}
  };
}

// antd pages take more than the default 1 s to settle on two busy cores; a slow render is not a bug.
configure({ asyncUtilTimeout: 4000 });

afterEach(() => {
  cleanup();
  localStorage.clear();
});
