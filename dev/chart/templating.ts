// Turns plain Kubernetes objects into Helm templates: the generator puts
// placeholders where a value comes from the chart, stringifies the object
// with the yaml library (so the static part is exactly the kustomize tree's),
// then swaps each placeholder for its template expression. Three forms:
//   key: «id»              → key: {{ EXPR }}                (a scalar)
//   key: «id»  (a block)   → key:\n  {{- EXPR | nindent N }} (a mapping or list)
//   __line_id__: x         → {{- EXPR | nindent N }}         (lines spliced in at that indent: labels, env items)
import { stringify } from 'yaml';

export interface Placeholder {
  readonly expr: string;
  /** A mapping or list rendered by EXPR, indented under its key. */
  readonly block?: boolean;
}

export const slot = (id: string): string => `«${id}»`;
/** A key whose line is replaced by lines EXPR renders (at that indent). */
export const lineKey = (id: string): string => `__line_${id}__`;

export function templateOf(doc: unknown, placeholders: Readonly<Record<string, Placeholder>>): string {
  let text = stringify(doc, { lineWidth: 0 });
  const expr = (id: string): Placeholder => {
    const p = placeholders[id];
    if (!p) throw new Error(`no placeholder ${id}`);
    return p;
  };
  // A list item's lines go at its dash's column, a mapping's at its keys'.
  text = text.replace(/^( *)(- )?__line_(\w+)__: x$/gm, (_all, indent: string, _dash: string | undefined, id: string) => `${indent}{{- ${expr(id).expr} | nindent ${indent.length} }}`);
  text = text.replace(/^( *)(- )?([^\n:]+): "?«(\w+)»"?$/gm, (all, indent: string, dash: string | undefined, key: string, id: string) => {
    const p = expr(id);
    if (!p.block) return all;
    const n = indent.length + (dash ? 2 : 0) + 2;
    return `${indent}${dash ?? ''}${key}:\n${' '.repeat(n)}{{- ${p.expr} | nindent ${n} }}`;
  });
  text = text.replace(/"?«(\w+)»"?/g, (_all, id: string) => {
    const p = expr(id);
    if (p.block) throw new Error(`block placeholder ${id} used inside a scalar`);
    return `{{ ${p.expr} }}`;
  });
  if (/«|__line_/.test(text)) throw new Error(`a placeholder was left in:\n${text}`);
  return text;
}
