// `npm run release -- --registry R --version V [--out DIR] [--no-push] [--no-sbom] [--plain-http]`, parsed. Pure.
import { parseVersion } from './record.js';

export interface ReleaseOptions {
  /** Where the images go: `registry.example.com/swarm` → registry.example.com/swarm/swarm@sha256:…. */
  readonly registry: string;
  /** MAJOR.MINOR.PATCH[-PRE], without a leading v. */
  readonly version: string;
  readonly out: string;
  readonly push: boolean;
  readonly sbom: boolean;
  /** The registry speaks plain HTTP (a local one). */
  readonly plainHttp: boolean;
}

export class UsageError extends Error {}

export const USAGE = `usage: npm run release -- --registry REGISTRY/PATH --version X.Y.Z [--out DIR] [--no-push] [--no-sbom] [--plain-http]
  --registry R   where the images are pushed and what swarm.yaml names (R/swarm@sha256:…)
  --version V    the release's version (X.Y.Z or X.Y.Z-PRE; a leading v is dropped)
  --out DIR      where the release is written (default dist/release)
  --no-push      write the OCI layouts a push would send, push nothing, record nothing
  --no-sbom      skip the SBOMs (they need syft, built from its Go module on first use)
  --plain-http   the registry speaks HTTP, not HTTPS (a local one)`;

export function parseReleaseArgs(argv: readonly string[]): ReleaseOptions {
  let registry: string | undefined;
  let version: string | undefined;
  let out = 'dist/release';
  let push = true;
  let sbom = true;
  let plainHttp = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (!v) throw new UsageError(`${flag} needs a value\n${USAGE}`);
      return v;
    };
    switch (flag) {
      case '--registry': registry = value(); break;
      case '--version': version = value().replace(/^v/, ''); break;
      case '--out': out = value(); break;
      case '--no-push': push = false; break;
      case '--no-sbom': sbom = false; break;
      case '--plain-http': plainHttp = true; break;
      case '-h':
      case '--help': throw new UsageError(USAGE);
      default: throw new UsageError(`unknown option "${arg}"\n${USAGE}`);
    }
  }
  if (!registry) throw new UsageError(`--registry is required\n${USAGE}`);
  if (!version) throw new UsageError(`--version is required\n${USAGE}`);
  if (/^[a-z]+:\/\//.test(registry) || /[@\s]/.test(registry) || registry.endsWith('/')) throw new UsageError(`--registry is host[:port]/path, without scheme, tag or trailing slash: ${registry}`);
  try {
    parseVersion(version);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return { registry, version, out, push, sbom, plainHttp };
}
