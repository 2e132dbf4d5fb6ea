import { Modal } from 'antd';
import { type ReactNode, useEffect, useRef } from 'react';
import { useBlocker } from 'react-router';

export const UNSAVED_CHANGES_TEXT = '有未保存的修改，离开后将丢失。确定离开吗？';

/**
 * Asks before leaving a page with unsaved edits: in-app navigation through the router's blocker
 * (the page renders `prompt`), closing or reloading the tab through `beforeunload`.
 * `allowNextNavigation` lets through a navigation the page makes itself right after saving,
 * before the cleared dirty flag has re-rendered.
 */
export function useUnsavedChangesGuard(dirty: boolean): {
  prompt: ReactNode;
  allowNextNavigation: () => void;
} {
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;
  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) =>
      dirtyRef.current &&
      (currentLocation.pathname !== nextLocation.pathname || currentLocation.search !== nextLocation.search),
  );

  useEffect(() => {
    if (!dirty) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers show the prompt only when returnValue is set.
      event.returnValue = '';
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => window.removeEventListener('beforeunload', onBeforeUnload);
  }, [dirty]);

  // A rendered Modal, not Modal.confirm: the static one misses the app's ConfigProvider (locale, theme).
  const prompt = (
    <Modal
      title="离开此页面？"
      open={blocker.state === 'blocked'}
      okText="离开"
      cancelText="留下"
      onOk={() => blocker.proceed?.()}
      onCancel={() => blocker.reset?.()}
    >
      {UNSAVED_CHANGES_TEXT}
    </Modal>
  );

  return {
    prompt,
    allowNextNavigation: () => {
      dirtyRef.current = false;
    },
  };
}
