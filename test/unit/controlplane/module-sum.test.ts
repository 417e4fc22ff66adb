import { describe, expect, it } from 'vitest';
import { inModuleZip, moduleHash1, nestedModuleDirs, pseudoVersionCommit, type ModuleFile } from '../../controlplane/module-sum.js';

const text = (path: string, content: string): ModuleFile => ({ path, content: new TextEncoder().encode(content) });

// The four files a module zip keeps; the expected sum is what Go's own
// golang.org/x/mod/sumdb/dirhash.HashDir(dir, "example.com/m@<version>", Hash1)
// prints for a directory holding exactly these files.
const kept = [
  text('go.mod', 'module example.com/m\n\ngo 1.22\n'),
  text('main.go', 'package main\n'),
  text('LICENSE', 'x\n'),
  text('vendor/modules.txt', '# example.com/dep v1.0.0\n'),
];
const VERSION = 'v0.0.0-20220323221928-c2045be700b4';
const GO_SUM = 'h1:g6LNW5siodfPi/wiENk5SaUIdrMd15EbF7Am0bHRfWE=';

describe('Go module sum (h1)', () => {
  it('hashes a module tree as the go command does', () => {
    expect(moduleHash1('example.com/m', VERSION, kept)).toBe(GO_SUM);
  });

  it('does not depend on the order the files are read in', () => {
    expect(moduleHash1('example.com/m', VERSION, [...kept].reverse())).toBe(GO_SUM);
  });

  it('leaves out what a module zip leaves out: nested modules, vendored packages, version-control metadata', () => {
    const withExtras = [
      ...kept,
      text('tools/go.mod', 'module example.com/m/tools\n'),
      text('tools/tool.go', 'package tools\n'),
      text('vendor/example.com/dep/dep.go', 'package dep\n'),
      text('.git/HEAD', 'ref: refs/heads/main\n'),
    ];
    expect(moduleHash1('example.com/m', VERSION, withExtras)).toBe(GO_SUM);
    expect(nestedModuleDirs(withExtras.map((f) => f.path))).toEqual(['tools']);
    expect(inModuleZip('toolsmith/a.go', ['tools'])).toBe(true);
    expect(inModuleZip('pkg/vendor/x/y.go', [])).toBe(false);
    expect(inModuleZip('pkg/vendor/modules.txt', [])).toBe(true);
  });

  it('changes with any byte, the module path or the version', () => {
    expect(moduleHash1('example.com/m', VERSION, [...kept.slice(1), text('go.mod', 'module example.com/m\n\ngo 1.23\n')])).not.toBe(GO_SUM);
    expect(moduleHash1('example.com/n', VERSION, kept)).not.toBe(GO_SUM);
    expect(moduleHash1('example.com/m', 'v0.0.0-20220323221928-c2045be700b5', kept)).not.toBe(GO_SUM);
  });

  it('reads the commit out of a pseudo-version', () => {
    expect(pseudoVersionCommit(VERSION)).toBe('c2045be700b4');
    expect(pseudoVersionCommit('v1.2.4-0.20220323221928-abcdefabcdef')).toBe('abcdefabcdef');
    expect(pseudoVersionCommit('v1.2.3-pre.0.20220323221928-abcdefabcdef')).toBe('abcdefabcdef');
    expect(() => pseudoVersionCommit('v1.2.3')).toThrow(/not a pseudo-version/);
  });
});
