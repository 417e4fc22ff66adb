import { describe, expect, it } from 'vitest';
import { debianMirror, dockerignore, inputsHash } from '../../test/image/inputs.js';

describe('image build inputs', () => {
  it('finds the Debian mirror of a suite in deb822 and one-line apt sources', () => {
    const deb822 = [
      'Types: deb\n# a comment\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n',
      'Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n',
    ].join('\n');
    expect(debianMirror([deb822], 'bookworm')).toBe('http://mirror.example/debian');
    expect(debianMirror([deb822], 'bookworm-security')).toBe('http://mirror.example/debian-security');
    expect(debianMirror(['deb [arch=amd64] https://other.example/debian bookworm main\n'], 'bookworm')).toBe('https://other.example/debian');
    expect(debianMirror(['Enabled: no\nTypes: deb\nURIs: http://off.example/\nSuites: bookworm\n'], 'bookworm')).toBeUndefined();
    expect(debianMirror(['deb cdrom:/media bookworm main\n', '# deb http://x.example bookworm main\n'], 'bookworm')).toBeUndefined();
  });

  it('reads a .dockerignore as Docker does: directories cover their contents, globs stay within a segment, ! re-includes', () => {
    const ignored = dockerignore('# sources only\n.git\nnode_modules\ntest\n*.log\n/dist/\ndocs/**/*.png\n!docs/keep.png\n');
    expect(ignored('.git/HEAD')).toBe(true);
    expect(ignored('test')).toBe(true);
    expect(ignored('test/unit/a.test.ts')).toBe(true);
    expect(ignored('dist/x.js')).toBe(true);
    expect(ignored('npm-debug.log')).toBe(true);
    expect(ignored('lib/debug.log')).toBe(false); // `*.log` is anchored at the root
    expect(ignored('lib/test.ts')).toBe(false);
    expect(ignored('docs/a/b/c.png')).toBe(true);
    expect(ignored('docs/keep.png')).toBe(false);
    expect(ignored('package.json')).toBe(false);
  });

  it('hashes every part and file, whatever order they come in', () => {
    const a = { path: 'a.ts', mode: 0o100644, content: Buffer.from('a') };
    const b = { path: 'b.ts', mode: 0o100644, content: Buffer.from('b') };
    const base = inputsHash({ dockerfile: 'FROM x', base: 'k' }, [a, b]);
    expect(inputsHash({ base: 'k', dockerfile: 'FROM x' }, [b, a])).toBe(base);
    expect(inputsHash({ dockerfile: 'FROM x', base: 'k2' }, [a, b])).not.toBe(base);
    expect(inputsHash({ dockerfile: 'FROM x', base: 'k' }, [a, { ...b, mode: 0o100755 }])).not.toBe(base);
    expect(inputsHash({ dockerfile: 'FROM x', base: 'k' }, [a])).not.toBe(base);
  });
});
