// The Go module sum ("h1:" hash) of a module's files, computed as the go
// command does (golang.org/x/mod/sumdb/dirhash Hash1 over the files a module
// zip holds, golang.org/x/mod/zip). Used for a module the Go module proxy does
// not serve: its source comes from a git snapshot and is checked against the
// sum pinned in versions.json, so what is built is what was pinned whatever
// the snapshot's origin. Pure: the caller reads the files.
import { createHash } from 'node:crypto';

/** One file of a module tree: its path relative to the module root ("/"-separated) and content. */
export interface ModuleFile {
  readonly path: string;
  readonly content: Uint8Array;
}

/**
 * Whether a file of a module's tree goes into its module zip: not in a
 * nested module (a directory holding its own go.mod, other than the root),
 * not a vendored package (vendor/<dir>/…; vendor/modules.txt stays), not
 * version-control metadata.
 */
export function inModuleZip(path: string, nestedModuleDirs: readonly string[]): boolean {
  if (/(^|\/)\.(git|hg|svn|bzr)(\/|$)/.test(path)) return false;
  if (nestedModuleDirs.some((dir) => path.startsWith(`${dir}/`))) return false;
  return !isVendoredPackage(path);
}

// As golang.org/x/mod/zip's isVendoredPackage.
function isVendoredPackage(path: string): boolean {
  let rest: string;
  if (path.startsWith('vendor/')) rest = path.slice('vendor/'.length);
  else {
    const at = path.indexOf('/vendor/');
    if (at < 0) return false;
    rest = path.slice(at + '/vendor/'.length);
  }
  return rest.includes('/');
}

/** The directories (other than the root) that hold a go.mod: their files belong to another module. */
export function nestedModuleDirs(paths: readonly string[]): string[] {
  return paths.filter((p) => p.endsWith('/go.mod')).map((p) => p.slice(0, -'/go.mod'.length));
}

/**
 * `h1:` + base64(sha256 of the lines "<sha256 hex>  <module>@<version>/<path>\n",
 * sorted by name): the sum go.sum and sum.golang.org record for a module version.
 */
export function moduleHash1(modulePath: string, version: string, files: readonly ModuleFile[]): string {
  const nested = nestedModuleDirs(files.map((f) => f.path));
  const lines = files
    .filter((f) => inModuleZip(f.path, nested))
    .map((f) => ({ name: `${modulePath}@${version}/${f.path}`, hash: createHash('sha256').update(f.content).digest('hex') }))
    .sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  const summary = createHash('sha256');
  for (const { name, hash } of lines) {
    if (name.includes('\n')) throw new Error(`a file name with a newline cannot be hashed: ${JSON.stringify(name)}`);
    summary.update(`${hash}  ${name}\n`);
  }
  return `h1:${summary.digest('base64')}`;
}

/**
 * The commit a pseudo-version names (v0.0.0-<yyyymmddhhmmss>-<12 hex>, or the
 * pre-release forms vX.Y.Z-pre.0.<time>-<hash> and vX.Y.(Z+1)-0.<time>-<hash>).
 */
export function pseudoVersionCommit(version: string): string {
  const match = /^v\d+\.\d+\.\d+-(?:.*\.)?(?:0\.)?\d{14}-([0-9a-f]{12})$/.exec(version);
  if (!match) throw new Error(`not a pseudo-version: ${version}`);
  return match[1]!;
}
