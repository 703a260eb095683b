// package.json must match the code: every setting Settings reads is declared
// with the same default, and every command the extension registers is
// contributed (run from the extension folder: npm test, vscode_check.sh).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { DEFAULTS } from '../src/settings';

interface Manifest {
  main: string;
  engines: { vscode: string };
  dependencies: Record<string, string>;
  contributes: {
    commands: { command: string; title: string }[];
    keybindings: { command: string }[];
    configuration: { properties: Record<string, { default: unknown }> };
  };
}

const dir = process.cwd();
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;

test('every setting is declared with the code default', () => {
  const props = manifest.contributes.configuration.properties;
  for (const [key, value] of Object.entries(DEFAULTS)) {
    assert.ok(`infilld.${key}` in props, `infilld.${key} missing in package.json`);
    assert.deepEqual(props[`infilld.${key}`].default, value, `default of infilld.${key}`);
  }
  assert.equal(Object.keys(props).length, Object.keys(DEFAULTS).length, 'no undeclared extra settings');
});

test('registered commands are contributed, and keybindings name real commands', () => {
  const src = fs.readFileSync(path.join(dir, 'src', 'extension.ts'), 'utf8');
  const registered = [...src.matchAll(/registerCommand\('([^']+)'/g)].map((m) => m[1]).sort();
  const contributed = manifest.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(contributed, registered);
  assert.ok(
    manifest.contributes.commands.some((c) => c.title === 'Regenerate selection with infilld'),
    'the regenerate command has its documented title',
  );
  for (const k of manifest.contributes.keybindings) {
    assert.ok(contributed.includes(k.command), `keybinding for unknown ${k.command}`);
  }
});

test('pinned language client with LSP 3.18 inline completion', () => {
  assert.equal(manifest.dependencies['vscode-languageclient'], '10.0.0');
  assert.equal(manifest.main, './out/src/extension.js');
  assert.equal(manifest.engines.vscode, '^1.91.0');
  // The installed client registers the inline-completion feature by default.
  const lib = path.join(dir, 'node_modules', 'vscode-languageclient', 'lib', 'common');
  const client = fs.readFileSync(path.join(lib, 'client.js'), 'utf8');
  assert.match(client, /new inlineCompletion_1\.InlineCompletionItemFeature\(/);
});
