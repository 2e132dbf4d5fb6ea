/** The parts of libfvad's Emscripten build (`@echogarden/fvad-wasm`, untyped) that vad.ts uses. */
declare module '@echogarden/fvad-wasm' {
  export interface FvadModule {
    /** Views of the WASM heap; replaced when the heap grows, so read them at each use. */
    HEAP16: Int16Array;
    HEAPU8: Uint8Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    /** A new detector, or 0 when out of memory. */
    _fvad_new(): number;
    _fvad_free(handle: number): void;
    _fvad_reset(handle: number): void;
    /** 0 on success, -1 for a mode outside 0-3. */
    _fvad_set_mode(handle: number, mode: number): number;
    /** 0 on success, -1 for a rate other than 8, 16, 32 or 48 kHz. */
    _fvad_set_sample_rate(handle: number, rate: number): number;
    /** 1 voiced, 0 unvoiced, -1 for a frame that is not 10, 20 or 30 ms long. */
    _fvad_process(handle: number, samples: number, length: number): number;
  }
  const createFvad: (overrides?: Record<string, unknown>) => Promise<FvadModule>;
  export default createFvad;
}
