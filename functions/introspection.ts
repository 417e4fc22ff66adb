// GET /swarms/:namespace/:name — the current assignment of one Swarm, as JSON
// or (for browsers, `Accept: text/html`) as a small HTML page.
import { Router, type Request, type Response } from 'express';
import { checkName } from '../lib/api/names.js';
import { renderHtml, type SwarmView } from '../lib/introspection/view.js';
import { failureStatus } from './http.js';

/** Reads the view of one Swarm; undefined when there is no such Swarm. */
export type ReadSwarmView = (namespace: string, name: string) => Promise<SwarmView | undefined>;

export function introspectionRouter(readView: ReadSwarmView): Router {
  const router = Router();
  router.get('/swarms/:namespace/:name', async (req: Request<{ namespace: string; name: string }>, res: Response) => {
    const { namespace, name } = req.params;
    res.set('Cache-Control', 'no-store').vary('Accept');
    // Checked before reading: a name the apiserver would refuse (`..` above all) never reaches an API path.
    const invalid = checkName('namespace', 'Namespace', namespace) ?? checkName('name', 'Swarm', name);
    if (invalid !== undefined) {
      res.status(400).json({ error: invalid, status: 400 });
      return;
    }
    let view: SwarmView | undefined;
    try {
      view = await readView(namespace, name);
    } catch (err) {
      const { status, error } = failureStatus(err);
      res.status(status).json({ error: `reading swarm ${namespace}/${name} failed: ${error}`, status });
      return;
    }
    if (!view) {
      res.status(404).json({ error: `swarm ${namespace}/${name} not found`, status: 404 });
      return;
    }
    // JSON unless the client prefers HTML (browsers); `*/*` and no Accept get JSON.
    if (req.accepts(['application/json', 'text/html']) === 'text/html') {
      res.type('html').send(renderHtml(view));
    } else {
      res.json(view);
    }
  });
  return router;
}
