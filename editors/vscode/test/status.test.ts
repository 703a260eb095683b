import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatPartial, formatStatus } from '../src/status';

test('status before the daemon said anything', () => {
  assert.deepEqual(formatStatus(undefined), {
    text: '$(sparkle) infilld',
    tooltip: 'infilld: starting',
    warning: false,
  });
});

test('ready status shows model folder name, device and rounded latency', () => {
  const v = formatStatus({
    model: '/models/Dream-Coder-v0-Instruct-7B/',
    device: 'cuda',
    state: 'ready',
    lastLatencyMs: 87.6,
  });
  assert.equal(v.text, '$(sparkle) Dream-Coder-v0-Instruct-7B · cuda · 88 ms');
  assert.equal(v.warning, false);
  assert.match(v.tooltip, /^infilld — ready\nmodel: \/models\/Dream-Coder-v0-Instruct-7B\/\ndevice: cuda\nlast latency: 87\.6 ms$/);
});

test('states change the icon; error and none warn; nulls are tolerated', () => {
  assert.equal(formatStatus({ model: 'm', device: 'cpu', state: 'loading' }).text, '$(loading~spin) m · cpu');
  assert.equal(formatStatus({ model: 'm', state: 'busy', lastLatencyMs: null }).text, '$(sync~spin) m');
  const e = formatStatus({ model: null, device: null, state: 'error', lastLatencyMs: null });
  assert.equal(e.text, '$(error) no model');
  assert.equal(e.warning, true);
  assert.equal(formatStatus({ state: 'none' }).warning, true);
});

test('partial progress', () => {
  assert.equal(formatPartial({ step: 3, steps: 8 }), '3/8');
  assert.equal(formatPartial({ step: 9, steps: 8 }), '8/8');
  assert.equal(formatPartial({ step: 1 }), '');
  assert.equal(formatPartial({ step: 1, steps: 0 }), '');
});
