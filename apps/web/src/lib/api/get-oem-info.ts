import type { OemInfo } from '@callpilot/contracts';
import { get } from '@/lib/request';
import { useOemStore } from '@/stores/oem-store';

export function getOemInfo(host: string): Promise<OemInfo> {
  return get<OemInfo>(`/api/oem/${encodeURIComponent(host)}`, { showError: false, showLoading: false });
}

let requested = false;

/**
 * Loads the white-label branding for this host once per page load into oem-store. A failure
 * keeps the last known branding: the default logo is always a fine fallback.
 */
export function loadOemInfoOnce(host: string = window.location.hostname): Promise<void> {
  if (requested) return Promise.resolve();
  requested = true;
  return getOemInfo(host).then(
    (oem) => {
      if (typeof oem?.status !== 'boolean') return;
      useOemStore.getState().setOem({ isOem: oem.status, replaceName: oem.name, replaceLogo: oem.logo });
    },
    () => undefined,
  );
}

/** Tests only: lets the next call load again, as a new page load would. */
export function resetOemInfoLoad(): void {
  requested = false;
}
