import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';

export const OEM_STORE_KEY = 'oem-store';

export type OemInfo = {
  isOem: boolean;
  replaceName: string;
  replaceLogo: string;
};

type OemState = OemInfo & {
  setOem: (oem: OemInfo) => void;
};

export const useOemStore = create<OemState>()(
  persist(
    (set) => ({
      isOem: false,
      replaceName: '',
      replaceLogo: '',
      setOem: (oem) => set(oem),
    }),
    {
      name: OEM_STORE_KEY,
      version: 0,
      storage: createJSONStorage(() => localStorage),
      // Only the spec's three fields are persisted, never the setter.
      partialize: ({ isOem, replaceName, replaceLogo }) => ({ isOem, replaceName, replaceLogo }),
    },
  ),
);
