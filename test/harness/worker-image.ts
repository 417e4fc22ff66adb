// The reference worker's image, built from the Dockerfile (test/image, cached
// by its inputs) and imported into the real node's containerd, for pods that
// never pull (the sample's `imagePullPolicy: Never`).
import { importImages, type Cluster } from '../controlplane/cluster.js';
import { ensureImages } from '../image/build.js';

/** Builds (or reuses) and imports the worker image into the cluster (or the cluster recorded under a work dir); returns its name. */
export async function ensureWorkerImage(cluster: Cluster | string, onProgress: (line: string) => void): Promise<string> {
  const { worker } = await ensureImages(onProgress);
  const archive = [{ name: worker.name, path: worker.archive }];
  if (typeof cluster === 'string') await importImages(archive, cluster, onProgress);
  else await cluster.importImages(archive);
  return worker.name;
}
