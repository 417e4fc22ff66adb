// The introspection page as a person sees it: Debian's Chromium, headless,
// driven by playwright-core, loads the page from the real router.
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { introspectionRouter } from '../../functions/introspection.js';
import { swarmView } from '../../lib/introspection/view.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const view = swarmView({
  swarm: { metadata: { namespace: 'demo', name: 'web' }, status: { phase: 'Updating' } },
  config: {
    version: 4,
    workloads: {
      'web-0': { jobs: ['alpha', 'bravo'], version: 3 },
      'web-1': { jobs: ['charlie', 'delta'], version: 4 },
      'web-2': { jobs: ['echo'], version: 4 },
    },
  },
  pendingRestarts: ['web-2'],
  lastChange: { version: 4, before: { 'web-0': ['alpha', 'bravo', 'delta'], 'web-1': ['charlie', 'echo'] } },
});

let server: Server;
let browser: Browser;
let url: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  const app = express();
  app.use(introspectionRouter(async (namespace, name) => (namespace === 'demo' && name === 'web' ? view : undefined)));
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/swarms/demo/web`;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

describe('introspection page in Chromium', () => {
  it('shows who owns what and highlights what moved', async () => {
    const page = await browser.newPage();
    try {
      const response = await page.goto(url);
      expect(response?.status()).toBe(200);
      expect(await page.title()).toBe('Swarm demo/web');

      // Locators rather than DOM callbacks: the project type-checks without the DOM lib.
      const rows = page.locator('#owners tbody tr');
      const owners = [];
      for (const row of await rows.all()) {
        owners.push({
          worker: await row.getAttribute('data-worker'),
          jobs: await row.locator('li').allTextContents(),
          restart: (await row.locator('td').nth(3).textContent())?.trim(),
        });
      }
      expect(owners).toEqual([
        { worker: 'web-0', jobs: ['alpha', 'bravo'], restart: '' },
        { worker: 'web-1', jobs: ['charlie', 'delta'], restart: '' },
        { worker: 'web-2', jobs: ['echo'], restart: 'pending' },
      ]);

      expect(await page.locator('#owners li.moved').allTextContents()).toEqual(['delta', 'echo']);
      const background = (job: string) =>
        page.evaluate(`getComputedStyle(document.querySelector('#owners li[data-job="${job}"]')).backgroundColor`);
      const plain = await background('alpha');
      expect(await background('charlie')).toBe(plain);
      expect(await background('delta')).not.toBe(plain);
      expect(await background('echo')).not.toBe(plain);

      const moves = [];
      for (const row of await page.locator('#moves tbody tr').all()) moves.push(await row.locator('td').allTextContents());
      expect(moves).toEqual([
        ['delta', 'web-0', 'web-1'],
        ['echo', 'web-1', 'web-2'],
      ]);
      expect(await page.textContent('#version')).toBe('4');
      expect(await page.textContent('#phase')).toBe('Updating');
      if (process.env.INTROSPECTION_SCREENSHOT) await page.screenshot({ path: process.env.INTROSPECTION_SCREENSHOT, fullPage: true });
    } finally {
      await page.close();
    }
  }, 60_000);
});
