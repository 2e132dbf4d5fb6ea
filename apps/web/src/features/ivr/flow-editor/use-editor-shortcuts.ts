import { useEffect, useRef } from 'react';

export type EditorShortcuts = {
  save: () => void;
  undo: () => void;
  redo: () => void;
  copy: () => void;
  paste: () => void;
};

/** Text fields keep their own undo, copy and paste; the canvas's apply everywhere else. */
function typingIn(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/**
 * Ctrl/Cmd+S saves (from anywhere, so a half-typed field is not lost); Ctrl/Cmd+Z undoes,
 * Ctrl/Cmd+Shift+Z and Ctrl+Y redo, Ctrl/Cmd+C and V copy and paste nodes.
 */
export function useEditorShortcuts(shortcuts: EditorShortcuts) {
  const latest = useRef(shortcuts);
  latest.current = shortcuts;
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey) || event.altKey) return;
      const key = event.key.toLowerCase();
      if (key === 's') {
        event.preventDefault();
        latest.current.save();
        return;
      }
      if (typingIn(event.target)) return;
      if (key === 'z' && !event.shiftKey) latest.current.undo();
      else if ((key === 'z' && event.shiftKey) || key === 'y') latest.current.redo();
      else if (key === 'c' && !event.shiftKey) {
        // Copying text the user highlighted on the page is theirs to do.
        if (window.getSelection()?.toString()) return;
        latest.current.copy();
      } else if (key === 'v' && !event.shiftKey) latest.current.paste();
      else return;
      event.preventDefault();
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);
}
