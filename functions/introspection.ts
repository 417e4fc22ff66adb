// GET /swarms/:namespace/:name — the current assignment of one Swarm, as JSON
// or (for browsers, `Accept: text/html`) as a small HTML page.
import { Router, type Request, type Response } from 'express';
import { renderHtml, type SwarmView } from '../lib/introspection/view.js';

/** Reads the view of one Swarm; undefined when there is no such Swarm. */
export type ReadSwarmView = (namespace: string, name: string) => Promise<SwarmView | undefined>;

// Namespaces are DNS-1123 labels, Swarm names DNS-1123 subdomains.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const isNamespaceName = (text: string): boolean => text.length <= 63 && DNS_LABEL.test(text);
export const isSwarmName = (text: string): boolean => text.length <= 253 && DNS_SUBDOMAIN.test(text);

export function introspectionRouter(readView: ReadSwarmView): Router {
  const router = Router();
  router.get('/swarms/:namespace/:name', async (req: Request<{ namespace: string; name: string }>, res: Response) => {
    const { namespace, name } = req.params;
    res.set('Cache-Control', 'no-store').vary('Accept');
    if (!isNamespaceName(namespace) || !isSwarmName(name)) {
      res.status(400).json({ error: `invalid namespace or name: ${namespace}/${name}` });
      return;
    }
    let view: SwarmView | undefined;
    try {
      view = await readView(namespace, name);
    } catch (error) {
      res.status(500).json({ error: `reading swarm ${namespace}/${name} failed: ${error instanceof Error ? error.message : String(error)}` });
      return;
    }
    if (!view) {
      res.status(404).json({ error: `swarm ${namespace}/${name} not found` });
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
