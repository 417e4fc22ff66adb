// Reads facts from the Dockerfile itself: the Node, Go and Python versions
// (which base images test/image makes) and each stage's CMD (checked by a unit test).

export interface DockerfileFacts {
  readonly nodeVersion: string;
  /** ARG GO_VERSION / PYTHON_VERSION, when the Dockerfile has the Go / Python worker targets. */
  readonly goVersion?: string;
  readonly pythonVersion?: string;
  /** Stage name → the argv of its CMD (exec form). */
  readonly commands: Readonly<Record<string, readonly string[]>>;
}

export function readDockerfile(text: string): DockerfileFacts {
  const version = /^ARG NODE_VERSION=(\d+\.\d+\.\d+)\s*$/m.exec(text)?.[1];
  if (!version) throw new Error('Dockerfile: no `ARG NODE_VERSION=x.y.z`');
  const goVersion = /^ARG GO_VERSION=(\d+\.\d+\.\d+)\s*$/m.exec(text)?.[1];
  const pythonVersion = /^ARG PYTHON_VERSION=(\d+\.\d+)\s*$/m.exec(text)?.[1];
  const commands: Record<string, string[]> = {};
  let stage: string | undefined;
  for (const line of text.split('\n')) {
    const from = /^FROM\s+\S+\s+AS\s+(\S+)/i.exec(line);
    if (from) stage = from[1];
    const cmd = /^CMD\s+(\[.*\])\s*$/.exec(line);
    if (cmd && stage) commands[stage] = JSON.parse(cmd[1] as string) as string[];
  }
  return { nodeVersion: version, goVersion, pythonVersion, commands };
}
