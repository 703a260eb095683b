import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { DEFAULTS, initializationOptions, readSettings, resolveBinary, serverArgs } from '../src/settings';

test('defaults when nothing is set', () => {
  assert.deepEqual(readSettings(() => undefined), DEFAULTS);
});

test('bad values fall back to defaults, numbers are clamped', () => {
  const vals: Record<string, unknown> = {
    path: '  ',
    device: 'tpu',
    logLevel: 'loud',
    clientLogLevel: 'trace',
    debounceMs: 99999,
    partial: 'yes',
    extraArgs: ['--seed', 7, '1'],
  };
  const s = readSettings((k) => vals[k]);
  assert.equal(s.path, 'infilld');
  assert.equal(s.device, 'auto');
  assert.equal(s.logLevel, 'warn');
  assert.equal(s.clientLogLevel, 'warn');
  assert.equal(s.debounceMs, 5000);
  assert.equal(s.partial, false);
  assert.deepEqual(s.extraArgs, ['--seed', '1']);
});

test('settings -> initializationOptions and arguments', () => {
  const vals: Record<string, unknown> = {
    modelPath: ' /models/dream ',
    device: 'cuda',
    partial: true,
    logLevel: 'debug',
    clientLogLevel: 'info',
    extraArgs: ['--steps', '8'],
  };
  const s = readSettings((k) => vals[k]);
  assert.deepEqual(initializationOptions(s), {
    model: '/models/dream',
    device: 'cuda',
    partial: true,
    clientLogLevel: 'info',
    status: true,
  });
  assert.deepEqual(serverArgs(s), ['--log-level', 'debug', '--steps', '8']);
  // no model key at all when unset: the daemon keeps its own default
  assert.equal('model' in initializationOptions(DEFAULTS), false);
});

test('binary lookup on PATH, explicit paths and ~/', () => {
  const env = ['/a', '', '/b', '/c'].join(path.delimiter);
  const seen: string[] = [];
  const found = resolveBinary('infilld', env, (f) => {
    seen.push(f);
    return f === path.join('/b', 'infilld') || f === path.join('/c', 'infilld');
  });
  assert.equal(found, path.join('/b', 'infilld'));
  assert.deepEqual(seen, [path.join('/a', 'infilld'), path.join('/b', 'infilld')]);
  assert.equal(resolveBinary('infilld', env, () => false), undefined);
  assert.equal(resolveBinary('./build/infilld', env, () => false), './build/infilld');
  assert.equal(resolveBinary('~/bin/infilld', env, () => false, '/home/u'), '/home/u/bin/infilld');
});
