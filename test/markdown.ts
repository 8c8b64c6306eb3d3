// Reading the repository's Markdown in tests: heading anchors as GitHub makes them, and links.

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf (heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-')
}

/** The text outside fenced code blocks (links and headings inside them are examples, not structure). */
export function withoutCode (markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '')
}

/** The anchors of a Markdown text's headings. */
export function anchorsOf (markdown: string): Set<string> {
  return new Set([...withoutCode(markdown).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1])))
}

/** The targets of the inline links `[text](target)` outside code, inline code spans removed. */
export function linksOf (markdown: string): string[] {
  const text = withoutCode(markdown).replace(/`[^`\n]*`/g, '')
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1])
}
