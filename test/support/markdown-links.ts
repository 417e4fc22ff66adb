// Links and anchors of Markdown pages, as GitHub renders them: what the
// docs-links unit test checks. Pure (text in, facts out); the test reads files.
// Not a Markdown parser: ATX headings (`## …`), inline links and images, and
// reference definitions, outside fenced code blocks and code spans — what
// this repository's pages use.
import { posix } from 'node:path';

/** One link of a page: its target as written, and the 1-based line it is on. */
export interface Link {
  target: string;
  line: number;
}

/** Lines outside fenced code blocks (``` or ~~~), with their 1-based numbers. */
function proseLines(markdown: string): Array<{ text: string; line: number }> {
  const lines: Array<{ text: string; line: number }> = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker && (!fence || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence ? undefined : marker;
      return;
    }
    if (!fence) lines.push({ text, line: i + 1 });
  });
  return lines;
}

/** Code spans blanked out (their text is not Markdown). */
const withoutCodeSpans = (text: string): string => text.replace(/(`+)(?:(?!\1).)+?\1/g, (span) => ' '.repeat(span.length));

/**
 * GitHub's anchor for a heading (github-slugger): the rendered text, lower-cased,
 * every character that is not a letter, mark, number, connector (`_`), hyphen or
 * space dropped, spaces turned into hyphens.
 */
export function slug(headingText: string): string {
  const rendered = headingText
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .trim();
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' slugs (repeats numbered `-1`, `-2`, … as GitHub does) and explicit `id`/`name` attributes. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text);
    if (heading) {
      const base = slug(heading[1] as string);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const html of text.matchAll(/<[a-z]+[^>]*\s(?:id|name)="([^"]+)"/gi)) anchors.add(html[1] as string);
  }
  return anchors;
}

/** Every link target of a page: inline links and images (`[t](x)`, `![a](x)`) and reference definitions (`[id]: x`). */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const prose = withoutCodeSpans(text);
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/.exec(prose);
    if (definition) links.push({ target: definition[1] as string, line });
    for (const inline of prose.matchAll(/\]\(\s*<?([^\s)>]*)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: inline[1] as string, line });
  }
  return links;
}

/** A target that leaves the repository (a scheme such as https:, mailto:) is not checked. */
export const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/** `path#anchor` → its parts, the path percent-decoded ('' for the page itself). */
export function splitTarget(target: string): { path: string; anchor?: string } {
  const hash = target.indexOf('#');
  const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  return hash < 0 ? { path } : { path, anchor: decodeURIComponent(target.slice(hash + 1)) };
}

/**
 * What is wrong with each relative link of `page` (a repo-relative path, its
 * text `markdown`), as `page:line: target: why`. `exists`: a repo-relative file
 * or folder is there; `anchorsIn`: the anchors of a repo-relative page.
 */
export function brokenLinks(page: string, markdown: string, exists: (path: string) => boolean, anchorsIn: (path: string) => Set<string>): string[] {
  const problems: string[] = [];
  for (const { target, line } of linksOf(markdown)) {
    if (isExternal(target)) continue;
    const { path, anchor } = splitTarget(target);
    // GitHub resolves `/x` from the repository's root.
    const resolved = path === '' ? page : posix.normalize(path.startsWith('/') ? path.slice(1) : posix.join(posix.dirname(page), path)).replace(/\/$/, '');
    const where = `${page}:${line}: ${target}`;
    if (resolved === '..' || resolved.startsWith('../')) problems.push(`${where}: leaves the repository`);
    else if (!exists(resolved === '.' ? '' : resolved)) problems.push(`${where}: no such file`);
    else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsIn(resolved).has(anchor)) problems.push(`${where}: no heading #${anchor} in ${resolved}`);
  }
  return problems;
}
