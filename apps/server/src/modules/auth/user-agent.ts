/**
 * A readable device name from a User-Agent header, e.g. "Chrome 120 · Windows". A few rules
 * cover the browsers a console is used from; anything else shows as 未知设备 rather than guessing.
 * Order matters: Edge and Opera carry "Chrome" too, and Chrome carries "Safari".
 */
const BROWSERS: [RegExp, string][] = [
  [/MicroMessenger\/(\d+)/, '微信'],
  [/DingTalk\/(\d+)/, '钉钉'],
  [/Edg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/(?:OPR|Opera)\/(\d+)/, 'Opera'],
  [/Firefox\/(\d+)/, 'Firefox'],
  [/FxiOS\/(\d+)/, 'Firefox'],
  [/CriOS\/(\d+)/, 'Chrome'],
  [/Chrome\/(\d+)/, 'Chrome'],
  [/Version\/(\d+)[^ ]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
  [/curl\/(\d+)/, 'curl'],
];

const SYSTEMS: [RegExp, string][] = [
  [/iPhone/, 'iPhone'],
  [/iPad/, 'iPad'],
  [/Android/, 'Android'],
  [/HarmonyOS|OpenHarmony/, '鸿蒙'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

export function describeDevice(userAgent: string): string {
  const browser = BROWSERS.find(([re]) => re.test(userAgent));
  const system = SYSTEMS.find(([re]) => re.test(userAgent));
  const parts: string[] = [];
  if (browser) parts.push(`${browser[1]} ${browser[0].exec(userAgent)![1]}`);
  if (system) parts.push(system[1]);
  return parts.length ? parts.join(' · ') : '未知设备';
}
