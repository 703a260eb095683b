// Extension settings -> daemon command line and initializationOptions.
// Pure: no 'vscode' import, so it is unit-tested with node --test.
import * as path from 'path';

export type Device = 'auto' | 'cpu' | 'cuda';
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export type ClientLogLevel = 'off' | LogLevel;

export interface Settings {
  path: string;
  modelPath: string;
  device: Device;
  debounceMs: number;
  logLevel: LogLevel;
  clientLogLevel: ClientLogLevel;
  partial: boolean;
  extraArgs: string[];
}

export const DEFAULTS: Settings = {
  path: 'infilld',
  modelPath: '',
  device: 'auto',
  debounceMs: 150,
  logLevel: 'warn',
  clientLogLevel: 'warn',
  partial: false,
  extraArgs: [],
};

const DEVICES: readonly string[] = ['auto', 'cpu', 'cuda'];
const LEVELS: readonly string[] = ['error', 'warn', 'info', 'debug'];
const CLIENT_LEVELS: readonly string[] = ['off', ...LEVELS];

// Reads settings through `get` (WorkspaceConfiguration.get in the extension),
// replacing anything of the wrong type or out of range by its default.
export function readSettings(get: (key: string) => unknown): Settings {
  const str = (k: keyof Settings, d: string): string => {
    const v = get(k);
    return typeof v === 'string' ? v : d;
  };
  const device = str('device', DEFAULTS.device);
  const level = str('logLevel', DEFAULTS.logLevel);
  const clientLevel = str('clientLogLevel', DEFAULTS.clientLogLevel);
  const deb = get('debounceMs');
  const extra = get('extraArgs');
  const partial = get('partial');
  return {
    path: str('path', DEFAULTS.path).trim() || DEFAULTS.path,
    modelPath: str('modelPath', DEFAULTS.modelPath).trim(),
    device: (DEVICES.includes(device) ? device : DEFAULTS.device) as Device,
    debounceMs:
      typeof deb === 'number' && Number.isFinite(deb)
        ? Math.min(5000, Math.max(0, Math.round(deb)))
        : DEFAULTS.debounceMs,
    logLevel: (LEVELS.includes(level) ? level : DEFAULTS.logLevel) as LogLevel,
    clientLogLevel: (CLIENT_LEVELS.includes(clientLevel)
      ? clientLevel
      : DEFAULTS.clientLogLevel) as ClientLogLevel,
    partial: typeof partial === 'boolean' ? partial : DEFAULTS.partial,
    extraArgs: Array.isArray(extra) ? extra.filter((a): a is string => typeof a === 'string') : [],
  };
}

// initializationOptions for the daemon (docs/PROTOCOL.md): model and device
// are settings the daemon merges over its config file; "status" opts into
// infilld/status for the status bar, "partial" into infilld/partial;
// "clientLogLevel" picks the daemon log lines shown in the output channel.
export function initializationOptions(s: Settings): Record<string, unknown> {
  const o: Record<string, unknown> = {
    device: s.device,
    partial: s.partial,
    clientLogLevel: s.clientLogLevel,
    status: true,
  };
  if (s.modelPath !== '') {
    o.model = s.modelPath;
  }
  return o;
}

export interface ServerCommand {
  command: string;
  args: string[];
}

export function serverArgs(s: Settings): string[] {
  return ['--log-level', s.logLevel, ...s.extraArgs];
}

// Finds the binary: a name without a slash is looked up on PATH (the first
// entry where `isExecutable` says yes); a path is used as is (a leading ~/
// means the home folder). Returns undefined when a bare name is not found.
export function resolveBinary(
  name: string,
  envPath: string | undefined,
  isExecutable: (file: string) => boolean,
  home?: string,
): string | undefined {
  if (name.startsWith('~/') && home) {
    return path.join(home, name.slice(2));
  }
  if (name.includes('/') || name.includes('\\')) {
    return name;
  }
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (dir === '') {
      continue;
    }
    const file = path.join(dir, name);
    if (isExecutable(file)) {
      return file;
    }
  }
  return undefined;
}
