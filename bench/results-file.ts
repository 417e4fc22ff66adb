// bench/RESULTS.md holds every benchmark's results; each benchmark owns one
// section between HTML comment markers and rewrites only that section.

const begin = (name: string) => `<!-- ${name}:begin -->`;
const end = (name: string) => `<!-- ${name}:end -->`;

/** The marked section `name` of `text` (markers included), or undefined. */
export function sectionOf(text: string, name: string): string | undefined {
  const from = text.indexOf(begin(name));
  const to = text.indexOf(end(name));
  return from >= 0 && to > from ? text.slice(from, to + end(name).length) : undefined;
}

/** `text` with section `name` replaced by `body` (appended if it was not there). */
export function withSection(text: string, name: string, body: string): string {
  const section = `${begin(name)}\n${body.trimEnd()}\n${end(name)}`;
  const existing = sectionOf(text, name);
  if (existing) return text.replace(existing, () => section);
  return `${text.trimEnd()}\n\n${section}\n`;
}

/** Every marked section of `text` (markers included), in order: what a benchmark that rewrites the whole file keeps. */
export function allSections(text: string): string[] {
  const sections: string[] = [];
  for (const match of text.matchAll(/<!-- ([\w:.-]+):begin -->/g)) {
    const section = sectionOf(text.slice(match.index), match[1]!);
    if (section) sections.push(section);
  }
  return sections;
}
