// infilld/status {model, device, state, lastLatencyMs} -> status bar text.
// Pure: unit-tested with node --test.

export interface StatusParams {
  model?: string | null;
  device?: string | null;
  state?: string | null;
  lastLatencyMs?: number | null;
}

export interface PartialParams {
  requestId?: number;
  uri?: string;
  text?: string;
  step?: number;
  steps?: number;
}

export interface StatusView {
  text: string;
  tooltip: string;
  // true when the bar should show a warning colour
  warning: boolean;
}

function baseName(p: string): string {
  const parts = p.split(/[\\/]+/).filter((x) => x !== '');
  return parts.length > 0 ? parts[parts.length - 1] : p;
}

const ICONS: Record<string, string> = {
  loading: '$(loading~spin)',
  busy: '$(sync~spin)',
  error: '$(error)',
  none: '$(circle-slash)',
};

export function formatStatus(s: StatusParams | undefined): StatusView {
  if (!s) {
    return { text: '$(sparkle) infilld', tooltip: 'infilld: starting', warning: false };
  }
  const state = typeof s.state === 'string' && s.state !== '' ? s.state : 'ready';
  const model = typeof s.model === 'string' && s.model !== '' ? baseName(s.model) : 'no model';
  const parts = [model];
  if (typeof s.device === 'string' && s.device !== '') {
    parts.push(s.device);
  }
  if (typeof s.lastLatencyMs === 'number' && Number.isFinite(s.lastLatencyMs)) {
    parts.push(`${Math.round(s.lastLatencyMs)} ms`);
  }
  const icon = ICONS[state] ?? '$(sparkle)';
  const tooltip = [
    `infilld — ${state}`,
    `model: ${typeof s.model === 'string' && s.model !== '' ? s.model : '(none)'}`,
    `device: ${s.device ?? '(unknown)'}`,
    `last latency: ${typeof s.lastLatencyMs === 'number' ? `${s.lastLatencyMs.toFixed(1)} ms` : '—'}`,
  ].join('\n');
  return {
    text: `${icon} ${parts.join(' · ')}`,
    tooltip,
    warning: state === 'error' || state === 'none',
  };
}

// Progress of a running completion, shown next to the status while denoising.
export function formatPartial(p: PartialParams): string {
  if (typeof p.step !== 'number' || typeof p.steps !== 'number' || p.steps <= 0) {
    return '';
  }
  return `${Math.min(p.step, p.steps)}/${p.steps}`;
}
