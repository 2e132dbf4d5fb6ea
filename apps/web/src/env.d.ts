interface ImportMetaEnv {
  /** Origin of the API when the console is served apart from it; empty means same origin. */
  readonly VITE_API_BASE?: string;
}
